"""The whitelist audit's golden file and the region values the kernel build gives.

expected-oops/seeds/slab-audit.toml says, per cache, what the guest's
/sys/kernel/slab must show, with the reasoning in '#' comments.  Each
[[cache]] table:

  name        cache name; a '*' pattern (fnmatch) covers a family
              ("kmalloc-*"); an exact name wins over patterns, and the
              first matching pattern wins among patterns
  state       "region" (default): a real cache, not merged, whose
              useroffset/usersize are the expressions below;
              "none": the cache exists without a region;
              "absent": no cache of that name at all
  seed        the seed patch (../shared/seeds) the row proves, if any
  source      the compilation unit whose types are meant (the file that
              creates the cache, e.g. "kernel/fork.c")
  useroffset, usersize, object_size
              C expressions, as in the kernel source: integers, + - * /,
              parentheses, object_size (the guest's value), and
              offsetof(struct S, a.b), sizeof_field(struct S, a.b),
              sizeof(struct S) evaluated for the kernel's own build: from
              its DWARF when vmlinux has some, else by the compiler in
              the unit `source` (compiled_layout; the seeds kernel has no
              DWARF since 2026-12-05).
              For "absent" caches they record the region the source
              declares for a cache that is never created.
  gone        expressions that must NOT resolve in this build (a seed's
              field that no longer exists)

Numbers are never typed by hand here: every offset and size of a struct
comes from the build of build/kernel-<variant>/vmlinux (dwarf_layout or
compiled_layout).  `usercopy-lab audit values --vmlinux V
SPEC` prints them (`make whitelist-values`).
"""
from __future__ import annotations

import enum
import fnmatch
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, TextIO, Union

from tabulate import tabulate

from ..inputs import load_toml, read_bounded, shown
from . import compiled_layout
from .dwarf_layout import DwarfError, Layouts, has_dwarf


class SpecError(ValueError):
    """A golden file that cannot be used; the message names file and cache."""


class State(enum.Enum):
    REGION = "region"
    NONE = "none"
    ABSENT = "absent"


@dataclass(frozen=True)
class Term:
    """One DWARF operator: offsetof, sizeof_field or sizeof."""
    op: str
    struct: str
    member: str = ""

    def __str__(self) -> str:
        if self.op == "sizeof":
            return f"sizeof(struct {self.struct})"
        return f"{self.op}(struct {self.struct}, {self.member})"

    def c_expr(self) -> str:
        """The term in C that needs no macro of the unit's (a unit may not
        include <linux/stddef.h>, where sizeof_field() is)."""
        if self.op == "sizeof":
            return f"sizeof(struct {self.struct})"
        if self.op == "offsetof":
            return f"__builtin_offsetof(struct {self.struct}, {self.member})"
        return f"sizeof(((struct {self.struct} *)0)->{self.member})"


# An expression tree: int | "object_size" | Term | (op, left, right).
Node = Union[int, str, Term, tuple]
_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)|(.))")


@dataclass(frozen=True)
class Expr:
    text: str
    tree: Node

    def terms(self) -> list[Term]:
        found: list[Term] = []

        def walk(node: Node) -> None:
            if isinstance(node, Term):
                found.append(node)
            elif isinstance(node, tuple):
                walk(node[1])
                walk(node[2])
        walk(self.tree)
        return found

    def uses_object_size(self) -> bool:
        def walk(node: Node) -> bool:
            if node == "object_size":
                return True
            return isinstance(node, tuple) and (walk(node[1]) or walk(node[2]))
        return walk(self.tree)

    def evaluate(self, values: Mapping[str, int | str], object_size: int | None) -> int:
        """The value; ValueError naming the term that has no value."""
        def ev(node: Node) -> int:
            if isinstance(node, int):
                return node
            if node == "object_size":
                if object_size is None:
                    raise ValueError("object_size is not known")
                return object_size
            if isinstance(node, Term):
                value = values.get(str(node))
                if not isinstance(value, int):
                    raise ValueError(f"{node}: {value or 'not computed'}")
                return value
            op, left, right = node
            a, b = ev(left), ev(right)
            return {"+": a + b, "-": a - b, "*": a * b}[op] if op != "/" else a // b
        return ev(self.tree)


# The longest expression and the deepest parentheses a rule may have (the
# parser and the evaluator recurse; the longest rule today has 130 characters).
EXPR_MAX_LEN = 512
EXPR_MAX_PARENS = 16


