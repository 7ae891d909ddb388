"""Real-world usercopy reports nobody tuned against (testdata/usercopy-heldout).

Each file holds one public log (a mail body, a commit message, a
tracker or write-up excerpt) and the fields a fully right triage gives its
first usercopy report: KIND, DIRECTION, OBJECT, CACHE, OFFSET, SIZE,
GUILTY, TRUNCATED.  The count of fully right reports is exact, and every
file that is not fully right is listed in known-misses.tsv with the
fields that differ and why (see the directory's README and docs/triage.md).
"""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from usercopy_lab.reports.oops_parser import iter_stream
from usercopy_lab.model import Report

HELDOUT = Path(__file__).parent / "testdata" / "usercopy-heldout"
KEYS = ("KIND", "DIRECTION", "OBJECT", "CACHE", "OFFSET", "SIZE", "GUILTY", "TRUNCATED")
FULLY_RIGHT = 130


def load(path: Path) -> tuple[dict[str, str], bytes]:
    head, _, log = path.read_bytes().partition(b"\n\n")
    want = {}
    for line in head.decode().splitlines():
        if line.startswith("#"):
            continue
        key, _, value = line.partition(":")
        want[key] = value.strip()
    return want, log


def seen(rep: Report | None) -> dict[str, str]:
    if rep is None:
        return {k: "" for k in KEYS}
    return {"KIND": rep.kind, "DIRECTION": rep.direction or "", "OBJECT": rep.object or "",
            "CACHE": rep.cache or "", "OFFSET": "" if rep.offset is None else str(rep.offset),
            "SIZE": "" if rep.size is None else str(rep.size), "GUILTY": rep.guilty_frame or "",
            "TRUNCATED": "Y" if rep.truncated else "N"}


def differences(path: Path) -> dict[str, tuple[str, str]]:
    want, log = load(path)
    assert set(want) == set(KEYS), path.name
    reps = list(iter_stream(io.BytesIO(log), path.name))
    rep = next((r for r in reps if r.kind.startswith("usercopy")), None)
    got = seen(rep)
    return {k: (want[k], got[k]) for k in KEYS if want[k] != got[k]}


def known_misses() -> dict[str, str]:
    out = {}
    for line in (HELDOUT / "known-misses.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            name, keys, reason = line.split("\t")
            assert reason.strip()
            out[name] = keys
    return out


FILES = sorted(HELDOUT.glob("*.txt"))


def test_there_are_enough():
    assert len(FILES) >= 30


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_heldout_report(path):
    diffs = differences(path)
    listed = known_misses().get(path.stem)
    if listed is None:
        assert not diffs, f"(expected, seen): {diffs}"
    else:
        assert sorted(diffs) == listed.split(","), f"listed {listed}, now {diffs}"


def test_fully_right_count():
    right = sum(1 for p in FILES if not differences(p))
    assert right == FULLY_RIGHT == len(FILES) - len(known_misses())
