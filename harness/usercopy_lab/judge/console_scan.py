"""A captured console read for a verdict (`match`, and `run` after each
guest) in bounded memory, whatever its size.

The console is streamed twice through log_reader (a chunk at a time;
"\\r\\n", QEMU's "\\r\\r\\n" and lone-"\\r" logs alike), each time looking
only at the lines that may matter, found at C speed as `triage` does:
once for what init, LKDTM and the harness said (console_markers; the lines
with a marker, check, LKDTM or harness prefix, and the line after each,
where a printk record cut one) and the facts a fault is named from
(faults.ConsoleFacts; the garbage characters counted over every chunk),
once for the kernel's reports (oops_parser.iter_stream).  Nothing keeps the text: a 100 MB console costs
what `triage` costs on it.  Only the whitelist audit keeps lines (its
table), at most KEPT_LINES_LIMIT characters of them.

grep_after_start() is run.sh's `grep -E -qi` over the console from its
START marker on, fed to the host's grep chunk by chunk.
"""
from __future__ import annotations

import codecs
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO

from ..capture.console_capture import TRAILER
from ..model import Report
from ..protocol import CHECK_PREFIX, PREFIX, START
from ..reports import (CHUNK, ConsoleMarkers, ScanStats, begins_record,
                       candidate_lines, cut_by_record, iter_stream, open_log, read_numbered)
from .faults import FACT_KEYS, ConsoleFacts, bad_characters
from .selftests import grep_eqi

KEPT_LINES_LIMIT = 16 << 20        # characters of lines kept for the audit


@dataclass
class ConsoleScan:
    markers: ConsoleMarkers
    facts: ConsoleFacts
    reports: list[Report]
    lines: list[str] = field(default_factory=list)   # only with keep_lines


# Lines pass 1 looks at (at C speed, as triage skips trigger-free text):
# markers, check and LKDTM lines, the harness's lines, a panic, READY.
_KEYS = tuple(k.encode() for k in (PREFIX, CHECK_PREFIX, "lkdtm: ") + FACT_KEYS)


class _Counted:
    """A stream that counts the characters and the garbage characters of
    what it gives (decoded as the console would be)."""

    def __init__(self, f: BinaryIO) -> None:
        self._f = f
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.chars = 0
        self.bad = 0

    def read(self, size: int = -1) -> bytes:
        data = self._f.read(size)
        text = self._decoder.decode(data, final=not data)
        self.chars += len(text)
        self.bad += bad_characters(text)
        return data


class _TrailerOwnLine:
    """A console stream in which the harness's trailer line starts a line
    of its own.  The capture stops at the END marker while the kernel may
    still be printing (arm64's follow-on WARNING after a usercopy BUG), and
    the trailer was then appended to the console's unfinished last line:
    "... ct_kerne# usercopy-lab: capture ended: ...".  Parsed as one line,
    the trailer's text became part of that header ("WARNING in ct_kerne#").
    Here the console's last line ends where the console did, and is known
    to be unfinished (console_cut)."""

    _MARK = TRAILER.encode()

    def __init__(self, f: BinaryIO) -> None:
        self._f = f
        self._held = b""            # a tail that may be the trailer's start
        self._prev = b"\n"          # the last byte given
        self.console_cut = False    # the console's last line had no line end
        self.cut_line = 0           # then its line number (as Report.line counts)
        self._lines = 0             # line ends given so far

    def read(self, size: int = -1) -> bytes:
        data = self._f.read(size)
        buf = self._held + data
        # what may be given now: all at the end, else all but a tail that
        # could be the start of a trailer (a trailer found is given whole)
        limit = len(buf) if not data else max(len(buf) - len(self._MARK) + 1, 0)
        out, pos = [], 0
        while (at := buf.find(self._MARK, pos)) >= 0 and at < limit:
            before = buf[at - 1:at] if at > 0 else self._prev
            out.append(buf[pos:at])
            if before not in (b"\n", b"\r"):
                self.console_cut = True
                self.cut_line = self._lines + sum(o.count(b"\n") for o in out) + 1
                out.append(b"\n")
            out.append(self._MARK)
            pos = at + len(self._MARK)
            limit = max(limit, pos)
        out.append(buf[pos:limit])
        self._held = buf[limit:]
        res = b"".join(out)
        self._lines += res.count(b"\n")
        if res:
            self._prev = res[-1:]
        elif data:
            return self.read(size)  # all held back: read on
        return res


