"""Copy sites: every call of a copy function of the table (copyfuncs), its
kernel pointer resolved to what it points into (model.Access): a member of
a struct, a plain buffer and where it was allocated, the stack, a global.

The pointer is read as written: casts and parentheses dropped, `&a->b.c[i]`
is member b.c of *a, `a->buf + off` is member buf, `p + 1` of a struct
pointer is the end of *p (msg_msg's text), a local `void *` or `char *`
is followed to what the function assigns it, accessors such as tcp_sk()
and container_of() give their struct.  What is not read so is UNKNOWN
with the reason, never guessed."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from .copyfuncs import ALLOCATORS, KMALLOC_FLAVOURS, USERCOPY_ALLOCATORS, Alloc, CopyFunction, by_name
from .csource import Decl, Function, Source, call_pattern, calls, declarations, function_at, functions
from .model import Access, AccessKind, Site
from .structs import Structs
from .tree import Tree

_CAST = re.compile(r"^\(\s*(?:const\s+|volatile\s+)?(?:struct\s+|union\s+)?\w+(?:\s+(?:const|__user|__force|__iomem))*"
                   r"\s*\**\s*(?:__force\s*)?\)\s*")
_SIZEOF = re.compile(r"\bsizeof\s*(?:\((?:[^()]|\([^()]*\))*\)|[\w.>-]+)")
_CONSTANT = re.compile(r"^[\s\d+\-*/()<>|&~xXa-fA-FuUlL]*$")
_CHAIN = re.compile(r"^([A-Za-z_]\w*)((?:\s*(?:->|\.)\s*\w+|\s*\[[^\[\]]*\])*)$")
_STEP = re.compile(r"\s*(->|\.)\s*(\w+)|\s*\[[^\[\]]*\]")
_CALL_ROOT = re.compile(r"^(\w+)\s*\((.*)\)((?:\s*(?:->|\.)\s*\w+|\s*\[[^\[\]]*\])*)$", re.S)
_CONTAINER = re.compile(r"^container_of(?:_const)?\s*\(.*,\s*(?:const\s+)?struct\s+(\w+)\s*,\s*[\w.]+\s*\)$", re.S)
RAW_BASES = frozenset({"void", "char", "u8", "__u8", "s8", "uint8_t", "unsigned", "u16", "u32", "u64",
                       "__le16", "__le32", "__be32", "__le64", "int", "long", "short", "__u32", "__u64"})


def _strip(expr: str) -> str:
    expr = " ".join(expr.split())
    while True:
        before = expr
        expr = _CAST.sub("", expr)
        if expr.startswith("(") and _balanced_outer(expr):
            expr = expr[1:-1].strip()
        if expr == before:
            return expr


def _balanced_outer(expr: str) -> bool:
    depth = 0
    for i, c in enumerate(expr):
        depth += c == "("
        depth -= c == ")"
        if depth == 0 and i < len(expr) - 1:
            return False
    return depth == 0


def _top_plus(expr: str) -> tuple[str, str] | None:
    """`base + off` / `base - off` at the top level: (base, off)."""
    depth = 0
    for i, c in enumerate(expr):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c in "+-" and depth == 0 and i > 0 and expr[i - 1] not in "-+" and \
                expr[i + 1:i + 2] not in (">", "+", "-") and expr[i - 1:i + 1] != "->":
            return expr[:i].strip(), expr[i + 1:].strip()
    return None


def is_constant(size: str) -> bool:
    """A compile-time constant size (check_object_size() skipped)."""
    rest = _SIZEOF.sub("1", " ".join(size.split()))
    rest = re.sub(r"\b[A-Z_][A-Z0-9_]*\b(?!\s*\()", "1", rest)
    rest = re.sub(r"\((?:const\s+)?(?:unsigned\s+)?(?:int|long|size_t|u32|u64|unsigned)\)", "", rest)
    return bool(_CONSTANT.match(rest)) and bool(rest.strip())


@dataclass
class Context:
    src: Source
    func: Function | None
    decls: dict[str, Decl]
    globals_: dict[str, Decl]
    structs: Structs
    wrappers: dict[str, tuple[str, str]]


def resolve(expr: str, ctx: Context, depth: int = 0) -> Access:
    """What EXPR, a kernel pointer in ctx's function, points into."""
    got = _resolve(expr, ctx, depth)
    if got.kind is AccessKind.TYPED and not got.struct_file:
        sd = ctx.structs.get(got.struct, ctx.src.path)
        got = dataclasses.replace(got, struct_file=sd.file if sd else "")
    return got


