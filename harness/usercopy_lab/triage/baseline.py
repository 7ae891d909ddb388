"""triage --baseline: the earlier reports a triage is compared with, from
a results.json, a JSON list of reports, `triage --json`'s lines, or logs
(a directory or a file of them).

Bounds: a baseline is a regular file or a directory (a FIFO or a device
is refused unread); JSON is at most BASELINE_JSON_LIMIT bytes and holds
at most BASELINE_JSON_VALUES values, counted before it is parsed (a
results.json of every suite, 308 triggers, is about 0.5 MB and 20 000
values; parsing takes up to ~25 times the bytes of JSON made of "{}", so
the count is what bounds its memory, not the size).  A log baseline is
read as triage reads a log (--max-input), one report kept per signature.
"""
from __future__ import annotations

import io
import json
import stat
from collections.abc import Iterable, Iterator
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, TextIO

from ..inputs import file_kind, shown
from ..model import Report
from ..schemas import RESULTS, problems, schema
from ..reports import (Prefixed, ScanStats, iter_stream, looks_binary, make_signature,
                       open_log, read_head)
from .inputs import READ_ERRORS, Limits, ScanCount, TriageError, find_logs, notes, scan

BASELINE_JSON_LIMIT = 8 << 20     # bytes of a JSON baseline (all suites' results.json: ~0.5 MB)
BASELINE_JSON_VALUES = 250_000    # values in it (all suites' results.json: ~20 000)


def load_baseline(path: Path, err: TextIO, limits: Limits = Limits()) -> dict[str, Report]:
    """signature -> one report, from a results.json, a JSON list of
    reports, or a directory / file of logs.  TriageError (exit 2) when it
    is missing, not a regular file or directory, empty, binary, too big,
    or JSON that is not reports."""
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
    if not stat.S_ISREG(mode):
        raise TriageError(f"baseline {name}: is {file_kind(mode)}, not a file")
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
                                      f"{BASELINE_JSON_LIMIT >> 20} MiB of JSON, the most "
                                      "a baseline may be (a results.json of every suite "
                                      "is about 0.5 MB)")
                return _first_by_signature(_reports_from_json(_parse_json(data, name), name))
            stats = ScanStats()
            found = _first_by_signature(iter_stream(Prefixed(head, f), name, stats,  # type: ignore[arg-type]
                                                    max_input=limits.max_input))
    except READ_ERRORS as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise TriageError(f"baseline {name}: {shown(why or type(exc).__name__, None)}") from None
    notes(f"baseline {name}", stats, err)
    return found


def json_values(data: bytes) -> int:
    """At least the number of values json.loads makes of data: every value
    but the first of a document follows a "[", "{" or ","; those counted
    inside strings too (a bound, not a count)."""
    return data.count(b"[") + data.count(b"{") + data.count(b",") + 1


def _parse_json(data: bytes, name: str) -> Any:
    """One JSON document, or `triage --json`'s output: one report object
    per line (JSON lines), returned as the list of those objects."""
    if (values := json_values(data)) > BASELINE_JSON_VALUES:
        raise TriageError(f"baseline {name}: JSON of up to {values} values, more than "
                          f"{BASELINE_JSON_VALUES}, the most a baseline may hold (a "
                          "results.json of every suite holds about 20 000)")
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
    for line in io.StringIO(text):          # "\n" ends a line, nothing else
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


# Report fields a baseline may give: those of results.json's reports (its
# schema, harness/usercopy_lab/schemas/results.schema.json, says their types)
_FIELDS = set(schema(RESULTS)["$defs"]["report"]["properties"]) & {f.name for f in fields(Report)}


def _list_of(data: Any, key: str, name: str) -> list[Any]:
    value = data.get(key, []) if isinstance(data, dict) else data
    if not isinstance(value, list):
        raise TriageError(f"baseline {name}: '{key}' is not a list")
    return value


def _reports_from_json(data: Any, name: str) -> Iterator[Report]:
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
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict) or "kind" not in item:
            raise TriageError(f"baseline {name}: report {number} has no 'kind'")
        args = {"file": name, "line": 0, **{k: v for k, v in item.items() if k in _FIELDS}}
        # args has every key the schema requires: a problem is a key's value
        for problem in problems(args, RESULTS, "report")[:1]:
            key = str(problem.path[0])
            if problem.validator == "enum" and isinstance(args[key], str):
                # the right type, a word the model lacks
                raise TriageError(f"baseline {name}: report {number}: '{shown(key)}' is "
                                  f"{shown(repr(args[key]), 80)}, not a word a report has")
            raise TriageError(f"baseline {name}: report {number}: '{shown(key)}' is "
                              f"{type(args[key]).__name__}, not the type a report has")
        try:
            rep = Report(**args)      # kind and direction: the model's words
        except ValueError as exc:
            raise TriageError(f"baseline {name}: report {number}: {exc}") from None
        if rep.title:
            # Recompute, so baselines from older runs compare by today's rule.
            rep = replace(rep, signature=make_signature(rep))
        yield rep
