"""Struct definitions of the tree: members in order, which are embedded
structs (by value), pointers, arrays; and where a struct sits inside
another one (embedding, the container_of relation)."""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field

from .csource import matching, split_top
from .expr import strip, top_plus
from .tree import Tree

# Accessors the sites go through: `static inline struct tcp_sock *tcp_sk(...)`
# and `#define rds_sk_to_rs(sk) container_of(sk, struct rds_sock, rs_sk)`.
_RETURNS = re.compile(r"\bstruct\s+(\w+)\s*\*\s*(\w+)\s*\([^;{)]*\)\s*\{")
_CONTAINER_MACRO = re.compile(r"#\s*define\s+(\w+)\s*\([^)]*\)\s*\\?\s*container_of(?:_const)?\s*\("
                              r"[^,]*,\s*(?:const\s+)?struct\s+(\w+)")
# Accessors that lay a struct over a member of another (skb->cb):
# `#define IPCB(skb) ((struct inet_skb_parm*)((skb)->cb))`,
# `static inline struct ieee802154_mac_cb *mac_cb(struct sk_buff *skb)
# { return (struct ieee802154_mac_cb *)skb->cb; }`: name -> (param, body).
_OVERLAY_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\((\w+)\)[ \t]*\\?\s*"
                            r"(\(\s*\*?\s*\(\s*(?:const\s+)?struct\s+\w+\s*\*\s*\)(?:[^\n]*\\\n)*[^\n]*)$", re.M)
_OVERLAY_INLINE = re.compile(r"\bstruct\s+(\w+)\s*\*\s*(\w+)\s*\(\s*(?:const\s+)?struct\s+\w+\s*\*\s*(\w+)\s*\)"
                             r"\s*\{\s*return\s+(\(\s*struct\s+\1\s*\*\s*\)[^;]+);\s*\}")
# Tables of function pointers: `static const struct vfio_iommu_driver_ops
# vfio_iommu_driver_ops_type1 = { ... .dma_rw = vfio_iommu_type1_dma_rw, }`.
_INIT_HEAD = re.compile(r"\bstruct\s+(\w+)\s+(?:__\w+\s+)*\w+\s*(?:\[[^\]]*\]\s*)?"
                        r"(?:__\w+(?:\([^()]*\))?\s*)*=\s*\{")
_DESIGNATED = re.compile(r"\.\s*(\w+)\s*=\s*&?\s*([a-z_]\w*)\s*(?=[,}])")
# Functions that return a parameter, maybe plus an offset (x86's
# __raw_xsave_addr(xsave, nr): `return (void *)xsave + offset;`).
_PTR_FUNC = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:const\s+)?(?:struct\s+)?\w+\s*\*\s*(\w+)\s*"
                       r"\(([^;{)]*)\)\s*\{", re.M)
_DEF = re.compile(r"\b(?:struct|union)\s+(\w+)\s*(?:__\w+(?:\(\([^()]*\)\))?\s*)*\{")
_MEMBER = re.compile(
    r"^\s*(?:(?:const|volatile|unsigned|signed|__user|__rcu|__percpu|__iomem|"
    r"____cacheline_aligned\w*|__randomize_layout|static)\s+)*"
    r"(struct|union|enum)?\s*(\w+)\s+((?:[*\s]|const|__user|__rcu|__percpu|__iomem)*)(\w+)\s*(\[[^\]]*\])?"
    r"\s*(?::\s*\w+)?\s*(?:__\w+(?:\([^()]*(?:\([^()]*\))?[^()]*\))?\s*)*$", re.S)
_ANON = re.compile(r"^\s*(?:__\w+\s+)*(?:struct|union)\s*(\w*)\s*(?:__\w+(?:\(\([^()]*\)\))?\s*)*\{")
_GROUP = re.compile(r"^\s*(?:struct_group|struct_group_tagged|struct_group_attr)\w*\s*\(")


