"""What a trigger's page shows of its files: the console around the
reports with the lines the verdict used marked, and the golden file with
its reasoning (the `#` lines) apart from the pinned keys."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ..model import TriggerResult
from ..protocol import END, START
from ..reports import split_lines

MAX_READ = 4 << 20          # a lab console is under 1 MB (log_reader.MAX_CONSOLE_MIB)
BEFORE, AFTER = 12, 6       # context lines around the marked ones
MAX_EXCERPT = 400           # lines: a longer excerpt is cut, the link has the rest


class Mark(Enum):
    """Why a console line is marked: it is in a parsed report, or it is
    init's marker whose outcome the verdict reads."""

    NONE = ""
    REPORT = "report"
    MARKER = "marker"


@dataclass(frozen=True)
class ConsoleLine:
    number: int             # 1-based, as results.json's line/end_line
    text: str
    mark: Mark
    report: int | None      # which report (1-based) the line belongs to


@dataclass(frozen=True)
class Excerpt:
    lines: list[ConsoleLine]
    total: int              # lines in the whole console
    missing: str            # why there is no console ("" when there is)


def read_lines(path: Path) -> list[str] | None:
    """The console's lines, numbered as the parser numbers them (QEMU's
    "\\r\\r\\n" is one line end), None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_READ)
    except OSError:
        return None
    return split_lines(data)


def excerpt(result: TriggerResult, console: Path) -> Excerpt:
    lines = read_lines(console)
    if lines is None:
        return Excerpt([], 0, f"{console.name}: not found beside results.json")
    marks: dict[int, tuple[Mark, int | None]] = {}
    for n, rep in enumerate(result.reports, 1):
        last = max(rep.end_line or rep.line, rep.line)
        for i in range(rep.line, last + 1):
            marks[i] = (Mark.REPORT, n)
    for i, text in enumerate(lines, 1):
        if START in text or END in text:
            marks.setdefault(i, (Mark.MARKER, None))
    report_lines = [i for i, (m, _) in marks.items() if m is Mark.REPORT]
    focus = report_lines or [i for i in marks if START not in lines[i - 1]] \
        or sorted(marks) or [len(lines)]
    first = max(1, min(focus) - BEFORE)
    last = min(len(lines), max(focus) + AFTER, first + MAX_EXCERPT - 1)
    shown = [ConsoleLine(i, lines[i - 1], *marks.get(i, (Mark.NONE, None)))
             for i in range(first, last + 1)]
    return Excerpt(shown, len(lines), "")


@dataclass(frozen=True)
class GoldenLine:
    text: str
    reasoning: bool         # a `#` comment: why the value is what it is


@dataclass(frozen=True)
class GoldenView:
    path: str               # as results.json names it
    read_from: str          # where the text came from ("" when not found)
    lines: list[GoldenLine]


def golden_view(golden: str | None, repo: Path) -> GoldenView | None:
    """The golden file results.json names; when that path is gone (a run
    copied elsewhere, a fixture), the file of the same name under this
    tree's expected-oops/, said so on the page."""
    if not golden:
        return None
    candidates = [Path(golden)]
    parts = Path(golden).parts
    if "expected-oops" in parts:
        candidates.append(repo.joinpath(*parts[parts.index("expected-oops"):]))
    for path in candidates:
        lines = read_lines(path) if path.is_file() else None
        if lines is not None:
            return GoldenView(golden, str(path), [GoldenLine(t, t.lstrip().startswith("#"))
                                                  for t in lines])
    return GoldenView(golden, "", [])
