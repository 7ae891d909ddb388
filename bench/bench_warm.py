"""Warm `make test` with nothing changed, step by step (issue #23).

Runs each prerequisite of `make test` (from make's database, in its order)
as its own `make STEP`, timed, after a first pass that brings everything up
to date.  Each step also runs its own prerequisites again (the kernels'
build stamps, the initramfs), so the sum is an upper bound of one warm
`make test`.  Printed beside the issue's old figures and its target, with
the CPU time of each step (user + system of every process it ran, QEMU
included): CPU / cores is the least wall time that step can take on this
machine however well it overlaps, so the table says which cuts need less
work rather than more parallelism.  Every step's output goes to
OUT/warm/STEP.log.
"""
from __future__ import annotations

import os
import re
import resource
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parents[1]
TARGET_WARM_TEST_S = 120.0
# Issue #23's figures (a warm make test before the issue, same machine).
OLD_S = {"unit-test": 35.0, "booted-test": 99.0, "suite": 60.0, "mutation-rds": 60.0,
         "total": 353.0}


@dataclass(frozen=True)
class Step:
    name: str
    seconds: float
    status: int
    cpu: float = 0.0     # user + system seconds of the step's processes


def test_steps() -> list[str]:
    """The prerequisites of `make test`, in order, from make's database;
    tests-beside-kernels (the kernels, with TESTS_BESIDE_KERNELS beside
    them) as those steps: warm, the kernels are up to date and they run
    alone, each timed on its own."""
    db = subprocess.run(["make", "-C", str(REPO), "-pq", "help"], capture_output=True,
                        text=True, timeout=60).stdout
    found = re.search(r"^test: (.*)$", db, re.M)
    if not found:
        raise SystemExit("bench: no test target in make's database")
    beside = re.search(r"^TESTS_BESIDE_KERNELS :?= (.*)$", db, re.M)
    steps = []
    for step in found.group(1).split():
        if step == "tests-beside-kernels":
            if not beside:
                raise SystemExit("bench: no TESTS_BESIDE_KERNELS in make's database")
            steps += beside.group(1).split()
        else:
            steps.append(step)
    return steps


def children_cpu() -> float:
    """CPU seconds of every reaped descendant so far (make reaps its
    commands, the harness its QEMUs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_step(step: str, make_vars: list[str], log: Path) -> Step:
    t0, cpu0 = time.monotonic(), children_cpu()
    with open(log, "w") as out:
        done = subprocess.run(["make", "-C", str(REPO), "--no-print-directory", *make_vars, step],
                              stdout=out, stderr=subprocess.STDOUT)
    return Step(step, time.monotonic() - t0, done.returncode, children_cpu() - cpu0)


def run_all(build_dir: Path, results: Path, out: Path, log: TextIO) -> bool:
    make_vars = [f"BUILD={build_dir}", f"RESULTS={results}"]
    folder = out / "warm"
    folder.mkdir(parents=True, exist_ok=True)
    # Nothing changed since this pass: it builds what is missing or stale.
    first = run_step("kernels", make_vars, folder / "first-pass-kernels.log")
    steps = [run_step(s, make_vars, folder / f"{s}.log") for s in test_steps()]
    total = sum(s.seconds for s in steps)
    cpu = sum(s.cpu for s in steps)
    cores = os.cpu_count() or 1
    print("\n== warm make test, nothing changed (each step its own make) ==", file=log)
    print(f"(first pass `make kernels`: {first.seconds:.1f}s)", file=log)
    print(f"{'step':14} {'wall':>7} {'cpu':>7} {'cpu/' + str(cores):>7}", file=log)
    for s in steps:
        old = f"  (old {OLD_S[s.name]:.0f}s)" if s.name in OLD_S else ""
        bad = f"  EXIT {s.status}" if s.status else ""
        print(f"{s.name:14} {s.seconds:6.1f}s {s.cpu:6.1f}s {s.cpu / cores:6.1f}s{old}{bad}",
              file=log)
    print(f"{'total':14} {total:6.1f}s {cpu:6.1f}s {cpu / cores:6.1f}s  (old "
          f"{OLD_S['total']:.0f}s; target <= {TARGET_WARM_TEST_S:.0f}s)", file=log)
    if cpu / cores > TARGET_WARM_TEST_S:
        print(f"CPU floor: {cpu:.0f} CPU seconds on {cores} cores cannot take less than "
              f"{cpu / cores:.0f}s of wall time: the target needs less work, not more overlap",
              file=log)
    ok = all(s.status == 0 for s in steps)
    if total > TARGET_WARM_TEST_S:
        ok = False
        print(f"TARGET MISSED: warm make test {total:.0f}s > {TARGET_WARM_TEST_S:.0f}s", file=log)
    return ok
