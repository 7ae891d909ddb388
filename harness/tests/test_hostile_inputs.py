"""The hostile-input table (hostile_inputs.toml) and its runner.

`make fuzz-inputs` runs every case as a subprocess with its limits; here
the table is checked and three cases run, so a broken runner or table
fails the unit tests too.
"""
from __future__ import annotations

import dataclasses

import pytest

import hostile_inputs
from hostile_inputs import default_tables, load_all, run_case

ALL = load_all(default_tables())


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
    assert outcome.rc == 2


def test_a_case_that_misses_its_exit_status_is_reported():
    [case] = [dataclasses.replace(c, rc=0) for c in ALL if c.name == "jobs-zero"]
    outcome = run_case(case, hostile_inputs.REPO / "harness")
    assert outcome.problems == ["exit 2, expected 0"]


def test_the_child_runs_under_the_address_space_limit(tmp_path):
    # A stand-in CLI (through --pythonpath) that prints the limit it got.
    cli = tmp_path / "usercopy_lab" / "__main__.py"
    cli.parent.mkdir()
    (cli.parent / "__init__.py").write_text("")
    cli.write_text("import resource\nprint('RLIMIT_AS', *resource.getrlimit(resource.RLIMIT_AS))\n")
    limit = hostile_inputs.LIMIT_AS_MB << 20
    case = hostile_inputs.Case("limit", ["run"], 0, stdout=f"^RLIMIT_AS {limit} {limit}$")
    outcome = run_case(case, tmp_path)
    assert outcome.ok, (outcome.problems, outcome.stderr)


def test_cases_run_at_once_are_printed_in_table_order(capsys):
    names = ["jobs-zero", "suites-file-dev-zero", "jobs-1000000000"]
    assert hostile_inputs.main([a for n in names for a in ("--only", n)] + ["-j", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[1:-1]] == [c.name for c in ALL if c.name in names]


def test_a_name_used_in_two_tables_is_refused(tmp_path):
    for table in ("a.toml", "b.toml"):
        (tmp_path / table).write_text('[[case]]\nname = "same"\nargv = ["run"]\nrc = 2\n')
    with pytest.raises(hostile_inputs.InputError, match="used twice across the tables: same"):
        load_all([tmp_path / "a.toml", tmp_path / "b.toml"])


def test_a_case_is_held_to_cpu_time_not_to_wall_time(tmp_path, monkeypatch):
    """A stand-in CLI that burns CPU is killed at LIMIT_SECONDS of CPU and
    named so; one that sleeps past that without working is not (load beside
    a case stretches its wall time, never its CPU).  The limit is 1 s here."""
    monkeypatch.setattr(hostile_inputs, "LIMIT_SECONDS", 1.0)
    cli = tmp_path / "usercopy_lab" / "__main__.py"
    cli.parent.mkdir()
    (cli.parent / "__init__.py").write_text("")
    cli.write_text("import sys, time\n"
                   "if sys.argv[1] == 'spin':\n    while True: pass\n"
                   f"time.sleep({hostile_inputs.LIMIT_SECONDS} + 1)\n")
    spin = run_case(hostile_inputs.Case("spin", ["spin"], 0), tmp_path)
    assert spin.problems == [f"killed after {hostile_inputs.LIMIT_SECONDS:.0f}s of CPU"]
    sleep = run_case(hostile_inputs.Case("sleep", ["sleep"], 0), tmp_path)
    assert sleep.ok, sleep.problems
    assert sleep.seconds > hostile_inputs.LIMIT_SECONDS > sleep.cpu_seconds
