"""Context routing: which open report a line goes to.  A line goes to the
open report of its context (report_lines.context), or to one that a
neighbouring context holds: an NMI backtrace's CPU lines, the message of a
crash printed apart from its header, a PC line printed by another task.
A header there either continues that report or starts a new one."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from .format_parts import Group
from .log_lines import LogLine
from .open_report import OpenReport, ReportPhase
from .trace_layout import CONTINUES, INFO_WITH_STACK, header_group

MAX_APART = 3                 # lines from a message to the header printed apart from it


def owner(open_reports: Mapping[str, OpenReport], ctx: str, ll: LogLine) -> OpenReport | None:
    """The open report of ctx, the context of ll; for a CPU's line
    ("[    C1]") with none open there, the report that asked the CPUs for
    their backtraces ("Sending NMI from CPU")."""
    cur = open_reports.get(ctx)
    if cur is None and ll.caller and ll.caller[0] == "C":
        cur = next((o for o in open_reports.values() if o.nmi_backtrace), None)
    return cur


def ends_report(text: str) -> bool:
    """Whether a line that opens no report ends its context's open one: an
    info report with its own stack (fault injection), or the VM going away."""
    return any(s in text for s in INFO_WITH_STACK) or "serialport: VM disconnected" in text


def continues_report(cur: OpenReport, text: str, group: Group) -> bool:
    """Whether the header text (of group) goes on with cur, the open report
    of its context, instead of starting a report of its own."""
    if group.inside:
        return True
    if any(c.search(text) for c in CONTINUES):
        # a die line continues what it dies of, not a report that ended
        return cur.phase is not ReportPhase.ENDED or "Kernel panic" in text
    if cur.inline_head and cur.raw.lines and header_group(cur.raw.lines[0]) is group:
        return True
    if (group.joins is not None and cur.phase is ReportPhase.HEADER and cur.raw.lines
            and group.joins.search(cur.raw.lines[0])):
        return True
    if group.header == "Oops":
        return cur.phase is ReportPhase.HEADER
    return cur.awaits_syz_header and group.syz


def message_apart(open_reports: Iterable[OpenReport], opened: int, ctx: str, text: str,
                  group: Group, ll: LogLine, lineno: int) -> OpenReport | None:
    """The open message (a header-only report of a group whose joins
    pattern this header matches: the usercopy message before "kernel
    BUG at mm/usercopy.c") in a neighbouring context, when no report
    was opened after it (opened: how many were): unstamped where this
    line is stamped or the other way round (a message pasted without its
    timestamp), or one mail quoting depth apart (a reply that quotes the
    message and, quoted deeper, the report it came with)."""
    if not group.syz:
        return None
    for o in open_reports:
        if o.seq != opened or not o.awaits_syz_header or not o.raw.lines:
            continue
        og = o.group
        if og is None or og.joins is None or not og.joins.search(text):
            continue
        if ll.caller or o.ctx.startswith(("T", "C")):
            # PRINTK_CALLER: the task printed the message and the CPU
            # the BUG (riscv's die() prints from the trap, "[  T929]"
            # then "[    C1]"), on the next lines, at the same depth
            if (o.ctx.startswith("T") and (ll.caller or "").startswith("C")
                    and o.ctx.count(">") == ll.quote and lineno - o.raw.end_line <= MAX_APART):
                return o
            continue
        if abs(o.ctx.count(">") - ll.quote) <= 1 and o.ctx != ctx:
            return o
    return None


def pc_line_apart(open_reports: Iterable[OpenReport], opened: int, group: Group, ll: LogLine,
                  lineno: int) -> OpenReport | None:
    """The report a usercopy_abort PC line opened (an excerpt that
    starts at "EIP: usercopy_abort"), still without frames, when the
    usercopy message its group joins comes next from another context
    at the same quoting depth (PRINTK_CALLER: "[ T189] EIP: ..." then
    "[ T194] usercopy: ..."), with no report opened in between."""
    if group.joins is None or group.syz:
        return None
    for o in open_reports:
        if (o.seq == opened and o.phase is ReportPhase.HEADER and o.raw.lines
                and o.ctx.count(">") == ll.quote and lineno - o.raw.end_line <= MAX_APART):
            og = o.group
            if og is not None and og.inside:
                return o
    return None
