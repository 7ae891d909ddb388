"""Split console / dmesg / syslog text into kernel reports (report_model.Report).

Entry points:

  iter_reports(lines, file)   any iterable of text lines (run and match give
                              log_reader.split_lines() of the console)
  iter_stream(f, name)        a binary stream, read in chunks with bounded
  iter_file(path)             memory (triage); chunks without any trigger
  parse_file(path)            substring are skipped at C speed

The parser only decides which lines belong to which report; what a report
says is report_analysis.analyze()'s job, with the formats in
report_formats.py.  A line opens a report when it holds a report header
(report_formats.header_group); it joins the open report of its context:
its PRINTK_CALLER id ("T123"), else "kernel line" (stamped) or "other
output" (no kernel prefix), so other CPUs, tasks and programs printing in
between do not break a report up.  A report ends at the next header of its
context (except the die line, the panic and other continuations of the
same crash), at an info report with its own stack (fault injection), a
reboot, the end of the input, or when unrelated lines follow its end
marker or go on too long.

A line without a kernel prefix right after a kernel line of an open report
is that line's continuation when the kernel line was wrapped (it ends with
a space, as mail format=flowed does; it is at least WRAP_WIDTH long, as a
bug tracker breaks it; or it ends with a word a kernel message cannot end
with): the two are joined.

After an oops (a die counter "[#1]"), later reports of the same boot are
marked secondary: they may be consequences of the first.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ..model import Report
from .format_parts import Group
from .log_lines import LogLine, parse_line
from .log_reader import (CHUNK, MAX_DECOMPRESSED, MAX_INPUT, MAX_LINE, LogFormatError, ScanStats,
                         candidate_lines, open_log)
from .qp_lines import QuotedPrintable
from .open_report import (MAX_HEADER_LINES, MAX_INLINE_COPIES, MAX_UNKNOWN_RUN, Frames, OpenReport,
                          Phase)
from .report_analysis import RawReport, analyze, is_plumbing
from .report_lines import (MAX_KEPT_LINE, context, cut_glue, pieces,
                           starts_kernel_line, window)
from .report_naming import make_signature
from .trace_layout import (CONTINUES, INFO_WITH_STACK, SOURCE_TAIL, TRIGGERS, header_group,
                           may_matter)

__all__ = ["CHUNK", "MAX_LINE", "LogFormatError", "ScanStats", "is_plumbing", "iter_file",
           "iter_reports", "iter_stream", "make_signature", "parse_file"]

MAX_REPORT_LINES = 4000       # lines of one report; a longer one is closed
WRAP_WIDTH = 70               # a line this long may have been wrapped
MAX_GAP = 500                 # lines of other contexts before a quiet report ends
MAX_DETACHED = 500            # lines an opener waits for its body (Group.body_after)
MAX_SUMMARY_GAP = 50          # lines from a report's end to x86's RIP summary of it
# The lab harness's own lines in a captured console (console_capture): never
# the rest of a kernel line, however unfinished that line is.
HARNESS_PREFIXES = ("# usercopy-lab: ", "# qemu: ")

_TRIGGERS_B = tuple(t.encode() for t in TRIGGERS)
_LINUX_VERSION = re.compile(r"Linux version (\S+)(?:.*?\s(#\d+))?")
# LKDTM names the kernel address of a bad copy that has no object offset
# (USERCOPY_KERNEL): "attempting bad copy_to_user from kernel text:
# ffffffff810a16a0".  Kept as report context for a golden offset-base.
_LKDTM_BAD_ADDRESS = re.compile(
    r"lkdtm: attempting bad copy_(?:to|from)_user\(?\)? from kernel [\w ]+: ([0-9a-f]{8,16})$")
# a kernel message cannot end with these words; a line that does was wrapped
_OPEN_WORD = re.compile(r"\b(?:at|from|to|in|of|for|on|by|with)$")
_DIE = re.compile(r"\[#\d+\]")


@dataclass
class _Segmenter:
    """Feed (line number, raw line); closed reports collect in order."""

    file: str
    open: dict[str, OpenReport] = field(default_factory=dict)
    closed: list[Report] = field(default_factory=list)
    version: str | None = None
    lkdtm_address: int | None = None
    died: bool = False
    last: OpenReport | None = None
    # With caller ids, a report cut by the next report of the same task
    # keeps reading that task's lines for its syzkaller title, as
    # syzkaller does; it is held until the task's reports end.
    held: dict[str, list[OpenReport]] = field(default_factory=dict)
    # Openers interrupted before their body (Group.body_after), per context.
    detached: dict[str, OpenReport] = field(default_factory=dict)
    # a mail body stored quoted-printable: soft breaks joined, escapes decoded
    qp: QuotedPrintable = field(default_factory=QuotedPrintable)
    opened: int = 0               # reports opened so far
    # per context, the last line of the last report that reached its end
    # marker: x86 prints the RIP block again after it (oops_end's summary),
    # maybe after other lines that closed the report
    ended_at: dict[str, int] = field(default_factory=dict)

    @property
    def busy(self) -> bool:
        return bool(self.open) or self.qp.pending

    def _replayed(self, lineno: int) -> bool:
        """A header line the kernel is about to print again in full: the
        report it opened is dropped."""
        cur = self.last
        if cur is None or len(cur.raw.lines) != 1 or cur.raw.line != lineno - 1:
            return False
        del self.open[cur.ctx]
        self.last = None
        return True

    def feed(self, lineno: int, raw: str) -> None:
        logical = self.qp.feed(lineno, raw)
        if logical is not None:
            self._feed(*logical)

    def _feed(self, lineno: int, raw: str) -> None:
        ll = parse_line(raw)
        text = ll.text
        if len(text) > MAX_KEPT_LINE:
            text = window(text)
        if "Linux version" in text and (m := _LINUX_VERSION.search(text)):
            self.close_all()
            self.version = m.group(1) + (" " + m.group(2) if m.group(2) else "")
            self.died = False
            return
        if "attempting bad copy" in text and (m := _LKDTM_BAD_ADDRESS.search(text)):
            self.lkdtm_address = int(m.group(1), 16)
        if "** replaying previous printk message **" in text and self._replayed(lineno):
            return
        if len(self.open) > 1 or (self.open and not self.last):
            for quiet in [o for o in self.open.values() if lineno - o.last.number > MAX_GAP]:
                self._close(quiet)
        if self.detached:
            for ctx, det in list(self.detached.items()):
                if lineno - det.last.number > MAX_DETACHED:
                    del self.detached[ctx]
                    self._finish(det)
        last, self.last = self.last, None
        if last is not None and self._continues_line(last, lineno, ll):
            prev = last.raw.lines[-1]
            if prev.endswith("  "):
                prev = prev[:-1]        # format=flowed; DelSp=yes added one
            if last.last.broken:
                text = text.lstrip()
            # a mailer wraps between words (the space is gone), a tracker at
            # a fixed width, maybe inside a word: a broken header takes the
            # join its group's formats read, else the width decides
            glue = " " if not prev.endswith(" ") and (
                (last.last.broken and last.last.width < WRAP_WIDTH) or _OPEN_WORD.search(prev)
                or SOURCE_TAIL.match(text)) else ""
            if last.last.broken and not prev.endswith(" "):
                glue = cut_glue(prev, text, glue)
            last.rejoin(lineno, ll.width, prev + glue + text)
            self.last = last
            return
        group = None if ll.foreign else header_group(text)
        ctx = context(ll)
        cur = self.open.get(ctx)
        if cur is None and ll.caller and ll.caller[0] == "C":
            cur = next((o for o in self.open.values() if o.nmi_backtrace), None)
        if group is not None and group.inside and cur is None and (
                lineno - self.ended_at.get(ctx, -MAX_SUMMARY_GAP - 1) <= MAX_SUMMARY_GAP):
            return          # the summary of the report that just ended
        if group is not None:
            det = self.detached.get(ctx)
            if det is not None and det.carries_on(text):
                # the body of an opener another report interrupted
                if cur is not None:
                    self._close(cur, interrupted=True)
                del self.detached[ctx]
                det.body_came()
                self.open[ctx] = det
                self._take(det, lineno, text, ll, group)
                return
            if cur is not None and self._continues_report(cur, text, group):
                if group.syz:
                    cur.syz_header_followed()
                if "Kernel panic" in text:
                    cur.panic_after_end()
                self._take(cur, lineno, text, ll, group)
                return
            if cur is not None:
                self._close(cur, interrupted=True, hold=ctx == ll.caller)
            elif (msg := self._message_apart(ctx, text, group, ll, lineno)) is not None:
                # the message of the crash this header reports, printed in
                # a neighbouring context: it moves here and takes the body
                del self.open[msg.ctx]
                msg.ctx = ctx
                msg.syz_header_followed()
                self.open[ctx] = msg
                self._take(msg, lineno, text, ll, group)
                return
            elif (pc := self._pc_line_apart(text, group, ll, lineno)) is not None:
                # the message of the crash whose PC line (Group.inside)
                # opened a report just before, printed by another task
                self._take(pc, lineno, text, ll, group)
                return
            self._open(ctx, lineno, text, ll, group)
            return
        if cur is None:
            return
        if any(s in text for s in INFO_WITH_STACK) or "serialport: VM disconnected" in text:
            self._close(cur)
            return
        if not cur.absorb(text):
            self._close(cur, interrupted=True)
            return
        self._take(cur, lineno, text, ll)

    def _continues_line(self, last: OpenReport, lineno: int, ll: LogLine) -> bool:
        if (ll.foreign or not ll.text.strip() or last.last.number != lineno - 1
                or self.open.get(last.ctx) is not last
                or ll.text.startswith(HARNESS_PREFIXES)):
            return False
        if last.last.broken:
            # a header broken before its end (by a mailer, or printed in
            # pieces): the next line of its context completes it, indented
            # (a commit message) or not, even where a mailer's wrap lost the
            # quote marks of the rest
            return ((context(ll) == last.ctx or not (ll.stamped or ll.caller))
                    and ll.quote <= last.last.quote and not starts_kernel_line(ll.text.lstrip()))
        if ll.quote != last.last.quote:
            return False
        if ll.stamped or ll.caller:
            return False
        if SOURCE_TAIL.match(ll.text):
            return True
        prev = last.raw.lines[-1]
        if last.raw.stamped:
            # an unstamped line after a stamped one: wrapped by a mailer or tracker
            return prev.endswith(" ") or last.last.width >= WRAP_WIDTH or bool(_OPEN_WORD.search(prev))
        # No stamps (a mail): format=flowed's soft break ends a line with a
        # space (the kernel's own lines can too, but then a kernel line
        # follows); a hard wrap before a word no kernel message ends with.
        return ((prev.endswith(" ") or bool(_OPEN_WORD.search(prev)))
                and not starts_kernel_line(ll.text))

    def _continues_report(self, cur: OpenReport, text: str, group: Group) -> bool:
        if group.inside:
            return True
        if any(c.search(text) for c in CONTINUES):
            # a die line continues what it dies of, not a report that ended
            return cur.phase is not Phase.ENDED or "Kernel panic" in text
        if cur.inline_head and cur.raw.lines and header_group(cur.raw.lines[0]) is group:
            return True
        if (group.joins is not None and cur.phase is Phase.HEADER and cur.raw.lines
                and group.joins.search(cur.raw.lines[0])):
            return True
        if group.header == "Oops":
            return cur.phase is Phase.HEADER
        return cur.awaits_syz_header and group.syz

    def _message_apart(self, ctx: str, text: str, group: Group, ll: LogLine,
                       lineno: int) -> OpenReport | None:
        """The open message (a header-only report of a group whose joins
        pattern this header matches: the usercopy message before "kernel
        BUG at mm/usercopy.c") in a neighbouring context, when no report
        was opened after it: unstamped where this line is stamped or the
        other way round (a message pasted without its timestamp), or one
        mail quoting depth apart (a reply that quotes the message and,
        quoted deeper, the report it came with)."""
        if not group.syz:
            return None
        for o in self.open.values():
            if o.seq != self.opened or not o.awaits_syz_header or not o.raw.lines:
                continue
            og = o.group
            if og is None or og.joins is None or not og.joins.search(text):
                continue
            if ll.caller or o.ctx.startswith(("T", "C")):
                # PRINTK_CALLER: the task printed the message and the CPU
                # the BUG (riscv's die() prints from the trap, "[  T929]"
                # then "[    C1]"), on the next lines, at the same depth
                if (o.ctx.startswith("T") and (ll.caller or "").startswith("C")
                        and o.ctx.count(">") == ll.quote and lineno - o.raw.end_line <= 3):
                    return o
                continue
            if abs(o.ctx.count(">") - ll.quote) <= 1 and o.ctx != ctx:
                return o
        return None

    def _pc_line_apart(self, text: str, group: Group, ll: LogLine,
                       lineno: int) -> OpenReport | None:
        """The report a usercopy_abort PC line opened (an excerpt that
        starts at "EIP: usercopy_abort"), still without frames, when the
        usercopy message its group joins comes next from another context
        at the same quoting depth (PRINTK_CALLER: "[ T189] EIP: ..." then
        "[ T194] usercopy: ..."), with no report opened in between."""
        if group.joins is None or group.syz:
            return None
        for o in self.open.values():
            if (o.seq == self.opened and o.phase is Phase.HEADER and o.raw.lines
                    and o.ctx.count(">") == ll.quote and lineno - o.raw.end_line <= 3):
                og = o.group
                if og is not None and og.inside:
                    return o
        return None

    def _open(self, ctx: str, lineno: int, text: str, ll: LogLine, group: Group) -> None:
        raw = RawReport(self.file, lineno, lineno, [], stamped=ll.stamped or bool(ll.caller),
                        kernel=self.version, lkdtm_address=self.lkdtm_address,
                        secondary=self.died)
        self.opened += 1
        cur = OpenReport.start(ctx, raw, group, text, self.opened)
        self.open[ctx] = cur
        self._take(cur, lineno, text, ll, group)

    def _take(self, cur: OpenReport, lineno: int, text: str, ll: LogLine,
              group: Group | None = None) -> None:
        for held in self.held.get(cur.ctx, ()):
            if len(held.raw.syz_extra) < MAX_REPORT_LINES:
                held.raw.syz_extra.append(text[:MAX_KEPT_LINE])
        cur.take(lineno, text, ll, group)
        self.last = cur
        if "[#" in text and _DIE.search(text):
            self.died = True
        if len(cur.raw.lines) >= MAX_REPORT_LINES:
            self._close(cur)

    def _close(self, cur: OpenReport, interrupted: bool = False, hold: bool = False) -> None:
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

    def _finish(self, cur: OpenReport) -> None:
        """A detached opener whose body never came: a report of its own."""
        self.closed.append(analyze(cur.raw))

    def close_all(self) -> None:
        if (logical := self.qp.flush()) is not None:
            self._feed(*logical)
        for cur in sorted(self.open.values(), key=lambda o: o.raw.line):
            self._close(cur)
        for ctx in list(self.detached):
            self._finish(self.detached.pop(ctx))
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


def iter_reports(lines: Iterable[str], file: str = "<input>") -> Iterator[Report]:
    """Reports in lines (text, with or without line ends), in order."""
    return iter_numbered(enumerate(lines, 1), file)


def iter_numbered(lines: Iterable[tuple[int, str]], file: str = "<input>") -> Iterator[Report]:
    """Reports in (line number, text) pairs (log_reader.iter_lines), in order."""
    seg = _Segmenter(file)
    for lineno, line in lines:
        for raw in pieces(line):
            if not seg.busy and not any(t in raw for t in TRIGGERS):
                continue
            seg.feed(lineno, raw)
            if seg.closed:
                yield from seg.ready()
    seg.close_all()
    yield from seg.ready()


def iter_stream(f: BinaryIO, name: str = "<input>", stats: ScanStats | None = None,
                chunk_size: int | None = None, max_input: int = MAX_INPUT,
                refuse_binary: bool = True) -> Iterator[Report]:
    """Reports of a binary stream.  Raises LogFormatError when the input
    is binary data without any report (after its first chunk when that
    opened none: /dev/zero ends at once; not if refuse_binary is False, as
    for a console whose garbage is itself the finding), or when
    decompression is refused."""
    stats = stats if stats is not None else ScanStats()
    seg = _Segmenter(name)

    def binary_without_reports() -> bool:
        return refuse_binary and stats.binary_start and not stats.reports and not seg.busy

    lines = candidate_lines(f, _TRIGGERS_B, lambda: seg.busy, stats,
                            chunk_size or CHUNK, binary_without_reports, max_input)
    for lineno, raw in lines:
        if not seg.busy and not may_matter(raw):
            continue
        seg.feed(lineno, raw.decode("utf-8", "replace"))
        if seg.closed:
            for rep in seg.ready():
                stats.reports += 1
                yield rep
    seg.close_all()
    for rep in seg.ready():
        stats.reports += 1
        yield rep
    if binary_without_reports():
        raise LogFormatError("binary data, not a text log")


def iter_file(path: str | Path, stats: ScanStats | None = None, name: str | None = None,
              max_decompressed: int = MAX_DECOMPRESSED,
              chunk_size: int | None = None, max_input: int = MAX_INPUT) -> Iterator[Report]:
    """Reports of one log file (plain, .gz, .xz, .bz2), streaming; raises
    LogFormatError on binary input and OSError when it cannot be read."""
    with open_log(path, max_decompressed) as f:
        yield from iter_stream(f, name if name is not None else str(path), stats, chunk_size,
                               max_input)


def parse_file(path: str | Path) -> list[Report]:
    return list(iter_file(path))
