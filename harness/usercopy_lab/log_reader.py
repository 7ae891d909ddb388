"""The one reader of log files, for run, match and triage.

Lines end at "\\n" only; the "\\r" of "\\r\\n" and of QEMU's "\\r\\r\\n" belong
to the line end, so line N here is line N of the file in any editor
(str.splitlines() would count QEMU's line end twice and split at form
feeds and other separators inside kernel text).

  split_lines(data)       all lines of a captured console, decoded
  open_log(path)          a binary stream, transparently decompressed
                          (gzip, xz, bz2) and refused past MAX_DECOMPRESSED
  candidate_lines(f, ...) the lines of a stream that need looking at:
                          every line while a report is open, otherwise
                          only lines with a trigger substring, found in
                          1 MiB chunks at C speed (bytes.find); lines
                          longer than MAX_LINE are read in MAX_LINE pieces
"""
from __future__ import annotations

import bz2
import gzip
import heapq
import io
import lzma
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

MAX_LINE = 64 * 1024                  # bytes looked at in one piece of a line
CHUNK = 1 << 20                       # bytes read at a time
MAX_DECOMPRESSED = 1 << 30            # bytes a compressed log may expand to


class LogFormatError(ValueError):
    """The input is not a readable text log (binary, a decompression bomb)."""


def split_lines(data: bytes) -> list[str]:
    """The lines of a whole log, without their line ends."""
    lines = data.decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


class _Bounded:
    """A decompressing stream that refuses to expand past a limit."""

    def __init__(self, inner: BinaryIO, limit: int, what: str, under: BinaryIO | None) -> None:
        self._inner = inner
        self._under = under             # closed with it, if not None
        self._left = limit
        self._limit = limit
        self._what = what

    def read(self, size: int = -1) -> bytes:
        want = CHUNK if size is None or size < 0 else size
        data = self._inner.read(min(want, self._left + 1))
        self._left -= len(data)
        if self._left < 0:
            raise LogFormatError(
                f"{self._what} data expands to more than {self._limit >> 20} MiB "
                "(a decompression bomb?); not read")
        return data

    def close(self) -> None:
        self._inner.close()
        if self._under is not None:
            self._under.close()

    def __enter__(self) -> _Bounded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Borrowed:
    """A stream the caller keeps open (standard input)."""

    def __init__(self, inner: BinaryIO) -> None:
        self.read = inner.read

    def __enter__(self) -> _Borrowed:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


_MAGIC = ((b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"BZh", "bzip2"))


def _unpacker(what: str, f: BinaryIO) -> BinaryIO:
    if what == "gzip":
        return gzip.GzipFile(fileobj=f)  # type: ignore[return-value]
    if what == "xz":
        return lzma.LZMAFile(f)  # type: ignore[return-value]
    return bz2.BZ2File(f)  # type: ignore[return-value]


def open_stream(f: BinaryIO, max_decompressed: int = MAX_DECOMPRESSED,
                owned: bool = False) -> BinaryIO:
    """f as a log stream, transparently decompressed (gzip, xz, bzip2).
    owned: closing the result closes f (else f stays open)."""
    if not hasattr(f, "peek"):
        f = io.BufferedReader(f)  # type: ignore[arg-type]
    head = f.peek(8)[:8]  # type: ignore[attr-defined]
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return _Bounded(_unpacker(what, f), max_decompressed, what,  # type: ignore[return-value]
                            f if owned else None)
    return f if owned else _Borrowed(f)  # type: ignore[return-value]


def open_log(path: str | Path, max_decompressed: int = MAX_DECOMPRESSED) -> BinaryIO:
    """A binary stream of path, transparently decompressed (gz, xz, bz2)."""
    return open_stream(open(path, "rb"), max_decompressed, owned=True)


def looks_binary(sample: bytes) -> bool:
    """True for data that is not a text log (many NUL/control bytes)."""
    if not sample:
        return False
    bad = sum(sample.count(bytes([c])) for c in range(32) if c not in (9, 10, 13, 27))
    return bad > len(sample) * 0.10


@dataclass
class ScanStats:
    """What a scan saw besides reports (for clear messages)."""
    bytes: int = 0
    lines: int = 0
    long_lines: int = 0
    first_long_line: int = 0
    last_long_line: int = 0
    binary_start: bool = False        # the first 64 KiB look binary


