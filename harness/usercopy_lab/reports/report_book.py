"""Report opening and closing: the reports of one input by where they are
(open, held, detached, closed) and the moves between those places.  The
segmenter (segmenter.py) decides which move a line makes."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..model import Report
from .format_parts import Group
from .log_lines import LogLine
from .open_report import Frames, OpenReport
from .report_analysis import RawReport, analyze
from .report_lines import MAX_KEPT_LINE

MAX_REPORT_LINES = 4000       # lines of one report; a longer one is closed
MAX_GAP = 500                 # lines of other contexts before a quiet report ends
MAX_DETACHED = 500            # lines an opener waits for its body (Group.body_after)
MAX_SUMMARY_GAP = 50          # lines from a report's end to x86's RIP summary of it

_DIE = re.compile(r"\[#\d+\]")


@dataclass
class Boot:
    """What the console said of the kernel that prints the reports."""

    version: str | None = None          # "6.1.0 #1", from its "Linux version" line
    lkdtm_address: int | None = None    # the kernel address of LKDTM's last bad copy
    died: bool = False                  # an oops ("[#1]") came: later reports are secondary


@dataclass
class ReportBook:
    """The reports of one input: open ones (one per context), held ones,
    detached openers, and closed ones waiting to be handed out in order."""

    file: str
    boot: Boot = field(default_factory=Boot)
    open: dict[str, OpenReport] = field(default_factory=dict)
    closed: list[Report] = field(default_factory=list)
    # With caller ids, a report cut by the next report of the same task
    # keeps reading that task's lines for its syzkaller title, as
    # syzkaller does; it is held until the task's reports end.
    held: dict[str, list[OpenReport]] = field(default_factory=dict)
    # Openers interrupted before their body (Group.body_after), per context.
    detached: dict[str, OpenReport] = field(default_factory=dict)
    # per context, the last line of the last report that reached its end
    # marker: x86 prints the RIP block again after it (oops_end's summary),
    # maybe after other lines that closed the report
    ended_at: dict[str, int] = field(default_factory=dict)
    opened: int = 0                     # reports opened so far
    last: OpenReport | None = None      # the report that took the line before

    def start(self, ctx: str, lineno: int, text: str, ll: LogLine, group: Group) -> None:
        """Open a report in ctx with the header text (of group)."""
        raw = RawReport(self.file, lineno, lineno, [], stamped=ll.stamped or bool(ll.caller),
                        kernel=self.boot.version, lkdtm_address=self.boot.lkdtm_address,
                        secondary=self.boot.died)
        self.opened += 1
        cur = OpenReport.start(ctx, raw, group, text, self.opened)
        self.open[ctx] = cur
        self.take(cur, lineno, text, ll, group)

    def take(self, cur: OpenReport, lineno: int, text: str, ll: LogLine,
             group: Group | None = None) -> None:
        """cur takes text, and so do the reports its context holds, for
        their syzkaller titles; group: the header group text opens."""
        for held in self.held.get(cur.ctx, ()):
            if len(held.raw.syz_extra) < MAX_REPORT_LINES:
                held.raw.syz_extra.append(text[:MAX_KEPT_LINE])
        cur.take(lineno, text, ll, group)
        self.last = cur
        if "[#" in text and _DIE.search(text):
            self.boot.died = True
        if len(cur.raw.lines) >= MAX_REPORT_LINES:
            self.close(cur)

    def move(self, cur: OpenReport, ctx: str) -> None:
        """cur goes on in ctx, a neighbouring context of its own."""
        del self.open[cur.ctx]
        cur.ctx = ctx
        self.open[ctx] = cur

    def reattach(self, ctx: str) -> OpenReport:
        """The detached opener of ctx, open again: its body came."""
        det = self.detached.pop(ctx)
        det.body_came()
        self.open[ctx] = det
        return det

    def summary_of_ended(self, ctx: str, lineno: int) -> bool:
        """Whether line lineno of ctx follows closely on the end of a report
        of ctx (where x86 prints its RIP block again)."""
        return lineno - self.ended_at.get(ctx, -MAX_SUMMARY_GAP - 1) <= MAX_SUMMARY_GAP

    def drop_replayed(self, lineno: int) -> bool:
        """Drop the report that the line before opened when the kernel is
        about to print that header again in full; whether there was one."""
        cur = self.last
        if cur is None or len(cur.raw.lines) != 1 or cur.raw.line != lineno - 1:
            return False
        del self.open[cur.ctx]
        self.last = None
        return True

    def expire(self, lineno: int) -> None:
        """Close the open reports that went quiet for MAX_GAP lines (while
        others are open), and give up on openers whose body did not come."""
        if len(self.open) > 1 or (self.open and not self.last):
            for quiet in [o for o in self.open.values() if lineno - o.last.number > MAX_GAP]:
                self.close(quiet)
        if self.detached:
            for ctx, det in list(self.detached.items()):
                if lineno - det.last.number > MAX_DETACHED:
                    del self.detached[ctx]
                    self.closed.append(analyze(det.raw))

    def close(self, cur: OpenReport, interrupted: bool = False, hold: bool = False) -> None:
        """interrupted: by another report or by a line that is not part of
        it (as opposed to the end of the input); hold: by the next report
        of its task."""
        if self.open.get(cur.ctx) is cur:
            del self.open[cur.ctx]
        if self.last is cur:
            self.last = None
        cur.close(interrupted)
        if cur.raw.ended:
            self.ended_at[cur.ctx] = cur.raw.end_line
        if interrupted and cur.frames is Frames.NONE and cur.ctx not in self.detached:
            group = cur.group
            if group is not None and group.body_after:
                self.detached[cur.ctx] = cur
                return
        if hold:
            self.held.setdefault(cur.ctx, []).append(cur)
            return
        for held in self.held.pop(cur.ctx, []):
            self.closed.append(analyze(held.raw))
        self.closed.append(analyze(cur.raw))

    def close_all(self) -> None:
        """Close every report: the end of the input or of the boot."""
        for cur in sorted(self.open.values(), key=lambda o: o.raw.line):
            self.close(cur)
        for ctx in list(self.detached):
            # a detached opener whose body never came: a report of its own
            self.closed.append(analyze(self.detached.pop(ctx).raw))
        for ctx in list(self.held):
            for held in self.held.pop(ctx):
                self.closed.append(analyze(held.raw))

    def ready(self) -> list[Report]:
        """Closed reports no open report started before, in line order."""
        if not self.closed:
            return []
        first_open = min([o.raw.line for o in self.open.values()]
                         + [h.raw.line for hs in self.held.values() for h in hs]
                         + [d.raw.line for d in self.detached.values()], default=None)
        out = sorted((r for r in self.closed if first_open is None or r.line < first_open),
                     key=lambda r: r.line)
        if out:
            taken = {id(r) for r in out}
            self.closed = [r for r in self.closed if id(r) not in taken]
        return out
