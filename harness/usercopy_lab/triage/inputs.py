"""What triage reads: the logs under the paths it is given (compressed or
not, standard input), scanned for reports with their notes.

Which files under a directory are logs: a regular file whose name, less
a compression suffix (.gz, .xz, .bz2) and any rotation suffixes (".1",
"-20240101", ".old": logrotate's and savelog's), has no suffix or one of
LOG_SUFFIXES, and does not start with "." or README.  So kern.log.1,
dmesg.0, syslog.2.gz and messages-20240101 are logs, results.json and
notes.md are not.  Every entry under a directory that is not read (not a
log by its name, hidden, not a regular file, a broken link, already read
under another name, unreadable) is named: one line per directory given,
"DIR: not read: NAME (why), ...".

A file given by name is read whatever its name; a FIFO is refused (its
writer may never come: a pipe is read as "-"), a device read without
waiting (log_reader.open_log).  The reports of a compressed log are held
until it has been read whole (spooled to a temporary file past a few
MiB): a decompression bomb is refused whole, in the table and in --json
alike.  A plain log's reports come as they are found (a live pipe's as
they happen); a plain log is refused only before its first report
(binary data), and a read error after reports keeps them, saying so.
"""
from __future__ import annotations

import lzma
import os
import pickle
import re
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import IO, TextIO

from ..inputs import file_kind, shown
from ..model import Report
from ..reports import (MAX_INPUT, MAX_LINE, LogFormatError, ScanStats, is_compressed,
                       iter_stream, open_log, open_stream)
from .options import DEFAULT_MAX_DECOMPRESSED_MIB

LOG_SUFFIXES = {"", ".log", ".txt", ".dmesg", ".console", ".out", ".serial"}
COMPRESSED_SUFFIXES = (".gz", ".xz", ".bz2")
# a rotation suffix: ".1", "-20240101" (logrotate dateext), ".old"
_ROTATION = re.compile(r"[.-](?:\d+|old)$", re.IGNORECASE)
LOG_NAME_RULE = ("no suffix or " + ", ".join(sorted(s for s in LOG_SUFFIXES if s))
                 + ", maybe rotated (.1, -20240101, .old) and compressed ("
                 + ", ".join(COMPRESSED_SUFFIXES) + ")")
READ_ERRORS = (OSError, LogFormatError, lzma.LZMAError, EOFError, zlib.error)
STDIN = Path("-")
HOLD_IN_MEMORY = 8 << 20     # bytes of held reports kept in memory, the rest spooled


class TriageError(Exception):
    """A problem with an argument (baseline, golden dir): message, exit 2."""


# ------------------------------------------------------------------ names
def is_log_name(name: str) -> bool:
    """Whether a file of this name, found under a directory, is a log."""
    if name.startswith(".") or name.upper().startswith("README"):
        return False
    base = name
    if base.lower().endswith(COMPRESSED_SUFFIXES):
        base = base[:base.rindex(".")]
    while (m := _ROTATION.search(base)) and m.start() > 0:
        base = base[:m.start()]
    return Path(base).suffix.lower() in LOG_SUFFIXES


class Skip(Enum):
    """Why an entry under a directory is not read."""
    NOT_A_LOG = "not a log by its name"
    HIDDEN = "hidden"
    NOT_A_FILE = "not a regular file"
    BROKEN_LINK = "a broken symbolic link"
    ALREADY_READ = "already read"
    UNREADABLE = "cannot be read"


@dataclass(frozen=True)
class Skipped:
    path: Path
    why: Skip
    detail: str = ""        # the error; the file's kind; the name it was read under

    def shown_under(self, root: Path) -> str:
        try:
            name = str(self.path.relative_to(root))
        except ValueError:
            name = str(self.path)
        why = {Skip.UNREADABLE: self.detail, Skip.NOT_A_FILE: f"{self.why.value}: {self.detail}",
               Skip.ALREADY_READ: f"{self.why.value} as {self.detail}"}.get(self.why,
                                                                           self.why.value)
        return f"{shown(name, None)} ({shown(why, None)})"


# ------------------------------------------------------------------ input
@dataclass
class Inputs:
    files: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)   # one line each


def find_logs(paths: list[Path]) -> Inputs:
    """Files to read: named files (and "-") as given, directories searched
    for logs; a line in problems for each directory with entries not read
    (naming each) or without logs, and for each path that is missing."""
    out = Inputs()
    seen: dict[tuple[int, int], Path] = {}
    for path in paths:
        if path == STDIN:
            out.files.append(path)
        elif path.is_dir():
            found, skipped = _walk(path, seen)
            not_read = ", ".join(s.shown_under(path) for s in skipped)
            if not found:
                out.problems.append(f"{path}: directory has no log files (a log's name: "
                                    f"{LOG_NAME_RULE})"
                                    + (f"; not read: {not_read}" if not_read else ""))
            elif skipped:
                out.problems.append(f"{path}: not read: {not_read}")
            out.files.extend(found)
        elif path.exists():
            out.files.append(path)
        else:
            out.problems.append(f"{path}: no such file or directory")
    return out


