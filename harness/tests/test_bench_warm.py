"""bench/bench_warm.py (make bench WARM=1): the steps it times are make
test's, and a missed target or a failed step is reported, not hidden."""
from __future__ import annotations

import importlib.util
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "bench_warm.py"
spec = importlib.util.spec_from_file_location("bench_warm", SCRIPT)
bw = importlib.util.module_from_spec(spec)
sys.modules["bench_warm"] = bw       # its dataclasses look their module up
spec.loader.exec_module(bw)  # type: ignore[union-attr]


def test_the_timed_steps_are_make_tests_prerequisites():
    if not shutil.which("make"):
        pytest.skip("no make")
    steps = bw.test_steps()
    assert steps[0] == "unit-test"
    for step in ("booted-test", "suite", "mutation-rds", "hunt-smoke"):
        assert step in steps


def test_a_slow_or_failed_step_misses_the_target(tmp_path, monkeypatch):
    monkeypatch.setattr(bw, "test_steps", lambda: ["unit-test", "suite"])
    times = {"kernels": bw.Step("kernels", 1.0, 0),
             "unit-test": bw.Step("unit-test", 30.0, 0, 58.0),
             "suite": bw.Step("suite", 100.0, 2, 190.0)}
    monkeypatch.setattr(bw, "run_step", lambda step, make_vars, log: times[step])
    monkeypatch.setattr(bw.os, "cpu_count", lambda: 2)
    out = io.StringIO()
    assert bw.run_all(tmp_path / "build", tmp_path / "results", tmp_path, out) is False
    text = out.getvalue()
    assert "unit-test        30.0s   58.0s   29.0s  (old 35s)" in text
    assert "suite           100.0s  190.0s   95.0s  (old 60s)  EXIT 2" in text
    assert "TARGET MISSED: warm make test 130s > 120s" in text
    assert "CPU floor: 248 CPU seconds on 2 cores cannot take less than 124s" in text


# run_step's figures, taken in a process of their own: RUSAGE_CHILDREN
# counts every child its process reaps in the step's time, and a pytest
# worker may reap another test's leftover child there (subprocess reaps
# abandoned Popens whenever it starts one).
STEPS = """
import importlib.util, json, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("bench_warm", sys.argv[1])
bw = importlib.util.module_from_spec(spec)
sys.modules["bench_warm"] = bw
spec.loader.exec_module(bw)
bw.REPO = Path(sys.argv[2])
steps = {s: bw.run_step(s, [], bw.REPO / f"{s}.log") for s in sys.argv[3:]}
print(json.dumps({s: [r.status, r.seconds, r.cpu] for s, r in steps.items()}))
"""


def test_a_steps_cpu_counts_the_processes_it_ran(tmp_path):
    """run_step's CPU is that of make's children: a step whose child burns
    0.3 s of CPU (counted by the child itself, however long the load makes
    it take) shows at least that; a step that waits 0.3 s shows the wait
    in its wall time and not in its CPU, which is make's and sleep's start
    (milliseconds), whatever the load: CPU time does not grow while a
    process waits for a core."""
    (tmp_path / "Makefile").write_text(
        "burn:\n\t@/usr/bin/python3 -c 'import time; t = time.process_time(); "
        "any(time.process_time() - t > 0.3 for _ in iter(int, 1))'\n"
        "idle:\n\t@sleep 0.3\n")
    if not shutil.which("make"):
        pytest.skip("no make")
    done = subprocess.run([sys.executable, "-c", STEPS, str(SCRIPT), str(tmp_path), "burn", "idle"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout)
    (burn_status, _, burn_cpu), (idle_status, idle_seconds, idle_cpu) = steps["burn"], steps["idle"]
    assert burn_status == 0 and idle_status == 0, (tmp_path / "burn.log").read_text()
    assert burn_cpu >= 0.3
    assert idle_seconds >= 0.3
    assert idle_cpu < 0.2
