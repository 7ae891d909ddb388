"""run.sh's verdicts next to the golden files' verdicts, trigger by trigger.

A run with selftests suites (judge/selftests.py) writes
selftests-comparison.md and .json: for every trigger, our runner's verdict
(the trigger suite on the same kernel and command line), run.sh's verdict
with each tests.txt, and why they differ when they do.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..judge.selftests import KINDS, RunShOutput, grep_eqi, lines_after_start
from ..judge.verdict import ERROR, FAIL, PASS, SKIP, XFAIL
from ..model import TriggerResult
from ..run.suite import Suite

COMPARISON_MD = "selftests-comparison.md"
COMPARISON_JSON = "selftests-comparison.json"


@dataclass
class Cell:
    """One run.sh column of a comparison row."""

    verdict: str
    expect: str | None     # pattern run.sh looked for
    said: str              # run.sh's verdict line
    log: str


@dataclass
class ComparisonRow:
    trigger: str
    golden_verdict: str | None         # our runner's verdict (reference suite)
    golden_summary: str
    runsh: dict[str, Cell]             # kind -> cell
    why: list[str] = field(default_factory=list)


def _passes(verdict: str | None) -> bool | None:
    """Did it accept the trigger's behaviour: PASS/XFAIL yes, FAIL/ERROR no."""
    if verdict in (PASS, XFAIL):
        return True
    if verdict in (FAIL, ERROR):
        return False
    return None


def _why(kind: str, cell: Cell, ref: TriggerResult | None) -> str | None:
    if ref is None:
        return None
    if cell.verdict == ERROR or ref.verdict == ERROR:
        return f"{kind}: a guest did not finish ({cell.said if cell.verdict == ERROR else ref.summary})"
    mine, theirs = _passes(ref.verdict), _passes(cell.verdict)
    if cell.verdict == SKIP and ref.verdict != SKIP:
        return f"{kind}: {cell.said}"
    if mine is None or theirs is None or mine == theirs:
        return None
    if theirs and not mine:
        return (f"{kind}: run.sh only needs {cell.expect!r} somewhere in the new dmesg "
                f"lines; the golden file also checks: " + "; ".join(ref.diffs))
    # run.sh failed where the golden file passed.
    why = f"{kind}: run.sh did not find {cell.expect!r} in the new dmesg lines"
    try:
        console = Path(cell.log).read_text(errors="replace")
    except OSError:
        return why
    new = lines_after_start(console)
    if cell.expect and cell.expect.lower() in new.lower() and not grep_eqi(cell.expect, new):
        why += (" although that text is there literally: as a POSIX ERE it does not "
                "match itself (unescaped ( ) [ ] . * + ? | in tests.txt)")
    return why + f"; the golden file passed on {ref.summary!r}"


def compare(results: list[TriggerResult], suites: dict[str, Suite]) -> list[ComparisonRow]:
    """One row per trigger of the run's selftests suites, with the verdict of
    the run's trigger suite on the same kernel and command line."""
    by_suite: dict[str, dict[str, TriggerResult]] = {}
    for r in results:
        by_suite.setdefault(r.suite, {})[r.trigger] = r
    st = [s for s in suites.values() if s.selftests and s.name in by_suite]
    rows: dict[str, ComparisonRow] = {}
    for s in st:
        # every trigger suite of the run on that machine, in suites.toml's
        # order; a trigger's reference is the first that ran it (a
        # checks-only suite such as [seeds] shares the kernel and command line)
        refs = [by_suite[o.name] for o in suites.values() if not o.selftests
                and (o.kernel, o.cmdline) == (s.kernel, s.cmdline) and o.name in by_suite]
        for name, r in by_suite[s.name].items():
            ref = next((ran[name] for ran in refs if name in ran), None)
            row = rows.setdefault(name, ComparisonRow(
                name, ref.verdict if ref else None,
                (ref.summary if ref else "not run in this run"), {}))
            lines = Path(r.log).read_text(errors="replace").splitlines() \
                if Path(r.log).is_file() else []
            out = RunShOutput.parse(lines)
            cell = Cell(r.verdict, out.expect, out.verdict_line or r.summary, r.log)
            row.runsh[s.selftests] = cell
            if (why := _why(s.selftests, cell, ref)):
                row.why.append(why)
    return list(rows.values())


def comparison_markdown(rows: list[ComparisonRow]) -> str:
    kinds = [k for k in KINDS if any(k in r.runsh for r in rows)]
    head = ["trigger", "golden (our runner)"] + \
        [f"run.sh + {'tree' if k == 'tree' else 'lkdtm-tests'}/tests.txt" for k in kinds] + \
        ["why they differ"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.trigger, r.golden_verdict or "-"]
        for k in kinds:
            c = r.runsh.get(k)
            cells.append(f"{c.verdict} (`{c.expect}`)" if c and c.expect else
                         (c.verdict if c else "-"))
        cells.append("<br>".join(r.why) if r.why else "")
        out.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return "\n".join(out) + "\n"


def write_comparison(results: list[TriggerResult], suites: dict[str, Suite],
                     out_dir: Path) -> list[ComparisonRow]:
    rows = compare(results, suites)
    if rows:
        (out_dir / COMPARISON_MD).write_text(
            "# run.sh (tools/testing/selftests/lkdtm) against the golden files\n\n"
            "run.sh passes when `grep -E -qi` finds the pattern in the dmesg lines "
            "the test added; a golden file pins the report kind, cache, offset, "
            "size, bug site, frames, LKDTM lines and outcome.\n\n"
            + comparison_markdown(rows))
        (out_dir / COMPARISON_JSON).write_text(
            json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    return rows
