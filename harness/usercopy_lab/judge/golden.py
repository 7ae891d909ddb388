"""Golden signatures (expected-oops/<suite>/<TRIGGER>.txt): load and match.

A golden file is "key: value" lines; lines starting with '#'
are comments.  File-level keys:

  trigger:      NAME (must equal the file name)
  outcome:      killed | returned | xfail | unknown-trigger (OUTCOMES)
  lkdtm-before: text     LKDTM line that must appear, in this order, before
                          the first report (repeatable)
  lkdtm-expect: text     LKDTM line that must appear somewhere (repeatable)
  lkdtm-absent: text     LKDTM line prefix that must not appear (repeatable);
                          "FAIL:" is always absent unless a lkdtm-expect
                          line names it
  report:       KIND | none   starts the expectation for the next report

Report keys (after a "report:" line): direction, object, cache, offset,
size, bug-site (file, or file:line, prefix match), rip, frames (function
names that must appear in this order in the call trace; others may sit
between them), offset-base (instead of a fixed offset: the offset must be
the address LKDTM printed in its "attempting bad copy ... from kernel X:
ADDR" line minus this base; for kernel text, whose offsets move with every
build; a report has offset or offset-base, not both).

KEYS below is the format as data.  Every key appears once per file (file
keys) or once per report block (report keys), except lkdtm-before,
lkdtm-expect, lkdtm-absent and report.  An unknown or repeated key, a value
out of its range, a file that is not UTF-8, a directory named *.txt and a
file name that is not TRIGGER.txt ([A-Z0-9_]+) are GoldenErrors naming
file:line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..inputs import (GOLDEN_FILES_MAX, GOLDEN_LIMIT, TRIGGER, InputError, list_files, read_text,
                      shown)
from ..model import (DIRECTIONS, KINDS, OUTCOMES, Direction, Outcome, Report, ReportKind,
                     usercopy_line)


@dataclass(frozen=True)
class _Key:
    in_report: bool     # a key of the current report block, else of the file
    repeat: bool = False  # may appear more than once (per file or per block)


# The whole format: every key, where it belongs, whether it repeats.
KEYS: dict[str, _Key] = {
    "trigger": _Key(False), "outcome": _Key(False),
    "lkdtm-before": _Key(False, repeat=True), "lkdtm-expect": _Key(False, repeat=True),
    "lkdtm-absent": _Key(False, repeat=True), "report": _Key(False, repeat=True),
    "direction": _Key(True), "object": _Key(True), "cache": _Key(True),
    "offset": _Key(True), "size": _Key(True), "bug-site": _Key(True),
    "rip": _Key(True), "frames": _Key(True), "offset-base": _Key(True),
}


class GoldenError(InputError):
    """A golden file that cannot be read; the message names file and line."""


@dataclass
class ExpectedReport:
    """One "report:" block of a golden file: its kind, its keys' values
    as written, and the frames it names."""

    kind: ReportKind
    fields: dict[str, str] = field(default_factory=dict)
    frames: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.kind = ReportKind(self.kind)

    @property
    def direction(self) -> Direction | None:
        """The block's direction key, if it has one."""
        value = self.fields.get("direction")
        return Direction(value) if value is not None else None

    def one_line(self) -> str:
        f = self.fields
        if self.kind.is_usercopy:
            return usercopy_line(self.kind, f.get("direction", "?"), f.get("object", "?"),
                                 f.get("cache"), f.get("offset", f.get("offset-base", "?")),
                                 f.get("size", "?"))
        return f"{self.kind} in {f.get('rip', '?')}"


@dataclass
class Golden:
    path: Path
    trigger: str
    outcome: Outcome
    reports: list[ExpectedReport] = field(default_factory=list)
    lkdtm_before: list[str] = field(default_factory=list)
    lkdtm_expect: list[str] = field(default_factory=list)
    lkdtm_absent: list[str] = field(default_factory=list)
    # Titles of reports the kernel prints as a consequence of the expected
    # ones, after them, early or late enough that a capture may or may not
    # hold them: tolerated after the last expected report, never instead of
    # one.  Set by the suite (suites.toml follow_on), not by golden files.
    follow_on: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.outcome = Outcome(self.outcome)

    def one_line(self) -> str:
        if not self.reports:
            return f"no report, {self.outcome}"
        return "; ".join(r.one_line() for r in self.reports)


