"""make hunt's harvest on real consoles (testdata/hunt/*/README.md says
where each run comes from and what it must give)."""
from __future__ import annotations

import json
from pathlib import Path

from usercopy_lab.hunt.harvest import harvest, markdown
from usercopy_lab.hunt.runner import _smoke_verdict
from usercopy_lab.hunt.findings import Class

DATA = Path(__file__).resolve().parent / "testdata" / "hunt"
RULES = Path(__file__).resolve().parents[2] / "expected-oops" / "hunt" / "classifications.toml"


def test_a_run_without_coverage_is_harvested_and_fails_the_smoke(capsys):
    root = DATA / "tainted-default-no-coverage"
    rows = json.loads((root / "hunt" / "guests.json").read_text())
    h = harvest(root, rows, RULES)
    [finding] = h.findings.ordered()
    assert finding.klass is Class.NOT_WHITELIST and finding.reported_cache == "lkdtm-usercopy"
    assert h.calibration["ok"] and h.calibration["probe_hits"] is None
    early = {g["id"]: g["stopped_early"] for g in h.guests}
    assert early == {"g001-calibrate": None, "g003-stress-net": None,
                     "g002-trinity": "workload exited 139 after 3 s of 45 s"}
    assert h.coverage.guests == 0 and len(h.coverage.guests_without) == 2
    assert _smoke_verdict(h) == 1
    err = capsys.readouterr().err
    assert "g002-trinity: workload exited 139" in err and "coverage measured in no guest" in err
    d = {"guests": h.guests, "findings": [f.to_json() for f in h.findings.ordered()],
         "other_oopses": [], "calibration": h.calibration,
         "coverage": h.coverage.to_json([])}
    d["coverage"]["summary"] = "not measured"
    md = markdown(d)
    assert "2 of 3 guests ran their workload to its end" in md
    assert "- g002-trinity (trinity, seed 495399266): workload exited 139" in md


def test_a_finite_workload_that_exits_0_early_did_not_stop_early():
    from usercopy_lab.hunt.harvest import stopped_early
    from usercopy_lab.hunt.console import GuestConsole
    row = {"family": "lab-probes", "seconds": 30}
    done = GuestConsole("g.log", ended=True, workload_exit=0, ran_seconds=5)
    crashed = GuestConsole("g.log", ended=True, workload_exit=139, ran_seconds=5)
    full = GuestConsole("g.log", ended=True, workload_exit=124, ran_seconds=30)
    assert stopped_early(done, row) is None and stopped_early(full, row) is None
    assert stopped_early(crashed, row) == "workload exited 139 after 5 s of 30 s"
    assert stopped_early(GuestConsole("g.log", ended=True), row) == "no workload exit line"


def test_the_triage_table_is_written_with_triages_own_option_defaults(tmp_path):
    """write_triage builds its arguments with triage's parser: a hand-made
    Namespace lacked --max-input once triage had it, and every hunt's
    harvest stopped with an AttributeError (2026-12-05)."""
    from usercopy_lab.hunt.harvest import write_triage
    out = tmp_path / "triage.txt"
    write_triage(DATA / "tainted-default-no-coverage" / "hunt" / "guests", out)
    text = out.read_text()
    assert "bad usercopy in direct_entry" in text and "1 distinct signature" in text
