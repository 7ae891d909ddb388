"""Every slab cache the tree creates, the struct its objects are and its
usercopy region: kmem_cache_create[_usercopy](), KMEM_CACHE[_USERCOPY](),
kmem_buckets_create() (the series), struct proto tables that
proto_register(.., 1) gives a cache, and the kmalloc families."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from .csource import Source, call_pattern, calls, functions, matching, split_args
from .model import Cache, Region, RegionKind
from .structs import Structs
from .symbolic import Values
from .tree import Tree

CREATORS = {
    # name: (name arg, size arg, useroffset arg, usersize arg); -1: none
    "kmem_cache_create": (0, 1, -1, -1),
    "kmem_cache_create_usercopy": (0, 1, 4, 5),
    "KMEM_CACHE": (0, 0, -1, -1),
    "KMEM_CACHE_USERCOPY": (0, 0, -1, 2),
    "kmem_buckets_create": (0, -1, 2, 3),
}
_CREATE = call_pattern(CREATORS)
_OFFSETOF = re.compile(r"^\(?\s*offsetof\s*\(\s*(?:struct|union)\s+(\w+)\s*,\s*([\w.]+(?:\[\d+\])?)\s*\)\s*\)?$")
_SIZEOF_FIELD = re.compile(r"^\(?\s*(?:sizeof_field|FIELD_SIZEOF)\s*\(\s*(?:struct|union)\s+(\w+)\s*,\s*([\w.]+)\s*\)\s*\)?$")
_SIZEOF_STRUCT = re.compile(r"sizeof\s*\(\s*(?:struct|union)\s+(\w+)\s*\)")
_RANGE = re.compile(r"^(offsetof|offsetofend)\s*\(\s*(?:struct|union)\s+(\w+)\s*,\s*([\w.]+)\s*\)\s*-\s*"
                    r"offsetof\s*\(\s*(?:struct|union)\s+\2\s*,\s*([\w.]+)\s*\)\s*"
                    r"(?:\+\s*sizeof_field\s*\(\s*(?:struct|union)\s+\2\s*,\s*([\w.]+)\s*\))?$")
_LITERAL = re.compile(r'^\s*"([^"]*)"\s*$')
_PROTO = re.compile(r"\bstruct\s+proto\s+(\w+)\s*(?:__\w+\s*)*=\s*\{")
_PROTO_REGISTER = re.compile(r"\bproto_register\s*\(\s*&\s*(\w+)\s*,\s*(?:1|true)\s*\)")
_KMALLOC_NAME = re.compile(r'"((?:[\w]+-)*kmalloc-(?:[\w]+-)*)"\s*#\s*\w+')

# Regions the source computes at run time, per cache: (kind, struct, first),
# with the reason.  task_struct: kernel/fork.c task_struct_whitelist() asks
# arch_thread_struct_whitelist(); x86's (arch/x86/include/asm/processor.h)
# gives thread.fpu.__fpstate.regs and the xstate size, which runs to the
# end of the object (fpu/init.c CHECK_MEMBER_AT_END_OF).
# Files whose create calls with a computed name are the machinery other
# callers go through (proto_register() for struct proto tables, read here
# as tables; kmem_buckets_create()'s own caches), not caches of their own.
GENERIC_CREATORS = frozenset({"mm/slab_common.c", "net/core/sock.c"})
# Caches whose name the source computes: (file, name argument) -> the name.
NAME_HINTS = {("net/9p/client.c", "cache_name"): "9p-fcall-cache-*"}

RUNTIME_REGIONS = {
    "task_struct": (RegionKind.TAIL, "task_struct", "thread.fpu.__fpstate.regs"),
}


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _expand(src: Source, text: str) -> str:
    """Object-like macros of the file in TEXT replaced once (SIZEOF_PDE)."""
    def sub(m: re.Match) -> str:
        d = src.defines.get(m.group(0))
        return f"({d[1]})" if d and not d[0] else m.group(0)
    return re.sub(r"\b[A-Z_][A-Z0-9_]*\b", sub, text)


def _unparen(text: str) -> str:
    text = text.strip()
    while text.startswith("(") and matching(text, 0) == len(text):
        text = text[1:-1].strip()
    return text


def parse_region(useroffset: str, usersize: str, size: str, structs: Structs, near: str) -> Region:
    uo, us = _unparen(_norm(useroffset)), _unparen(_norm(usersize))
    text = f"{uo}, {us}"
    if us in ("0", "") and uo in ("0", ""):
        return Region(RegionKind.NONE, text=text)
    if uo == "0" and (us == _norm(size) or us.replace("(", "").replace(")", "") ==
                      _norm(size).replace("(", "").replace(")", "")):
        return Region(RegionKind.WHOLE, text=text)
    m = _SIZEOF_STRUCT.fullmatch(uo)
    if m:     # from the end of a header struct on: kmem_buckets (msg_msg)
        return Region(RegionKind.TAIL, m.group(1), "+end", "+end", text)
    m = _OFFSETOF.match(uo)
    if not m:
        return Region(RegionKind.OPAQUE, text=text)
    struct, first = m.group(1), structs.expand(m.group(1), m.group(2), near)
    if (f := _SIZEOF_FIELD.match(us)) and structs.expand(struct, f.group(2), near) == first:
        return Region(RegionKind.FIELDS, struct, first, first, text)
    if (r := _RANGE.match(us)) and structs.expand(struct, r.group(4), near) == first:
        last = structs.expand(struct, r.group(5) or r.group(3), near)
        if not r.group(5) and r.group(1) == "offsetof":   # offsetof(B) - offsetof(A): up to the member before B
            prefix, _, b = last.rpartition(".")
            owner = structs.member(struct, prefix, near).struct if prefix else struct
            order = structs.order(owner, near) if owner else []
            last = (prefix + "." if prefix else "") + order[order.index(b) - 1] \
                if b in order and order.index(b) > 0 else first
        return Region(RegionKind.FIELDS, struct, first, last, text)
    if (s := _SIZEOF_STRUCT.fullmatch(us)):
        mem = structs.member(struct, first, near)
        if mem is not None and mem.struct == s.group(1):
            return Region(RegionKind.FIELDS, struct, first, first, text)
    return Region(RegionKind.TAIL, struct, first, first, text)


@dataclass
class CacheScan:
    caches: list[Cache]
    protos_unregistered: list[Cache]       # struct proto tables with a region no cache carries


def scan(tree: Tree, structs: Structs, progress=None) -> CacheScan:
    caches: list[Cache] = []
    protos: list[tuple[Cache, str]] = []
    registered: set[str] = set()
    files = tree.files()
    for n, rel in enumerate(files, 1):
        if progress and n % 10000 == 0:
            progress(f"caches: {n} of {len(files)} files")
        if not rel.endswith(".c"):
            continue
        text = tree.text(rel)
        if "proto_register" in text:
            registered |= set(_PROTO_REGISTER.findall(text))
        if not any(k in text for k in ("kmem_cache_create", "KMEM_CACHE", "kmem_buckets_create",
                                       "struct proto ", "create_kmalloc_cache")):
            continue
        src = tree.source(rel)
        caches.extend(_creates(src, structs))
        protos.extend(_protos(src, structs))
        if "create_kmalloc_cache" in text and _KMALLOC_NAME.search(src.text):
            for prefix in dict.fromkeys(_KMALLOC_NAME.findall(src.text)):
                caches.append(Cache(prefix + "*", "", Region(RegionKind.WHOLE, text="0, size"),
                                    rel, 0, "", family=True))
    unregistered = []
    for cache, var in protos:
        (caches if var in registered else unregistered).append(cache)
    return CacheScan(caches, [c for c in unregistered if c.has_region])


def _creates(src: Source, structs: Structs) -> list[Cache]:
    out = []
    values: Values | None = None
    for call in calls(src, _CREATE):
        if src.line_of(call.start) and _is_definition(src, call):
            continue
        n_arg, s_arg, o_arg, u_arg = CREATORS[call.name]
        args = [src.code[a:b] for a, b in call.args]
        if len(args) <= max(n_arg, s_arg, o_arg, u_arg):
            continue
        raw_name = src.literal(*call.args[n_arg]).strip()
        lit = _LITERAL.match(raw_name)
        if not lit and src.path in GENERIC_CREATORS and not call.name.startswith("KMEM_CACHE"):
            continue
        if call.name.startswith("KMEM_CACHE"):
            struct = name = _norm(args[0])
            size = f"sizeof(struct {struct})"
        else:
            name = lit.group(1) if lit else NAME_HINTS.get((src.path, _norm(raw_name)),
                                                           f"<{_norm(raw_name)}>")
            size = _local_value(src, call.start, _expand(src, args[s_arg])) if s_arg >= 0 else ""
            m = _SIZEOF_STRUCT.search(size)
            struct = m.group(1) if m else ""
        if call.name == "KMEM_CACHE_USERCOPY":
            field = _norm(args[2])
            region = Region(RegionKind.FIELDS, struct, field, field, f"{field}")
        elif o_arg < 0:
            region = Region(RegionKind.NONE, text="0, 0")
        else:
            uo, us = (_local_value(src, call.start, _expand(src, args[i])) for i in (o_arg, u_arg))
            region = parse_region(uo, us, size, structs, src.path)
            if region.kind is RegionKind.OPAQUE:
                # expressions a copy in this file may name as they are (LKDTM's
                # cache_size / 4, cache_size / 16): match.py compares them
                values = values or Values(src)
                sym = values.region(next((f for f in values.funcs if f.body <= call.start < f.end), None),
                                    _unparen(_norm(uo)), _unparen(_norm(us)))
                if sym:
                    region = dataclasses.replace(region, useroffset=sym[0], usersize=sym[1])
        if call.name == "kmem_buckets_create":
            name += "-*"
        if name in RUNTIME_REGIONS and region.kind is RegionKind.OPAQUE:
            kind, rstruct, first = RUNTIME_REGIONS[name]
            region = Region(kind, rstruct, first, first, region.text + " (run time: RUNTIME_REGIONS)")
        if not struct and region.struct:
            struct = region.struct
        out.append(Cache(name, struct, region, src.path, src.line_of(call.start),
                         _assigned_to(src, call.start), family=call.name == "kmem_buckets_create"))
    return out


def _local_value(src: Source, pos: int, expr: str) -> str:
    """Identifiers of EXPR replaced by what the enclosing function assigns
    them (`useroffset = offsetof(struct x86_emulate_ctxt, src);`), once."""
    func = next((f for f in functions(src) if f.body <= pos < f.end), None)
    if func is None:
        return expr
    body = src.code[func.body:pos]

    def sub(m: re.Match) -> str:
        a = re.findall(rf"(?<![\w.>]){re.escape(m.group(0))}\s*=\s*([^;=]+);", body)
        return f"({a[-1].strip()})" if a else m.group(0)
    return re.sub(r"\b(?!sizeof|offsetof|struct)[a-z_]\w*\b(?!\s*(?:[(.]|->))", sub, expr)


def _is_definition(src: Source, call) -> bool:
    """`kmem_cache_create(const char *name, ...)` itself, or a macro's body."""
    head = src.code[max(0, call.start - 80):call.start]
    return bool(re.search(r"(\*|\bstruct kmem_cache\s*\*?|\bkmem_buckets\s*\*)\s*$", head)) or \
        bool(re.search(r"\bconst\s+char\s*\*", src.code[call.start:call.end]))