def parse_expr(text: str) -> Expr:
    if len(text) > EXPR_MAX_LEN or text.count("(") > EXPR_MAX_PARENS:
        raise SpecError(f"expression '{shown(text, 60)}': longer than {EXPR_MAX_LEN} "
                        f"characters or more than {EXPR_MAX_PARENS} parentheses")
    tokens = []
    for m in _TOKEN.finditer(text):
        if m.group(0).strip():
            tokens.append(m.group(1) or m.group(2) or m.group(3))
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take(want: str | None = None) -> str:
        nonlocal pos
        tok = peek()
        if tok is None or (want is not None and tok != want):
            raise SpecError(f"expression {text!r}: expected {want or 'more'}, saw {tok!r}")
        pos += 1
        return tok

    def expr() -> Node:
        node = term()
        while peek() in ("+", "-"):
            op = take()
            node = (op, node, term())
        return node

    def term() -> Node:
        node = factor()
        while peek() in ("*", "/"):
            op = take()
            node = (op, node, factor())
        return node

    def factor() -> Node:
        tok = take()
        if tok.isdigit():
            return int(tok)
        if tok == "(":
            node = expr()
            take(")")
            return node
        if tok == "object_size":
            return tok
        if tok in ("offsetof", "sizeof_field", "sizeof"):
            take("(")
            take("struct")
            struct = take()
            member = ""
            if tok != "sizeof":
                take(",")
                member = take()
            take(")")
            return Term(tok, struct, member)
        raise SpecError(f"expression {text!r}: unexpected {tok!r}")

    tree = expr()
    if peek() is not None:
        raise SpecError(f"expression {text!r}: unexpected {peek()!r}")
    return Expr(text, tree)


@dataclass(frozen=True)
class CacheRule:
    name: str
    state: State
    seed: str = ""
    source: str = ""
    useroffset: Expr | None = None
    usersize: Expr | None = None
    object_size: Expr | None = None
    gone: tuple[Expr, ...] = ()

    @property
    def is_pattern(self) -> bool:
        return "*" in self.name

    def exprs(self) -> list[Expr]:
        return [e for e in (self.useroffset, self.usersize, self.object_size)
                if e is not None] + list(self.gone)


