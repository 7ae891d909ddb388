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
from .csource import Decl, Function, Source, call_pattern, calls, declarations, function_at, functions, split_top
from .model import Access, AccessKind, Param, Site, Window
from .expr import is_constant, strip, top_plus
from .structs import Structs
from .symbolic import Values
from .tree import Tree

_CHAIN = re.compile(r"^([A-Za-z_]\w*)((?:\s*(?:->|\.)\s*\w+|\s*\[[^\[\]]*\])*)$")
_STEP = re.compile(r"\s*(->|\.)\s*(\w+)|\s*\[[^\[\]]*\]")
_CALL_ROOT = re.compile(r"^(\w+)\s*\((.*)\)((?:\s*(?:->|\.)\s*\w+|\s*\[[^\[\]]*\])*)$", re.S)
_CONTAINER = re.compile(r"^container_of(?:_const)?\s*\(.*,\s*(?:const\s+)?struct\s+(\w+)\s*,\s*[\w.]+\s*\)$", re.S)
_PARAMS = re.compile(r"\w+\s*\(([^;{}]*)\)\s*(?:__\w+(?:\([^()]*\))?\s*)*$", re.S)
# pointer arithmetic on these counts bytes: `buf + offset` is offset bytes in
BYTE_BASES = frozenset({"void", "char", "u8", "__u8", "s8", "__s8", "uint8_t", "int8_t"})
RAW_BASES = frozenset({"void", "char", "u8", "__u8", "s8", "uint8_t", "unsigned", "u16", "u32", "u64",
                       "__le16", "__le32", "__be32", "__le64", "int", "long", "short", "__u32", "__u64"})


@dataclass
class Context:
    src: Source
    func: Function | None
    decls: dict[str, Decl]
    globals_: dict[str, Decl]
    structs: Structs
    wrappers: dict[str, tuple[str, str]]
    pos: int = -1                  # the copy call's offset: which assignment reaches it
    values: Values | None = None   # the file's known values (symbolic.py), made when first needed


def resolve(expr: str, ctx: Context, depth: int = 0) -> Access:
    """What EXPR, a kernel pointer in ctx's function, points into."""
    got = _resolve(expr, ctx, depth)
    if got.kind is AccessKind.TYPED and not got.struct_file:
        sd = ctx.structs.get(got.struct, ctx.src.path)
        got = dataclasses.replace(got, struct_file=sd.file if sd else "")
    return got


def _resolve(expr: str, ctx: Context, depth: int = 0) -> Access:
    expr = strip(expr)
    if depth > 3:
        return Access(AccessKind.UNKNOWN, why="alias chain too long")
    plus = top_plus(expr)
    if plus:
        base = resolve(plus[0], ctx, depth + 1)
        if base.kind is AccessKind.TYPED:
            if plus[1].strip() == "1" and not base.path and _is_struct_pointer(plus[0], ctx):
                return Access(AccessKind.TYPED, base.struct, "+end", True, base.alloc)
            mem = ctx.structs.member(base.struct, base.path, ctx.src.path) if base.path else None
            if mem is not None and not (mem.array or mem.pointers or mem.struct) and \
                    not strip(plus[0]).startswith("&"):
                # an integer member plus a pointer (`conn->rx_off + desc->cpu_addr`):
                # the pointer is the other operand
                return resolve(plus[1], ctx, depth + 1)
            known = mem is not None and mem.array
            return Access(AccessKind.TYPED, base.struct, base.path, known, base.alloc)
        return base
    addr = expr.startswith("&")
    if addr:
        expr = strip(expr[1:])
    if m := _CONTAINER.match(expr):
        return Access(AccessKind.TYPED, m.group(1), "")
    over = _overlay(expr, ctx, depth)
    if over is not None:
        return over
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