@dataclass(frozen=True)
class Member:
    name: str
    struct: str            # by-value struct/union type, "" otherwise
    pointer_to: str        # struct the member points to ("" if none or not a struct)
    pointers: int
    array: bool
    base: str
    inner: tuple["Member", ...] = ()   # a named member of an anonymous struct/union type
    union: str = ""        # the anonymous union it is flattened from ("" if none): overlaps


@dataclass
class StructDef:
    name: str
    file: str
    members: list[Member]          # flattened: anonymous unions/structs inline, named
                                   # nested ones as members with a "{...}" struct name


@dataclass
class Structs:
    tree: Tree
    index: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    returns: dict[str, str] = field(default_factory=dict)     # function/macro -> struct it returns
    overlays: dict[str, tuple[str, str]] = field(default_factory=dict)  # accessor -> (param, body)
    ops: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # function -> {(struct, member)}
    passes: dict[str, tuple[int, bool]] = field(default_factory=dict)  # function -> (param, + offset)
    _parsed: dict[tuple[str, str], StructDef | None] = field(default_factory=dict)

    def build_index(self, progress=None, cache: dict | None = None) -> None:
        """Index every file of the tree.  CACHE (rel -> ((size, mtime_ns),
        FileFacts)) holds what an earlier run found per file: a file whose
        size and mtime are the same is not read again; CACHE is updated."""
        files = self.tree.files()
        for n, rel in enumerate(files, 1):
            st = self.tree.path(rel).stat()
            key = (st.st_size, st.st_mtime_ns)
            hit = cache.get(rel) if cache is not None else None
            if hit is not None and hit[0] == key:
                facts = hit[1]
            else:
                facts = file_facts(rel, self.tree.text(rel))
                if cache is not None:
                    cache[rel] = (key, facts)
            for name, pos in facts.defs:
                self.index.setdefault(name, []).append((rel, pos))
            for name, struct in facts.returns:
                self.returns.setdefault(name, struct)
            for name, param, body in facts.overlays:
                self.overlays.setdefault(name, (param, body))
            for func, struct, member in facts.ops:
                self.ops.setdefault(func, set()).add((struct, member))
            for func, index, plus in facts.passes:
                self.passes.setdefault(func, (index, plus))
            if progress and n % 5000 == 0:
                progress(f"structs: {n} of {len(files)} files")

    def _candidates(self, name: str, near: str) -> list[tuple[str, int]]:
        defs = self.index.get(name, [])
        here = os.path.dirname(near)

        def rank(d: tuple[str, int]) -> tuple[int, str]:
            f = d[0]
            if f == near:
                return (0, f)
            if os.path.dirname(f) == here:
                return (1, f)
            if f.startswith("include/"):
                return (2, f)
            return (3, f)
        return sorted(defs, key=rank)

    def get(self, name: str, near: str = "") -> StructDef | None:
        key = (name, near if any(d[0] == near or os.path.dirname(d[0]) == os.path.dirname(near)
                                 for d in self.index.get(name, [])) else "")
        if key in self._parsed:
            return self._parsed[key]
        found = None
        for rel, _ in self._candidates(name, near):
            src = self.tree.source(rel)
            for m in re.finditer(rf"\b(?:struct|union)\s+{re.escape(name)}\s*(?:__\w+(?:\(\([^()]*\)\))?\s*)*\{{",
                                 src.code):
                end = matching(src.code, m.end() - 1, "{", "}")
                found = StructDef(name, rel, self._named(name, rel, parse_members(src.code[m.end():end - 1])))
                break
            if found:
                break
        self._parsed[key] = found
        return found

    def _named(self, owner: str, rel: str, members: list[Member]) -> list[Member]:
        """A member of an anonymous struct/union type (`union {..} i_u1;`)
        gets one of its own: OWNER::MEMBER."""
        out = []
        for m in members:
            if m.inner:
                sub = f"{owner}::{m.name}"
                self._parsed[(sub, "")] = StructDef(sub, rel, self._named(sub, rel, list(m.inner)))
                m = dataclasses.replace(m, struct=sub if not m.pointers else "",
                                        pointer_to=sub if m.pointers else "", inner=())
            out.append(m)
        return out

    def expand(self, name: str, path: str, near: str = "") -> str:
        """PATH with the member-name macros of the struct's file expanded
        (freevxfs: `#define vii_immed vii_org.immed`)."""
        sd = self.get(name, near)
        out: list[str] = []
        parts = path.split(".") if path else []
        while parts and sd is not None:
            part = parts.pop(0)
            mem = next((m for m in sd.members if m.name == part), None)
            if mem is None:
                body = self.tree.source(sd.file).defines.get(part, ("x", ""))
                if not body[0] and re.fullmatch(r"\s*\w+(?:\.\w+)*\s*", body[1]) and \
                        body[1].split(".")[0].strip() in {m.name for m in sd.members}:
                    parts = body[1].strip().split(".") + parts
                    continue
                return ".".join(out + [part] + parts)
            out.append(part)
            sd = self.get(mem.struct, sd.file) if mem.struct else None
        return ".".join(out + parts)

    def member(self, name: str, path: str, near: str = "") -> Member | None:
        """The member PATH ("a.b.c") of struct NAME, through embedded structs."""
        sd = self.get(name, near)
        parts = path.split(".")
        for i, part in enumerate(parts):
            if sd is None:
                return None
            mem = next((m for m in sd.members if m.name == part), None)
            if mem is None:
                return None
            if i == len(parts) - 1:
                return mem
            sd = self.get(mem.struct, sd.file) if mem.struct else None
        return None

    def order(self, name: str, near: str = "") -> list[str]:
        sd = self.get(name, near)
        return [m.name for m in sd.members] if sd else []

    def ident(self, name: str, near: str = "") -> str:
        """NAME with the file of the definition seen from NEAR: two structs of
        one name (CAN's and IPv4's raw_sock) are two types."""
        sd = self.get(name, near)
        return f"{name}@{sd.file if sd else '?'}"

    def embeddings(self, name: str, near: str = "", depth: int = 0) -> list[tuple[str, str, str]]:
        """(struct, its identity, path) for every struct embedded by value in
        NAME, NAME itself with path ''; what container_of() goes back from."""
        sd = self.get(name, near)
        out = [(name, f"{name}@{sd.file if sd else '?'}", "")]
        if sd is None or depth > 8:
            return out
        for m in sd.members:
            if m.struct and not m.pointers:
                for s, i, p in self.embeddings(m.struct, sd.file, depth + 1):
                    out.append((s, i, m.name + ("." + p if p else "")))
        return out