def candidate_lines(f: BinaryIO, triggers: tuple[bytes, ...], busy: Callable[[], bool],
                    stats: ScanStats, chunk_size: int = CHUNK) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line or MAX_LINE piece of one) for every line that
    holds a trigger, and for every line while busy() says so."""
    carry = b""
    first = True
    while True:
        chunk = f.read(chunk_size)
        if not chunk:
            break
        stats.bytes += len(chunk)
        if first:
            first = False
            stats.binary_start = looks_binary(chunk[:65536])
        buf = carry + chunk if carry else chunk
        last = buf.rfind(b"\n")
        if last < 0:
            carry = buf
        else:
            carry = buf[last + 1:]
            yield from _block(buf, last + 1, triggers, busy, stats)
        if len(carry) > 2 * MAX_LINE:
            # a line that goes on and on: look at its complete pieces now
            cut = len(carry) - len(carry) % MAX_LINE - MAX_LINE
            yield from _long_pieces(carry[:cut], stats.lines + 1, triggers, busy, stats)
            _note_long(stats, stats.lines + 1)
            carry = carry[cut:]
    if carry:
        stats.lines += 1
        if len(carry) > MAX_LINE:
            _note_long(stats, stats.lines)
            yield from _long_pieces(carry, stats.lines, triggers, busy, stats)
        elif busy() or any(t in carry for t in triggers):
            yield stats.lines, carry


def _note_long(stats: ScanStats, lineno: int) -> None:
    if lineno != stats.last_long_line:
        stats.long_lines += 1
        stats.last_long_line = lineno
    if not stats.first_long_line:
        stats.first_long_line = lineno


def _long_pieces(raw: bytes, lineno: int, triggers: tuple[bytes, ...],
                 busy: Callable[[], bool], stats: ScanStats) -> Iterator[tuple[int, bytes]]:
    for i in range(0, len(raw), MAX_LINE):
        piece = raw[i:i + MAX_LINE]
        if busy() or any(t in piece for t in triggers):
            yield lineno, piece


def _block(buf: bytes, end: int, triggers: tuple[bytes, ...], busy: Callable[[], bool],
           stats: ScanStats) -> Iterator[tuple[int, bytes]]:
    """The complete lines buf[:end]; trigger-free stretches are skipped."""
    hits = [(p, i) for i, t in enumerate(triggers) if (p := buf.find(t, 0, end)) >= 0]
    heapq.heapify(hits)                 # next hit of each trigger, nearest first
    pos = 0
    while pos < end:
        if not busy():
            while hits and hits[0][0] < pos:
                i = heapq.heappop(hits)[1]
                p = buf.find(triggers[i], pos, end)
                if p >= 0:
                    heapq.heappush(hits, (p, i))
            if not hits:
                stats.lines += buf.count(b"\n", pos, end)
                _scan_long(buf, pos, end, stats)
                return
            start = buf.rfind(b"\n", pos, hits[0][0]) + 1
            if start < pos:
                start = pos
            stats.lines += buf.count(b"\n", pos, start)
            _scan_long(buf, pos, start, stats)
            pos = start
        nl = buf.find(b"\n", pos, end)
        raw = buf[pos:nl]
        pos = nl + 1
        stats.lines += 1
        if len(raw) > MAX_LINE:
            _note_long(stats, stats.lines)
            yield from _long_pieces(raw, stats.lines, triggers, busy, stats)
        else:
            yield stats.lines, raw


def _scan_long(buf: bytes, pos: int, end: int, stats: ScanStats) -> None:
    """Note overlong lines in a skipped stretch (one rfind per MAX_LINE)."""
    if end - pos <= MAX_LINE:
        return
    base = stats.lines - buf.count(b"\n", pos, end)
    p = pos
    while end - p > MAX_LINE:
        nl = buf.rfind(b"\n", p, p + MAX_LINE + 1)
        if nl >= 0:
            p = nl + 1
            continue
        _note_long(stats, base + buf.count(b"\n", pos, p) + 1)
        nl = buf.find(b"\n", p, end)
        p = end if nl < 0 else nl + 1
