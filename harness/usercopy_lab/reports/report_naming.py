"""Names of a report: our title, the syzkaller-compatible title, the signature.

Our title says what a usercopy report is about ("usercopy: exposure from
SLUB object 'kmalloc-1k' in do_usercopy_slab_size"); the syzkaller title
("BUG: bad usercopy in direct_entry") is the one the syzbot dashboard
shows, built from the format's template and then normalized the way
syzkaller does (addresses, numbers, line numbers and executor ids masked;
at most 120 characters; control characters dropped).  The signature groups
reports of one bug: kind, direction, object, cache, guilty frame and the
title with every number masked.
"""
from __future__ import annotations

import hashlib
import re

from ..model import Direction, Report, ReportKind

_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|[0-9a-f]{8,}|\d+")
# "... in func+0x1a/0x40 [mod]", "... in a / b" (KCSAN), "... in dir/file.h:110:33"
_FUNC_TOKEN = r"[\w./-]+(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?::\d+)*(?: \[[\w-]+\])?"
_IN_FUNC_TAIL = re.compile(rf" in {_FUNC_TOKEN}(?: / {_FUNC_TOKEN})?\s*$")
_DIE_TAIL = re.compile(r"(?::\s*[0-9a-f]{4}\s*\[#\d+\]|, error_code:).*$")
_ADDR_TAIL = re.compile(
    r"(?:,)?\s*(?:for address:?|address:|at virtual address|at)\s+(?:0x)?[0-9a-fA-F]{6,}\b.*$")
# syzkaller's title normalization, each applied until nothing changes.
_SYZ_REPLACE = tuple((re.compile(p, re.ASCII), r) for p, r in (
    (r"syz-executor\.?[0-9]+((/|:)[0-9]+)?", "syz-executor"),
    (r"syzkaller[0-9]+((/|:)[0-9]+)?", "syzkaller"),
    (r"([^a-zA-Z0-9])(?:0x)?[0-9a-f]{6,}", r"\1ADDR"),
    (r"([0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})", "IP"),
    (r"(\.\w+)(:[0-9]+)+", r"\1:LINE"),
    (r"([a-zA-Z][a-zA-Z0-9_.]+)\+0x[0-9a-z]+/0x[0-9a-z]+", r"\1"),
    (r"CPU#[0-9]+", "CPU"),
    (r"(\W)(\d+)(\W|$)", r"\1NUM\3"),
    (r"(\d+){7,}", "NUM"),
))
SYZ_TITLE_MAX = 120


def syz_normalize(title: str) -> str:
    """A raw title as syzkaller stores it (masked, sanitized, <= 120 bytes)."""
    for pattern, repl in _SYZ_REPLACE:
        while True:
            new = pattern.sub(repl, title)
            if new == title:
                break
            title = new
    raw = title.encode("utf-8", "replace")[:SYZ_TITLE_MAX]
    out = bytearray()
    prev = 0x20
    for ch in raw:
        if ch == 0x09:
            ch = 0x20
        elif ch < 0x20 or ch >= 0x7f:
            continue
        if ch == 0x20 and prev == 0x20:
            continue
        out.append(ch)
        prev = ch
    return out.decode("ascii").strip()


def make_title(rep: Report, head: str = "", detail: str = "") -> str:
    """Our title.  head: the generic header line; detail: the KASAN bug
    type or the panic message."""
    where = f" in {rep.guilty_frame}" if rep.guilty_frame else ""
    if rep.kind.is_usercopy:
        what = rep.direction or "violation"
        if rep.object:
            prep = "from" if rep.direction is Direction.EXPOSURE else "to"
            cache = f" '{rep.cache}'" if rep.cache else ""
            what += f" {prep} {rep.object}{cache}"
        return f"usercopy: {what}{where}"
    if rep.kind is ReportKind.KASAN and detail:
        return f"KASAN: {detail}{where}"
    if rep.kind is ReportKind.PANIC:
        return f"kernel panic: {detail}".rstrip()
    if rep.kind is ReportKind.WARNING and (rep.bug_site or not head):
        return f"WARNING{where}"
    if rep.kind is ReportKind.BUG and rep.bug_site and (not head or head.startswith("kernel BUG")):
        return f"kernel BUG at {rep.bug_site}{where}"
    if head:
        return f"{clean_head(head)}{where}"
    return f"{rep.kind}{where}"


def clean_head(head: str) -> str:
    """A generic header without addresses, error codes and oops counters."""
    s = head.strip()
    if s.startswith("general protection fault"):
        return "general protection fault"
    if s.startswith("Internal error"):
        return "Internal error: Oops"
    if s.startswith(("Oops", "invalid opcode")):
        return s.split(":", 1)[0].split(" - ", 1)[0]
    s = _DIE_TAIL.sub("", s)       # "divide error: 0000 [#1] SMP"
    s = _ADDR_TAIL.sub("", s)
    s = _IN_FUNC_TAIL.sub("", s)   # the guilty frame is appended instead
    if s.endswith("]") and "[" not in s:
        s = s[:-1]                 # "[ INFO: inconsistent lock state ]"
    return s.rstrip(" ,:!")


def make_signature(rep: Report, title: str | None = None) -> str:
    """Stable id: kind, direction, object, cache, guilty frame and the
    title (rep's, unless given) with every number masked (no offsets,
    sizes, addresses, pids)."""
    title = _NUMBERS.sub("N", rep.title if title is None else title)
    key = "\x1f".join(str(x) for x in (rep.kind, rep.direction, rep.object,
                                        rep.cache, rep.guilty_frame, title))
    return hashlib.sha1(key.encode()).hexdigest()[:16]
