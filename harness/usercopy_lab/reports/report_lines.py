"""How the parser reads one line of a report (segmenter.py): which open
report it may belong to (its context), whether it starts a kernel line of
its own or is the rest of a broken one (line_joins.py joins those), and
the window kept of a very long line."""
from __future__ import annotations

import re
from collections.abc import Iterator

from .frames import parse_frame
from .log_lines import LogLine
from .log_reader import MAX_LINE
from .trace_layout import BANNER, TAIL_LINE, TRACE_LINE, TRIGGERS, header_group


MAX_KEPT_LINE = 2048          # characters kept of one report line


# a kernel message that starts with its subsystem or device prefix
_PREFIXED = re.compile(r"[A-Za-z][\w.-]*(?: [\w.:-]+)?: \S")


def context(ll: LogLine) -> str:
    """Which open report a line may belong to: its caller id, else kernel
    line or other output; mail quoting depth is a context of its own, so a
    replier's lines between quoted ones do not break a quoted report up."""
    return (ll.caller or ("k" if ll.stamped else "-")) + ">" * ll.quote


def is_cut(text: str) -> bool:
    """Whether text is a header broken before its end (Group.cut): the
    next line of its context is its rest."""
    group = header_group(text)
    return group is not None and any(p.search(text) for p in group.cut)


def starts_kernel_line(text: str) -> bool:
    """Whether text reads as a line of its own in a report (indented
    frame, header, register, trace or end line), not as the rest of the
    line before it."""
    if text[:1].isspace() or text.startswith("---") or BANNER.match(text) is not None:
        return True
    if _PREFIXED.match(text):
        return True                 # "KASAN: ...", "rcu: ...", "usb 1-1: ..."
    if TAIL_LINE.match(text) is not None or TRACE_LINE.match(text) is not None:
        return True
    # a frame is indented or starts with its address ("[<...>]", "[c...]"):
    # "func+0x1/0x2" at the start of a line is the rest of a broken header
    if text[:1] in "[(" and parse_frame(text) is not None:
        return True
    return header_group(text) is not None


def window(text: str) -> str:
    """At most MAX_KEPT_LINE characters of a long line, from just before
    its first trigger on (patterns never see more: bounded time per line)."""
    hits = [p for t in TRIGGERS if (p := text.find(t)) >= 0]
    start = max(0, min(hits) - 64) if hits else 0
    return text[start:start + MAX_KEPT_LINE]


def pieces(raw: str) -> Iterator[str]:
    """raw in pieces of at most MAX_LINE characters, as the stream reader
    cuts an overlong line (log_reader.MAX_LINE)."""
    if len(raw) <= MAX_LINE:
        yield raw
        return
    for i in range(0, len(raw), MAX_LINE):
        yield raw[i:i + MAX_LINE]