def _assigned_to(src: Source, pos: int) -> str:
    head = src.code[max(0, pos - 200):pos]
    m = re.search(r"([\w.>-]+)\s*=\s*(?:\([^()]*\)\s*)?$", head)
    if not m:
        return ""
    return re.split(r"->|\.", m.group(1))[-1]


def _field(body: str, key: str) -> str:
    m = re.search(rf"\.{key}\s*=", body)
    if not m:
        return ""
    spans = split_args(body, m.end(), len(body))
    return body[spans[0][0]:spans[0][1]] if spans else ""


def _protos(src: Source, structs: Structs) -> list[tuple[Cache, str]]:
    out = []
    for m in _PROTO.finditer(src.code):
        end = matching(src.code, m.end() - 1, "{", "}")
        body = src.code[m.end():end - 1]
        lit_body = src.text[m.end():end - 1]
        name = _LITERAL.match(_field(lit_body, "name") or "")
        obj = _SIZEOF_STRUCT.search(_field(body, "obj_size"))
        if not name or not obj:
            continue
        uo, us = _field(body, "useroffset"), _field(body, "usersize")
        region = parse_region(uo or "0", us or "0", f"sizeof(struct {obj.group(1)})", structs, src.path)
        out.append((Cache(name.group(1), obj.group(1), region, src.path, src.line_of(m.start())),
                    m.group(1)))
    return out


def by_var(caches: list[Cache]) -> dict[str, list[Cache]]:
    out: dict[str, list[Cache]] = {}
    for c in caches:
        if c.var:
            out.setdefault(c.var, []).append(c)
    return out


