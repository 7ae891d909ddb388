"""The guest<->harness protocol: what the guest's init and check programs
print on the serial console for the harness to act on.

initramfs-src/init prints one marker line per phase of a trigger's life
(READY, then WAITING in snapshot mode, START trigger=NAME, END
trigger=NAME outcome=... signal=N|status=N), SHELL lines under lab.shell=1,
and notes ("USERCOPY-LAB: refusing ...") that say why it did not run a
trigger.  The in-guest check programs (initramfs-src/*.c, lab-check.h)
print one "usercopy-lab-check: PASS:|FAIL:|SKIP: ..." line per check.
Every reader and writer of those lines in the package uses this module;
tests/test_protocol.py holds the guest's programs to it.
This module imports nothing of the lab's but the model.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from .model import Outcome

PREFIX = "USERCOPY-LAB-"            # every marker starts so
READY = PREFIX + "READY"            # init is up; the trigger (or the wait) comes next
WAITING = PREFIX + "WAITING"        # snapshot mode: init waits for a request line
START = PREFIX + "START"            # START trigger=NAME: the trigger runs now
END = PREFIX + "END"                # END trigger=NAME outcome=WORD [signal=N|status=N]
SHELL = PREFIX + "SHELL"            # SHELL: text: the lab.shell=1 debugging shell
NOTE = "USERCOPY-LAB: "             # init's notes: modules loaded, requests refused
CHECK_PREFIX = "usercopy-lab-check: "  # a check program's result line
HUNT_PREFIX = "usercopy-lab-hunt: "    # initramfs-src/hunt-run's lines (workload, coverage)
SLAB_PREFIX = "usercopy-lab-slab: "    # initramfs-src/audit-slab-caches.c's table rows
# Every marker, and those the guest never prints (none today: the harness
# only reads).  tests/test_protocol.py checks the guest against these.
MARKERS = (READY, WAITING, START, END, SHELL)
HARNESS_ONLY: tuple[str, ...] = ()

START_RE = re.compile(re.escape(START) + r" trigger=(\S+)")
END_RE = re.compile(re.escape(END) + r" trigger=(\S+) outcome=([\w-]+)(?: (signal|status)=(\d+))?")
# pexpect patterns: a START or END marker line, whole (raw console, \r\n).
START_LINE = START + r"[^\r\n]*[\r\n]"
END_LINE = END + r"[^\r\n]*[\r\n]"


class Phase(StrEnum):
    """Where a guest is in the protocol: the marker it printed last.  The
    phases come in this order (WAITING only in snapshot mode)."""

    READY = "ready"
    WAITING = "waiting"
    STARTED = "started"
    ENDED = "ended"

    @property
    def marker(self) -> str:
        """The marker that opens the phase: "USERCOPY-LAB-READY" etc."""
        return _MARKER_OF[self]

    def reached(self, other: Phase) -> bool:
        """Whether a guest in this phase has passed through other."""
        order = list(Phase)
        return order.index(self) >= order.index(other)

    @property
    def pattern(self) -> str:
        """What the capture waits for (pexpect): READY anywhere, the others
        as whole lines (their line must be complete to be read)."""
        return READY if self is Phase.READY else _LINE_OF[self]


_MARKER_OF = {Phase.READY: READY, Phase.WAITING: WAITING, Phase.STARTED: START, Phase.ENDED: END}
WAITING_LINE = WAITING + r"[^\r\n]*[\r\n]"
_LINE_OF = {Phase.WAITING: WAITING_LINE, Phase.STARTED: START_LINE, Phase.ENDED: END_LINE}


@dataclass(frozen=True)
class EndMarker:
    """An END marker line, read: which trigger, how it ended (None for a
    word the protocol does not have), and its signal or exit status."""

    trigger: str
    outcome: Outcome | None
    signal: int | None = None
    status: int | None = None
    word: str = field(default="", compare=False)   # the outcome word as printed


def outcome_of(word: str) -> Outcome | None:
    """The Outcome an END marker's word names; None for another word."""
    try:
        return Outcome(word)
    except ValueError:
        return None


def read_start(line: str) -> str | None:
    """The trigger a START marker on line names, if line has one."""
    m = START_RE.search(line)
    return m.group(1) if m else None


def read_end(line: str) -> EndMarker | None:
    """The END marker on line, if it has one."""
    m = END_RE.search(line)
    if m is None:
        return None
    number = int(m.group(4)) if m.group(4) else None
    return EndMarker(m.group(1), outcome_of(m.group(2)),
                     number if m.group(3) == "signal" else None,
                     number if m.group(3) == "status" else None, m.group(2))


def start_line(trigger: str) -> str:
    """The START marker init prints for trigger."""
    return f"{START} trigger={trigger}"


def end_line(trigger: str, outcome: Outcome, signal: int | None = None,
             status: int | None = None) -> str:
    """The END marker init prints for trigger (signal for KILLED, status
    for RETURNED, neither for the outcomes without a process)."""
    tail = f" signal={signal}" if signal is not None else f" status={status}" if status is not None else ""
    return f"{END} trigger={trigger} outcome={outcome}{tail}"
