"""What triage reads: the logs under the paths it is given (compressed or
not, standard input), scanned for reports with their notes, and a baseline
of earlier reports (an earlier triage --json, or a run's results.json)."""
from __future__ import annotations

import json
import lzma
import os
import stat
import sys
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, TextIO

from ..inputs import shown
from ..model import Report
from ..reports.log_reader import MAX_INPUT, Prefixed, looks_binary, open_log, open_stream, read_head
from ..reports.oops_parser import MAX_LINE, LogFormatError, ScanStats, iter_file, iter_stream, make_signature


LOG_SUFFIXES = {"", ".log", ".txt", ".dmesg", ".console", ".out", ".serial",
                ".gz", ".xz", ".bz2"}
_READ_ERRORS = (OSError, LogFormatError, lzma.LZMAError, EOFError, zlib.error)
STDIN = Path("-")
DEFAULT_MAX_DECOMPRESSED_MIB = 1024
DEFAULT_MAX_INPUT_MIB = MAX_INPUT >> 20
BASELINE_JSON_LIMIT = 64 << 20   # bytes of a JSON baseline (results.json: ~1 MB per suite)


class TriageError(Exception):
    """A problem with an argument (baseline, golden dir): message, exit 2."""


# ------------------------------------------------------------------ input
@dataclass
class Inputs:
    files: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def find_logs(paths: list[Path]) -> Inputs:
    """Files to read: named files (and "-") as given, directories searched
    for logs."""
    out = Inputs()
    seen: set[tuple[int, int]] = set()
    for path in paths:
        if path == STDIN:
            out.files.append(path)
        elif path.is_dir():
            found = _walk(path, seen, out.problems)
            if not found:
                out.problems.append(f"{path}: directory has no log files "
                                    f"({', '.join(sorted(s or 'no suffix' for s in LOG_SUFFIXES))})")
            out.files.extend(found)
        elif path.exists():
            out.files.append(path)
        else:
            out.problems.append(f"{path}: no such file or directory")
    return out


def _walk(root: Path, seen: set[tuple[int, int]], problems: list[str]) -> list[Path]:
    """Log files under root, in name order; symbolic links are followed,
    but no directory or file is read twice (a link loop ends there)."""
    found: list[Path] = []
    todo = [root]
    while todo:
        folder = todo.pop()
        try:
            st = folder.stat()
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            problems.append(f"{folder}: {exc.strerror or exc}")
            continue
        if (st.st_dev, st.st_ino) in seen:
            if folder != root:
                problems.append(f"{folder}: already read (a symbolic link loop?); skipped")
            continue
        seen.add((st.st_dev, st.st_ino))
        files = []
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_dir():
                    todo.append(path)
                elif entry.is_file() and _is_log_name(path):
                    est = entry.stat()
                    if (est.st_dev, est.st_ino) not in seen:
                        seen.add((est.st_dev, est.st_ino))
                        files.append(path)
            except OSError:
                continue
        found.extend(reversed(files))
    return found


def _is_log_name(p: Path) -> bool:
    return (not any(part.startswith(".") for part in p.parts[-1:])
            and not p.name.upper().startswith("README")
            and p.suffix.lower() in LOG_SUFFIXES)


@dataclass
class ScanCount:
    read: int = 0
    failed: int = 0


@dataclass(frozen=True)
class Limits:
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED_MIB << 20
    max_input: int = MAX_INPUT


def scan(files: list[Path], err: TextIO, count: ScanCount | None = None,
         limits: Limits = Limits()) -> Iterator[Report]:
    """Reports of every readable file; a clear line on err for the others."""
    count = count if count is not None else ScanCount()
    for path in files:
        stats = ScanStats()
        name = "<stdin>" if path == STDIN else shown(path, None)
        try:
            if path == STDIN:
                with open_stream(sys.stdin.buffer, limits.max_decompressed) as f:
                    yield from iter_stream(f, name, stats, max_input=limits.max_input)
            else:
                yield from iter_file(path, stats, name, limits.max_decompressed,
                                     max_input=limits.max_input)
        except _READ_ERRORS as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            print(f"triage: {name}: {shown(why or type(exc).__name__, None)}; skipped",
                  file=err)
            count.failed += 1
            continue
        count.read += 1
        _notes(name, stats, err)


def _notes(name: str, stats: ScanStats, err: TextIO) -> None:
    """What a read file's scan saw besides reports, one line each."""
    if stats.bytes == 0:
        print(f"triage: {name}: empty file", file=err)
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


