"""The one reader of log files, for run, match and triage.

Lines end at "\\n"; the "\\r" of "\\r\\n" and of QEMU's "\\r\\r\\n" belong
to the line end, so line N here is line N of the file in any editor
(str.splitlines() would count QEMU's line end twice and split at form
feeds and other separators inside kernel text).  A log whose first 64 KiB
have more lone "\\r" than "\\n" (classic Mac line ends, some terminal
captures) is read with "\\r" as its line end (and "\\r\\n" as one end).

  split_lines(data)       all lines of a small console, decoded
  iter_lines(f)           (line number, text) of every line of a stream:
                          a console read whole without holding it whole
  open_log(path)          a binary stream, transparently decompressed
                          (gzip, xz, bz2) and refused past MAX_DECOMPRESSED;
                          never waits: a FIFO is refused (NotAFile), a
                          device read without waiting (what it has now)
  candidate_lines(f, ...) the lines of a stream that need looking at:
                          every line while a report is open, otherwise
                          only lines with a trigger substring, found in
                          1 MiB chunks at C speed (bytes.find); lines
                          longer than MAX_LINE are read in MAX_LINE pieces

Bounds: a stream whose first 64 KiB look binary and open no report is
refused after its first chunk (so /dev/zero, /dev/urandom and an endless
binary pipe end at once); a plain stream is read up to max_input bytes
(ScanStats.cut_at: the rest is ignored, with a warning); a compressed
one that ends early (a cut download) keeps what was whole before the cut
(ScanStats.truncated), as zcat does.

Time: a path is opened without waiting (O_NONBLOCK): a FIFO (named pipe)
is refused, as a writer that never comes or never writes would keep it
waiting forever (a pipe is read as standard input, whose wait is the
caller's own); a character or block device is read without ever waiting
(/dev/kmsg: its records now, as dmesg reads it; ScanStats.would_wait).
A live stream (standard input that is a pipe or a terminal) is read as
its data comes (read1), so a report is out as soon as the line after it
arrives, not when the next 1 MiB does.
"""
from __future__ import annotations

import bz2
import errno
import gzip
import heapq
import io
import lzma
import os
import stat
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..inputs import too_big

MAX_LINE = 64 * 1024                  # bytes looked at in one piece of a line
CHUNK = 1 << 20                       # bytes read at a time
MAX_DECOMPRESSED = 1 << 30            # bytes a compressed log may expand to
MAX_INPUT = 16 << 30                  # bytes read of one log (an endless pipe stops there)
MAX_CONSOLE_MIB = 128                 # MiB of one console `match` reads (the lab's: < 1 MB)
SAMPLE = 64 * 1024                    # bytes the binary and line-end checks look at


class LogFormatError(ValueError):
    """The input is not a readable text log (binary, a decompression bomb)."""


class NotAFile(LogFormatError):
    """A path that is a FIFO or a socket: refused unread (never waited on)."""


def cr_line_ends(sample: bytes) -> bool:
    """True when sample ends its lines with a lone "\\r" (more of them
    than "\\n"; QEMU's "\\r\\r\\n" has one lone "\\r" per "\\n")."""
    lone = sample.count(b"\r") - sample.count(b"\r\n")
    return lone > sample.count(b"\n")