def _overlay(expr: str, ctx: Context, depth: int) -> Access | None:
    """`IPCB(skb)->opt`, `&SOCK_SKB_CB(skb)->dropcount`: an accessor that
    casts a member of another struct (skb->cb) to a struct pointer; the
    copy is inside that member, whatever it reads of the struct laid over
    it (Structs.overlays)."""
    c = _CALL_ROOT.match(expr)
    if not c or c.group(1) not in ctx.structs.overlays or "," in c.group(2):
        return None
    param, body = ctx.structs.overlays[c.group(1)]
    arg = strip(c.group(2))
    if not _CHAIN.match(arg):
        return None
    inner = re.sub(rf"\(\s*{re.escape(param)}\s*\)|\b{re.escape(param)}\b", arg, body)
    inner = strip(inner)
    inner = strip(inner[1:]) if inner.startswith("*") else inner
    got = resolve(inner, ctx, depth + 1)
    return got if got.kind is AccessKind.TYPED and got.path else None


def _first_arrow(steps: str) -> bool:
    return "->" in steps


def _is_struct_pointer(expr: str, ctx: Context) -> bool:
    m = _CHAIN.match(strip(expr))
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
        if last_mem is None:                   # a member-name macro (vii_immed)
            path = ctx.structs.expand(cur, ".".join(path), near).split(".")
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
    """What the function assigns VAR: with a copy call's position, the
    assignments before it, the nearest first (kvm_stats_read()'s `src` is
    four things in turn; the first that says something is taken), else
    all of them."""
    if ctx.func is None:
        return []
    body = ctx.src.code[ctx.func.start:ctx.func.end]
    if ctx.pos > 0:
        before = _assigned(var, body[:ctx.pos - ctx.func.start])
        if before:
            return before[::-1]
    return _assigned(var, body)


def _param_root(value: str, ctx: Context) -> tuple[int, bool] | None:
    """VALUE is a parameter of the function, maybe plus an offset:
    (its index, whether an offset is added)."""
    expr = strip(value)
    plus = top_plus(expr)
    root = strip(plus[0]) if plus else expr
    names = params(ctx.src, ctx.func) if ctx.func else []
    return (names.index(root), plus is not None) if root and root in names else None


def _assigned(var: str, body: str) -> list[str]:
    out = [a.strip() for a in re.findall(rf"(?<![\w.>]){re.escape(var)}\s*=(?!=)\s*([^;]+);", body)]
    return out


def _allocs(var: str, ctx: Context) -> tuple[str, ...]:
    tags = [alloc_tag(value, ctx.wrappers) for value in _assignments(var, ctx)]
    return tuple(dict.fromkeys(t for t in tags if t))


def alloc_tag(value: str, wrappers: dict[str, tuple[str, str]]) -> str:
    """What VALUE, an allocator's call, allocates from: "cache:VAR",
    "pool:VAR", "kmalloc:FAMILY", a wrapper's; "" for anything else."""
    m = re.match(r"^(?:\([^()]*\)\s*)*(\w+)\s*\((.*)\)$", value.strip(), re.S)
    if not m:
        return ""
    name, args = m.group(1), m.group(2)
    kind = ALLOCATORS.get(name)
    if kind in (Alloc.CACHE, Alloc.POOL):
        first = args.split(",")[0].strip()
        first = re.split(r"->|\.", first)[-1]
        return f"{kind}:{first}"
    if kind == Alloc.KMALLOC:
        flavour = next((f for word, f in KMALLOC_FLAVOURS if word in args), "kmalloc")
        if name in USERCOPY_ALLOCATORS:
            flavour = "usersized-kmalloc"
        if flavour == "usersized-kmalloc" and "ACCOUNT" in args:
            flavour = "usersized-kmalloc-cg"
        return f"kmalloc:{flavour}"
    if name in wrappers:
        return ":".join(wrappers[name])
    return ""


def _passed(value: str, ctx: Context) -> str:
    """`__raw_xsave_addr(xsave, i)`, a function that returns its argument
    (plus an offset: Structs.passes): that argument (plus an offset)."""
    m = re.fullmatch(r"(\w+)\s*\((.*)\)", value, re.S)
    if not m or m.group(1) not in ctx.structs.passes:
        return value
    index, plus = ctx.structs.passes[m.group(1)]
    args = split_top(m.group(2), 0, len(m.group(2)))
    if index >= len(args):
        return value
    arg = m.group(2)[args[index][0]:args[index][1]].strip()
    return offset_of(arg) if plus else arg


