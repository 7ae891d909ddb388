"""bench/bench_warm.py (make bench WARM=1): the steps it times are make
test's, and a missed target or a failed step is reported, not hidden."""
from __future__ import annotations

import importlib.util
import io
import shutil
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
    times = {"kernels": bw.Step("kernels", 1.0, 0), "unit-test": bw.Step("unit-test", 30.0, 0),
             "suite": bw.Step("suite", 100.0, 2)}
    monkeypatch.setattr(bw, "run_step", lambda step, make_vars, log: times[step])
    out = io.StringIO()
    assert bw.run_all(tmp_path / "build", tmp_path / "results", tmp_path, out) is False
    text = out.getvalue()
    assert "unit-test        30.0s  (old 35s)" in text
    assert "suite           100.0s  (old 60s)  EXIT 2" in text
    assert "TARGET MISSED: warm make test 130s > 120s" in text
