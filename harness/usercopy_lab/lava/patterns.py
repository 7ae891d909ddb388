"""The regular expressions of the LAVA test cases (lava/checks.py):
one pattern per line a golden file expects, matched by pexpect on the raw
serial console as LAVA's interactive test reads it.  Python's re syntax;
ere_to_python() turns a tests.txt ERE into it."""
from __future__ import annotations

import re

from ..judge.golden import ExpectedReport
from ..model import Direction, ReportKind
from ..protocol import END, START
from ..reports import CONTINUES, GROUPS, SUFFIX


# LAVA wants a prompt list; this one never matches (the steps decide).
NEVER = "(?!)"

NL = r"\r*\n"                      # a line end as the serial console sends it
REST = r"[^\n]*"                   # the rest of a line (pexpect sets DOTALL)
BOL = r"(?:(?<=\n)|\A)"            # a line start (or the start of what is left)
REBOOTED = "reboot: Restarting system"
TRACE_OVER = r"(?:</TASK>|RIP: 00[23][3b]:)"   # the kernel frames of an x86 trace end here
ABORT_PREFIX = "usercopy: Kernel memory "
WARN_PREFIX = "Bad or missing usercopy whitelist? Kernel memory "
# The message's start of each kind that prints "(offset N, size N)" (4.16 on).
MESSAGE_PREFIX = {ReportKind.USERCOPY_ABORT: ABORT_PREFIX, ReportKind.USERCOPY_WARN: WARN_PREFIX}
# What the message says of each direction (mm/usercopy.c).
ATTEMPT = {Direction.EXPOSURE: "exposure attempt detected from",
           Direction.OVERWRITE: "overwrite attempt detected to"}
_FRAME_SUFFIX = SUFFIX.pattern.removesuffix("+$") + "*"   # .cold, .isra.0, ...


def whole_line(body: str) -> str:
    """A whole line with body on it (consumes it, newline included)."""
    return f"{REST}{body}{REST}{NL}"


def ahead(body: str) -> str:
    """Zero-width: a complete line with body on it starts here."""
    return f"{BOL}(?={REST}{body}{REST}\\n)"


def _msg(pattern: str) -> str:
    """A report_formats pattern searched on a kernel message, for a raw
    console line: "^" (the message start) may follow a printk timestamp;
    "." never crosses a line (pexpect compiles with DOTALL)."""
    if pattern.startswith("^"):
        return f"(?-s:(?:\\[[^\\]\\n]*\\] ?)?{pattern[1:]})"
    return f"(?-s:{REST}{pattern})"


def _opener() -> str:
    """Zero-width at the start of a complete line that opens a kernel report
    (report_formats.GROUPS: a header not suppressed, or our own openers)
    and does not continue the report before it (CONTINUES: the die line
    after "kernel BUG at", the panic after an oops)."""
    alts = []
    for group in GROUPS:
        if group.inside:
            # a RIP line in usercopy_abort opens a report only where none
            # is open (an excerpt starting there); after the expected
            # reports it is x86's summary of the last one
            continue
        if group.opener is not None:
            alts.append(f"(?={_msg(group.opener.pattern)})")
            continue
        alt = f"(?={REST}{re.escape(group.header)})"
        if group.suppress:
            alt += f"(?!{REST}(?-s:{'|'.join(s.pattern for s in group.suppress)}))"
        alts.append(alt)
    continues = "|".join(_msg(c.pattern) for c in CONTINUES)
    return f"{BOL}(?=[^\\n]*\\n)(?!{continues})(?:{'|'.join(alts)})"


OPENER = _opener()
USERCOPY_HEADER = f"(?:{re.escape(ABORT_PREFIX)}|{re.escape(WARN_PREFIX)}|usercopy: kernel memory )"


def other_line(kind: str, expected: str) -> str:
    """A whole line of that kind (a zero-width pattern at its start) that
    is not the expected one: the step fails and consumes it, so that the
    steps after it read the rest of the report."""
    return f"{kind}(?!{REST}{expected}){REST}{NL}"


def none_before(body: str, name: str) -> str:
    """Zero-width where the step's part of the console starts: a report
    starts, or the END marker comes, with no line carrying body before it.
    Nothing is consumed, so the steps after it still read those lines (an
    LKDTM line missing does not take the next one with it)."""
    return f"\\A(?=(?:(?!{REST}{body})[^\\n]*\\n)*?(?:{OPENER}|{end_marker(name)}))"


def end_marker(name: str) -> str:
    return ahead(f"{END} trigger={re.escape(name)} ")


def lkdtm_line(text: str) -> str:
    """An LKDTM message containing text (verdict: `text in message`)."""
    return f"lkdtm: {REST}?{re.escape(text)}"


def absent(prefix: str) -> str:
    """verdict._compare_lkdtm: a message starting with prefix, or (a prefix
    not ending in ':') containing it."""
    if prefix.endswith(":"):
        return f"lkdtm: {re.escape(prefix)}"
    return lkdtm_line(prefix)


