"""Integer expressions the finder cannot evaluate, compared as written:
a region whose useroffset/usersize are expressions (LKDTM's `cache_size / 4,
cache_size / 16`) against a copy's `buf + offset, size`, after the values a
function gives its locals once (`offset = (cache_size / 4) + unconst;`) and
the file-scope statics that are never written (zero) are put in.

An expression is read as a linear sum: terms that are not sums themselves
(`cache_size/4`, `sizeof(struct x)`, `clnt->msize`) with their
coefficients, plus an integer constant.  Two expressions whose terms are the
same differ by a known constant; any other pair is not comparable."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .csource import Function, Source, declarations, functions
from .expr import balanced_outer

_INT = re.compile(r"^(0[xX][0-9a-fA-F]+|\d+)[uUlL]*$")
_IDENT = re.compile(r"(?<![\w.>])\b([A-Za-z_]\w*)\b(?!\s*\()")
_TAGGED = re.compile(r"\b(?:struct|union|enum)\s+$")
# `(size_t)x`, `(unsigned long)(a)`: a cast, when an operand follows it
_CAST = re.compile(r"^\(\s*(?:const\s+)?(?:struct\s+|union\s+)?\w+(?:\s+\w+)*\s*\**\s*\)\s*(?=[\w(])")
_NOT_VARIABLES = frozenset({"sizeof", "offsetof", "struct", "union", "enum", "const", "volatile",
                            "unsigned", "signed", "int", "long", "short", "char", "size_t",
                            "typeof", "__typeof__"})


@dataclass(frozen=True)
class Linear:
    """sum(coefficient * term) + const, terms in a normal form."""
    terms: tuple[tuple[str, int], ...]
    const: int = 0

    def minus(self, other: "Linear") -> int | None:
        """self - other when the two have the same terms (a constant), else None."""
        return self.const - other.const if self.terms == other.terms else None


def bare(expr: str) -> str:
    """EXPR without outer parentheses and leading casts; `(x) / 4` keeps
    its parentheses (a cast is followed by its operand, not an operator)."""
    expr = " ".join(expr.split())
    while True:
        before = expr
        if expr.startswith("(") and balanced_outer(expr):
            expr = expr[1:-1].strip()
        elif m := _CAST.match(expr):
            expr = expr[m.end():]
        if expr == before:
            return expr


def _atom(text: str) -> str:
    """A term in its normal form: whitespace only where two words meet,
    parentheses around a lone word dropped."""
    text = " ".join(text.split())
    text = re.sub(r"\s*([^\w\s])\s*", r"\1", text)
    while True:
        before = text
        text = re.sub(r"(?<![\w)\]])\((\w+)\)", r"\1", text)
        if text == before:
            return text


def _split_sum(expr: str) -> list[tuple[int, str]] | None:
    """EXPR's top-level terms with their signs (None: unbalanced)."""
    out: list[tuple[int, str]] = []
    depth = 0
    sign, start = 1, 0
    prev = ""                       # the last non-blank character outside the term
    for i, c in enumerate(expr):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth < 0:
                return None
        elif c in "+-" and depth == 0:
            nxt = expr[i + 1:i + 2]
            if nxt == ">" or nxt == c or (i > 0 and expr[i - 1] == c):
                continue            # ->, ++, --
            term = expr[start:i].strip()
            if not term:            # a unary sign
                if prev in ("", "+", "-"):
                    sign = -sign if c == "-" else sign
                    start = i + 1
                    prev = c
                    continue
            if re.search(r"[*/%&|^<>!~]$", term):
                continue            # `a * -1`: the sign belongs to the operand
            out.append((sign, term))
            sign, start, prev = (-1 if c == "-" else 1), i + 1, c
            continue
        if not c.isspace():
            prev = c
    if depth:
        return None
    term = expr[start:].strip()
    if not term:
        return None
    out.append((sign, term))
    return out


def linear(expr: str, depth: int = 0) -> Linear | None:
    """EXPR as a linear sum; None when it is not read (unbalanced, empty)."""
    expr = bare(expr)
    if not expr or depth > 8:
        return None
    parts = _split_sum(expr)
    if parts is None:
        return None
    terms: dict[str, int] = {}
    const = 0
    for sign, term in parts:
        term = bare(term)
        if m := _INT.match(term):
            const += sign * int(m.group(1), 0)
            continue
        inner = _split_sum(term)
        if inner is not None and len(inner) > 1:     # a parenthesised sum
            sub = linear(term, depth + 1)
            if sub is None:
                return None
            for t, k in sub.terms:
                terms[t] = terms.get(t, 0) + sign * k
            const += sign * sub.const
            continue
        key = _atom(term)
        terms[key] = terms.get(key, 0) + sign
    return Linear(tuple(sorted((t, k) for t, k in terms.items() if k)), const)


def _variables(expr: str) -> list[re.Match]:
    """EXPR's words that name variables (not members, calls, macros, type
    words or struct tags)."""
    return [m for m in _IDENT.finditer(expr)
            if m.group(1) not in _NOT_VARIABLES and not re.fullmatch(r"[A-Z_][A-Z0-9_]*", m.group(1))
            and not _TAGGED.search(expr[:m.start()])]