def _resolve(expr: str, ctx: Context, depth: int = 0) -> Access:
    expr = _strip(expr)
    if depth > 3:
        return Access(AccessKind.UNKNOWN, why="alias chain too long")
    plus = _top_plus(expr)
    if plus:
        base = resolve(plus[0], ctx, depth + 1)
        if base.kind is AccessKind.TYPED:
            if plus[1].strip() == "1" and not base.path and _is_struct_pointer(plus[0], ctx):
                return Access(AccessKind.TYPED, base.struct, "+end", True, base.alloc)
            mem = ctx.structs.member(base.struct, base.path, ctx.src.path) if base.path else None
            known = mem is not None and mem.array
            return Access(AccessKind.TYPED, base.struct, base.path, known, base.alloc)
        return base
    addr = expr.startswith("&")
    if addr:
        expr = _strip(expr[1:])
    if m := _CONTAINER.match(expr):
        return Access(AccessKind.TYPED, m.group(1), "")
    root, steps, root_struct = _root(expr, ctx)
    if root is None:
        return Access(AccessKind.UNKNOWN, why=f"not a member chain: {expr[:60]}")
    if root_struct is not None:           # an accessor call: tcp_sk(sk)->...
        return _walk(root_struct, steps, addr, ctx, ())
    decl = ctx.decls.get(root)
    where_local = decl is not None
    if decl is None:
        decl = ctx.globals_.get(root)
    if decl is None:
        return Access(AccessKind.UNKNOWN, why=f"no declaration of {root}")
    alloc = _allocs(root, ctx)
    if not steps:
        if decl.pointers == 0 or (decl.array and decl.pointers == 0):
            if addr or decl.array:
                return Access(AccessKind.STACK if where_local else AccessKind.GLOBAL, decl.struct, "")
            return Access(AccessKind.UNKNOWN, why=f"{root} is not a pointer")
        if decl.array:
            return Access(AccessKind.UNKNOWN, why=f"{root} is an array of pointers")
        if decl.struct and decl.pointers == 1:
            return Access(AccessKind.TYPED, decl.struct, "", True, alloc)
        alias = _alias(root, ctx, depth)
        if alias is not None:
            return alias
        return Access(AccessKind.RAW, alloc=alloc, why=root)
    if decl.pointers == 0 and not decl.struct:
        return Access(AccessKind.STACK if where_local else AccessKind.GLOBAL)
    if decl.pointers == 0 or decl.array:
        # a struct by value (or an array of them): on the stack or global
        kind = AccessKind.STACK if where_local else AccessKind.GLOBAL
        inner = _walk(decl.struct, steps, addr, ctx, alloc) if decl.struct else None
        if inner is not None and inner.kind is AccessKind.TYPED and _first_arrow(steps):
            return inner
        return Access(kind, decl.struct)
    if not decl.struct:
        return Access(AccessKind.UNKNOWN, why=f"{root} is not a struct pointer")
    return _walk(decl.struct, steps, addr, ctx, alloc)


def _first_arrow(steps: str) -> bool:
    return "->" in steps


def _is_struct_pointer(expr: str, ctx: Context) -> bool:
    m = _CHAIN.match(_strip(expr))
    return bool(m) and not m.group(2) and bool((ctx.decls.get(m.group(1)) or Decl("", "", "", 0, False)).struct)


def _root(expr: str, ctx: Context) -> tuple[str | None, str, str | None]:
    m = _CHAIN.match(expr)
    if m:
        return m.group(1), m.group(2), None
    c = _CALL_ROOT.match(expr)
    if c and c.group(1) in ctx.structs.returns:
        return c.group(1), c.group(3), ctx.structs.returns[c.group(1)]
    return None, "", None