def header_line(exp: ExpectedReport) -> tuple[str, list[str]]:
    """The report's first line as a pattern, from the golden's fields, and
    the fields it cannot pin down."""
    f = exp.fields
    loose = []
    if (prefix := MESSAGE_PREFIX.get(exp.kind)) is not None:
        body = re.escape(prefix) + _direction(exp.direction) + " " + _object(
            f.get("object"), f.get("cache"))
        if "offset-base" in f:
            loose.append("offset: offset-base is LKDTM's printed address minus a base; "
                         "a pattern cannot subtract, so LAVA checks that an offset is printed")
        offset = re.escape(f["offset"]) if "offset" in f else r"\d+"
        size = re.escape(f["size"]) if "size" in f else r"\d+"
        return f"{body} \\(offset {offset}, size {size}\\)", loose
    if exp.kind is ReportKind.USERCOPY_LEGACY:
        obj, cache = f.get("object"), f.get("cache")
        if cache is not None:
            where = f"\\S+ \\({re.escape(cache)}\\)" if obj in (None, "slab object") else "(?!)"
        elif obj is not None:
            where = f"\\S+ \\(<{re.escape(obj)}>\\)"
        else:
            where = r"\S+ \([^\n]*\)"
        size = re.escape(f["size"]) if "size" in f else r"\d+"
        return (f"usercopy: kernel memory {_direction(exp.direction)} {where} "
                f"\\({size} bytes\\)"), loose
    # Other kinds: the first line of any format of that kind.
    titles = [_msg(fmt.title[0].pattern) for g in GROUPS for fmt in g.formats
              if fmt.kind == exp.kind and fmt.title]
    if not titles:
        return "(?!)", [f"report kind {exp.kind}: no format opens such a report"]
    return f"(?:{'|'.join(titles)})", loose


def _direction(direction: Direction | None) -> str:
    if direction is not None:
        return ATTEMPT[direction]
    return f"(?:{'|'.join(ATTEMPT[d] for d in Direction)})"


def _object(obj: str | None, cache: str | None) -> str:
    """report_analysis._split_object in reverse: only a slab object has its
    cache in quotes after it; any other object is the whole text."""
    if obj is None:
        if cache is None:
            return r"[^\n]*?"
        return f"[^\\n]*? '{re.escape(cache)}'"
    if any(s in obj for s in ("SLUB", "SLAB")):
        return re.escape(obj) + (f" '{re.escape(cache)}'" if cache is not None
                                 else r"(?: '[^\n]*')?")
    return re.escape(obj) + ("(?!)" if cache is not None else "")


def site_line(site: str) -> str:
    """report_analysis: "kernel BUG at FILE:LINE" or "WARNING: ... at
    FILE:LINE"; the golden's bug-site is FILE or FILE:LINE."""
    where = re.escape(site) if re.search(r":\d+$", site) else re.escape(site) + r":\d+"
    return f"(?:kernel BUG at |WARNING: (?:CPU: \\d+ PID: \\d+ )?at ){where}(?![\\w:])"


SITE_ANY = r"(?:kernel BUG at |WARNING: (?:CPU: \d+ PID: \d+ )?at )\S"
RIP_ANY = r"(?<![\w])(?:RIP|EIP|IP):?\s+(?:[0-9a-f]{4}:)?"


def rip_line(func: str) -> str:
    return f"{RIP_ANY}(?:\\[<[0-9a-f]+>\\]\\s*){{0,2}}{re.escape(func)}{_FRAME_SUFFIX}\\+0x"


def frames_block(frames: list[str]) -> str:
    """From "Call Trace:" through the end of the trace's kernel frames:
    each frame in order (a reliable frame: not "? func"), anything between."""
    gap = f"(?:(?!{REST}{TRACE_OVER}){REST}\\n)*?"
    body = f"{REST}Call Trace:{NL}"
    for func in frames:
        body += f"{gap}{REST}\\]\\s+{re.escape(func)}{_FRAME_SUFFIX}\\+0x{REST}\\n"
    return body + f"{gap}{REST}{TRACE_OVER}{REST}{NL}"


DIRECT = "lkdtm: Performing direct entry "


def sample_header(exp: ExpectedReport) -> str | None:
    """The first line of the expected report as the kernel prints it (an
    offset-base offset as 0); None for kinds without a fixed text."""
    f = exp.fields
    prefix = MESSAGE_PREFIX.get(exp.kind)
    if prefix is None or exp.direction is None or "object" not in f:
        return None
    word = ATTEMPT[exp.direction]
    cache = f" '{f['cache']}'" if "cache" in f else ""
    return (f"{prefix}{word} {f['object']}{cache} (offset {f.get('offset', '0')}, "
            f"size {f.get('size', '0')})!")


_ERE_TOKEN = re.compile(r"\\[().\[\]*+?{}|^$\\]|\[\^?\]?[^\]\[]*\]|[()|*+?]|\.|[^\\\[\]{}^$]")


def ere_to_python(ere: str) -> str | None:
    """A POSIX ERE (grep -E) as a Python pattern, for the subset tests.txt
    uses: literals, escaped metacharacters, bracket expressions without
    character classes, | ( ) * + ? and "." (never across a line); None for
    anything else (anchors, intervals, [:classes:], back-references)."""
    out, pos = [], 0
    while pos < len(ere):
        m = _ERE_TOKEN.match(ere, pos)
        if m is None:
            return None
        tok = m.group()
        if tok == ".":
            tok = "[^\\n]"
        elif tok.startswith("[") and len(tok) > 1:
            body = tok[1:-1]
            neg = body.startswith("^")
            body = body[1:] if neg else body
            tok = "[" + ("^\\n" if neg else "") + body.replace("\\", "\\\\") + "]"
        out.append(tok)
        pos = m.end()
    pattern = "".join(out)
    try:
        re.compile(pattern)
    except re.error:
        return None
    return pattern