@dataclass(frozen=True)
class FileFacts:
    """What one file gives the index (Structs.build_index), in file order."""
    defs: tuple[tuple[str, int], ...] = ()               # struct/union NAME {: (name, offset)
    returns: tuple[tuple[str, str], ...] = ()            # accessor -> struct it returns
    overlays: tuple[tuple[str, str, str], ...] = ()      # accessor, param, body
    ops: tuple[tuple[str, str, str], ...] = ()           # function, struct, member
    passes: tuple[tuple[str, int, bool], ...] = ()       # function, param, + offset


def file_facts(rel: str, text: str) -> FileFacts:
    if "{" not in text:
        return FileFacts()
    defs = tuple((m.group(1), m.start()) for m in _DEF.finditer(text))
    returns = []
    if "*" in text:
        returns += [(m.group(2), m.group(1)) for m in _RETURNS.finditer(text)]
    overlays = []
    if "(struct" in text or "( struct" in text:
        overlays += [(m.group(1), m.group(2), " ".join(m.group(3).replace("\\\n", " ").split()))
                     for m in _OVERLAY_MACRO.finditer(text)]
        overlays += [(m.group(2), m.group(3), m.group(4).strip()) for m in _OVERLAY_INLINE.finditer(text)]
    ops = _ops(text) if "= {" in text or "={" in text else []
    passes = _passes(text) if "return" in text and rel.endswith(".c") else []
    if "container_of" in text:
        returns += [(m.group(1), m.group(2)) for m in _CONTAINER_MACRO.finditer(text)]
    return FileFacts(defs, tuple(returns), tuple(overlays), tuple(ops), tuple(passes))


