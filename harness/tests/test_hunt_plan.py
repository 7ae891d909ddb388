"""make hunt's plan: the workload catalogue and the guests of a run."""
from __future__ import annotations

from pathlib import Path

import pytest

from usercopy_lab.hunt.plan import (GUEST_OVERHEAD, PlanError, load_workloads, plan_guests,
                                    read_workload)

REPO = Path(__file__).resolve().parents[2]
WORKLOADS = REPO / "initramfs-src" / "hunt-workloads"


def test_every_workload_script_has_a_readable_header():
    found = load_workloads(WORKLOADS)
    assert {"trinity", "stress-net", "calibrate"} <= set(found)
    for w in found.values():
        assert w.seconds > 0 and w.what, w.name
        assert (WORKLOADS / w.name).stat().st_mode & 0o111, f"{w.name} is not executable"
    assert found["calibrate"].family == "calibration"
    assert not found["calibrate"].counts_for_coverage


def write(path: Path, header: str) -> Path:
    path.write_text("#!/bin/sh\n" + header + "exit 0\n")
    return path


def test_a_header_naming_another_workload_is_refused(tmp_path):
    p = write(tmp_path / "mine", "# hunt-workload: other\n# family: trinity\n# seconds: 5\n")
    with pytest.raises(PlanError, match="hunt-workload: mine"):
        read_workload(p)


def test_a_header_without_seconds_or_with_an_unknown_family_is_refused(tmp_path):
    with pytest.raises(PlanError, match="family"):
        read_workload(write(tmp_path / "a", "# hunt-workload: a\n# family: fuzz\n"))
    with pytest.raises(PlanError, match="seconds"):
        read_workload(write(tmp_path / "b", "# hunt-workload: b\n# family: trinity\n"))


def test_what_continues_on_indented_comment_lines(tmp_path):
    w = read_workload(write(tmp_path / "c", "# hunt-workload: c\n# family: trinity\n"
                            "# seconds: 9\n# what: first\n#   second\n"))
    assert w.what == "first second"


def test_the_plan_fills_the_wall_time_in_turn_and_is_given_back_by_its_seed():
    workloads = load_workloads(WORKLOADS)
    plan = plan_guests(workloads, minutes=30, jobs=2, run_seed=7)
    assert plan[0].family == "calibration"
    rest = plan[1:]
    names = [g.workload for g in rest]
    hunt = [n for n, w in workloads.items() if w.family != "calibration"]
    assert names[:len(hunt)] == hunt            # every workload before any repeats
    used = sum(g.seconds + GUEST_OVERHEAD for g in plan)
    assert used <= 30 * 60 * 2 + GUEST_OVERHEAD and used > 30 * 60 * 2 - 330
    assert plan == plan_guests(workloads, minutes=30, jobs=2, run_seed=7)
    assert [g.seed for g in plan] != [g.seed for g in plan_guests(workloads, 30, 2, 8)]
    assert len({g.id for g in plan}) == len(plan)


def test_a_workload_list_gets_each_one_guest_even_in_a_short_plan():
    workloads = load_workloads(WORKLOADS)
    plan = plan_guests(workloads, 0.5, 2, 1, only=["trinity", "stress-net"],
                       guest_seconds=30)
    assert [g.workload for g in plan] == ["calibrate", "trinity", "stress-net"]
    assert [g.seconds for g in plan][1:] == [30, 30]
    assert [g.workload for g in plan_guests(workloads, 0.5, 2, 1, only=["trinity"],
                                            calibrate=False)] == ["trinity"]


def test_unknown_workloads_and_empty_budgets_are_refused():
    workloads = load_workloads(WORKLOADS)
    with pytest.raises(PlanError, match="unknown workload"):
        plan_guests(workloads, 1, 1, 1, only=["nope"])
    with pytest.raises(PlanError):
        plan_guests(workloads, 0, 1, 1)


def test_a_short_hunt_runs_every_workload_once_shortened_in_proportion():
    workloads = load_workloads(WORKLOADS)
    hunt = [n for n, w in workloads.items() if w.family != "calibration"]
    plan = plan_guests(workloads, minutes=15, jobs=2, run_seed=3)
    assert plan[0].family == "calibration"
    assert [g.workload for g in plan[1:]] == hunt      # each once, none left out
    used = sum(g.seconds + GUEST_OVERHEAD for g in plan)
    assert used <= 15 * 60 * 2 + GUEST_OVERHEAD + 30
    # proportional: a 120 s workload gets less than a 300 s one
    by = {g.workload: g.seconds for g in plan}
    assert by["stress-msg"] < by["trinity"] and min(by.values()) >= 10
    # a plan whose first round fits is unchanged: own lengths
    long = plan_guests(workloads, minutes=60, jobs=2, run_seed=3)
    assert {g.workload: g.seconds for g in long[1:len(hunt) + 1]} == {
        n: workloads[n].seconds for n in hunt}
