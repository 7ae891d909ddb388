"""The hunt's coverage against the gap finder's denominator (issue #35).

The old figure divides by every cache of the booted kernel with a region
(coverage.py); about 40 % of those have no checked copy anywhere in the
tree, so no workload can reach them.  The finder (make gaps, docs/gaps.md)
lists for every cache the checked copy sites it found; restricted to the
files the hunt kernel compiled (compiled.py), they say which caches
and directions a workload *can* reach in this kernel.  The rule, per
(cache, direction) of the booted kernel's caches with a region:

- the finder cache: the one of the same name, else the family whose `*`
  stands for a size (`kmalloc-cg-*` for kmalloc-cg-64: `*` is a number
  with an optional k/M, so kmalloc-* never takes kmalloc-cg-64);
- a site counts when the finder places it inside the region or cannot
  place it (unsure), or it is a candidate that triage did not dismiss
  (a checked copy into the cache all the same), and when the file of the
  site, and for a derived copy function the file of the copy it ends in,
  are compiled into the kernel;
- the pair is in the denominator (M) when at least one site counts;
  otherwise it is left out with why (no such cache in the finder's
  output, no site in this direction and the finder's own reason, or
  sites only in files this kernel does not compile).

N is the pairs of M the probe saw in any guest; a cache is in M when one
of its directions is, and exercised when one of its directions in M is.
Pairs exercised outside M (copies the finder does not see) are listed
apart: they are the finder's misses, never added to N.
"""
from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import Direction
from .compiled import CompiledSources
from .coverage import DIRECTIONS, Coverage, ReachNote, note_for, pct

TARGET = 0.8
# The finder's words for the two directions (gaps/model.py Direction).
FINDER_DIRECTION = {"to-user": Direction.EXPOSURE, "from-user": Direction.OVERWRITE}
SIZE_WILDCARD = r"[0-9]+[kM]?"
_DERIVED = re.compile(r"\(derived: .*? in (?P<file>[^\s:]+):\d+\)")
SHOWN_SITES = 3


class DenominatorError(ValueError):
    """A gaps.json that cannot be used: one line, exit 2."""


class Placement(enum.Enum):
    INSIDE = "inside"
    UNSURE = "unsure"
    CANDIDATE = "candidate"


class Left(enum.Enum):
    """Why a (cache, direction) of the booted kernel is not in M."""
    NO_FINDER_CACHE = "no cache of this name in the finder's output"
    NO_SITE = "the finder has no checked site in this direction"
    NOT_COMPILED = "the finder's sites are all in files this kernel does not compile"


@dataclass(frozen=True)
class FinderSite:
    file: str
    line: int
    function: str
    callee: str
    direction: Direction
    placement: Placement
    derived_from: str | None = None     # the file of the copy a derived function ends in

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.function}() {self.callee}"

    def compiled_in(self, compiled: CompiledSources) -> bool:
        return self.file in compiled and (self.derived_from is None
                                          or self.derived_from in compiled)


@dataclass(frozen=True)
class FinderCache:
    name: str               # as the finder names it: "kmalloc-cg-*" for the family
    file: str               # where the tree creates it
    region: str
    sites: tuple[FinderSite, ...]
    missed: str | None = None   # the finder's triage: why no site was found

    def matches(self, cache: str) -> bool:
        if "*" not in self.name:
            return cache == self.name
        pattern = SIZE_WILDCARD.join(re.escape(p) for p in self.name.split("*"))
        return re.fullmatch(pattern, cache) is not None


@dataclass(frozen=True)
class FinderOutput:
    path: str
    tree: str
    caches: tuple[FinderCache, ...]

    def cache_for(self, name: str) -> FinderCache | None:
        exact = [c for c in self.caches if c.name == name]
        if exact:
            return exact[0]
        family = [c for c in self.caches if c.matches(name)]
        return min(family, key=lambda c: (-len(c.name), c.name)) if family else None


def load_finder(path: Path) -> FinderOutput:
    """A gaps.json of make gaps (the lab's tree: build/gaps/6.1-series)."""
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise DenominatorError(f"{path}: {exc.strerror} (make gaps writes it)") from None
    except ValueError as exc:
        raise DenominatorError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("caches"), list):
        raise DenominatorError(f"{path}: not a gaps.json of make gaps (no list of caches)")
    try:
        missed = (data.get("recall") or {}).get("missed") or {}
        caches = []
        for c in data["caches"]:
            sites = []
            for key, placement in (("inside", Placement.INSIDE), ("unsure", Placement.UNSURE),
                                   ("candidates", Placement.CANDIDATE)):
                for s in c.get(key, ()):
                    if placement is Placement.CANDIDATE and \
                            str(s.get("status", "")).startswith("dismissed"):
                        continue
                    m = _DERIVED.search(str(s.get("size", "")))
                    sites.append(FinderSite(s["file"], int(s["line"]), s["function"],
                                            s["callee"], FINDER_DIRECTION[s["direction"]],
                                            placement, m.group("file") if m else None))
            caches.append(FinderCache(c["name"], c["file"], c["region"], tuple(sites),
                                      missed.get(c["name"])))
        return FinderOutput(str(path), str(data.get("tree", "")), tuple(caches))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DenominatorError(f"{path}: not a gaps.json of make gaps "
                               f"({type(exc).__name__}: {exc})") from None


# ------------------------------------------------------------- denominator
@dataclass(frozen=True)
class Pair:
    cache: str
    direction: Direction
    finder_cache: str | None
    sites: tuple[FinderSite, ...]       # the finder's sites compiled into the kernel
    left: Left | None = None            # None: in M
    why: str = ""                       # with `left`: the finder's reason, a site not built

    @property
    def in_m(self) -> bool:
        return self.left is None