def _walk(struct: str, steps: str, addr: bool, ctx: Context, alloc: tuple[str, ...]) -> Access:
    """Member steps from a pointer to STRUCT: the struct last dereferenced
    and the path inside it."""
    path: list[str] = []
    cur = struct
    near = ctx.src.path
    last_mem = None
    for m in _STEP.finditer(steps):
        if m.group(1) is None:            # [i]
            if last_mem is not None and last_mem.pointers and not last_mem.array:
                # p->ptr[i]: into what ptr points to
                if not last_mem.pointer_to:
                    return Access(AccessKind.RAW, alloc=(), why=f"{cur}.{'.'.join(path)} (pointer member)")
                cur, path, last_mem = last_mem.pointer_to, [], None
            continue
        op, name = m.groups()
        if op == "->" and path:
            # deref of a pointer member: continue in the struct it points to
            if last_mem is None or not last_mem.pointer_to:
                return Access(AccessKind.UNKNOWN, why=f"{cur}.{'.'.join(path)} is not a struct pointer")
            cur, path, alloc = last_mem.pointer_to, [], ()
        path.append(name)
        last_mem = ctx.structs.member(cur, ".".join(path), near)
        if last_mem is None:
            return Access(AccessKind.UNKNOWN, why=f"no member {'.'.join(path)} in struct {cur}")
    if not addr and last_mem is not None and last_mem.pointers and not last_mem.array:
        # the value of a pointer member: a buffer stored in the struct
        if last_mem.pointer_to:
            return Access(AccessKind.TYPED, last_mem.pointer_to, "", True, ())
        return Access(AccessKind.RAW, why=f"struct {cur}: {'.'.join(path)}",
                      alloc=(f"field:{cur}.{'.'.join(path)}",))
    return Access(AccessKind.TYPED, cur, ".".join(path), True, alloc)


def _assignments(var: str, ctx: Context) -> list[str]:
    if ctx.func is None:
        return []
    body = ctx.src.code[ctx.func.start:ctx.func.end]
    out = [a.strip() for a in re.findall(rf"(?<![\w.>]){re.escape(var)}\s*=(?!=)\s*([^;]+);", body)]
    return out


def _allocs(var: str, ctx: Context) -> tuple[str, ...]:
    tags = []
    for value in _assignments(var, ctx):
        m = re.match(r"^(?:\([^()]*\)\s*)*(\w+)\s*\((.*)\)$", value, re.S)
        if not m:
            continue
        name, args = m.group(1), m.group(2)
        kind = ALLOCATORS.get(name)
        if kind in (Alloc.CACHE, Alloc.POOL):
            first = args.split(",")[0].strip()
            first = re.split(r"->|\.", first)[-1]
            tags.append(f"{kind}:{first}")
        elif kind == Alloc.KMALLOC:
            flavour = next((f for word, f in KMALLOC_FLAVOURS if word in args), "kmalloc")
            if name in USERCOPY_ALLOCATORS:
                flavour = "usersized-kmalloc"
            if flavour == "usersized-kmalloc" and "ACCOUNT" in args:
                flavour = "usersized-kmalloc-cg"
            tags.append(f"kmalloc:{flavour}")
        elif name in ctx.wrappers:
            tags.append(":".join(ctx.wrappers[name]))
    return tuple(dict.fromkeys(tags))


def _alias(var: str, ctx: Context, depth: int) -> Access | None:
    for value in _assignments(var, ctx):
        if re.match(r"^(?:\([^()]*\)\s*)*\w+\s*\(", value) and not _CONTAINER.match(_strip(value)) \
                and not _CALL_ROOT.match(_strip(value)):
            continue
        got = resolve(value, ctx, depth + 1)
        if got.kind in (AccessKind.TYPED, AccessKind.STACK, AccessKind.GLOBAL):
            return got
        if got.kind is AccessKind.RAW and got.alloc:
            return got
    return None


_POOL = re.compile(r"(\w+)\s*=\s*mempool_create_slab_pool\s*\([^,]+,\s*(\w+)\s*\)")


