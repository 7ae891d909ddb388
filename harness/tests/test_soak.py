"""Soak: verdict counts per trigger over runs; a changing verdict is a flake."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from usercopy_lab.run import soak
from usercopy_lab.cli import main as cli_main

from test_run_loop import SERIES, lab  # noqa: F401  (fixture)


def results(path: Path, verdicts: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    triggers = [{"suite": "default", "name": n, "verdict": v,
                 "fault": "guest-hang" if v == "ERROR" else None}
                for n, v in verdicts.items()]
    (path / "results.json").write_text(json.dumps({"triggers": triggers}))
    return path / "results.json"


def test_a_verdict_that_changes_between_runs_is_a_flake(tmp_path, capsys):
    files = [results(tmp_path / "1", {"A": "PASS", "B": "PASS"}),
             results(tmp_path / "2", {"A": "PASS", "B": "ERROR"}),
             results(tmp_path / "3", {"A": "PASS", "B": "PASS"})]
    table = soak.count(files)
    assert not table["default/A"].flaky
    assert table["default/B"].flaky
    soak.print_counts(table, 3, __import__("sys").stdout)
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["default/A", "PASSx3"]
    assert out[1].split() == ["default/B", "ERRORx1", "PASSx2", "(guest-hangx1)", "FLAKE"]


def test_a_trigger_missing_from_a_run_is_a_flake(tmp_path, capsys):
    files = [results(tmp_path / "1", {"A": "PASS"}), results(tmp_path / "2", {})]
    soak.print_counts(soak.count(files), 2, __import__("sys").stdout)
    assert capsys.readouterr().out.split() == ["default/A", "PASSx1", "missing", "x1", "FLAKE"]


def test_soak_runs_the_suite_n_times(lab, capsys):  # noqa: F811
    for name in ("USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_TO"):
        shutil.copy(SERIES / f"{name}.log", lab / "consoles" / f"{name}.log")
    rc = cli_main(["soak", "--runs", "2", "--results", str(lab / "soak"), "--suite", "default",
                    "--trigger", "USERCOPY_SLAB_WHITELIST_TO", "--trigger",
                    "USERCOPY_STACK_FRAME_TO", "--accel", "tcg",
                    "--build-dir", str(lab / "build"),
                    "--initramfs", str(lab / "initramfs.cpio")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "default/USERCOPY_SLAB_WHITELIST_TO  PASSx2" in out
    assert "0 flaky, 0 failing every run" in out
    runs = [p for p in (lab / "soak").glob("*/*/results.json") if p.parent.name != "latest"]
    assert len(runs) == 2
