"""A report the parser (oops_parser.py) still has open in one context: how
far it got (header, trace, ended) and what it has seen; and whether a
line of its group carries on a report whose opener came apart from it."""
from __future__ import annotations

from dataclasses import dataclass

from .report_analysis import RawReport
from .trace_layout import header_group


@dataclass
class OpenReport:
    ctx: str
    raw: RawReport
    prelude: bool = False         # opened by a line syzkaller does not see
    merged: bool = False          # ... and the syzkaller header followed
    phase: str = "header"         # header | trace | ended
    unknown: int = 0
    traceback: bool = False       # "Sending NMI from CPU": [C..] lines belong
    width: int = 0                # physical width of the last line taken
    quote: int = 0                # its mail quoting depth
    cut: bool = False             # it is a header broken before its end
    traced: bool = False          # a frame or trace line was taken
    seq: int = 0                  # how many reports were opened before it
    inline_head: bool = False     # only symbolizer copies of a header so far
    last_phys: int = 0            # its line number
    complete: bool = False        # the current call trace reached its end
    printed: bool = False         # a frame as the kernel prints it was seen
    after_trace: int = 0          # unrelated lines since the last trace line


def carries_on(opener: OpenReport, text: str) -> bool:
    group = header_group(opener.raw.lines[0]) if opener.raw.lines else None
    return group is not None and any(p.search(text) for p in group.body_after)