def load(path: Path) -> Golden:
    problem = TRIGGER.problem(path.stem) if path.suffix == ".txt" else "not a .txt file"
    if problem:
        raise GoldenError(f"{shown(path, None)}: a golden file is named TRIGGER.txt: "
                          f"{problem}")
    trigger = ""
    outcome: Outcome | None = None
    reports: list[ExpectedReport] = []
    before: list[str] = []
    expect: list[str] = []
    absent: list[str] = []
    saw_none = False
    seen: dict[str, int] = {}       # key -> line, for the file and the current block
    file = shown(path, None)
    text = read_text(path, GoldenError, GOLDEN_LIMIT, "golden file")
    for num, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        where = f"{file}:{num}"
        if not sep or not value:
            raise GoldenError(f"{where}: expected 'key: value', got '{shown(raw, 80)}'")
        spec = KEYS.get(key)
        if spec is None:
            raise GoldenError(f"{where}: unknown key '{shown(key)}' (known: {', '.join(KEYS)})")
        if spec.in_report and not reports:
            raise GoldenError(f"{where}: '{key}' before any 'report:' line")
        if not spec.repeat and key in seen:
            raise GoldenError(f"{where}: '{key}' repeated (first on line {seen[key]})")
        seen[key] = num
        if key == "trigger":
            trigger = value
        elif key == "outcome":
            if value not in OUTCOMES:
                raise GoldenError(f"{where}: outcome must be one of {', '.join(OUTCOMES)}")
            outcome = Outcome(value)
        elif key == "lkdtm-before":
            before.append(value)
        elif key == "lkdtm-expect":
            expect.append(value)
        elif key == "lkdtm-absent":
            absent.append(value)
        elif key == "report":
            seen = {k: n for k, n in seen.items() if not KEYS[k].in_report}
            if value == "none":
                saw_none = True
            elif value not in KINDS:
                raise GoldenError(f"{where}: report kind must be 'none' or one of {', '.join(KINDS)}")
            else:
                reports.append(ExpectedReport(kind=ReportKind(value)))
        elif key == "frames":
            reports[-1].frames.extend(value.split())
        else:
            reports[-1].fields[key] = _report_value(where, key, value, reports[-1])
    if trigger != path.stem:
        raise GoldenError(f"{file}: 'trigger: {shown(trigger)}' does not match the file name")
    if outcome is None:
        raise GoldenError(f"{file}: no 'outcome:' line")
    if saw_none == bool(reports):
        raise GoldenError(f"{file}: needs either 'report: none' or report blocks, not both")
    return Golden(path, trigger, outcome, reports, before, expect, absent)


def _report_value(where: str, key: str, value: str, report: ExpectedReport) -> str:
    if key in ("offset", "size") and not value.isdigit():
        raise GoldenError(f"{where}: {key} must be a number")
    if key == "direction" and value not in DIRECTIONS:
        raise GoldenError(f"{where}: direction must be one of {', '.join(DIRECTIONS)}")
    if key == "offset-base":
        try:
            int(value, 16)
        except ValueError:
            raise GoldenError(f"{where}: offset-base must be hex") from None
    if {key, *report.fields} >= {"offset", "offset-base"}:
        raise GoldenError(f"{where}: a report has either 'offset' or 'offset-base', not both")
    return value


def load_dir(path: Path) -> dict[str, Golden]:
    path = Path(path)
    if not path.is_dir():
        raise GoldenError(f"{shown(path, None)}: golden directory does not exist")
    return {p.stem: load(p) for p in list_files(path, "*.txt", GOLDEN_FILES_MAX, GoldenError)}


def load_layered(dirs: list[Path] | tuple[Path, ...]) -> dict[str, Golden]:
    """Golden file per trigger from folders searched in order: a trigger's
    file in an earlier folder (a variant's own) overrides later ones."""
    found: dict[str, Golden] = {}
    for folder in reversed(dirs):
        found.update(load_dir(folder))
    return found


def match_expected(exp: ExpectedReport, report: Report) -> list[str]:
    """Field-by-field comparison; each mismatch reads 'field: expected X, saw Y'.

    An offset-base is checked against report.lkdtm_address, the kernel
    address LKDTM printed for its bad copy before the report.
    """
    diffs: list[str] = []
    if report.kind != exp.kind:
        diffs.append(f"kind: expected {exp.kind}, saw {report.kind}")
    seen = {"direction": report.direction, "object": report.object,
            "cache": report.cache, "offset": report.offset, "size": report.size,
            "bug-site": report.bug_site, "rip": report.rip}
    for key, want in exp.fields.items():
        if key == "offset-base":
            if report.lkdtm_address is None:
                diffs.append("offset: golden uses offset-base but LKDTM printed no address")
                continue
            key, want = "offset", str(report.lkdtm_address - int(want, 16))
        got = seen[key]
        if key == "bug-site":
            ok = got is not None and (got == want or got.startswith(want + ":"))
        else:
            ok = got is not None and str(got) == want
        if not ok:
            diffs.append(f"{key}: expected {want!r}, saw {got!r}")
    missing = _missing_in_order(exp.frames, report.frames)
    if missing:
        diffs.append(f"frames: expected {' '.join(exp.frames)} in this order; "
                     f"missing from {missing!r} on; saw {' '.join(report.frames) or '(no trace)'}")
    if report.truncated:
        diffs.append("truncated: the report's call trace is cut off")
    return diffs


def match_report(golden: Golden, report: Report) -> list[str]:
    """Mismatches of report against the closest expected report of golden."""
    if not golden.reports:
        return [f"report: expected none, saw {report.kind}"]
    best = min((match_expected(e, report) for e in golden.reports), key=len)
    return best


def _missing_in_order(wanted: list[str], frames: list[str]) -> str | None:
    pos = 0
    for name in wanted:
        try:
            pos = frames.index(name, pos) + 1
        except ValueError:
            return name
    return None
