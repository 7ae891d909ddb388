"""Harness faults: why a guest gave no verdict, as a name.

A trigger whose guest never printed init's END marker is an ERROR; its
fault says what went wrong, from the console alone (the capture's trailer
line, written by console_capture, says how the capture ended), so `match`
names the same fault on a kept log as the run did.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..capture.console_capture import TRAILER, CaptureEnd
from ..model import Fault, Report
from ..protocol import PREFIX, READY
from ..reports import ConsoleMarkers

_TRAILER_LINE = re.compile(re.escape(TRAILER) + r"([\w-]+)")
_TRAILER_RE = re.compile("^" + _TRAILER_LINE.pattern, re.M)
# Logs written before the trailer line existed said only this on a timeout.
_OLD_TIMEOUT_LINE = re.compile(r"# usercopy-lab: no " + re.escape(PREFIX) + r"\w+ within")
_OLD_TIMEOUT_RE = re.compile("^" + _OLD_TIMEOUT_LINE.pattern, re.M)
_PANIC = "Kernel panic - not syncing"
_READY_LINE = re.compile(re.escape(READY) + r"\s*$")
HARNESS_PREFIXES = ("# qemu: ", "# usercopy-lab: ")
# what the lines ConsoleFacts.note() must see hold
FACT_KEYS = HARNESS_PREFIXES + (_PANIC, READY)
# Bytes a serial console of a booting kernel does not carry: C0 controls
# other than tab, newline, carriage return, bell, backspace and ESC (SeaBIOS
# and busybox print escape sequences), and undecodable bytes (U+FFFD).
_BAD_RE = re.compile("[\x00-\x06\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f\ufffd]")
GARBAGE_MIN_BAD = 32
GARBAGE_FRACTION = 0.05


def bad_characters(text: str) -> int:
    return len(_BAD_RE.findall(text))


def capture_end(text: str) -> str | None:
    """The CaptureEnd value in the log's trailer, if it has one."""
    found = _TRAILER_RE.findall(text)
    if found:
        return found[-1]
    return "timeout" if _OLD_TIMEOUT_RE.search(text) else None


def console_only(text: str) -> str:
    """The console without the harness's own '# qemu:' / '# usercopy-lab:' lines."""
    return "\n".join(line for line in text.split("\n")
                     if not line.startswith(("# qemu: ", "# usercopy-lab: ")))


def is_garbage(console: str) -> bool:
    bad = len(_BAD_RE.findall(console))
    return bad >= GARBAGE_MIN_BAD and bad >= GARBAGE_FRACTION * max(len(console), 1)


@dataclass
class ConsoleFacts:
    """What classify() looks at, gathered line by line (feed() every line
    of the log, without its line end): a console of any size in constant
    memory.  of_text(text) gives the same facts as the whole text."""
    trailer: str | None = None     # the last trailer's CaptureEnd value
    old_timeout: bool = False
    bad: int = 0                   # _BAD_RE characters of the console's own lines
    length: int = 0                # characters of console_only(text)
    console_lines: int = 0
    panicked: bool = False
    ready: bool = False

    def feed(self, line: str) -> None:
        if self.note(line):
            self.length += len(line) + (1 if self.console_lines else 0)
            self.console_lines += 1
            self.bad += bad_characters(line)

    def note(self, line: str) -> bool:
        """Everything feed() does but counting characters (a caller that
        counts them in bulk gives only the lines that hold a harness line,
        a panic or READY); True for a console line, False for a harness line."""
        if line.startswith(HARNESS_PREFIXES):
            if m := _TRAILER_LINE.match(line):
                self.trailer = m.group(1)
            elif _OLD_TIMEOUT_LINE.match(line):
                self.old_timeout = True
            return False
        self.panicked = self.panicked or _PANIC in line
        self.ready = self.ready or bool(_READY_LINE.match(line))
        return True

    @classmethod
    def of_text(cls, text: str) -> ConsoleFacts:
        facts = cls()
        for line in text.split("\n"):
            facts.feed(line)
        return facts

    @property
    def capture_end(self) -> str | None:
        return self.trailer or ("timeout" if self.old_timeout else None)

    @property
    def garbage(self) -> bool:
        return self.bad >= GARBAGE_MIN_BAD and self.bad >= GARBAGE_FRACTION * max(self.length, 1)


def classify(text: str | ConsoleFacts, markers: ConsoleMarkers,
             reports: list[Report]) -> Fault | None:
    """The fault of a guest that did not end with init's END marker; None
    when it did (then the verdict comes from the golden file)."""
    if markers.ended is not None:
        return None
    facts = ConsoleFacts.of_text(text) if isinstance(text, str) else text
    end = facts.capture_end
    if end == CaptureEnd.INTERRUPTED:
        return Fault.INTERRUPTED
    if end == CaptureEnd.HARNESS_ERROR:
        return Fault.HARNESS_ERROR
    if facts.garbage:
        return Fault.CONSOLE_GARBAGE
    panicked = facts.panicked
    if panicked and not facts.ready:
        return Fault.PANIC_BEFORE_INIT
    if end == CaptureEnd.TIMEOUT:
        return Fault.GUEST_HANG
    if reports and reports[-1].truncated:
        return Fault.CONSOLE_CUT
    if panicked:
        return Fault.KERNEL_PANIC
    return Fault.QEMU_EXITED_EARLY