def _walk(root: Path, seen: dict[tuple[int, int], Path]) -> tuple[list[Path], list[Skipped]]:
    """Log files under root, in name order, and every entry not read;
    symbolic links are followed, but no directory or file is read twice
    (a link loop ends there)."""
    found: list[Path] = []
    skipped: list[Skipped] = []
    todo = [root]
    while todo:
        folder = todo.pop()
        try:
            st = folder.stat()
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(folder, Skip.UNREADABLE, exc.strerror or str(exc)))
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:
            if folder != root:
                skipped.append(Skipped(folder, Skip.ALREADY_READ,
                                       f"{_under(seen[key], root)}: a symbolic link loop?"))
            continue
        seen[key] = folder
        folders: list[Path] = []
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith("."):
                skipped.append(Skipped(path, Skip.HIDDEN))
                continue
            try:
                if entry.is_dir():
                    folders.append(path)
                    continue
                est = entry.stat()
            except OSError as exc:
                broken = isinstance(exc, FileNotFoundError) and entry.is_symlink()
                skipped.append(Skipped(path, Skip.BROKEN_LINK) if broken else
                               Skipped(path, Skip.UNREADABLE, exc.strerror or str(exc)))
                continue
            key = (est.st_dev, est.st_ino)
            if not stat.S_ISREG(est.st_mode):
                skipped.append(Skipped(path, Skip.NOT_A_FILE, file_kind(est.st_mode)))
            elif not is_log_name(entry.name):
                skipped.append(Skipped(path, Skip.NOT_A_LOG))
            elif key in seen:
                skipped.append(Skipped(path, Skip.ALREADY_READ, _under(seen[key], root)))
            else:
                seen[key] = path
                found.append(path)
        todo.extend(reversed(folders))       # the first in name order is walked next
    return found, skipped


def _under(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root)) or "."
    except ValueError:
        return str(path)


# ------------------------------------------------------------------ scan
@dataclass
class ScanCount:
    read: int = 0
    failed: int = 0


@dataclass(frozen=True)
class Limits:
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED_MIB << 20
    max_input: int = MAX_INPUT


class _Held:
    """Reports held back until their log is accepted: pickled to a
    temporary file that stays in memory up to HOLD_IN_MEMORY bytes."""

    def __init__(self) -> None:
        self._file: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=HOLD_IN_MEMORY)

    def add(self, rep: Report) -> None:
        pickle.dump(rep, self._file, protocol=pickle.HIGHEST_PROTOCOL)

    def __iter__(self) -> Iterator[Report]:
        self._file.seek(0)
        while True:
            try:
                yield pickle.load(self._file)   # what add() wrote, nothing else
            except EOFError:
                return

    def __enter__(self) -> _Held:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()


def scan(files: list[Path], err: TextIO, count: ScanCount | None = None,
         limits: Limits = Limits()) -> Iterator[Report]:
    """Reports of every readable file; a clear line on err for the others."""
    count = count if count is not None else ScanCount()
    for path in files:
        stats = ScanStats()
        name = "<stdin>" if path == STDIN else shown(path, None)
        compressed = False
        try:
            with _open(path, limits) as f:
                compressed = is_compressed(f)
                reports = iter_stream(f, name, stats, max_input=limits.max_input)
                if compressed:
                    with _Held() as held:
                        for rep in reports:
                            held.add(rep)
                        f.close()
                        yield from held
                else:
                    yield from reports
        except READ_ERRORS as exc:
            why = shown(exc.strerror if isinstance(exc, OSError) and exc.strerror
                        else str(exc) or type(exc).__name__, None)
            if stats.reports and not compressed:
                # a plain log's reports are out as they come: they stand
                print(f"triage: {name}: {why} after line {stats.lines}; the "
                      f"{stats.reports} report(s) before it are kept", file=err)
                count.read += 1
                continue
            print(f"triage: {name}: {why}; skipped", file=err)
            count.failed += 1
            continue
        count.read += 1
        notes(name, stats, err)


def _open(path: Path, limits: Limits) -> IO[bytes]:
    if path == STDIN:
        return open_stream(sys.stdin.buffer, limits.max_decompressed)  # type: ignore[return-value]
    return open_log(path, limits.max_decompressed)  # type: ignore[return-value]


def notes(name: str, stats: ScanStats, err: TextIO) -> None:
    """What a read file's scan saw besides reports, one line each."""
    if stats.bytes == 0:
        print(f"triage: {name}: " + ("nothing to read now (a device that would wait "
                                     "for input)" if stats.would_wait else "empty file"),
              file=err)
    elif stats.would_wait:
        print(f"triage: {name}: a device: its {stats.bytes} byte(s) of now were read; "
              "a read would wait for more, so reading ended there", file=err)
    if stats.long_lines:
        print(f"triage: {name}: {stats.long_lines} line(s) longer than "
              f"{MAX_LINE // 1024} KiB (first: line {stats.first_long_line}); "
              f"read in {MAX_LINE // 1024} KiB pieces", file=err)
    if stats.truncated:
        print(f"triage: {name}: {stats.truncated}; the {stats.reports} report(s) "
              f"before the cut are kept (line {stats.lines} is the last read)", file=err)
    if stats.cut_at:
        print(f"triage: {name}: more than {stats.cut_at >> 20} MiB (--max-input); "
              f"the rest was not read", file=err)
