"""The segmenter: it reads the lines of one input and decides which line
belongs to which report (the rules are in oops_parser.py's docstring).
Each line is, in this order, a boot fact (kernel version, LKDTM's bad
address), the rest of the line before it (line_joins.py), a header
(routed by report_routing.py), or a line of its context's open report
(open_report.OpenReport.absorb); the reports move between open, held,
detached and closed in report_book.py."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..model import Report
from .format_parts import Group
from .line_joins import continues_line, join_line
from .log_lines import LogLine, parse_line
from .open_report import OpenReport
from .qp_lines import QuotedPrintable
from .report_book import ReportBook
from .report_lines import MAX_KEPT_LINE, context, window
from .report_routing import continues_report, ends_report, message_apart, owner, pc_line_apart
from .trace_layout import header_group

_LINUX_VERSION = re.compile(r"Linux version (\S+)(?:.*?\s(#\d+))?")
# LKDTM names the kernel address of a bad copy that has no object offset
# (USERCOPY_KERNEL): "attempting bad copy_to_user from kernel text:
# ffffffff810a16a0".  Kept as report context for a golden offset-base.
_LKDTM_BAD_ADDRESS = re.compile(
    r"lkdtm: attempting bad copy_(?:to|from)_user\(?\)? from kernel [\w ]+: ([0-9a-f]{8,16})$")


@dataclass
class Segmenter:
    """Feed (line number, raw line); closed reports collect in order."""

    file: str
    book: ReportBook = field(init=False)
    # a mail body stored quoted-printable: soft breaks joined, escapes decoded
    qp: QuotedPrintable = field(default_factory=QuotedPrintable)

    def __post_init__(self) -> None:
        self.book = ReportBook(self.file)

    @property
    def busy(self) -> bool:
        """Whether a report is open or a quoted-printable line unfinished:
        then every line counts, not only those with a trigger."""
        return bool(self.book.open) or self.qp.pending

    @property
    def closed(self) -> list[Report]:
        """Closed reports not handed out yet."""
        return self.book.closed

    def ready(self) -> list[Report]:
        """Closed reports no open report started before, in line order."""
        return self.book.ready()

    def feed(self, lineno: int, raw: str) -> None:
        """Read line lineno (raw, as the input has it)."""
        logical = self.qp.feed(lineno, raw)
        if logical is not None:
            self._feed(*logical)

    def close_all(self) -> None:
        """The input (or the boot) ends: every report closes."""
        if (logical := self.qp.flush()) is not None:
            self._feed(*logical)
        self.book.close_all()

    def _feed(self, lineno: int, raw: str) -> None:
        ll = parse_line(raw)
        text = ll.text
        if len(text) > MAX_KEPT_LINE:
            text = window(text)
        book = self.book
        if "Linux version" in text and (m := _LINUX_VERSION.search(text)):
            self.close_all()
            book.boot.version = m.group(1) + (" " + m.group(2) if m.group(2) else "")
            book.boot.died = False
            return
        if "attempting bad copy" in text and (m := _LKDTM_BAD_ADDRESS.search(text)):
            book.boot.lkdtm_address = int(m.group(1), 16)
        if "** replaying previous printk message **" in text and book.drop_replayed(lineno):
            return
        book.expire(lineno)
        last, book.last = book.last, None
        if last is not None and continues_line(last, lineno, ll, book.open.get(last.ctx) is last):
            join_line(last, lineno, ll, text)
            book.last = last
            return
        group = None if ll.foreign else header_group(text)
        ctx = context(ll)
        cur = owner(book.open, ctx, ll)
        if group is not None:
            self._header(cur, ctx, lineno, text, ll, group)
        elif cur is not None:
            if ends_report(text):
                book.close(cur)
            elif not cur.absorb(text):
                book.close(cur, interrupted=True)
            else:
                book.take(cur, lineno, text, ll)

    def _header(self, cur: OpenReport | None, ctx: str, lineno: int, text: str, ll: LogLine,
                group: Group) -> None:
        """Route the header text (of group), in ctx where cur is open."""
        book = self.book
        if group.inside and cur is None and book.summary_of_ended(ctx, lineno):
            return          # the summary of the report that just ended
        det = book.detached.get(ctx)
        if det is not None and det.carries_on(text):
            # the body of an opener another report interrupted
            if cur is not None:
                book.close(cur, interrupted=True)
            book.take(book.reattach(ctx), lineno, text, ll, group)
            return
        if cur is not None and continues_report(cur, text, group):
            if group.syz:
                cur.syz_header_followed()
            if "Kernel panic" in text:
                cur.panic_after_end()
            book.take(cur, lineno, text, ll, group)
            return
        if cur is not None:
            book.close(cur, interrupted=True, hold=ctx == ll.caller)
        elif (msg := message_apart(book.open.values(), book.opened, ctx, text, group, ll,
                                   lineno)) is not None:
            # the message of the crash this header reports, printed in
            # a neighbouring context: it moves here and takes the body
            book.move(msg, ctx)
            msg.syz_header_followed()
            book.take(msg, lineno, text, ll, group)
            return
        elif (pc := pc_line_apart(book.open.values(), book.opened, group, ll,
                                  lineno)) is not None:
            # the message of the crash whose PC line (Group.inside)
            # opened a report just before, printed by another task
            book.take(pc, lineno, text, ll, group)
            return
        book.start(ctx, lineno, text, ll, group)