@dataclass(frozen=True)
class AuditSpec:
    path: Path
    rules: tuple[CacheRule, ...]

    def rule_for(self, name: str) -> CacheRule | None:
        for rule in self.rules:
            if not rule.is_pattern and rule.name == name:
                return rule
        for rule in self.rules:
            if rule.is_pattern and fnmatch.fnmatchcase(name, rule.name):
                return rule
        return None

    def digest(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


_KEYS = {"name", "state", "seed", "source", "useroffset", "usersize", "object_size", "gone"}


def load_spec(path: Path) -> AuditSpec:
    _, data = load_toml(Path(path), SpecError, what="whitelist audit golden file")
    rules = []
    seen = set()
    tables = data.get("cache", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise SpecError(f"{shown(path, None)}: 'cache' must be [[cache]] tables")
    for i, table in enumerate(tables, 1):
        where = f"{shown(path, None)}: [[cache]] #{i} ({shown(table.get('name', 'no name'))})"
        unknown = set(table) - _KEYS
        if unknown:
            raise SpecError(f"{where}: unknown key(s) "
                            f"{', '.join(shown(k) for k in sorted(unknown))}")
        if not isinstance(table.get("name"), str):
            raise SpecError(f"{where}: no name (a string)")
        if table["name"] in seen:
            raise SpecError(f"{where}: listed twice")
        seen.add(table["name"])
        try:
            state = State(table.get("state", "region"))
        except ValueError:
            raise SpecError(f"{where}: state must be region, none or absent") from None
        try:
            exprs = {k: parse_expr(str(table[k])) for k in ("useroffset", "usersize", "object_size")
                     if k in table}
            gone_list = table.get("gone", [])
            if not isinstance(gone_list, list):
                raise SpecError("gone must be a list of expressions")
            gone = tuple(parse_expr(str(g)) for g in gone_list)
        except SpecError as exc:
            raise SpecError(f"{where}: {exc}") from None
        rule = CacheRule(table["name"], state, str(table.get("seed", "")),
                         str(table.get("source", "")), exprs.get("useroffset"),
                         exprs.get("usersize"), exprs.get("object_size"), gone)
        if state is State.REGION and (rule.useroffset is None or rule.usersize is None):
            raise SpecError(f"{where}: a region needs useroffset and usersize")
        if any(e.terms() for e in rule.exprs()) and not rule.source:
            raise SpecError(f"{where}: offsetof/sizeof need a 'source' compilation unit")
        rules.append(rule)
    if not rules:
        raise SpecError(f"{shown(path, None)}: no [[cache]] tables")
    return AuditSpec(Path(path), tuple(rules))


# -- DWARF values -----------------------------------------------------------

@dataclass(frozen=True)
class DwarfTable:
    """Per rule name: term text -> value, or the error text if it failed."""
    vmlinux: str
    stamp: str                # vmlinux size + mtime and the spec's digest
    values: dict[str, dict[str, int | str]]

    def to_json(self) -> dict:
        return {"vmlinux": self.vmlinux, "stamp": self.stamp, "values": self.values}


def _stamp(spec: AuditSpec, vmlinux: Path, method: str) -> str:
    st = vmlinux.stat()
    return f"{st.st_size}:{st.st_mtime_ns}:{spec.digest()}:{method}"


def method_for(vmlinux: Path) -> str:
    """Where the values come from: the vmlinux's DWARF when it has some,
    else the compiler, on the build beside it (compiled_layout)."""
    return "dwarf" if has_dwarf(vmlinux) else "compiled"


def compute(spec: AuditSpec, vmlinux: Path, method: str | None = None) -> DwarfTable:
    method = method or method_for(vmlinux)
    if method == "compiled":
        return compute_compiled(spec, vmlinux)
    values: dict[str, dict[str, int | str]] = {}
    with Layouts(vmlinux) as layouts:
        for rule in spec.rules:
            row: dict[str, int | str] = {}
            for expr in rule.exprs():
                for t in expr.terms():
                    try:
                        if t.op == "sizeof":
                            row[str(t)] = layouts.sizeof(rule.source, t.struct)
                        elif t.op == "offsetof":
                            row[str(t)] = layouts.offsetof(rule.source, t.struct, t.member)
                        else:
                            row[str(t)] = layouts.sizeof_field(rule.source, t.struct, t.member)
                    except DwarfError as exc:
                        row[str(t)] = str(exc)
            values[rule.name] = row
    return DwarfTable(str(vmlinux), _stamp(spec, vmlinux, "dwarf"), values)


def compute_compiled(spec: AuditSpec, vmlinux: Path) -> DwarfTable:
    """The same values from the compiler: each term, written as C, compiled
    in its rule's unit with kbuild's own command line (compiled_layout),
    all terms of one unit in one compile."""
    kbuild = vmlinux.parent
    if not vmlinux.is_file():
        raise DwarfError(f"{vmlinux} not found (make kernel KERNEL=seeds)")
    by_unit: dict[str, list[str]] = {}
    for rule in spec.rules:
        for expr in rule.exprs():
            for t in expr.terms():
                terms = by_unit.setdefault(rule.source, [])
                if t.c_expr() not in terms:
                    terms.append(t.c_expr())
    unit_values = {source: compiled_layout.unit_values(kbuild, source, terms)
                   for source, terms in by_unit.items()}
    values = {rule.name: {str(t): unit_values[rule.source][t.c_expr()]
                          for expr in rule.exprs() for t in expr.terms()}
              for rule in spec.rules}
    return DwarfTable(str(vmlinux), _stamp(spec, vmlinux, "compiled"), values)


# The cache of the values, beside the vmlinux whose build they come from.
VALUES_CACHE = "whitelist-values.json"
VALUES_CACHE_LIMIT = 16 << 20    # a cache larger than this is not ours: computed again


def load_or_compute(spec: AuditSpec, vmlinux: Path, cache: Path,
                    progress: TextIO | None = None) -> DwarfTable:
    """The DWARF values, from CACHE if it was computed from this vmlinux and
    this spec, else computed now (and written to CACHE; a line on PROGRESS
    says so first: it takes about half a minute)."""
    if not vmlinux.is_file():
        raise DwarfError(f"{vmlinux} not found (make kernel KERNEL=seeds)")
    method = method_for(vmlinux)
    stamp = _stamp(spec, vmlinux, method)
    try:
        data = json.loads(read_bounded(cache, VALUES_CACHE_LIMIT, what="whitelist values cache"))
        if data.get("stamp") == stamp:
            return DwarfTable(data["vmlinux"], stamp, data["values"])
    except (OSError, ValueError, KeyError, AttributeError, TypeError, RecursionError):
        pass
    if progress is not None:
        where = f"{vmlinux}'s DWARF" if method == "dwarf" else \
            f"the compiler, in each unit of {vmlinux.parent}"
        print(f"usercopy-lab: computing the whitelist audit's offsetof/sizeof values "
              f"from {where} (once per build)", file=progress, flush=True)
    table = compute(spec, vmlinux, method)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp")
        tmp.write_text(json.dumps(table.to_json(), indent=1, sort_keys=True) + "\n")
        tmp.replace(cache)
    except OSError as exc:
        raise DwarfError(f"cannot write {cache}: {exc}") from exc
    return table


def command(spec_path: Path, vmlinux: Path, cache: Path | None) -> int:
    """`usercopy-lab audit values`: print the audit golden file's
    offsetof/sizeof terms for a kernel build (its vmlinux's DWARF, or the
    compiler in the build beside it); 2 with one line for bad input."""
    try:
        spec = load_spec(spec_path)
        if cache:
            table = load_or_compute(spec, vmlinux, cache)
        else:
            table = compute(spec, vmlinux)
    except (SpecError, DwarfError) as exc:
        print(f"audit values: {exc}", file=sys.stderr)
        return 2
    rows = [(rule.name, term, value) for rule in spec.rules
            for term, value in table.values.get(rule.name, {}).items()]
    if rows:
        for line in tabulate(rows, tablefmt="plain", disable_numparse=True).splitlines():
            print(line.rstrip())
    return 0

