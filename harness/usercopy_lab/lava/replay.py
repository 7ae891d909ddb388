"""What LAVA records for a job's test cases, replayed on a console offline.

LAVA's interactive test (lava_dispatcher/actions/test/interactive.py,
2023.01) runs its steps one after the other, each one pexpect expect() on
the QEMU console: the list is the script's prompts, then the step's
failures, then its successes; the match that starts earliest wins (the
first in the list at one position); the text up to its end is consumed.
pexpect 4.8, as LAVA's ShellCommand sets it up (searchwindowsize=4000,
reads of up to spawn_maxread=4092 characters), searches the last 4000
characters of what is not consumed yet, once for what is already there
when a step starts and again after every read.  A failure with an
exception ends the job Incomplete; so does the end of the console (QEMU
gone) before a step is decided.

replay() does the same with Python's re on a console given as text, read
in chunks of a chosen size: chunk=1 shows every partial line to the
patterns, as a slow serial line can.  harness/tests/test_lava_checks.py
compares its verdicts with `usercopy-lab match` on the same consoles,
and test_lava_replay.py runs the same steps through pexpect itself.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import chain, repeat
from dataclasses import dataclass, field

from ..protocol import READY
from .checks import COMPLETE, INCOMPLETE, NEVER, LavaVerdict, Plan, verdict

WINDOW = 4000            # ShellCommand: searchwindowsize
MAXREAD = 4092           # the qemu device type's spawn_maxread


@dataclass
class Record:
    case: str
    result: str               # pass | fail
    pattern: str              # what matched ("EOF": the console ended)
    text: str                 # the matched text


@dataclass
class Replay:
    health: str
    records: list[Record] = field(default_factory=list)
    error: str = ""

    @property
    def results(self) -> dict[str, str]:
        return {r.case: r.result for r in self.records}

    def verdict(self, p: Plan) -> LavaVerdict:
        return verdict(p, self.health, self.results, self.error)


class _Console:
    """The unconsumed console text and the reads still to come."""

    def __init__(self, text: str, chunks: Iterator[int]):
        self.text, self.pos, self.chunks = text, 0, chunks
        self.pending = ""

    def read(self) -> bool:
        if self.pos >= len(self.text):
            return False
        size = max(1, min(next(self.chunks), MAXREAD))
        self.pending += self.text[self.pos:self.pos + size]
        self.pos += size
        return True

    def expect(self, patterns: list[re.Pattern[str]]) -> tuple[int, re.Match[str]] | None:
        """Index and match of the winner, or None at the end of the console."""
        while True:
            window = self.pending[-WINDOW:]
            best: tuple[int, re.Match[str]] | None = None
            for i, pattern in enumerate(patterns):
                m = pattern.search(window)
                if m and (best is None or m.start() < best[1].start()):
                    best = (i, m)
            if best is not None:
                self.pending = window[best[1].end():]
                return best
            self.pending = window
            if not self.read():
                return None


def _chunks(size: int | Iterable[int]) -> Iterator[int]:
    if isinstance(size, int):
        return repeat(size)
    return chain(size, repeat(MAXREAD))


@lru_cache(maxsize=None)
def _compiled(pattern: str) -> re.Pattern[str]:
    """re's own cache holds 512 patterns; the jobs of every suite have
    thousands, so each console replayed against them compiled them again."""
    return re.compile(pattern, re.DOTALL)


def replay(p: Plan, console: str, chunk: int | Iterable[int] = 256) -> Replay:
    """LAVA's record of the plan's steps on this console (the part after
    the boot action's prompt, the protocol's READY marker, as LAVA hands it over),
    read chunk characters at a time (or the sizes chunk lists, then
    MAXREAD).  A serial console arrives a line or a few at a time; one read
    of more than 4000 characters leaves its start unsearched, in pexpect
    as here."""
    ready = console.find(READY)
    con = _Console(console[ready + len(READY):] if ready >= 0 else console,
                   _chunks(chunk))
    out = Replay(COMPLETE)
    prompts = [NEVER]
    for step in p.steps:
        texts = prompts + [f.message for f in step.failures] + list(step.successes)
        won = con.expect([_compiled(t) for t in texts])
        if won is None:
            out.records.append(Record(step.name, "fail", "EOF", ""))
            out.health, out.error = INCOMPLETE, "the console ended (connection closed)"
            return out
        i, m = won
        failure = step.failures[i - 1] if 1 <= i <= len(step.failures) else None
        result = "pass" if i > len(step.failures) else "fail"
        out.records.append(Record(step.name, result, texts[i], m.group()))
        if failure is not None and failure.exception:
            out.health, out.error = INCOMPLETE, failure.error or failure.exception
            return out
    return out
