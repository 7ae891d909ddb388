"""results/<run>/hunt/index.html: a hunt (make hunt, make hunt-smoke) as a
page, from the hunt's own hunt/findings.json (hunt/harvest.py writes it):
what ran, the coverage per cache with a region in both directions as a
chart (python3-matplotlib SVG, inline) with its numbers as a table, the
regions no copy reached with what would reach them, the findings and the
guests, each linked to its console.

  usercopy-lab page hunt RUN_DIR

(hunt/ and output/ do not import each other: this reads the JSON.)  Exit
status 0 written, 2 bad input (one line).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .charts import Chart, CoverageBar, coverage_chart
from .page_io import environment, read_json, write_html

FINDINGS = Path("hunt") / "findings.json"
PAGE = Path("hunt") / "index.html"
OTHER_FILES = ("findings.md", "findings.json", "triage.txt", "plan.json")


@dataclass(frozen=True)
class CacheRow:
    name: str
    region: str
    exposure: dict[str, Any] | None      # hits, bytes, workloads, foreign, tasks
    overwrite: dict[str, Any] | None


def cache_rows(coverage: dict[str, Any]) -> list[CacheRow]:
    rows = []
    for c in coverage.get("caches") or []:
        region = ("the whole object" if c.get("whole_object") else
                  f"{c.get('useroffset')}..+{c.get('usersize')} of {c.get('object_size')}")
        rows.append(CacheRow(str(c["name"]), region, c.get("exposure"), c.get("overwrite")))
    return rows


def _hits(side: dict[str, Any] | None) -> int:
    return int(side.get("hits") or 0) if side else 0


def write_hunt_page(run_dir: Path) -> Path:
    data = read_json(run_dir / FINDINGS, "a hunt's run folder")
    coverage = data.get("coverage") or {}
    rows = cache_rows(coverage)
    chart: Chart | None = None
    if coverage.get("measured") and rows:
        chart = coverage_chart([CoverageBar(r.name, _hits(r.exposure), _hits(r.overwrite))
                                for r in rows])
    hunt = run_dir / "hunt"

    def link(rel: str | None) -> str:
        """A path of findings.json (from the run's folder) as a link from
        hunt/index.html, "" when that file is not there."""
        return f"../{rel}" if rel and (run_dir / rel).is_file() else ""

    text = environment().get_template("hunt.html.j2").render(
        d=data, coverage=coverage, rows=rows, chart=chart, link=link,
        files=[name for name in OTHER_FILES if (hunt / name).is_file()])
    return write_html(run_dir / PAGE, text)
