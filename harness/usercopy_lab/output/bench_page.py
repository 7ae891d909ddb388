"""results/bench-<time>/index.html: `make bench` as a page, from the files
the bench leaves in its folder (bench/bench.py): every speed run's
results.json (runs/<label>/<run>/, bench_speed.py) gives the time per
guest, drawn as box plots per run; overhead/samples.json
(bench_overhead.py) the guest instructions per call of every syscall case
in each configuration, drawn as the cost ratios on/off (hardening) and
on/nosplit (the split), median with the spread over the repetitions.
Charts are python3-matplotlib SVG, inline; the numbers are tables beside.

  usercopy-lab page bench BENCH_DIR

Exit status 0 written, 2 bad input (one line: a folder with neither).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from .charts import Chart, Ratio, distribution_chart, ratio_chart
from .page_io import environment, read_json, write_html
from .page_model import PageError, run_order

RUNS = "runs"
SAMPLES = Path("overhead") / "samples.json"
BASE = "on"                  # the configuration every ratio is taken from


@dataclass(frozen=True)
class SpeedRun:
    label: str               # bench_speed's: full-j1, snapshot-j2, all-suites ...
    results: str             # its results.json, from the bench folder
    wall: float
    seconds: list[float]     # per guest

    def quantile(self, q: float) -> float:
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True)
class CaseRow:
    case: str
    per_config: dict[str, float]        # median instructions per call
    ratios: dict[str, Ratio]            # "on/off" -> ratio


def speed_runs(bench: Path) -> list[SpeedRun]:
    """Each runs/<label>/ folder's run: latest, else its newest run id."""
    found = []
    for folder in sorted(p for p in (bench / RUNS).glob("*") if p.is_dir()):
        runs = [p for p in folder.iterdir() if run_order(p.name) and (p / "results.json").is_file()]
        chosen = folder / "latest" if (folder / "latest" / "results.json").is_file() else \
            max(runs, key=lambda p: run_order(p.name) or (), default=None)
        if chosen is None:
            continue
        data = read_json(chosen / "results.json", "a run's results.json")
        found.append(SpeedRun(folder.name, str((chosen / "results.json").relative_to(bench)),
                              float(data.get("wall_seconds") or 0.0),
                              [float(t["seconds"]) for t in data["triggers"]]))
    return found


def case_rows(samples: dict[str, list[dict[str, float]]]) -> list[CaseRow]:
    """Per case the median of each configuration and, per other
    configuration, the ratio on/that of each repetition's pair."""
    if BASE not in samples or not samples[BASE]:
        return []
    reps = min(len(v) for v in samples.values())
    rows = []
    for case in samples[BASE][0]:
        per = {c: statistics.median(s[case] for s in runs[:reps]) for c, runs in samples.items()}
        ratios = {}
        for other in (c for c in samples if c != BASE):
            pairs = [samples[BASE][i][case] / samples[other][i][case] for i in range(reps)]
            ratios[f"{BASE}/{other}"] = Ratio(case, statistics.median(pairs), min(pairs),
                                              max(pairs))
        rows.append(CaseRow(case, per, ratios))
    return rows


def write_bench_page(bench: Path) -> Path:
    runs = speed_runs(bench) if (bench / RUNS).is_dir() else []
    overhead = read_json(bench / SAMPLES, "a bench folder") if (bench / SAMPLES).is_file() else None
    if not runs and overhead is None:
        raise PageError(f"{bench}: neither {RUNS}/*/results.json nor {SAMPLES}: "
                        "not a `make bench` folder")
    rows = case_rows(overhead["samples"]) if overhead else []
    charts: list[Chart] = []
    if runs:
        charts.append(distribution_chart({r.label: r.seconds for r in runs}))
    if rows:
        names = list(rows[0].ratios)
        charts.append(ratio_chart({n: [r.ratios[n] for r in rows] for n in names}))
    text = environment().get_template("bench.html.j2").render(
        name=bench.resolve().name, runs=runs, rows=rows, charts=charts,
        configs=list(overhead["samples"]) if overhead else [],
        unit=overhead.get("unit", "") if overhead else "",
        reps=overhead.get("reps", "?") if overhead else 0,
        bench_txt=(bench / "bench.txt").is_file(), median=statistics.median)
    return write_html(bench / "index.html", text)