def offset_of(expr: str) -> str:
    """EXPR plus an offset not known here, as an expression resolve() reads."""
    # `(x) + off` alone would read as a cast of `+ off`
    return f"{expr} + __offset" if _CHAIN.match(expr) else f"({expr}) + __offset"


def _alias(var: str, ctx: Context, depth: int) -> Access | None:
    for value in _assignments(var, ctx):
        bare = _passed(strip(value), ctx)
        if re.match(r"^\w+\s*\(", bare) and not _CONTAINER.match(bare) and not _CALL_ROOT.match(bare):
            continue
        if _param_root(bare, ctx):
            return None            # a parameter's value: its callers say (_param)
        got = resolve(bare, ctx, depth + 1)
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
    pat = call_pattern([n for n, k in ALLOCATORS.items() if k in (Alloc.CACHE, Alloc.POOL)] +
                       [n for n, k in ALLOCATORS.items() if k == Alloc.KMALLOC])
    out: dict[str, tuple[str, str]] = {}
    for rel in files:
        text = tree.text(rel)
        if "mempool_create_slab_pool" in text:
            for pool, cache in _POOL.findall(text):
                pools.setdefault(pool, cache)
        # kmalloc wrappers matter when their own flags pick a family
        # (seq_buf_alloc(): GFP_KERNEL_ACCOUNT, with the series | GFP_USERCOPY)
        if "kmem_cache_alloc" not in text and "mempool_alloc" not in text and \
                "kmem_buckets_alloc" not in text and \
                not any(word in text for word, _f in KMALLOC_FLAVOURS):
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
            if ALLOCATORS[call.name] == Alloc.KMALLOC:
                arg = alloc_tag(src.code[call.start:call.end], {}).partition(":")[2]
                if arg == "kmalloc":
                    continue        # the default family: nothing a wrapper adds
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
         progress=None, table: dict[str, list[CopyFunction]] | None = None,
         files: list[str] | None = None) -> list[Site]:
    """Every call of TABLE's copy functions (the base table: copyfuncs) in
    FILES (every .c file), its kernel pointer resolved in the caller."""
    table = table if table is not None else {n: [f] for n, f in by_name().items()}
    pat = call_pattern(table)
    out: list[Site] = []
    if files is None:       # .h files too: static inline helpers
        files = tree.files_matching([r"\b(" + "|".join(sorted(table)) + r")\s*\("])
    for n, rel in enumerate(files, 1):
        if progress and n % 10000 == 0:
            progress(f"sites: {n} of {len(files)} files, {len(out)} sites")
        if not pat.search(tree.text(rel)):
            continue
        src = tree.source(rel)
        funcs = functions(src)
        globals_ = file_scope(src, funcs)
        decl_cache: dict[int, dict[str, Decl]] = {}
        values: Values | None = None
        for call in calls(src, pat):
            func = function_at(funcs, call.start)
            if func is None:
                continue        # a prototype or a macro's body
            for fn in table[call.name]:
                if (fn.only_file and fn.only_file != rel) or len(call.args) <= max(fn.kptr, fn.size):
                    continue
                if func.start not in decl_cache:
                    decl_cache[func.start] = declarations(src.code[func.start:func.end])
                ctx = Context(src, func, decl_cache[func.start], globals_, structs, wrappers,
                              call.start, values)
                out.append(site_of(ctx, rel, call, fn))
                values = ctx.values
    return out


def site_of(ctx: Context, rel: str, call, fn: CopyFunction) -> Site:
    src, func = ctx.src, ctx.func
    ptr = " ".join(src.code[slice(*call.args[fn.kptr])].split())
    size = " ".join(src.code[slice(*call.args[fn.size])].split()) if fn.size >= 0 else \
        f"({fn.where})"
    checked = fn.always or not (is_constant(size) or _constant_before(src, func, call.start, size))
    via = fn.where.split("(", 1)[0].rsplit(" ", 1)[-1] if fn.where.startswith("derived:") else ""
    access = resolve(offset_of(ptr) if fn.arith else ptr, ctx)
    param = None
    if access.kind is AccessKind.UNKNOWN or (access.kind is AccessKind.RAW and not access.alloc):
        param = _param(ptr, size, ctx)
    window = _window(ptr, size, ctx, call.start) if access.kind is AccessKind.RAW and access.alloc \
        and not fn.arith and fn.size >= 0 else None
    return Site(rel, src.line_of(call.start), func.name, fn.name, fn.direction, ptr, size,
                checked, access, param, via, window)


