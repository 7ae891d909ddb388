"""usercopy-lab triage: classify, title, deduplicate and diff kernel logs.

    usercopy-lab triage [--json] [--syz-titles] [--baseline RESULTS_JSON_OR_DIR]
                        [--vmlinux FILE] [--golden DIR] [--max-decompressed MIB]
                        LOG_OR_DIR_OR_-...

Reads serial consoles, dmesg (-T), journalctl -k and syslog files (plain or
.gz/.xz/.bz2; "-" is standard input), streaming, and prints one row per
distinct report signature: count, kind, first file:line, title.  --json
prints one JSON object per report per line instead (with syz_title, the
title syzkaller gives the report).  --syz-titles shows syzkaller's titles
in the table.  --baseline marks every signature new / still present /
gone and exits 1 when anything is new.  --golden names the golden file a
report matches.  --vmlinux resolves frames to file:line.  A compressed log
that expands past --max-decompressed MiB (default 1024) is refused, as a
decompression bomb.  At most --max-input MiB (default 16384) of one log
are read (an endless pipe ends there, with a warning).  Directories are
searched for logs: a file whose name, less .gz/.xz/.bz2 and rotation
suffixes (.1, -20240101, .old), has no suffix or .log, .txt, .dmesg,
.console, .out or .serial (so kern.log.1, dmesg.0, syslog.2.gz); every
other entry is named on stderr, "DIR: not read: NAME (why), ...".
Symbolic links are followed, each directory and file once.  Lines end at
"\\n" (or at a lone "\\r" in a log that ends its lines so).

Nothing waits without a bound but standard input: a FIFO given by name is
refused (pipe it to "-" instead), a device is read without waiting (what
it has now: /dev/kmsg's records).  Standard input is read as it comes:
each --json record is written, and flushed, when the line after its
report arrives.  A compressed log's reports are held until it has been
read whole: a decompression bomb is refused whole, table and --json.

A binary file (its first 64 KiB) without a report is skipped at once
(/dev/zero, /dev/urandom, an endless binary pipe).  A compressed log that
ends early (a cut download) keeps every report whole before the cut, as
zcat shows it, with a warning on stderr; the exit status is then what its
reports give.  --baseline FILE is JSON (a results.json, a list of
reports, or --json's one report per line; a .json name, or text starting
with "{" or with "[" then "{", "[", "]" or '"') or else a log (a dmesg
line starts "[  12.3" or "[Mon ..."); an empty, binary, unreadable or
too big baseline (JSON: over 8 MiB or 250 000 values) is an error, as is
a FIFO or device.  Running out of memory is exit 2, one line.  Names and report text are printed with
control characters escaped; Ctrl-C stops with status 130 after the last
whole --json record.

Exit status: 0 ok, 1 new signatures against the baseline, 2 nothing could
be read (or bad arguments, or a bad baseline), 130 interrupted.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..inputs import shown
from ..model import Report
from ..reports.symbolize import SymbolizeError, Symbolizer
from ..judge.golden import Golden, load_dir, match_report
from .baseline import load_baseline
from .inputs import (DEFAULT_MAX_DECOMPRESSED_MIB, DEFAULT_MAX_INPUT_MIB, Limits,
                            ScanCount, TriageError, find_logs, scan)

STATUS_NEW, STATUS_STILL, STATUS_GONE = "new", "still present", "gone"
GOLDEN_MATCH_LIMIT = 50   # reports per signature matched against golden files


# ----------------------------------------------------------------- golden
def load_golden(dirs: list[Path]) -> list[tuple[str, Golden]]:
    """(name, Golden) for every golden file under dirs (one level of
    suite sub-directories allowed)."""
    out: list[tuple[str, Golden]] = []
    for d in dirs:
        if not d.is_dir():
            raise TriageError(f"--golden {d}: not a directory")
        subdirs = [d] + sorted(p for p in d.iterdir() if p.is_dir())
        for sub in subdirs:
            try:
                loaded = load_dir(sub)
            except ValueError as exc:
                raise TriageError(f"--golden: {exc}") from exc
            prefix = "" if sub == d else f"{sub.name}/"
            out.extend((prefix + name, g) for name, g in loaded.items())
        if not out:
            raise TriageError(f"--golden {d}: no golden *.txt files")
    return out


def golden_names(goldens: list[tuple[str, Golden]], report: Report) -> list[str]:
    return [name for name, g in goldens if not match_report(g, report)]


# ------------------------------------------------------------------- rows
@dataclass
class Row:
    first: Report
    count: int = 0
    golden: list[str] = field(default_factory=list)
    all_truncated: bool = True
    all_secondary: bool = True
    status: str | None = None
    symbolized: list[str] = field(default_factory=list)


def _where(rep: Report) -> str:
    return f"{shown(rep.file, None)}:{rep.line}"


def print_table(rows: list[Row], gone: list[Report], out: TextIO,
                with_status: bool, syz_titles: bool = False) -> None:
    if not rows and not gone:
        print("no kernel reports found", file=out)
        return
    first_w = max([len(_where(r.first)) for r in rows] + [10])
    kind_w = max([len(shown(r.first.kind, None)) for r in rows] + [4])
    status_w = len(STATUS_STILL)
    head = f"{'COUNT':>5}  {'KIND':<{kind_w}}  {'FIRST SEEN':<{first_w}}  TITLE"
    if with_status:
        head = f"{'STATUS':<{status_w}}  " + head
    print(head, file=out)
    for row in rows:
        rep = row.first
        extra = ""
        if row.all_truncated:
            extra += "  [truncated]"
        if row.all_secondary:
            extra += "  [secondary]"
        if row.golden:
            extra += f"  [golden: {', '.join(row.golden)}]"
        title = (rep.syz_title or f"({rep.title})") if syz_titles else rep.title
        line = (f"{row.count:>5}  {shown(rep.kind, None):<{kind_w}}  "
                f"{_where(rep):<{first_w}}  {shown(title, None)}{shown(extra, None)}")
        if with_status:
            line = f"{row.status or '':<{status_w}}  " + line
        print(line, file=out)
        for sym in row.symbolized:
            print(f"{'':>7}{shown(sym, None)}", file=out)
    for rep in gone:
        print(f"{STATUS_GONE:<{status_w}}  {'-':>5}  {shown(rep.kind, None):<{kind_w}}  "
              f"{_where(rep):<{first_w}}  {shown(rep.title, None)}", file=out)
    total = sum(r.count for r in rows)
    print(f"\n{total} report(s), {len(rows)} distinct signature(s)", file=out)


# -------------------------------------------------------------------- cli
def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "triage", help="classify, deduplicate and diff kernel reports in logs",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true",
                   help="one JSON object per report per line")
    p.add_argument("--baseline", type=Path, metavar="RESULTS_JSON_OR_DIR",
                   help="previous results.json (or JSON list of reports) or logs")
    p.add_argument("--vmlinux", type=Path, metavar="FILE",
                   help="resolve frames to file:line (needs debug info)")
    p.add_argument("--golden", type=Path, action="append", metavar="DIR",
                   help="golden directory (expected-oops/ or one suite of it)")
    p.add_argument("--syz-titles", action="store_true",
                   help="show syzkaller's titles (as on the syzbot dashboard) in the table")
    p.add_argument("--max-decompressed", type=mib, default=DEFAULT_MAX_DECOMPRESSED_MIB,
                   metavar="MIB", help="refuse a compressed log that expands past this "
                   f"(default {DEFAULT_MAX_DECOMPRESSED_MIB} MiB)")
    p.add_argument("--max-input", type=mib, default=DEFAULT_MAX_INPUT_MIB,
                   metavar="MIB", help="read at most this much of one log, the rest "
                   f"is ignored with a warning (default {DEFAULT_MAX_INPUT_MIB} MiB)")
    p.add_argument("paths", type=Path, nargs="+", metavar="LOG_OR_DIR",
                   help='log files, directories of logs, or "-" for standard input')
    p.set_defaults(func=run)


def mib(text: str) -> int:
    """A positive number of MiB (an option's type=; match's --max-input too)."""
    try:
        value = int(text) if len(text) <= 12 else 0
    except ValueError:
        value = 0
    if not 0 < value < 1 << 30:
        raise argparse.ArgumentTypeError(f"{text!r}: want a positive number of MiB")
    return value


def run(args: argparse.Namespace) -> int:
    out, err = sys.stdout, sys.stderr
    try:
        return _run(args, out, err)
    except TriageError as exc:
        print(f"triage: {shown(exc, None)}", file=err)
        return 2
    except BrokenPipeError:
        return 0
    except MemoryError:
        # what held the memory is gone with the frames that held it
        print("triage: out of memory (an input too big for this machine's memory; "
              "--max-input, --max-decompressed bound what is read)", file=err)
        return 2
    except KeyboardInterrupt:
        # --json records are written whole (one write each): what is out is whole
        print("triage: interrupted", file=err)
        return 130


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    limits = Limits(args.max_decompressed << 20, args.max_input << 20)
    goldens = load_golden(args.golden) if args.golden else []
    baseline = load_baseline(args.baseline, err, limits) if args.baseline else None
    symbolizer = None
    if args.vmlinux:
        symbolizer = Symbolizer(args.vmlinux)
        try:
            symbolizer.check()
        except SymbolizeError as exc:
            print(f"triage: --vmlinux: {exc}", file=err)
            symbolizer = None

    inputs = find_logs(args.paths)
    for problem in inputs.problems:
        print(f"triage: {shown(problem, None)}", file=err)
    if not inputs.files:
        if not inputs.problems:
            print("triage: nothing to read", file=err)
        return 2

    rows: dict[str, Row] = {}
    counted = ScanCount()
    for rep in scan(inputs.files, err, counted, limits):
        row = rows.get(rep.signature)
        new_row = row is None
        names: list[str] = []
        if goldens and (new_row or row.count < GOLDEN_MATCH_LIMIT or args.json):
            names = golden_names(goldens, rep)
        if row is None:
            row = rows[rep.signature] = Row(first=rep)
            if baseline is not None:
                row.status = STATUS_STILL if rep.signature in baseline else STATUS_NEW
            if symbolizer is not None:
                row.symbolized = _symbolize(symbolizer, rep, err)
        row.count += 1
        row.all_truncated = row.all_truncated and rep.truncated
        row.all_secondary = row.all_secondary and rep.secondary
        row.golden.extend(n for n in names if n not in row.golden)
        if args.json:
            obj = rep.to_json()
            if goldens:
                obj["golden"] = names
            if baseline is not None:
                obj["baseline"] = row.status
            if symbolizer is not None:
                obj["symbolized"] = row.symbolized if new_row else _symbolize(symbolizer, rep, err)
            out.write(json.dumps(obj) + "\n")      # one write: a record is whole or absent
            out.flush()     # out as soon as its report is: a live pipe's reader waits for it
        else:
            rep.lines.clear()  # only counts and the first report stay in memory

    if counted.read == 0:       # each file said why on its own line
        return 2
    gone = [r for s, r in (baseline or {}).items() if s not in rows]
    if args.json:
        for rep in gone:
            obj = rep.to_json()
            obj["baseline"] = STATUS_GONE
            out.write(json.dumps(obj) + "\n")
    else:
        print_table(list(rows.values()), gone, out, baseline is not None, args.syz_titles)
    if baseline is not None:
        new = sum(1 for r in rows.values() if r.status == STATUS_NEW)
        print(f"triage: baseline: {new} new, "
              f"{len(rows) - new} still present, {len(gone)} gone", file=err)
        if new:
            return 1
    return 0


def _symbolize(symbolizer: Any, rep: Report, err: TextIO) -> list[str]:
    try:
        return symbolizer.resolve(rep.frame_addresses)
    except SymbolizeError as exc:
        print(f"triage: --vmlinux: {exc}", file=err)
        return []