def _ops(text: str) -> list[tuple[str, str, str]]:
    """Which struct member each function is stored in by an initializer
    (the function an indirect call `ops->dma_rw(...)` may be)."""
    out = []
    for m in _INIT_HEAD.finditer(text):
        end = matching(text, m.end() - 1, "{", "}")
        out += [(d.group(2), m.group(1), d.group(1)) for d in _DESIGNATED.finditer(text, m.end(), end)]
    return out


def _passes(text: str) -> list[tuple[str, int, bool]]:
    """Functions whose every non-NULL return is one parameter (plus an
    offset): a call of one points where that argument points."""
    out = []
    for m in _PTR_FUNC.finditer(text):
        names = [re.findall(r"\w+", a)[-1] if re.findall(r"\w+", a) else ""
                 for a in m.group(2).split(",")]
        end = matching(text, m.end() - 1, "{", "}")
        roots = set()
        for r in re.findall(r"\breturn\s+([^;]+);", text[m.end():end]):
            e = strip(r)
            if e in ("NULL", "0") or e.startswith("ERR_PTR"):
                continue
            plus = top_plus(e)
            roots.add((strip(plus[0]) if plus else e, plus is not None))
        if len({r for r, _ in roots}) == 1:
            root = next(iter(roots))[0]
            if root in names:
                out.append((m.group(1), names.index(root), any(p for _, p in roots)))
    return out


def _statements(body: str) -> list[str]:
    return [body[a:b] for a, b in split_top(body, 0, len(body), ";", False, "{(", "})")]


def parse_members(body: str) -> list[Member]:
    out: list[Member] = []
    for st in _statements(body):
        a = _ANON.match(st)
        g = _GROUP.match(st)
        if a or g:
            brace = st.find("{") if a else st.find("(")
            close = matching(st, brace, "{", "}") if a else matching(st, brace)
            inner = st[brace + 1:close - 1]
            if g:   # struct_group(NAME, members...): members flat, NAME a struct of them
                inner = inner.split(",", 1)[1] if "," in inner else ""
                if st.lstrip().startswith("struct_group_tagged"):
                    inner = inner.split(",", 1)[1] if "," in inner else ""
                inner = inner.replace(",", ";") + ";" if not inner.strip().endswith(";") else inner
            after = re.sub(r"\b__\w+(?:\((?:[^()]|\([^()]*\))*\))?", "", st[close:]).strip()
            names = re.match(r"((?:\*\s*)*)(\w+)\s*(\[[^\]]*\])?", after) if a else None
            tag = a.group(1) if a else ""
            if names and names.group(2):
                out.append(Member(names.group(2), tag or "{anonymous}" if not names.group(1) else "",
                                  tag if names.group(1) else "", names.group(1).count("*"),
                                  bool(names.group(3)), tag,
                                  () if tag else tuple(parse_members(inner))))
            elif a and "union" in st[:brace].split():
                label = f"u{len(out)}"          # its members overlap one another
                out.extend(dataclasses.replace(m, union=m.union or label) for m in parse_members(inner))
            else:
                out.extend(parse_members(inner))
            continue
        if "(" in st and re.search(r"\(\s*\*", st):
            continue      # a function pointer
        first, *more = st.split(",")
        # a layout marker before the member (`randomized_struct_fields_end
        # struct thread_struct thread;`): the member without it
        m = _MEMBER.match(first) or _MEMBER.match(re.sub(r"^\s*[a-z_]\w*\s+(?=\S)", "", first, 1))
        if not m:
            continue
        kw, base, stars, name, arr = m.groups()
        is_struct = kw in ("struct", "union")
        n_ptr = stars.count("*")
        out.append(Member(name, base if is_struct and not n_ptr else "",
                          base if is_struct and n_ptr else "", n_ptr, bool(arr), base))
        for extra in more:
            e = re.match(r"\s*((?:\*\s*)*)(\w+)\s*(\[[^\]]*\])?", extra)
            if e:
                p = e.group(1).count("*")
                out.append(Member(e.group(2), base if is_struct and not p else "",
                                  base if is_struct and p else "", p, bool(e.group(3)), base))
    return out
