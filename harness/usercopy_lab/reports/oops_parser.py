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

segmenter.py applies these rules line by line, with an OpenReport
(open_report.py: its phase as a state machine) per context; routing,
joining and opening and closing reports each have a module of their own
(report_routing.py, line_joins.py, report_book.py).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from ..model import Report
from .log_reader import (CHUNK, MAX_DECOMPRESSED, MAX_INPUT, MAX_LINE, LogFormatError, ScanStats,
                         candidate_lines, open_log)
from .report_analysis import is_plumbing
from .report_lines import pieces
from .report_naming import make_signature
from .segmenter import Segmenter
from .trace_layout import TRIGGERS, may_matter

__all__ = ["CHUNK", "MAX_LINE", "LogFormatError", "ScanStats", "is_plumbing", "iter_file",
           "iter_reports", "iter_stream", "make_signature", "parse_file"]

_TRIGGERS_B = tuple(t.encode() for t in TRIGGERS)


def iter_reports(lines: Iterable[str], file: str = "<input>") -> Iterator[Report]:
    """Reports in lines (text, with or without line ends), in order."""
    return iter_numbered(enumerate(lines, 1), file)


def iter_numbered(lines: Iterable[tuple[int, str]], file: str = "<input>") -> Iterator[Report]:
    """Reports in (line number, text) pairs (log_reader.iter_lines), in order."""
    seg = Segmenter(file)
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
    seg = Segmenter(name)

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