def scan_console(path: Path, keep_lines: bool = False) -> ConsoleScan:
    """Markers, fault facts and reports of the console at path (OSError
    when it cannot be read).  keep_lines: also every line (the audit's
    table), up to KEPT_LINES_LIMIT characters."""
    facts = ConsoleFacts()
    kept: list[str] = []
    room = KEPT_LINES_LIMIT if keep_lines else 0
    after = False                   # the line after a key line is looked at too
    cut = False                     # a key line cut by a printk record awaits its rest
    harness_chars = harness_bad = 0

    def looked_at(pairs: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, str]]:
        nonlocal after, cut, room, harness_chars, harness_bad
        for num, raw in pairs:
            line = raw.decode("utf-8", "replace").rstrip("\r")
            key = any(k in raw for k in _KEYS)
            # A marker or check line cut by a printk record: its rest (often
            # just the newline) comes after that record and any that follow
            # (the clocksource watchdog prints four): every line is looked
            # at until one that is not a record, which read_numbered joins.
            if key and cut_by_record(line):
                cut = True
            elif not begins_record(line):
                cut = False
            after = key or cut
            if not facts.note(line):
                harness_chars += len(raw) + 1
                harness_bad += bad_characters(line)
            if room > len(line):
                kept.append(line)
                room -= len(line) + 1
            yield num, line

    with open_log(path) as raw_f:
        f = _Counted(raw_f)
        lines = candidate_lines(f, () if keep_lines else _KEYS,   # type: ignore[arg-type]
                                lambda: keep_lines or after, ScanStats())
        markers = read_numbered(looked_at(lines))
    # console_only(text): the text less the harness's lines (line ends counted
    # as characters: a fraction of garbage, not an exact count)
    facts.length = max(f.chars - harness_chars, 0)
    facts.bad = max(f.bad - harness_bad, 0)
    with open_log(path) as raw_f:       # the lines that may matter, at C speed (as triage)
        own = _TrailerOwnLine(raw_f)
        reports = list(iter_stream(own, str(path), refuse_binary=False))   # type: ignore[arg-type]
    reports = [replace(r, header_cut=own.console_cut and r.line == own.cut_line)
               for r in reports]
    return ConsoleScan(markers, facts, reports, kept)


def grep_after_start(pattern: str, path: Path) -> bool:
    """`grep -E -qi PATTERN` over the console from its first START marker
    on (selftests.lines_after_start), streamed to the host's grep."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    with open_log(path) as f:
        tail, started = "", False
        while not started:
            chunk = f.read(CHUNK)
            text = tail + decoder.decode(chunk, final=not chunk)
            pos = text.find(START)
            if pos >= 0:
                started = True
                first = text[pos:]
            elif not chunk:
                return grep_eqi(pattern, "")
            else:
                tail = text[-(len(START) - 1):]
        proc = subprocess.Popen(["grep", "-E", "-qi", "-e", pattern], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert proc.stdin is not None
        try:
            proc.stdin.write(first.encode())
            while chunk := f.read(CHUNK):
                proc.stdin.write(decoder.decode(chunk).encode())
            proc.stdin.write(decoder.decode(b"", final=True).encode())
        except BrokenPipeError:        # grep found it and left
            pass
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        assert proc.stderr is not None
        errors = proc.stderr.read()
        proc.stderr.close()
        proc.wait()
    if proc.returncode > 1:
        raise ValueError(f"grep -E rejects {pattern!r}: {errors.decode().strip()}")
    return proc.returncode == 0
