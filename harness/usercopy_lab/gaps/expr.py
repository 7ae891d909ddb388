"""Reading one C expression as written: casts, outer parentheses and
value-preserving accessors dropped, `base + off` split, whether a size is a
compile-time constant."""
from __future__ import annotations

import re

from .csource import split_top

_CAST = re.compile(r"^\(\s*(?:const\s+|volatile\s+)?(?:struct\s+|union\s+)?\w+(?:\s+(?:const|__user|__force|__iomem))*"
                   r"\s*\**\s*(?:__force\s*)?\)\s*")
_SIZEOF = re.compile(r"\bsizeof\s*(?:\((?:[^()]|\([^()]*\))*\)|[\w.>-]+)")
_CONSTANT = re.compile(r"^[\s\d+\-*/()<>|&~xXa-fA-FuUlL]*$")
# Macros whose value is their (first) argument's, for what a pointer points into.
_IDENTITY = re.compile(r"^(?:READ_ONCE|rcu_dereference\w*|rcu_access_pointer|smp_load_acquire|"
                       r"data_race|untagged_addr|srcu_dereference\w*)\s*\(")


def strip(expr: str) -> str:
    """EXPR without casts, outer parentheses and the accessors that give
    their argument's value (READ_ONCE(), rcu_dereference()...)."""
    expr = " ".join(expr.split())
    while True:
        before = expr
        expr = _CAST.sub("", expr)
        if expr.startswith("(") and balanced_outer(expr):
            expr = expr[1:-1].strip()
        m = _IDENTITY.match(expr)
        if m and balanced_outer(expr[m.end() - 1:]):
            inner = expr[m.end():-1]
            first = split_top(inner, 0, len(inner))
            expr = inner[first[0][0]:first[0][1]].strip() if first else expr
        if expr == before:
            return expr


def balanced_outer(expr: str) -> bool:
    depth = 0
    for i, c in enumerate(expr):
        depth += c == "("
        depth -= c == ")"
        if depth == 0 and i < len(expr) - 1:
            return False
    return depth == 0


def top_plus(expr: str) -> tuple[str, str] | None:
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