def identifiers(expr: str) -> set[str]:
    """The variables EXPR names."""
    return {m.group(1) for m in _variables(expr)}


def substitute(expr: str, values: dict[str, str], rounds: int = 3) -> str:
    """EXPR with each variable VALUES knows replaced by its value in
    parentheses, ROUNDS times (a value may name another local)."""
    for _ in range(rounds):
        hits = [m for m in _variables(expr) if m.group(1) in values]
        if not hits:
            break
        for m in reversed(hits):
            expr = f"{expr[:m.start()]}({values[m.group(1)]}){expr[m.end():]}"
    return expr


def _writes(name: str, text: str) -> list[str]:
    """Every write of NAME in TEXT: the values of its plain assignments, and
    "?" for a compound assignment, ++/-- or its address taken."""
    n = re.escape(name)
    out = [v.strip() for v in re.findall(rf"(?<![\w.>]){n}\s*=(?!=)\s*([^;]+);", text)]
    if re.search(rf"(?<![\w.>]){n}\s*(?:[-+*/%&|^]|<<|>>)=|(?:\+\+|--)\s*{n}\b|"
                 rf"(?<![\w.>]){n}\s*(?:\+\+|--)|(?<!&)&\s*{n}\b(?!\s*(?:->|\.))", text):
        out.append("?")
    return out


@dataclass
class Values:
    """What one file's variables are known to hold: its file-scope statics
    never written anywhere in it and declared without an initializer (0),
    and, per function, its locals written once from an expression."""
    src: Source
    funcs: list[Function] = field(default_factory=list)
    _zeros: dict[str, str] | None = None
    _stable: dict[str, bool] = field(default_factory=dict)
    _decls: dict[int, dict] = field(default_factory=dict)   # function start -> its declarations

    def __post_init__(self) -> None:
        if not self.funcs:
            self.funcs = functions(self.src)

    def _file_scope(self) -> str:
        parts, last = [], 0
        for f in self.funcs:
            parts.append(self.src.code[last:f.start])
            last = f.end
        parts.append(self.src.code[last:])
        return "\n".join(parts)

    def _written(self, name: str) -> bool:
        """A function that does not declare its own NAME writes it."""
        for f in self.funcs:
            text = self.src.code[f.start:f.end]
            if name not in text or not _writes(name, text):
                continue
            if f.start not in self._decls:
                self._decls[f.start] = declarations(text)
            if name not in self._decls[f.start]:
                return True
        return False

    def zeros(self) -> dict[str, str]:
        """File-scope `static T x;` (no initializer) that stays as it is
        (stable()): 0."""
        if self._zeros is None:
            scope = " ".join(self._file_scope().split())
            self._zeros = {name: "0" for name in declarations(scope)
                           if re.search(rf"\bstatic\s+[^;=(){{}}]*(?<![\w.>]){re.escape(name)}\s*;", scope)
                           and self.stable(name)}
        return self._zeros

    def stable(self, name: str) -> bool:
        """NAME is a static variable of the file that no function writes and
        no module_param() makes writable (its value where the cache is
        created is its value at every copy)."""
        if name not in self._stable:
            scope = " ".join(self._file_scope().split())
            n = re.escape(name)
            self._stable[name] = name in declarations(scope) and \
                re.search(rf"\bstatic\s+[^;(){{}}]*(?<![\w.>]){n}\s*[=;\[]", scope) is not None and \
                not re.search(rf"\bmodule_param\w*\s*\(\s*{n}\b", scope) and \
                not self._written(name)
        return self._stable[name]

    def locals_once(self, func: Function, pos: int) -> dict[str, str]:
        """FUNC's locals (not its parameters) written exactly once, by a
        plain assignment or an initializer before POS and never again:
        name -> value."""
        body = self.src.code[func.body:func.end]
        before = self.src.code[func.body:pos]
        out = {}
        for name in declarations(body):
            writes = _writes(name, body)
            if len(writes) == 1 and writes[0] != "?" and _writes(name, before) == writes:
                out[name] = writes[0]
        return out

    def window(self, func: Function, pos: int, offset: str, size: str) -> tuple[str, str] | None:
        """OFFSET and SIZE of a copy at POS in FUNC with the function's
        once-written locals and the file's zero statics put in; None when a
        local or parameter of FUNC is left in them (a value of this call
        only, never the same as a region's)."""
        head = declarations(self.src.code[func.start:func.end])
        values = {name: v for name, v in self.zeros().items() if name not in head}   # not shadowed
        values.update(self.locals_once(func, pos))
        out = tuple(substitute(e, values) for e in (offset, size))
        if any(name in head for e in out for name in identifiers(e)):
            return None
        return out[0], out[1]

    def region(self, func: Function | None, useroffset: str, usersize: str) -> tuple[str, str] | None:
        """A region's expressions as the file's copies can name them: the
        zero statics put in, and every variable left a file-scope one no
        function writes (not a local or a parameter of FUNC, the creating
        function); None otherwise."""
        out = tuple(substitute(e, self.zeros()) for e in (useroffset, usersize))
        own = declarations(self.src.code[func.start:func.end]) if func else {}
        for e in out:
            for name in identifiers(e):
                if name in own or not self.stable(name):
                    return None
        return out[0], out[1]
