"""results/<run>/index.html: the run as a person looks at it.

A static page (no server, no script, nothing fetched: it works opened from
disk, from a CI artifact store or behind LAVA's pages), made with Debian's
python3-jinja2 from results.json alone:

- the matrix, triggers x suites, each cell the verdict as text and colour,
  the signature on hover, a link to the trigger's page;
- the diff against the run before with the same suites (or --baseline):
  new FAIL/ERROR, fixed, changed verdict or signature, first run;
- the run's facts (suites.toml, the Makefile's fragments, results.json's meta);
- page/<suite>/<TRIGGER>.html per trigger: verdict and reason, the reports
  as parsed, the console around them with the lines the verdict used
  marked, a link to the whole console, the golden file with its reasoning.

`usercopy-lab run` writes it after results.json; again by hand:

  usercopy-lab page run RUN_DIR [--baseline RUN]

Exit status 0 written, 2 bad input (one line: a missing results.json, a
--baseline that is no run).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..model import TriggerResult, Verdict
from .page_console import excerpt, golden_view
from .page_diff import DiffKind, DiffRow, diff_runs
from .page_io import environment, write_html
from .page_model import (RESULTS_JSON, RunResults, baseline_run, load_run,
                         previous_run)
from .run_facts import run_facts

REPO = Path(__file__).resolve().parents[3]
INDEX = "index.html"
PAGES = "page"
EXTRA_FILES = ("results.ktap", "junit.xml", "selftests-comparison.md", "seeds/slab-audit.txt")


@dataclass(frozen=True)
class Cell:
    result: TriggerResult
    href: str
    change: DiffKind | None


@dataclass(frozen=True)
class Diff:
    baseline: RunResults | None
    how: str                        # why that baseline, or why none
    rows: list[DiffRow]
    baseline_href: str


def trigger_href(r: TriggerResult) -> str:
    return f"{PAGES}/{r.suite}/{r.trigger}.html"


def _relative(target: Path, start: Path) -> str:
    """target as a link from a page in start (relative, so the folder can move)."""
    return Path(os.path.relpath(target.resolve(), start.resolve())).as_posix()


def choose_baseline(run: RunResults, baseline: str | None) -> Diff:
    if baseline:
        base = baseline_run(baseline, run.path.resolve().parent)
        how = "--baseline"
    else:
        base = previous_run(run)
        how = "the run before with the same suites"
    if base is None:
        return Diff(None, "First run: no earlier finished run of these suites in "
                    f"{run.path.resolve().parent}", [], "")
    # its page when it has one (a run from before the pages: its results.json)
    target = base.path / INDEX if (base.path / INDEX).is_file() else base.path / RESULTS_JSON
    href = _relative(target, run.path)
    return Diff(base, how, diff_runs(run, base), href)


def write_page(run_dir: Path, baseline: str | None = None, repo: Path = REPO) -> Path:
    """Write RUN_DIR/index.html and RUN_DIR/page/*/*.html; the index's path.
    PageError for a run or baseline that cannot be read."""
    run = load_run(run_dir)
    diff = choose_baseline(run, baseline)
    changes = {(row.suite, row.trigger): row for row in diff.rows}
    env = environment()
    cells = {(r.suite, r.trigger): Cell(r, trigger_href(r),
                                        changes[(r.suite, r.trigger)].kind
                                        if (r.suite, r.trigger) in changes else None)
             for r in run.results}
    triggers = list(dict.fromkeys(r.trigger for r in run.results))
    suites = list(dict.fromkeys([s for s in run.suites if any(k[0] == s for k in cells)]
                                + [r.suite for r in run.results]))
    facts = run_facts(run, repo)
    extra = [(name, name) for name in EXTRA_FILES if (run_dir / name).is_file()]
    text = env.get_template("run.html.j2").render(
        run=run, facts=facts, diff=diff, cells=cells, triggers=triggers, suites=suites,
        verdicts=[v.value for v in Verdict], extra_files=extra,
        hrefs={k: c.href for k, c in cells.items()})
    template = env.get_template("trigger.html.j2")
    for r in run.results:
        page = run_dir / trigger_href(r)
        page.parent.mkdir(parents=True, exist_ok=True)
        console = run.console(r)
        name = console.resolve()
        if name.is_relative_to(run_dir.resolve()):
            name = name.relative_to(run_dir.resolve())
        page.write_text(template.render(
            r=r, run_id=run.run_id, up="../../", log_href=_relative(console, page.parent),
            log_name=str(name), excerpt=excerpt(r, console), golden=golden_view(r.golden, repo),
            change=changes.get((r.suite, r.trigger))), encoding="utf-8")
    return write_html(run_dir / INDEX, text)
