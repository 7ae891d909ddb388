"""Reading C without a compiler: comments and preprocessor lines blanked
(offsets and lines kept), string literals kept apart, functions, calls and
their arguments, declarations.  Good enough for the kernel's own style;
what it cannot read it says (an UNKNOWN access), it never guesses a type.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_LEX = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_DIRECTIVE = re.compile(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', re.M)
_DEFINE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+(\w+)(\([^)]*\))?[ \t]*((?:[^\n]*\\\n)*[^\n]*)', re.M)
_HEAD = re.compile(r'(\w+)\s*\(([^;{}]*)\)\s*(?:__\w+(?:\([^()]*\))?\s*)*$', re.S)
NOT_FUNCTIONS = frozenset({"if", "for", "while", "switch", "return", "sizeof", "do",
                           "__attribute__", "__aligned", "typeof", "__typeof__"})


def _blank(m: re.Match) -> str:
    return re.sub(r"[^\n]", " ", m.group(0))


@dataclass
class Source:
    """One file: `code` has comments and directives blanked and string
    literals' insides replaced by '_' (same length), `text` is the file."""
    path: str
    text: str
    code: str
    defines: dict[str, tuple[str, str]]     # macro -> (params, body)
    _lines: list[int] | None = None

    @classmethod
    def parse(cls, path: str, text: str) -> "Source":
        def lex(m: re.Match) -> str:
            s = m.group(0)
            if s[0] in "\"'":
                return s[0] + re.sub(r"[^\n]", "_", s[1:-1]) + s[-1]
            return _blank(m)
        code = _LEX.sub(lex, text)
        defines = {}
        for m in _DEFINE.finditer(code):
            defines[m.group(1)] = (m.group(2) or "", m.group(3).replace("\\\n", " "))
        code = _DIRECTIVE.sub(_blank, code)
        return cls(path, text, code, defines)

    def line_of(self, pos: int) -> int:
        if self._lines is None:
            self._lines = [m.start() for m in re.finditer("\n", self.text)]
        return bisect.bisect_left(self._lines, pos) + 1

    def literal(self, start: int, end: int) -> str:
        """The original text of code[start:end] (string literals as written)."""
        return self.text[start:end]


def matching(code: str, start: int, open_: str = "(", close: str = ")") -> int:
    """Index just after the bracket that closes code[start] (len(code) if none)."""
    depth = 0
    i = start
    n = len(code)
    pair = re.compile(re.escape(open_) + "|" + re.escape(close))
    while i < n:
        m = pair.search(code, i)
        if m is None:
            return n
        depth += 1 if m.group(0) == open_ else -1
        i = m.end()
        if depth == 0:
            return i
    return n


def split_top(text: str, start: int, end: int, sep: str = ",", keep_last: bool = True,
              opens: str = "([{", closes: str = ")]}") -> list[tuple[int, int]]:
    """Spans of text[start:end] between the SEP characters outside brackets
    (the last piece too when KEEP_LAST and not blank)."""
    spans = []
    depth = 0
    s = start
    for i in range(start, end):
        c = text[i]
        if c in opens:
            depth += 1
        elif c in closes:
            depth -= 1
        elif c == sep and depth == 0:
            spans.append((s, i))
            s = i + 1
    if keep_last and text[s:end].strip():
        spans.append((s, end))
    return spans


def split_args(code: str, start: int, end: int) -> list[tuple[int, int]]:
    """Top-level comma-separated spans of code[start:end] (inside the parentheses)."""
    return split_top(code, start, end)


@dataclass(frozen=True)
class Call:
    name: str
    start: int                      # offset of the name
    args: tuple[tuple[int, int], ...]
    end: int


def calls(src: Source, names: re.Pattern) -> list[Call]:
    """Calls (or macro uses) of the names NAMES matches: `NAME (` in code."""
    out = []
    for m in names.finditer(src.code):
        paren = src.code.find("(", m.end(1))
        end = matching(src.code, paren)
        out.append(Call(m.group(1), m.start(1), tuple(split_args(src.code, paren + 1, end - 1)), end))
    return out


def call_pattern(names) -> re.Pattern:
    alt = "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))
    return re.compile(rf"(?<![\w.>])({alt})\s*\(")


