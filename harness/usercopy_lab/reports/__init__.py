"""reports: kernel reports out of console, dmesg and syslog text.

This package's public API; callers outside it import only from here.

Reports: iter_reports(lines, file), iter_stream(binary stream, name),
iter_file(path), parse_file(path) give model.Report objects, one per
oops / BUG / WARNING / panic; LogFormatError is an input they refuse,
ScanStats what a streaming scan saw, make_signature a report's dedup key.

Logs: open_log / open_stream (plain or compressed, bounded), split_lines,
read_head, looks_binary, is_compressed, candidate_lines, console_problem,
Prefixed, and the bounds (MAX_INPUT, MAX_LINE, MAX_CONSOLE_MIB, CHUNK).
Lines: program_lines (a guest program's own lines), normalize,
begins_record, cut_by_record.  What the guest said: ConsoleMarkers,
read_markers, read_numbered (the markers themselves are protocol.py's).
Formats: GROUPS (the table of report formats), CONTINUES, SUFFIX.
Symbolizer, SymbolizeError: frames to file:line.
"""
from ..model import Report
from .console_markers import ConsoleMarkers, read_markers, read_numbered
from .frames import SUFFIX
from .log_lines import begins_record, cut_by_record, normalize, program_lines
from .log_reader import (CHUNK, MAX_CONSOLE_MIB, MAX_INPUT, Prefixed, candidate_lines,
                         console_problem, is_compressed, looks_binary, open_log, open_stream,
                         read_head, split_lines)
from .oops_parser import (MAX_LINE, LogFormatError, ScanStats, iter_file, iter_reports,
                          iter_stream, make_signature, parse_file)
from .report_formats import GROUPS
from .symbolize import SymbolizeError, Symbolizer
from .trace_layout import CONTINUES

__all__ = [
    "CHUNK", "CONTINUES", "GROUPS", "MAX_CONSOLE_MIB", "MAX_INPUT", "MAX_LINE",
    "SUFFIX", "ConsoleMarkers", "LogFormatError", "Prefixed", "Report", "ScanStats",
    "SymbolizeError", "Symbolizer", "begins_record", "candidate_lines", "console_problem",
    "cut_by_record", "is_compressed", "iter_file", "iter_reports", "iter_stream",
    "looks_binary", "make_signature", "normalize", "open_log", "open_stream", "parse_file",
    "program_lines", "read_head", "read_markers", "read_numbered", "split_lines",
]
