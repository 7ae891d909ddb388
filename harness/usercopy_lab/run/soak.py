"""Soak: run the suites N times and count each trigger's verdicts.

    usercopy-lab soak --runs 20 --results results/soak [run options]

Every run is an ordinary `usercopy-lab run` (all options after the soak's
own are passed on) into its own folder under --results.  Then one line per
trigger: its verdict counts over the runs.  A trigger whose verdict differs
between runs is a flake.  Exit status: 0 when every trigger had one verdict
every time and none failed; 1 for a flake or a trigger that failed every
time; 2 when a run could not be done; 130 on Ctrl-C.
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TextIO

from tabulate import tabulate

from ..inputs import IntRange, read_bounded
from ..judge.verdict import FAILING

RUNS = IntRange("--runs", 1, 10000)
RESULTS_LIMIT = 64 << 20     # one results.json: 0.5 MB for the 312 guests of make test


@dataclass
class TriggerCounts:
    name: str                                   # suite/trigger
    verdicts: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)

    @property
    def flaky(self) -> bool:
        return len(self.verdicts) > 1

    @property
    def failing(self) -> bool:
        return any(v in FAILING for v in self.verdicts)


def count(result_files: list[Path]) -> dict[str, TriggerCounts]:
    """Verdict counts per suite/trigger, in the order of the first run."""
    table: dict[str, TriggerCounts] = {}
    for path in result_files:
        for t in json.loads(read_bounded(path, RESULTS_LIMIT, what="results.json"))["triggers"]:
            key = f"{t['suite']}/{t['name']}"
            entry = table.setdefault(key, TriggerCounts(key))
            entry.verdicts[t["verdict"]] += 1
            if t.get("fault"):
                entry.faults[t["fault"]] += 1
    return table


def print_counts(table: dict[str, TriggerCounts], runs: int, out: TextIO) -> None:
    """One row per trigger: its verdict counts, its faults, FLAKE when it is one."""
    rows = []
    for entry in table.values():
        counts = " ".join(f"{v}x{n}" for v, n in sorted(entry.verdicts.items()))
        missing = runs - sum(entry.verdicts.values())
        if missing:
            counts += f" missing x{missing}"
        faults = ", ".join(f"{f}x{n}" for f, n in sorted(entry.faults.items()))
        rows.append([entry.name, counts, f"({faults})" if faults else "",
                     "FLAKE" if entry.flaky or missing else ""])
    if rows:
        for line in tabulate(rows, tablefmt="plain", disable_numparse=True).splitlines():
            print(line.rstrip(), file=out)


def soak(runs: int, results: Path, run_args: list[str],
         run: Callable[[list[str]], int]) -> int:
    """RUNS runs of `usercopy-lab run RUN_ARGS` (RUN: the CLI's own entry),
    each in a folder under RESULTS/<soak-id>/; the verdicts counted per
    trigger.  0 every trigger the same every run, 1 a flake or a trigger
    failing every run, else the status of the run that could not be done."""
    root = results / time.strftime("%Y%m%d-%H%M%S")
    walls = []
    start = time.monotonic()
    for i in range(1, runs + 1):
        print(f"soak: run {i}/{runs}", flush=True)
        t0 = time.monotonic()
        rc = run(["run", "--results", str(root), *run_args])
        walls.append(time.monotonic() - t0)
        if rc not in (0, 1):
            print(f"soak: run {i} exited {rc}; stopping", file=sys.stderr)
            return rc
    files = sorted(p for p in root.glob("*/results.json") if p.parent.name != "latest")
    table = count(files)
    print(f"\nsoak: {len(files)} runs in {time.monotonic() - start:.0f}s "
          f"(per run: median {statistics.median(walls):.1f}s, max {max(walls):.1f}s); "
          f"results under {root}")
    print_counts(table, len(files), sys.stdout)
    flakes = [e.name for e in table.values() if e.flaky or sum(e.verdicts.values()) != len(files)]
    failing = [e.name for e in table.values() if e.failing and e.name not in flakes]
    print(f"soak: {len(table)} triggers, {len(flakes)} flaky, "
          f"{len(failing)} failing every run")
    return 1 if flakes or failing else 0

