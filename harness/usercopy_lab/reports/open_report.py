"""A report the parser still has open in one context (segmenter.py): the
phase it is in, what opened it, what it has seen of a call trace and the
last line it took.  Its transitions are its methods; which lines reach
them is the segmenter's business."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .format_parts import Group
from .frames import parse_frame
from .log_lines import LogLine
from .report_analysis import BARE_FRAME, RawReport
from .report_lines import MAX_KEPT_LINE, is_cut
from .trace_layout import (BANNER, INLINE_COPY, NEW_TRACE, ROOT_FRAME, TAIL_LINE, TRACE_DONE,
                           TRACE_LINE, header_group)

MAX_HEADER_LINES = 300        # unrelated lines before a call trace
MAX_UNKNOWN_RUN = 50          # unrelated lines in a row inside a trace
MAX_INLINE_COPIES = 64        # symbolizer copies of one header line


class ReportPhase(Enum):
    """How far a report got; it decides which lines still join it."""

    HEADER = "header"   # its header, registers, ...: anything before a call trace
    TRACE = "trace"     # a call trace was taken (or a panic followed its end marker)
    ENDED = "ended"     # its end marker was taken: only tail lines and frames join


class Opener(Enum):
    """What kind of line opened a report, as syzkaller sees it."""

    SYZ_HEADER = "syz-header"   # a header syzkaller reads as one
    PRELUDE = "prelude"         # a line syzkaller does not see; its header may follow
    JOINED = "joined"           # a prelude whose syzkaller header followed


class Frames(Enum):
    """What of a call trace a report took."""

    NONE = "none"           # no frame and no trace line
    BARE = "bare"           # trace lines, or frames without the kernel's own layout
    PRINTED = "printed"     # a frame as the kernel prints it (frames.parse_frame)


@dataclass(frozen=True)
class LastLine:
    """The physical line a report took last: the next line may be its rest."""

    number: int = 0
    width: int = 0          # characters of the physical line
    quote: int = 0          # its mail quoting depth
    broken: bool = False    # a header broken before its end (Group.cut)


@dataclass
class OpenReport:
    """A report being read: its lines (raw) and the state that decides
    which lines it takes next."""

    ctx: str                # the context it reads (report_lines.context)
    raw: RawReport
    opener: Opener
    seq: int                # its number among the reports opened: 1, 2, ...
    phase: ReportPhase = ReportPhase.HEADER
    frames: Frames = Frames.NONE
    trace_complete: bool = False    # the current call trace reached its end
    nmi_backtrace: bool = False     # "Sending NMI from CPU": [C..] lines belong
    inline_head: bool = False       # only symbolizer copies of a header so far
    last: LastLine = field(default_factory=LastLine)
    unknown: int = 0                # unrelated lines in a row
    after_trace: int = 0            # unrelated lines since the last trace line

    @classmethod
    def start(cls, ctx: str, raw: RawReport, group: Group, text: str, seq: int) -> OpenReport:
        """A report the header text (of group) opens; it takes text next."""
        return cls(ctx, raw, Opener.SYZ_HEADER if group.syz else Opener.PRELUDE, seq,
                   inline_head=bool(INLINE_COPY.search(text)))

    @property
    def group(self) -> Group | None:
        """The header group of its first line."""
        return header_group(self.raw.lines[0]) if self.raw.lines else None

    @property
    def awaits_syz_header(self) -> bool:
        """Opened by a prelude and still in its header, with no syzkaller
        header yet: the next one of a group it joins is its own."""
        return self.phase is ReportPhase.HEADER and self.opener is Opener.PRELUDE

    def carries_on(self, text: str) -> bool:
        """Whether text is the body of this opener (Group.body_after)."""
        group = self.group
        return group is not None and any(p.search(text) for p in group.body_after)

    # ------------------------------------------------------------ transitions
    def take(self, lineno: int, text: str, ll: LogLine, group: Group | None = None) -> None:
        """Take text (line lineno, ll parsed) as its next line; group: the
        header group text opens, if it is a header."""
        self.raw.lines.append(text[:MAX_KEPT_LINE])
        self.raw.end_line = lineno
        broken = group is not None and any(p.search(text) for p in group.cut)
        self.last = LastLine(lineno, ll.width, ll.quote, broken)
        if self.inline_head and len(self.raw.lines) > 1 and not INLINE_COPY.search(text):
            self.inline_head = False

    def rejoin(self, lineno: int, width: int, joined: str) -> None:
        """Replace its last line by joined: that line and the rest of it on
        line lineno (width characters wide)."""
        lines = self.raw.lines
        lines[-1] = joined[:MAX_KEPT_LINE]
        self.raw.end_line = lineno
        self.last = LastLine(lineno, width, self.last.quote, is_cut(lines[-1]))
        self.inline_head = len(lines) <= MAX_INLINE_COPIES and all(
            INLINE_COPY.search(t) for t in lines)

    def syz_header_followed(self) -> None:
        """A header syzkaller reads joined it."""
        if self.opener is Opener.PRELUDE:
            self.opener = Opener.JOINED

    def panic_after_end(self) -> None:
        """The kernel panics after its end marker: a trace may follow."""
        if self.phase is ReportPhase.ENDED:
            self.phase = ReportPhase.TRACE

    def body_came(self) -> None:
        """The body of a detached opener came: it reads its header again."""
        self.phase, self.unknown, self.after_trace = ReportPhase.HEADER, 0, 0

    def absorb(self, text: str) -> bool:
        """Whether a line of its context that opens no report belongs to
        it; the line moves it on (trace, end) when it does."""
        s = text.strip()
        if self.phase is ReportPhase.ENDED:
            return bool(TAIL_LINE.match(s)) or parse_frame(text) is not None
        if "---[ end" in s:
            self.phase = ReportPhase.ENDED
            return True
        if "Sending NMI from CPU" in text:
            self.nmi_backtrace = True
        frame = parse_frame(text)
        if frame is not None or TRACE_LINE.match(s) or (
                self.phase is ReportPhase.TRACE and self.frames is not Frames.PRINTED
                and BARE_FRAME.match(text)):
            self._trace_line(s, frame is not None and ROOT_FRAME.fullmatch(frame.func) is not None,
                             printed=frame is not None)
            return True
        if BANNER.match(s) and len(self.raw.lines) > 1:
            self.phase = ReportPhase.ENDED
            return True
        if not s and self.phase is ReportPhase.TRACE and self.after_trace == 0:
            self.trace_complete = True      # an empty line ends a trace
        if TAIL_LINE.match(s):
            if self.phase is ReportPhase.TRACE and TRACE_DONE.match(s):
                self.trace_complete = True
            return True
        self.unknown += 1
        self.after_trace += 1
        return self.unknown <= (MAX_HEADER_LINES if self.phase is ReportPhase.HEADER
                                else MAX_UNKNOWN_RUN)

    def _trace_line(self, s: str, root: bool, printed: bool) -> None:
        """A frame or trace line (s, stripped); root: a frame where a call
        trace ends; printed: a frame as the kernel prints it."""
        if printed:
            self.frames = Frames.PRINTED
        elif self.frames is Frames.NONE:
            self.frames = Frames.BARE
        self.phase = ReportPhase.TRACE
        if NEW_TRACE.match(s):
            self.trace_complete = False
        elif root or TRACE_DONE.match(s):
            self.trace_complete = True
        self.unknown = self.after_trace = 0

    def close(self, interrupted: bool) -> None:
        """Mark raw as it closes: interrupted by another report or by a line
        not its own, or else at the end of the input or of its room."""
        # a call trace that stops where other output goes on was cut; one
        # that stops at the end of the input is an excerpt
        self.raw.cut = self.phase is ReportPhase.TRACE and not self.trace_complete and (
            interrupted or self.after_trace > 0)
        self.raw.ended = self.phase is ReportPhase.ENDED
