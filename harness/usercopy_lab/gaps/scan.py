"""One finder run over a tree: structs, caches, wrappers, sites, matches."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable

from . import caches as caches_mod
from . import derive, flow
from . import sites as sites_mod
from .match import match_all
from .copyfuncs import CopyFunction
from .model import Cache, CacheResult, Site
from .structs import Structs
from .tree import Tree


@dataclass
class Scan:
    tree: Tree
    caches: list[Cache]
    unregistered: list[Cache]
    sites: list[Site]
    results: dict[str, CacheResult]
    pools: dict[str, str]
    wrappers: dict[str, tuple[str, str]]
    seconds: dict[str, float]
    structs: Structs | None = None
    derived: list[CopyFunction] | None = None   # copy functions the tree makes (derive.py)
    cpu_seconds: float = 0.0   # CPU time of the run, its grep children included


def _cpu() -> float:
    """CPU seconds of this process and its reaped children: unlike the wall
    time in Scan.seconds, what a scan costs whatever else the host runs."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def run(tree: Tree, progress: Callable[[str], None] | None = None,
        index_cache: dict | None = None) -> Scan:
    """INDEX_CACHE: the struct index's per-file results of an earlier run
    (Structs.build_index), updated in place."""
    say = progress or (lambda _m: None)
    t = {}
    t0, c0 = time.monotonic(), _cpu()
    structs = Structs(tree)
    say(f"gaps: indexing struct definitions in {len(tree.files())} files")
    structs.build_index(say, index_cache)
    t["structs"] = time.monotonic() - t0
    say("gaps: finding slab caches")
    cs = caches_mod.scan(tree, structs, say)
    t["caches"] = time.monotonic() - t0 - sum(t.values())
    say(f"gaps: {len(cs.caches)} caches; finding allocator wrappers")
    pools: dict[str, str] = {}
    wrappers = sites_mod.find_wrappers(tree, [f for f in tree.files() if f.endswith((".c", ".h"))], pools)
    t["wrappers"] = time.monotonic() - t0 - sum(t.values())
    say(f"gaps: {len(wrappers)} wrappers, {len(pools)} pools; finding copy sites")
    sites = sites_mod.scan(tree, structs, wrappers, say)
    say(f"gaps: {len(sites)} copy sites; functions that pass their parameter on to one")
    sites, derived = derive.derive(tree, structs, wrappers, sites, say)
    say(f"gaps: {len(sites)} copy sites; following struct members they copy through")
    sites = flow.follow(tree, structs, sites, wrappers, say)
    t["sites"] = time.monotonic() - t0 - sum(t.values())
    say(f"gaps: {len(sites)} copy sites; matching")
    results = match_all(cs.caches, sites, structs, pools)
    t["match"] = time.monotonic() - t0 - sum(t.values())
    return Scan(tree, cs.caches, cs.protos_unregistered, sites, results, pools, wrappers, t, structs,
                derived, _cpu() - c0)


@dataclass
class _Only(Tree):
    """A tree whose file list is only some files (a patch's)."""
    only: tuple[str, ...] = ()

    def files(self) -> list[str]:
        return list(self.only)


def rescan(base: Scan, tree: Tree, changed: list[str],
           progress: Callable[[str], None] | None = None) -> Scan:
    """BASE's scan with the CHANGED .c files (a patch's, in TREE's overlay)
    read again: their caches and copy sites replace the base's, the rest
    (struct index, allocator wrappers, field flow of the other files) is
    the base's.  A patch that changes a header needs a full scan (cli)."""
    say = progress or (lambda _m: None)
    t0, c0 = time.monotonic(), _cpu()
    structs = base.structs
    structs.tree = tree
    structs._parsed.clear()
    only = _Only(tree.root, tree.overlay, only=tuple(changed))
    cs = caches_mod.scan(only, structs)
    caches = [c for c in base.caches if c.file not in changed] + cs.caches
    table: dict[str, list[CopyFunction]] = {}
    for f in base.derived or []:
        table.setdefault(f.name, []).append(f)
    sites = [x for x in base.sites if x.file not in changed] + \
        sites_mod.scan(only, structs, base.wrappers) + \
        (sites_mod.scan(only, structs, base.wrappers, table=table) if table else [])
    results = match_all(caches, sites, structs, base.pools)
    say(f"gaps: {len(changed)} changed file(s) read again over the base scan")
    return Scan(tree, caches, base.unregistered, sites, results, base.pools, base.wrappers,
                {"rescan": time.monotonic() - t0}, structs, base.derived, _cpu() - c0)
