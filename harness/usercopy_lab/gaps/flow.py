"""Field flow: a copy of a buffer a struct member points to
(`scmd->sense_buffer`, `task->frame`, `dentry->d_name.name`) is resolved
through what the tree assigns to that member anywhere
(`cmd->sense_buffer = kmem_cache_alloc(scsi_sense_cache, ...)`,
`task->frame = task + 1`, `dentry->d_name.name = dentry->d_iname`).
One step: an assignment that is itself a member's value is not followed.
A `void *` member (file.private_data) is followed only to the copying
file's own assignments; a site gets one row per value (fan-out)."""
from __future__ import annotations

import dataclasses
import re

from .csource import chain_before, declarations, function_at, functions
from .model import Access, AccessKind, Site
from .sites import Context, file_scope, alloc_tag, resolve
from .structs import Structs
from .tree import Tree


def _fields(sites: list[Site]) -> dict[str, str]:
    """'struct.path' -> last member name, for every checked site whose pointer
    is a member's value."""
    out = {}
    for s in sites:
        if s.checked and s.access.kind is AccessKind.RAW:
            for tag in s.access.alloc:
                if tag.startswith("field:"):
                    out[tag[6:]] = tag.rsplit(".", 1)[-1]
    return out


def follow(tree: Tree, structs: Structs, sites: list[Site], wrappers: dict,
           progress=None) -> list[Site]:
    fields = _fields(sites)
    if not fields:
        return sites
    names = set(fields.values())
    # a file that assigns S's member F names struct S (its declaration of the
    # pointer it assigns through): member name -> the structs to look for
    owners: dict[str, set[str]] = {}
    for key, name in fields.items():
        owners.setdefault(name, set()).add(key.split(".", 1)[0])
    assign = re.compile(r"(?:->|\.)\s*(\w+)\s*=(?!=)")
    found: dict[str, list[tuple[str, Access]]] = {}
    files = tree.files_matching([rf"(->|\.)\s*{n}\s*=[^=]" for n in sorted(names)],
                                [f for f in tree.files() if f.endswith(".c")])
    for n, rel in enumerate(files, 1):
        if progress and n % 10000 == 0:
            progress(f"field flow: {n} of {len(files)} files")
        text = tree.text(rel)
        if not any(m.group(1) in names and any(o in text for o in owners[m.group(1)])
                   for m in assign.finditer(text)):
            continue
        src = tree.source(rel)
        funcs = functions(src)
        globals_ = None
        decls: dict[int, dict] = {}
        for m in assign.finditer(src.code):
            if m.group(1) not in names:
                continue
            func = function_at(funcs, m.start())
            if func is None:
                continue
            lhs_text = chain_before(src.code, m.start(), func.body)
            end = src.code.find(";", m.end())
            if not lhs_text or end < 0:
                continue
            if globals_ is None:
                globals_ = file_scope(src, funcs)
            if func.start not in decls:
                decls[func.start] = declarations(src.code[func.start:func.end])
            ctx = Context(src, func, decls[func.start], globals_, structs, wrappers)
            lhs = resolve(lhs_text, ctx)
            if lhs.kind is not AccessKind.TYPED:
                continue
            path = ".".join(x for x in (lhs.path, m.group(1)) if x)
            key = f"{lhs.struct}.{path}"
            if key not in fields:
                continue
            rhs = src.code[m.end():end]
            tag = alloc_tag(rhs, wrappers)
            value = Access(AccessKind.RAW, alloc=(tag,), why=rhs.strip()[:60]) if tag \
                else resolve(rhs, ctx)
            if value.kind is AccessKind.TYPED or value.alloc:
                found.setdefault(key, []).append((rel, value))
    out = []
    for s in sites:
        tags = [t[6:] for t in s.access.alloc if t.startswith("field:")]
        values = [v for t in tags for rel, v in found.get(t, [])
                  if rel == s.file or not _generic(structs, t)]
        if not values:
            out.append(s)
            continue
        out.extend(_fan_out(s, values))
    return out


def _generic(structs: Structs, key: str) -> bool:
    """KEY ("file.private_data") is a `void *` member: a slot every user
    fills with its own thing, so only the copying file's own assignments
    say what it holds there (a typed member, `char *i_link`, is followed
    over the tree)."""
    struct, _, path = key.partition(".")
    mem = structs.member(struct, path)
    return mem is None or mem.base == "void"


def _fan_out(s: Site, values: list[Access]) -> list[Site]:
    """S once per distinct value its member is given: each struct member it
    may point into (ext4's i_data, ufs's i_u1.i_symlink for inode.i_link),
    and once for the allocators seen, if any."""
    out = []
    # a pointer to a whole struct stored in a member (a queue's list_head in
    # file.private_data) says nothing of the object it is in: only a member
    # of one (ext2's i_data, task + 1) or its allocation does
    typed = dict.fromkeys((v.struct, v.path, v.struct_file, v.offset_known, v.alloc) for v in values
                          if v.kind is AccessKind.TYPED and v.path)
    for struct, path, sfile, known, alloc in typed:
        out.append(dataclasses.replace(s, access=Access(AccessKind.TYPED, struct, path, known,
                                                        alloc, struct_file=sfile)))
    alloc = tuple(dict.fromkeys(a for v in values if v.kind is not AccessKind.TYPED or not v.path
                                for a in v.alloc if not a.startswith("field:")))
    if alloc:
        out.append(dataclasses.replace(
            s, access=Access(AccessKind.RAW, alloc=alloc, why=s.access.why + " (field flow)")))
    return out or [s]