# --------------------------------------------------------------- baseline
def load_baseline(path: Path, err: TextIO, limits: Limits = Limits()) -> dict[str, Report]:
    """signature -> one report, from a results.json, a JSON list of
    reports, or a directory / file of logs.  TriageError (exit 2) when it
    is missing, a device, empty, binary, or JSON that is not reports."""
    name = shown(path, None)
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise TriageError(f"baseline {name}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        count = ScanCount()
        inputs = find_logs([path])
        for problem in inputs.problems:
            print(f"triage: baseline {shown(problem, None)}", file=err)
        found = _first_by_signature(scan(inputs.files, err, count, limits))
        if not count.read:
            raise TriageError(f"baseline {name}: no log could be read")
        return found
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        kind = "a character device" if stat.S_ISCHR(mode) else "not a regular file"
        raise TriageError(f"baseline {name}: is {kind}, not a file")
    try:
        with open_log(path, limits.max_decompressed) as f:
            head = read_head(f)
            if not head:
                raise TriageError(f"baseline {name}: empty file")
            if looks_binary(head):
                raise TriageError(f"baseline {name}: binary data, neither a log nor JSON")
            if path.suffix == ".json" or starts_json(head):
                data = head + f.read(BASELINE_JSON_LIMIT + 1 - len(head))
                if len(data) > BASELINE_JSON_LIMIT:
                    raise TriageError(f"baseline {name}: more than "
                                      f"{BASELINE_JSON_LIMIT >> 20} MiB of JSON")
                return _first_by_signature(_reports_from_json(_parse_json(data, name), name))
            stats = ScanStats()
            found = _first_by_signature(iter_stream(Prefixed(head, f), name, stats,  # type: ignore[arg-type]
                                                    max_input=limits.max_input))
    except _READ_ERRORS as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise TriageError(f"baseline {name}: {shown(why or type(exc).__name__, None)}") from None
    _notes(f"baseline {name}", stats, err)
    return found


def _parse_json(data: bytes, name: str) -> Any:
    """One JSON document, or `triage --json`'s output: one report object
    per line (JSON lines), returned as the list of those objects."""
    text = data.decode("utf-8", "replace")
    try:
        doc = json.loads(text)
    except RecursionError:
        raise TriageError(f"baseline {name}: JSON nested too deeply") from None
    except ValueError as exc:
        lines = _json_lines(text, name)
        if lines is None:
            raise TriageError(f"baseline {name}: not readable JSON ({shown(exc, None)})") from None
        return lines
    if isinstance(doc, dict) and "kind" in doc:
        return [doc]            # `triage --json` of a log with one report
    return doc


def _json_lines(text: str, name: str) -> list[Any] | None:
    """The objects of a JSON-lines text, or None when a line is not one."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except RecursionError:
            raise TriageError(f"baseline {name}: JSON nested too deeply") from None
        except ValueError:
            return None
        if not isinstance(item, dict):
            return None
        out.append(item)
    return out or None


def _first_by_signature(reports: Iterable[Report]) -> dict[str, Report]:
    out: dict[str, Report] = {}
    for rep in reports:
        rep.lines.clear()
        out.setdefault(rep.signature, rep)
    return out


def starts_json(head: bytes) -> bool:
    """JSON, not a log: "{", or "[" then "{", "[", "]" or '"' (a list).
    A timestamped dmesg line starts with "[" too, then a space, digit or
    day name."""
    text = head.lstrip()
    return text[:1] == b"{" or (text[:1] == b"[" and
                                text[1:].lstrip()[:1] in (b"{", b"[", b"]", b'"', b""))


# Report fields a baseline may give, and their JSON types (None: null allowed)
_STR, _INT, _BOOL, _STRS = (str,), (int,), (bool,), (list,)
_FIELD_TYPES: dict[str, tuple[tuple[type, ...], bool]] = {
    **{f: (_STR, False) for f in ("file", "kind", "title", "syz_title", "signature")},
    **{f: (_STR, True) for f in ("direction", "direction_source", "object", "cache", "bug_site", "rip",
                                 "guilty_frame", "kernel")},
    **{f: (_INT, False) for f in ("line", "end_line")},
    **{f: (_INT, True) for f in ("offset", "size", "lkdtm_address")},
    **{f: (_BOOL, False) for f in ("truncated", "secondary")},
    **{f: (_STRS, False) for f in ("frames", "syz_alt", "lines")},
    "frame_addresses": ((list,), False),
}


def _list_of(data: Any, key: str, name: str) -> list[Any]:
    value = data.get(key, []) if isinstance(data, dict) else data
    if not isinstance(value, list):
        raise TriageError(f"baseline {name}: '{key}' is not a list")
    return value


def _reports_from_json(data: Any, name: str) -> list[Report]:
    items: list[Any]
    if isinstance(data, dict) and "triggers" in data:
        items = [r for t in _list_of(data, "triggers", name) if isinstance(t, dict)
                 for r in _list_of(t, "reports", name)]
    elif isinstance(data, dict) and "reports" in data:
        items = _list_of(data, "reports", name)
    elif isinstance(data, list):
        items = data
    else:
        raise TriageError(f"baseline {name}: expected {{'triggers': [...]}} or a list of reports")
    known = {f.name for f in fields(Report)}
    out = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict) or "kind" not in item:
            raise TriageError(f"baseline {name}: report {number} has no 'kind'")
        args = {k: v for k, v in item.items() if k in _FIELD_TYPES and k in known}
        for key, value in args.items():
            types, nullable = _FIELD_TYPES[key]
            ok = (value is None and nullable) or (
                isinstance(value, types) and not (types == _INT and isinstance(value, bool)))
            if ok and types == _STRS:
                ok = all(isinstance(v, str) for v in value)
            elif ok and key == "frame_addresses":
                ok = all(isinstance(v, dict) for v in value)
            if not ok:
                raise TriageError(f"baseline {name}: report {number}: '{key}' is "
                                  f"{type(value).__name__}, not the type a report has")
        args.setdefault("file", name)
        args.setdefault("line", 0)
        rep = Report(**args)
        if rep.title:
            # Recompute, so baselines from older runs compare by today's rule.
            rep = replace(rep, signature=make_signature(rep))
        out.append(rep)
    return out
