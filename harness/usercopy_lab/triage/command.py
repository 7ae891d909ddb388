"""usercopy-lab triage: the scan of every log, its rows by signature, the
table or --json records (triage/options.py says what it is asked)."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..inputs import shown
from ..model import Report
from ..reports import SymbolizeError, Symbolizer
from ..judge.golden import Golden, load_dir, match_report
from .baseline import load_baseline
from .options import TriageOptions
from .inputs import (Limits,
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
    # Not tabulate: a baseline's gone reports can be 80 000 rows, and
    # tabulate holds each cell several times over (the largest baseline
    # allowed: 207 MB peak with it, 124 MB so, the limit being 200 MB).
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


# ---------------------------------------------------------------- command
def run(args: TriageOptions) -> int:
    out, err = sys.stdout, sys.stderr
    try:
        return report(args, out, err)
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


def report(args: TriageOptions, out: TextIO, err: TextIO) -> int:
    """Triage the logs of ARGS: the table (or --json records) on OUT, notes on ERR; the exit status."""
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