@dataclass(frozen=True)
class Function:
    name: str
    start: int                      # start of its head (after the previous ; or })
    body: int                       # offset of the body's {
    end: int                        # just after the closing }


def functions(src: Source) -> list[Function]:
    """Top-level function definitions, in order."""
    code = src.code
    out = []
    i = 0
    last = 0
    n = len(code)
    brace = re.compile(r"[{};]")
    while True:
        m = brace.search(code, i)
        if m is None:
            break
        if m.group(0) == "{":
            end = matching(code, m.start(), "{", "}")
            head = code[last:m.start()]
            h = _HEAD.search(head.rstrip())
            if h and h.group(1) not in NOT_FUNCTIONS and "=" not in head[:h.start()].split("\n")[-1]:
                out.append(Function(h.group(1), last, m.start(), end))
            i = last = end
            # an initializer or struct ends with ';' after the '}'
        else:
            i = last = m.end()
        if i >= n:
            break
    return out


def function_at(funcs: list[Function], pos: int) -> Function | None:
    starts = [f.body for f in funcs]
    k = bisect.bisect_right(starts, pos) - 1
    if k >= 0 and funcs[k].body <= pos < funcs[k].end:
        return funcs[k]
    return None


# ------------------------------------------------------------ declarations

@dataclass(frozen=True)
class Decl:
    name: str
    struct: str          # "" when not a struct (or union) type
    base: str            # the type's last word ("char", "u8", "rds_rdma_cookie_t")
    pointers: int        # '*' count
    array: bool


_DECL = re.compile(
    r"(?:^|[;{}(,])\s*(?:(?:const|static|volatile|register|__user|__rcu|__percpu|__iomem|"
    r"__maybe_unused|unsigned|signed|extern)\s+)*"
    r"(struct|union|enum)?\s*(\w+)\s+((?:[*\s]|const|__user|__rcu)*)(\w+)\s*(\[[^\]]*\])?\s*(?=[;=,)\[])")
_SPACES = re.compile(r"\s+")
_KEYWORDS = frozenset({"return", "goto", "case", "else", "sizeof", "typeof", "do", "if",
                       "while", "for", "switch", "break", "continue"})


def declarations(text: str) -> dict[str, Decl]:
    """Variables declared in TEXT (a function's head and body, or a file):
    the last declaration of each name wins; `struct a *x, *y;` gives both."""
    out: dict[str, Decl] = {}
    # one space for every run: the blanked comments and directives are long
    # runs of spaces, on which the pattern's nested whitespace quantifiers
    # backtrack quadratically (offsets do not matter here, only names)
    text = _SPACES.sub(" ", text)
    for m in _DECL.finditer(text):
        kw, base, stars, name, arr = m.groups()
        if base in _KEYWORDS or name in _KEYWORDS:
            continue
        struct = base if kw in ("struct", "union") else ""
        out[name] = Decl(name, struct, base, stars.count("*"), bool(arr))
        # further declarators of the same statement: ", *y", ", z[4]"
        j = m.end()
        while True:
            k = _skip_init(text, j)
            more = re.match(r"\s*,\s*((?:[*\s]|const)*)(\w+)\s*(\[[^\]]*\])?\s*(?=[;=,\[])", text[k:k + 200])
            if not more or text[k:k + 1] != ",":
                break
            out[more.group(2)] = Decl(more.group(2), struct, base, more.group(1).count("*"),
                                      bool(more.group(3)))
            j = k + more.end()
    return out


def _skip_init(text: str, j: int) -> int:
    """From after a declarator: past its initializer, to the ',' or ';' after it."""
    if j < len(text) and text[j] == "[":
        j = matching(text, j, "[", "]")
    if j < len(text) and text[j] == "=":
        depth = 0
        for i in range(j, min(len(text), j + 2000)):
            c = text[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    return i
                depth -= 1
            elif c in ",;" and depth == 0:
                return i
    return j


def chain_before(code: str, pos: int, start: int) -> str:
    """The member chain that ends at POS (`cmd->sense_buffer` before ` = `)."""
    i = pos
    depth = 0
    while i > start:
        c = code[i - 1]
        if c == "]" or c == ")":
            depth += 1
        elif c == "[" or c == "(":
            if depth == 0:
                break
            depth -= 1
        elif not (c.isalnum() or c in "_>.-" or depth):
            break
        i -= 1
    return code[i:pos].strip()