def find_wrappers(tree: Tree, files: list[str],
                  pools: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Functions and macros that return what a cache or pool allocator gives:
    __getname() -> ("cache", "names_cachep"), cifs_buf_get() -> ("pool", ...);
    POOLS gets each mempool_create_slab_pool()'s pool -> cache variable."""
    pat = call_pattern([n for n, k in ALLOCATORS.items() if k in (Alloc.CACHE, Alloc.POOL)])
    out: dict[str, tuple[str, str]] = {}
    for rel in files:
        text = tree.text(rel)
        if "mempool_create_slab_pool" in text:
            for pool, cache in _POOL.findall(text):
                pools.setdefault(pool, cache)
        if "kmem_cache_alloc" not in text and "mempool_alloc" not in text and \
                "kmem_buckets_alloc" not in text:
            continue
        src = tree.source(rel)
        for name, (params, body) in src.defines.items():
            m = pat.search(body)
            if m and re.match(r"^\s*\(?\s*" + re.escape(m.group(1)), body):
                arg = body[m.end():].split(",")[0].strip()
                out.setdefault(name, (ALLOCATORS[m.group(1)], arg))
        funcs = functions(src)
        for call in calls(src, pat):
            f = function_at(funcs, call.start)
            if f is None or not call.args:
                continue
            arg = re.split(r"->|\.", src.code[slice(*call.args[0])].strip())[-1]
            body = src.code[f.body:f.end]
            head = src.code[max(f.body, call.start - 120):call.start]
            v = re.search(r"(\w+)\s*=\s*(?:\([^()]*\)\s*)?$", head)
            returned = v is not None and re.search(
                r"\breturn\s+(?:\([^()]*\)\s*)?" + re.escape(v.group(1)) + r"\s*;", body)
            direct = re.search(r"\breturn\s+(?:\([^()]*\)\s*)?$", head)
            if returned or direct:
                out.setdefault(f.name, (ALLOCATORS[call.name], arg))
    return out


def scan(tree: Tree, structs: Structs, wrappers: dict[str, tuple[str, str]],
         progress=None) -> list[Site]:
    table = by_name()
    pat = call_pattern(table)
    names = tuple(table)
    out: list[Site] = []
    files = [f for f in tree.files() if f.endswith(".c")]
    for n, rel in enumerate(files, 1):
        if progress and n % 5000 == 0:
            progress(f"sites: {n} of {len(files)} files, {len(out)} sites")
        text = tree.text(rel)
        if not any(name in text for name in names):
            continue
        src = tree.source(rel)
        funcs = functions(src)
        globals_ = _file_scope(src, funcs)
        decl_cache: dict[int, dict[str, Decl]] = {}
        for call in calls(src, pat):
            fn: CopyFunction = table[call.name]
            if len(call.args) <= max(fn.kptr, fn.size):
                continue
            func = function_at(funcs, call.start)
            if func is None:
                continue        # a prototype or a macro's body
            if func.start not in decl_cache:
                decl_cache[func.start] = declarations(src.code[func.start:func.end])
            ctx = Context(src, func, decl_cache[func.start], globals_, structs, wrappers)
            ptr = " ".join(src.code[slice(*call.args[fn.kptr])].split())
            size = " ".join(src.code[slice(*call.args[fn.size])].split())
            checked = fn.always or not (is_constant(size) or
                                         _constant_before(src, func, call.start, size))
            out.append(Site(rel, src.line_of(call.start), func.name, fn.name, fn.direction,
                            ptr, size, checked, resolve(ptr, ctx)))
    return out


def _constant_before(src: Source, func: Function, pos: int, size: str) -> bool:
    """SIZE is a variable whose last assignment before the call is a constant
    (`len = sizeof(struct sctp_initmsg);`): the compiler sees a constant."""
    if not re.fullmatch(r"[A-Za-z_]\w*", size):
        return False
    found = re.findall(rf"(?<![\w.>]){re.escape(size)}\s*=(?!=)\s*([^;]+);", src.code[func.body:pos])
    return bool(found) and is_constant(found[-1])


def _file_scope(src: Source, funcs: list[Function]) -> dict[str, Decl]:
    parts = []
    last = 0
    for f in funcs:
        parts.append(src.code[last:f.body])
        last = f.end
    parts.append(src.code[last:])
    text = "\n".join(parts)
    return declarations(text)


__all__ = ["scan", "find_wrappers", "resolve", "is_constant"]