@dataclass(frozen=True)
class Denominator:
    finder: FinderOutput
    compiled: CompiledSources
    pairs: tuple[Pair, ...]             # every (cache, direction) of the booted kernel

    def in_m(self) -> list[Pair]:
        return [p for p in self.pairs if p.in_m]

    def caches(self) -> list[str]:
        return sorted({p.cache for p in self.in_m()})


def build(finder: FinderOutput, compiled: CompiledSources, caches: list[str]) -> Denominator:
    """The finder's denominator over CACHES (the booted kernel's caches
    with a region)."""
    pairs = []
    for name in sorted(caches):
        fc = finder.cache_for(name)
        for d in DIRECTIONS:
            if fc is None:
                pairs.append(Pair(name, d, None, (), Left.NO_FINDER_CACHE,
                                  "the finder reads no cache creation that names it"))
                continue
            mine = [s for s in fc.sites if s.direction == d]
            built = tuple(s for s in mine if s.compiled_in(compiled))
            if built:
                pairs.append(Pair(name, d, fc.name, built))
            elif mine:
                pairs.append(Pair(name, d, fc.name, (), Left.NOT_COMPILED,
                                  "; ".join(str(s) for s in mine[:SHOWN_SITES])
                                  + (f" (+{len(mine) - SHOWN_SITES})"
                                     if len(mine) > SHOWN_SITES else "")))
            else:
                pairs.append(Pair(name, d, fc.name, (), Left.NO_SITE, fc.missed or ""))
    return Denominator(finder, compiled, tuple(pairs))


# ----------------------------------------------------------------- figure
@dataclass(frozen=True)
class Figure:
    """The hunt's coverage against the finder's denominator."""
    denominator: Denominator
    coverage: Coverage

    def _seen(self, p: Pair, foreign_only: bool = False) -> bool:
        c = self.coverage.caches.get(p.cache)
        s = c.seen.get(p.direction) if c else None
        return s is not None and (s.foreign or not foreign_only)

    def pairs(self, foreign_only: bool = False) -> tuple[int, int]:
        m = self.denominator.in_m()
        return sum(1 for p in m if self._seen(p, foreign_only)), len(m)

    def caches(self) -> tuple[int, int]:
        m = self.denominator.caches()
        hit = {p.cache for p in self.denominator.in_m() if self._seen(p)}
        return len(hit), len(m)

    def left(self) -> list[Pair]:
        return [p for p in self.denominator.in_m() if not self._seen(p)]

    def outside(self) -> list[Pair]:
        """Pairs exercised that are not in M: copies the finder misses
        (or makes in files it counts as not built)."""
        return [p for p in self.denominator.pairs if not p.in_m and self._seen(p)]

    def summary(self) -> str:
        n, m = self.pairs()
        f, _ = self.pairs(foreign_only=True)
        cn, cm = self.caches()
        verdict = "met" if m and n >= TARGET * m else "not met"
        return (f"exercised {cn} of {cm} caches ({pct(cn, cm)}) and {n} of {m} "
                f"(cache, direction) pairs = {pct(n, m)} of the finder's denominator "
                f"(the {TARGET:.0%} target, on pairs: {verdict}; {f} = {pct(f, m)} by "
                f"workloads written elsewhere alone)")

    def to_json(self, notes: list[ReachNote]) -> dict[str, Any]:
        n, m = self.pairs()
        f, _ = self.pairs(foreign_only=True)
        cn, cm = self.caches()
        d = self.denominator

        def site_list(p: Pair) -> list[str]:
            return [str(s) for s in p.sites[:SHOWN_SITES]]

        return {
            "measured": True,
            "summary": self.summary(),
            "rule": "a (cache, direction) of the booted kernel's caches with a region is in "
                    "M when the finder (gaps.json) has a checked copy site for it, inside "
                    "the region, unsure, or an undismissed candidate, in a file the kernel "
                    "compiled (and, for a derived copy function, the copy's file too)",
            "gaps_json": d.finder.path, "finder_tree": d.finder.tree,
            "kbuild_dir": d.compiled.kbuild_dir, "compiled_files": len(d.compiled.files),
            "compiled_objects": d.compiled.objects,
            "caches": {"exercised": cn, "total": cm, "percent": _round(cn, cm)},
            "pairs": {"exercised": n, "total": m, "percent": _round(n, m),
                      "foreign_only": f, "foreign_only_percent": _round(f, m)},
            "target_percent": round(100 * TARGET),
            "meets_target": bool(m) and n >= TARGET * m,
            "left": [{"cache": p.cache, "direction": p.direction,
                      "finder_cache": p.finder_cache, "sites": site_list(p),
                      "note": (" ".join(nt.text.split())
                               if (nt := note_for(notes, p.cache, p.direction)) else None)}
                     for p in self.left()],
            "outside": [{"cache": p.cache, "direction": p.direction,
                         "why": p.left.value if p.left else "", "finder": p.why}
                        for p in self.outside()],
            "not_in_m": [{"cache": p.cache, "direction": p.direction,
                          "finder_cache": p.finder_cache,
                          "why": p.left.value if p.left else "", "finder": p.why}
                         for p in d.pairs if not p.in_m],
        }


def not_measured(why: str) -> dict[str, Any]:
    return {"measured": False, "summary": f"not measured: {why}"}


def _round(n: int, m: int) -> float:
    return round(100.0 * n / m, 1) if m else 0.0
