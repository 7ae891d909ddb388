"""Every report layout, one fixture each, table-driven.

Each harness/tests/testdata/reports/*.txt is in syzkaller's testdata shape:
'#' comment lines (where the log comes from, why the expectations are
what they are), expectation lines, a blank line, then the raw log; or,
instead of a log, "LOG: path" naming a captured console elsewhere in
testdata (relative to the fixture).  Expectations, per report in order:

  REPORTS: n           how many reports the log holds
  REPORT: i            starts the expectations of report i (1-based)
  LINE, KIND, TITLE, SYZ (syz_title), GUILTY, TRUNCATED (Y/N),
  SECONDARY (Y/N), DIRECTION, OBJECT, CACHE, OFFSET, SIZE (usercopy
  reports), DIRECTION_SOURCE (usercopy reports, optional: printed,
  inferred or empty), FRAMES (the reliable frames of the report's own trace)

Every key written must match exactly.  UPDATE_FIXTURES=1 rewrites the
expectation lines from what the parser says now (comments and LOG: kept),
for review with git diff; the test then skips instead of passing.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from usercopy_lab.reports.oops_parser import iter_stream
from usercopy_lab.model import Report

FIXTURES = Path(__file__).parent / "testdata" / "reports"
UPDATE = os.environ.get("UPDATE_FIXTURES") == "1"
USERCOPY_KEYS = ("DIRECTION", "OBJECT", "CACHE", "OFFSET", "SIZE")


@dataclass
class Fixture:
    path: Path
    comments: list[str] = field(default_factory=list)
    log_ref: str | None = None
    count: int | None = None
    expected: list[dict[str, str]] = field(default_factory=list)
    log: bytes = b""


def load(path: Path) -> Fixture:
    data = path.read_bytes()
    head, sep, body = data.partition(b"\n\n")
    fx = Fixture(path, log=body)
    current: dict[str, str] | None = None
    for num, raw in enumerate(head.decode().split("\n"), 1):
        if raw.startswith("#") or not raw.strip():
            fx.comments.append(raw)
            continue
        key, colon, value = raw.partition(": ")
        if not colon:
            key, value = raw.rstrip(":"), ""
        if key == "LOG":
            fx.log_ref = value
        elif key == "REPORTS":
            fx.count = int(value)
        elif key == "REPORT":
            current = {}
            fx.expected.append(current)
        else:
            if current is None:
                current = {}
                fx.expected.append(current)
            if key in current:
                raise ValueError(f"{path}:{num}: {key} twice")
            current[key] = value
    if fx.log_ref:
        fx.log = (path.parent / fx.log_ref).read_bytes()
    return fx


def observed(rep: Report) -> dict[str, str]:
    out = {
        "LINE": str(rep.line), "KIND": rep.kind, "TITLE": rep.title, "SYZ": rep.syz_title,
        "GUILTY": rep.guilty_frame or "", "TRUNCATED": "Y" if rep.truncated else "N",
        "SECONDARY": "Y" if rep.secondary else "N",
    }
    if rep.kind.startswith("usercopy"):
        for key in USERCOPY_KEYS:
            value = getattr(rep, key.lower())
            out[key] = "" if value is None else str(value)
        out["DIRECTION_SOURCE"] = rep.direction_source or ""
    out["FRAMES"] = " ".join(rep.frames)
    return out


def rewrite(fx: Fixture, reports: list[Report]) -> None:
    lines = [c for c in fx.comments if c.startswith("#")]
    if fx.log_ref:
        lines.append(f"LOG: {fx.log_ref}")
    lines.append(f"REPORTS: {len(reports)}")
    for i, rep in enumerate(reports, 1):
        if len(reports) > 1:
            lines.append(f"REPORT: {i}")
        lines += [f"{k}: {v}".rstrip() for k, v in observed(rep).items()]
    text = "\n".join(lines) + "\n\n"
    fx.path.write_bytes(text.encode() + (b"" if fx.log_ref else fx.log))


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.txt")), ids=lambda p: p.stem)
def test_fixture(path: Path) -> None:
    fx = load(path)
    reports = list(iter_stream(io.BytesIO(fx.log), path.name))
    if UPDATE:
        rewrite(fx, reports)
        pytest.skip(f"rewrote {path.name}; review with git diff")
    assert any(c.startswith("# Source:") for c in fx.comments), "say where the log came from"
    assert fx.count is not None, "no expectations (UPDATE_FIXTURES=1 writes them)"
    got = [observed(r) for r in reports]
    assert len(reports) == fx.count, [g["TITLE"] for g in got]
    assert len(fx.expected) == fx.count
    for i, (want, seen) in enumerate(zip(fx.expected, got), 1):
        required = {"KIND", "TITLE", "SYZ", "GUILTY", "TRUNCATED", "SECONDARY"}
        if seen["KIND"].startswith("usercopy"):
            required.update(USERCOPY_KEYS)
        assert required <= want.keys(), f"report {i}: say {sorted(required - want.keys())}"
        diffs = {k: (v, seen.get(k)) for k, v in want.items() if seen.get(k, "") != v}
        assert not diffs, f"report {i}: key: (expected, seen) {diffs}"


def test_every_fixture_is_named_and_there_are_many():
    names = sorted(p.name for p in FIXTURES.glob("*.txt"))
    assert len(names) >= 30, names
