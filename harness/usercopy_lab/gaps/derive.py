"""Copy functions the tree makes for itself: a function whose parameter
reaches a copy call as its kernel pointer is a copy function for that
parameter (fs/namei.c readlink_copy(buffer, buflen, link) ends in
copy_to_user(buffer, link, len); virt/kvm/binary_stats.h kvm_stats_read()
in copy_to_user(.., id + pos, ..)).  Its calls are copy sites, resolved in
the caller; a caller that passes its own parameter on is one too.  The
summary is computed over the tree to a fixpoint (at most MAX_ROUNDS
rounds, each reading only the files that name a function found in the
round before).

Whether such a call is checked: the inner copy's size decides.  A size
the function computes itself (strlen) is checked whatever the caller
does; a size that is a parameter of a static function is the caller's
(inlined, a constant size is a constant there too, check_copy_size()
skips it); of a function other files call, the callee sees a variable."""
from __future__ import annotations

import re
from typing import Callable

from .copyfuncs import CopyFunction, by_name
from .csource import chain_before
from .model import Site
from .structs import Structs
from .tree import Tree

MAX_ROUNDS = 16


def _derived(sites: list[Site], known: set[tuple[str, str, int]],
             always_checked: set[str]) -> list[CopyFunction]:
    """ALWAYS_CHECKED: the copy functions that check whatever their caller's
    size (put_cmsg(), vfio_dma_rw(): not inlined); a function that passes
    its size on to one of them checks whatever its own caller passes."""
    base = by_name()
    out = []
    for s in sites:
        p = s.param
        if p is None or not s.checked or s.function in base:
            continue
        only = s.file if p.local else ""
        key = (s.function, only, p.index)
        if key in known:
            continue
        known.add(key)
        via = s.via or s.callee
        out.append(CopyFunction(
            s.function, s.direction, p.index, p.size_index,
            always=p.size_index < 0 or not p.static or s.callee in always_checked,
            where=f"derived: {via}({s.pointer}) in {s.file}:{s.line}", only_file=only,
            arith=p.arith))
    return out


def _indirect(found: list[CopyFunction], structs: Structs,
              known: set[tuple[str, str, int]]) -> list[CopyFunction]:
    """FOUND's functions that an initializer stores in a struct member
    (`.dma_rw = vfio_iommu_type1_dma_rw`): `->dma_rw(...)` on a pointer to
    that struct calls them.  Never inlined: checked whatever the size."""
    out = []
    for f in found:
        for struct, member in sorted(structs.ops.get(f.name, ())):
            key = (f"{struct}.{member}", "", f.kptr)
            if key in known:
                continue
            known.add(key)
            out.append(CopyFunction(member, f.direction, f.kptr, f.size, True,
                                    where=f"{f.where} via {struct}.{member} = {f.name}",
                                    member_of=struct, arith=f.arith))
    return out


def _indirect_sites(tree: Tree, structs: Structs, wrappers: dict[str, tuple[str, str]],
                    table: dict[str, list[CopyFunction]], files: list[str]) -> list[Site]:
    """Calls `OBJ->MEMBER(...)` / `OBJ.MEMBER(...)` of TABLE's members
    where OBJ is (a pointer to) the struct whose member it is."""
    from .csource import calls, declarations, function_at, functions
    from .sites import Context, file_scope, resolve, site_of
    pat = re.compile(r"(?:->|\.)\s*(" + "|".join(sorted(map(re.escape, table), key=len, reverse=True))
                     + r")\s*\(")
    out: list[Site] = []
    for rel in files:
        if not pat.search(tree.text(rel)):
            continue
        src = tree.source(rel)
        funcs = functions(src)
        globals_ = file_scope(src, funcs)
        for call in calls(src, pat):
            func = function_at(funcs, call.start)
            if func is None:
                continue
            head = src.code[func.body:call.start].rstrip()
            op = 2 if head.endswith("->") else 1
            obj = chain_before(src.code, func.body + len(head) - op, func.body)
            ctx = Context(src, func, declarations(src.code[func.start:func.end]), globals_,
                          structs, wrappers, call.start)
            target = resolve(obj, ctx) if obj else None
            for fn in table[call.name]:
                if target is None or target.struct != fn.member_of or target.path or \
                        len(call.args) <= max(fn.kptr, fn.size):
                    continue
                out.append(site_of(ctx, rel, call, fn))
    return out


def derive(tree: Tree, structs: Structs, wrappers: dict[str, tuple[str, str]],
           sites: list[Site], progress: Callable[[str], None] | None = None
           ) -> tuple[list[Site], list[CopyFunction]]:
    """SITES with the calls of every derived copy function added, and those
    functions."""
    say = progress or (lambda _m: None)
    from . import sites as sites_mod
    known: set[tuple[str, str, int]] = set()
    always = {f.name for f in by_name().values() if f.always}
    found = _derived(sites, known, always)
    functions: list[CopyFunction] = []
    out = list(sites)
    files = tree.files()
    for n in range(1, MAX_ROUNDS + 1):
        found += _indirect(found, structs, known)
        if not found:
            break
        functions.extend(found)
        table: dict[str, list[CopyFunction]] = {}
        members: dict[str, list[CopyFunction]] = {}
        for f in found:
            (members if f.member_of else table).setdefault(f.name, []).append(f)
        local = {f.only_file for f in found if f.only_file}
        anywhere = any(not f.only_file for f in found)
        new: list[Site] = []
        if table:
            todo = tree.files_matching([rf"\b{n}\s*\(" for n in sorted(table)],
                                       files if anywhere else sorted(local))
            new = sites_mod.scan(tree, structs, wrappers, table=table, files=todo)
        if members:
            todo = tree.files_matching([rf"(->|\.)\s*{n}\s*\(" for n in sorted(members)], files)
            new += _indirect_sites(tree, structs, wrappers, members, todo)
        say(f"gaps: derived copy functions, round {n}: {len(found)} function(s) "
            f"({len(members)} through struct members), {len(new)} call site(s)")
        out.extend(new)
        always |= {f.name for f in functions if f.always}
        found = _derived(new, known, always)
    return out, functions

