"""The hostile-input table (hostile_inputs.toml) and its runner.

`make fuzz-inputs` runs every case as a subprocess with its limits; here
the table is checked and three cases run, so a broken runner or table
fails the unit tests too.
"""
from __future__ import annotations

import dataclasses

import pytest

from usercopy_lab.run import hostile_inputs
from usercopy_lab.run.hostile_inputs import CASES, load_cases, run_case

ALL = load_cases(CASES)


def test_the_table_names_each_case_once_with_an_exit_status():
    assert len(ALL) >= 40
    assert all(c.rc in (0, 1, 2, 130) for c in ALL)
    assert {c.rc for c in ALL} >= {0, 1, 2}


@pytest.mark.parametrize("name", ["suites-file-dev-zero", "suites-dotted-100000",
                                  "jobs-1000000000"])
def test_a_case_runs_within_its_limits(name):
    [case] = [c for c in ALL if c.name == name]
    outcome = run_case(case, hostile_inputs.REPO / "harness")
    assert outcome.ok, (outcome.problems, outcome.stderr)
    assert outcome.rc == 2 and outcome.seconds < hostile_inputs.LIMIT_SECONDS


def test_a_case_that_misses_its_exit_status_is_reported():
    [case] = [dataclasses.replace(c, rc=0) for c in ALL if c.name == "jobs-zero"]
    outcome = run_case(case, hostile_inputs.REPO / "harness")
    assert outcome.problems == ["exit 2, expected 0"]