def _cr_to_lf(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def split_lines(data: bytes) -> list[str]:
    """The lines of a whole log, without their line ends."""
    if cr_line_ends(data[:SAMPLE]):
        data = _cr_to_lf(data)
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
        self.truncated: str | None = None    # why the data ended early

    def read(self, size: int = -1) -> bytes:
        """Up to size bytes (CHUNK if not given), in decompression steps
        (read1), so what was whole before a cut is returned, not lost with
        the cut's EOFError; after the cut, b"" (truncated says why)."""
        want = min(CHUNK if size is None or size < 0 else size, self._left + 1)
        parts, got = [], 0
        while got < want and self.truncated is None:
            try:
                piece = self._inner.read1(want - got)  # type: ignore[attr-defined]
            except EOFError:
                self.truncated = f"{self._what} data ends early (a cut file?)"
                break
            if not piece:
                break
            parts.append(piece)
            got += len(piece)
        data = b"".join(parts)
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
    """A stream the caller keeps open (standard input).  live: a pipe or a
    terminal, read as its data comes (read1: one read of what is there,
    not waiting for the whole size asked)."""

    def __init__(self, inner: BinaryIO) -> None:
        self.live = _is_live(inner)
        self.read = getattr(inner, "read1", inner.read) if self.live else inner.read

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


def _is_live(f: BinaryIO) -> bool:
    """Whether f is a pipe, terminal or socket (data comes while it is read)."""
    try:
        mode = os.fstat(f.fileno()).st_mode
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False            # a stream in memory
    return not (stat.S_ISREG(mode) or stat.S_ISBLK(mode))


class _Device:
    """A character or block device, read without ever waiting: what it has
    now, and the end where a read would wait (would_wait: True then)."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd
        self._head = b""
        self.would_wait = False

    def _read(self, size: int) -> bytes:
        if self.would_wait or self._fd is None:
            return b""
        try:
            return os.read(self._fd, size)
        except BlockingIOError:
            self.would_wait = True
            return b""

    def peek(self, size: int = 1) -> bytes:
        if not self._head:      # a whole read: /dev/kmsg refuses one shorter than a record
            self._head = self._read(CHUNK)
        return self._head

    def read(self, size: int | None = -1) -> bytes:
        size = CHUNK if size is None or size < 0 else size
        if self._head:
            out, self._head = self._head[:size], self._head[size:]
            return out
        return self._read(size)

    read1 = read

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> _Device:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def is_compressed(f: object) -> bool:
    """Whether f (from open_stream or open_log) decompresses its input."""
    return isinstance(f, _Bounded)


def open_log(path: str | Path, max_decompressed: int = MAX_DECOMPRESSED) -> BinaryIO:
    """A binary stream of path, transparently decompressed (gz, xz, bz2).
    Opening never waits: a FIFO or socket is NotAFile, a device is read
    without waiting (_Device), a directory is IsADirectoryError."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            what = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket"
            raise NotAFile(f"is {what}, not read: its writer may never come or never "
                           "write (pipe it to standard input instead)")
        if stat.S_ISREG(mode):
            os.set_blocking(fd, True)
            f: BinaryIO = open(fd, "rb")
        else:
            f = _Device(fd)  # type: ignore[assignment]
    except BaseException:
        os.close(fd)
        raise
    return open_stream(f, max_decompressed, owned=True)


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
    cr_ends: bool = False             # lines end with a lone "\r"
    reports: int = 0                  # reports found so far (iter_stream counts)
    truncated: str | None = None      # a compressed stream that ended early: why
    cut_at: int = 0                   # reading stopped after this many bytes (max_input)
    would_wait: bool = False          # a device: reading ended where a read would wait


def _chunks(f: BinaryIO, stats: ScanStats, chunk_size: int,
            max_input: int) -> Iterator[bytes]:
    """f's data in chunks, "\\n"-ended lines (lone "\\r" ends turned into
    "\\n" when the start of f uses them), at most max_input bytes."""
    first = True
    cr_held = b""
    live = getattr(f, "live", False)
    while True:
        if stats.bytes >= max_input:
            if f.read(1):
                stats.cut_at = stats.bytes
            break
        chunk = f.read(min(chunk_size, max_input - stats.bytes))
        if not chunk:
            break
        stats.bytes += len(chunk)
        if first:
            first = False
            # a decompressor's first step may be small: look at 64 KiB (a
            # live stream is looked at as it comes: waiting for 64 KiB would
            # hold back the reports of a quiet pipe)
            while len(chunk) < SAMPLE and stats.bytes < max_input and not live:
                more = f.read(min(SAMPLE, max_input - stats.bytes))
                if not more:
                    break
                stats.bytes += len(more)
                chunk += more
            stats.binary_start = looks_binary(chunk[:SAMPLE])
            stats.cr_ends = cr_line_ends(chunk[:SAMPLE])
        if stats.cr_ends:
            chunk = cr_held + chunk
            cr_held = b"\r" if chunk.endswith(b"\r") else b""
            chunk = _cr_to_lf(chunk[:len(chunk) - len(cr_held)])
        yield chunk
    if cr_held:
        yield b"\n"
    stats.truncated = getattr(f, "truncated", None)
    stats.would_wait = getattr(f, "would_wait", False)


def candidate_lines(f: BinaryIO, triggers: tuple[bytes, ...], busy: Callable[[], bool],
                    stats: ScanStats, chunk_size: int = CHUNK,
                    give_up: Callable[[], bool] | None = None,
                    max_input: int = MAX_INPUT) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line or MAX_LINE piece of one) for every line that
    holds a trigger, and for every line while busy() says so.  After the
    first chunk, give_up() True (binary data without a report) raises
    LogFormatError instead of reading on."""
    carry = b""
    first = True
    for chunk in _chunks(f, stats, chunk_size, max_input):
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
        if first:
            first = False
            if give_up is not None and give_up():
                raise LogFormatError("binary data, not a text log")
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


def iter_lines(f: BinaryIO, stats: ScanStats | None = None,
               max_input: int = MAX_INPUT) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line of f, decoded, without its line
    end; a line longer than MAX_LINE comes as MAX_LINE pieces with the same
    number.  Memory: one chunk, whatever the size of f."""
    stats = stats if stats is not None else ScanStats()
    for lineno, raw in candidate_lines(f, (), lambda: True, stats, max_input=max_input):
        yield lineno, raw.decode("utf-8", "replace").rstrip("\r")


class Prefixed:
    """A stream that gives head first, then the rest of f (a pipe read
    once: its first bytes were looked at to decide what it is)."""

    def __init__(self, head: bytes, f: BinaryIO) -> None:
        self._head = head
        self._f = f

    def read(self, size: int = -1) -> bytes:
        if self._head:
            out, self._head = (self._head, b"") if size < 0 or size >= len(self._head) \
                else (self._head[:size], self._head[size:])
            return out
        return self._f.read(size)


def read_head(f: BinaryIO, size: int = SAMPLE) -> bytes:
    """Up to size bytes of f (more than one read of a decompressor or pipe)."""
    parts, got = [], 0
    while got < size:
        data = f.read(size - got)
        if not data:
            break
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def console_problem(path: Path, limit: int) -> str | None:
    """None when the console at path holds at most limit bytes, else one
    line naming it and the limit (match refuses it: a verdict on part of a
    console would be a guess).  A plain file's size is its stat; a
    compressed one is expanded, counting, no further than limit + 1 bytes.
    A file that cannot be read is None here: reading it says why."""
    try:
        with open_log(path, limit) as f:
            if not is_compressed(f):
                return too_big(path, os.fstat(f.fileno()).st_size, limit, "console log")
            while f.read(CHUNK):
                pass
    except NotAFile:
        return None
    except LogFormatError:       # expands past limit (_Bounded)
        return too_big(path, limit + 1, limit, "console log (expanded)")
    except (OSError, EOFError, lzma.LZMAError, zlib.error):
        return None
    return None
