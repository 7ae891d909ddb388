"""What the guest's init and LKDTM said on the console, apart from oopses.

init prints the protocol's markers (protocol.py); LKDTM prints
"lkdtm: ..." lines, including the FAIL:/XFAIL: vocabulary and, for the
usercopy-lab triggers, the window and bad-copy announcements the harness
cross-checks against the oops.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..model import Outcome
from ..protocol import CHECK_PREFIX, PREFIX, read_end, read_start
from .log_lines import iter_program_lines, iter_program_pairs

# The harness's own lines in a log (console_capture): not the console.
HARNESS_LINES = ("# qemu: ", "# usercopy-lab: ")
_WINDOW_RE = re.compile(r"expecting window offset (\d+) size (\d+) in '([^']+)'")
_BAD_COPY_RE = re.compile(r"attempting bad copy_(?:to|from)_user at offset (\d+) size (\d+)")
# drivers/misc/lkdtm/core.c direct_entry(): what was written to DIRECT.
_DIRECT_RE = re.compile(r"Performing direct entry (\S+)")


@dataclass
class Window:
    cache: str
    offset: int
    size: int


@dataclass
class ConsoleMarkers:
    started: str | None = None            # trigger name from (the last) START
    ended: str | None = None              # trigger name from (the last) END
    starts: list[str] = field(default_factory=list)   # every START's name, in order
    ends: list[str] = field(default_factory=list)     # every END's name, in order
    direct: list[str] = field(default_factory=list)   # LKDTM "Performing direct entry NAME"
    outcome: Outcome | None = None        # the last END's (None: no END, or a word
                                          # the protocol does not have)
    end_word: str | None = None           # the last END's outcome word, as printed
    signal: int | None = None
    status: int | None = None
    lkdtm: list[str] = field(default_factory=list)   # text after "lkdtm: "
    lkdtm_line: list[int] = field(default_factory=list)  # 1-based line of each
    checks: list[str] = field(default_factory=list)  # after protocol.CHECK_PREFIX
    window: Window | None = None
    bad_copy: tuple[int, int] | None = None          # (offset, size)

    @property
    def outcome_said(self) -> str | None:
        """The last END's outcome for a message: the protocol's word, or
        the word the guest printed when the protocol has no such outcome."""
        return self.outcome.value if self.outcome is not None else self.end_word

    @property
    def lkdtm_xfail(self) -> list[str]:
        return [m for m in self.lkdtm if m.startswith("XFAIL:")]


def read_markers(lines: Iterable[str]) -> ConsoleMarkers:
    """Markers of a console given as its lines (line i is line number i+1,
    the numbering Report.line uses when the same lines are parsed).  Read
    through program_lines(), so a printk record the console glued into a
    marker or check line neither hides it nor is hidden by it."""
    return read_numbered(enumerate(iter_program_lines(lines), 1), program=True)


def read_numbered(lines: Iterable[tuple[int, str]], program: bool = False) -> ConsoleMarkers:
    """read_markers() of (line number, text) pairs, e.g. only the lines
    that hold a marker (and the line after each); program: the pairs are
    program lines already."""
    found = ConsoleMarkers()
    for num, line in (lines if program else iter_program_pairs(lines)):
        if line.startswith(HARNESS_LINES):
            continue
        if PREFIX in line:
            if (started := read_start(line)) is not None:
                found.started = started
                found.starts.append(started)
            elif (end := read_end(line)) is not None:
                found.ended, found.outcome, found.end_word = end.trigger, end.outcome, end.word
                found.ends.append(end.trigger)
                if end.signal is not None:
                    found.signal = end.signal
                elif end.status is not None:
                    found.status = end.status
            continue
        if (pos := line.find(CHECK_PREFIX)) >= 0:
            found.checks.append(line[pos + len(CHECK_PREFIX):])
            continue
        pos = line.find("lkdtm: ")
        if pos < 0:
            continue
        text = line[pos + len("lkdtm: "):]
        found.lkdtm.append(text)
        found.lkdtm_line.append(num)
        if m := _DIRECT_RE.match(text):
            found.direct.append(m.group(1))
        elif m := _WINDOW_RE.search(text):
            found.window = Window(m.group(3), int(m.group(1)), int(m.group(2)))
        elif m := _BAD_COPY_RE.search(text):
            found.bad_copy = (int(m.group(1)), int(m.group(2)))
    return found