def _window(ptr: str, size: str, ctx: Context, pos: int) -> Window | None:
    """PTR is a local byte pointer (`unsigned char *buf`) plus an offset:
    the offset and SIZE with the function's once-written locals put in
    (symbolic.Values.window), for a region given as expressions."""
    expr = strip(ptr)
    plus = top_plus(expr)
    base = plus[0] if plus else expr
    offset = expr[len(base):].strip() if plus else "0"
    decl = ctx.decls.get(base)
    if not re.fullmatch(r"[A-Za-z_]\w*", base) or decl is None or decl.pointers != 1 or \
            decl.struct or decl.base not in BYTE_BASES or ctx.func is None:
        return None
    if ctx.values is None:
        ctx.values = Values(ctx.src)
    got = ctx.values.window(ctx.func, pos, offset, size)
    return Window(*got) if got else None


def params(src: Source, func: Function) -> list[str]:
    """The names of FUNC's parameters, in order ("" for an unnamed one)."""
    head = src.code[func.start:func.body].rstrip()
    m = _PARAMS.search(head)
    if not m:
        return []
    out = []
    for a, b in split_top(m.group(1), 0, len(m.group(1))):
        words = re.findall(r"\w+", re.sub(r"\[[^\]]*\]|\(\s*\*\s*(\w+)\s*\)\s*\(.*", r" \1 ",
                                           m.group(1)[a:b]))
        out.append(words[-1] if len(words) > 1 else "")
    return out


def _param(ptr: str, size: str, ctx: Context) -> Param | None:
    """PTR is a parameter of the function, or a local whose nearest
    assignment before the call that says something is one (`src = id +
    pos; copy_to_user(.., src, ..)`)."""
    src, func = ctx.src, ctx.func
    got = _param_root(ptr, ctx)
    bare = strip(ptr)
    if got is None and re.fullmatch(r"\w+", bare):
        for value in _assignments(bare, ctx):
            value = _passed(strip(value), ctx)
            got = _param_root(value, ctx)
            if got is not None or resolve(value, ctx).kind is not AccessKind.UNKNOWN:
                break
    if got is None:
        return None
    names = params(src, func)
    static = re.search(r"\bstatic\b", src.code[func.start:func.body]) is not None
    size_index = names.index(size) if size in names else -1
    return Param(got[0], got[1], size_index, static and src.path.endswith(".c"), static)


def _constant_before(src: Source, func: Function, pos: int, size: str) -> bool:
    """SIZE is a variable whose last assignment before the call is a constant
    that every path to the call takes (`len = sizeof(struct sctp_initmsg);`
    in the call's own block): the compiler sees a constant.  One under an
    `if` (`if (len > sizeof(f)) len = sizeof(f);`) leaves a variable."""
    if not re.fullmatch(r"[A-Za-z_]\w*", size):
        return False
    code = src.code
    found = list(re.finditer(rf"(?<![\w.>]){re.escape(size)}\s*=(?!=)\s*([^;]+);", code[func.body:pos]))
    if not found or not is_constant(found[-1].group(1)):
        return False
    at = func.body + found[-1].start()
    between = code[at:pos]
    depth = 0
    for c in between:                     # the call is in the assignment's block
        depth += c == "{"
        depth -= c == "}"
        if depth < 0:
            return False
    before = code[func.body:at].rstrip()
    if re.search(r"\b(?:else|do)\s*$", before):
        return False                      # `else len = ...;`
    # a declaration's initializer (`int downcall_size = sizeof(..);`): its type words
    before = re.sub(r"[\w\s*]*$", "", before)
    return before.endswith((";", "{", "}", ","))   # not `if (...) len = ...;`
def file_scope(src: Source, funcs: list[Function]) -> dict[str, Decl]:
    parts = []
    last = 0
    for f in funcs:
        parts.append(src.code[last:f.body])
        last = f.end
    parts.append(src.code[last:])
    text = "\n".join(parts)
    return declarations(text)


__all__ = ["scan", "find_wrappers", "resolve", "is_constant"]
