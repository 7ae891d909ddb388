"""What one hunt guest's console says: the workload's lines, the kernel's
reports, the fallback's one-line repeats, the coverage histogram and the
slab table (hunt-run's protocol, initramfs-src/hunt-run).

Reports come from the same parser as everywhere else (oops_parser); the
fallback's repeats ("usercopy: whitelist violation again: ...", printed
instead of a second WARNING for a cache and direction that already warned
in this boot) are not reports, so they are read here, with the fields they
carry (no call trace).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..audit.slab_audit import AuditError, SlabTable, parse_console
from ..model import Report
from ..protocol import HUNT_PREFIX
from ..reports import iter_reports, normalize, program_lines, read_markers, split_lines
from .coverage import Histogram, parse_histogram

PREFIX = HUNT_PREFIX
_AGAIN = re.compile(r"usercopy: whitelist violation again: (exposure|overwrite) (?:from|to) "
                    r"(.+?) '([^']*)' \(offset (\d+), size (\d+)\)")
_WORKLOAD = re.compile(r"workload (\S+) seed (\d+) seconds (\d+)$")
_EXIT = re.compile(r"workload exit (\d+) \(after (\d+)s\)")


@dataclass(frozen=True)
class Repeat:
    """One "whitelist violation again" line."""

    line: int
    direction: str
    object: str
    cache: str
    offset: int
    size: int


@dataclass
class GuestConsole:
    log: str
    workload: str | None = None
    seed: int | None = None
    seconds: int | None = None
    workload_exit: int | None = None
    ran_seconds: int | None = None
    coverage_note: str | None = None     # "armed: ..." / "off: why"
    ended: bool = False                  # init's END marker for hunt-run
    reports: list[Report] = field(default_factory=list)
    repeats: list[Repeat] = field(default_factory=list)
    histogram: Histogram | None = None
    table: SlabTable | None = None
    table_problem: str | None = None
    output: list[str] = field(default_factory=list)   # the workload's last lines
    problems: list[str] = field(default_factory=list)  # FAIL lines of hunt-run


def read_guest(path: Path) -> GuestConsole:
    lines = split_lines(path.read_bytes())
    out = GuestConsole(str(path))
    out.reports = list(iter_reports(lines, str(path)))
    markers = read_markers(lines)
    out.ended = markers.ended is not None
    prog = program_lines(lines)
    for num, raw in enumerate(lines, 1):
        if "violation again" in raw and (m := _AGAIN.search(normalize(raw))):
            out.repeats.append(Repeat(num, m.group(1), m.group(2), m.group(3),
                                      int(m.group(4)), int(m.group(5))))
    for line in prog:
        pos = line.find(PREFIX)
        if pos < 0:
            continue
        body = line[pos + len(PREFIX):].rstrip()
        if m := _WORKLOAD.match(body):
            out.workload, out.seed, out.seconds = m.group(1), int(m.group(2)), int(m.group(3))
        elif m := _EXIT.match(body):
            out.workload_exit, out.ran_seconds = int(m.group(1)), int(m.group(2))
        elif body.startswith("coverage armed") or body.startswith("coverage off"):
            out.coverage_note = body[len("coverage "):]
        elif body.startswith("out: "):
            out.output.append(body[len("out: "):])
        elif body.startswith("FAIL:"):
            out.problems.append(body)
    out.histogram = parse_histogram(prog)
    try:
        out.table = parse_console(lines)
    except AuditError as exc:
        out.table_problem = str(exc)
    return out
