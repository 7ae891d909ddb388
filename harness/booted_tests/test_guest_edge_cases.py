"""Booted checks of the harness itself: each boots fresh lab guests.

Run by `make test` after the kernels and initramfs are built, with
USERCOPY_LAB_BUILD (the build folder) and USERCOPY_LAB_INITRAMFS set.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HARNESS))

from guest_env import BUILD, INITRAMFS, needs_guests  # noqa: E402
from usercopy_lab.cli import main  # noqa: E402

pytestmark = needs_guests


def run(tmp_path: Path, *extra: str) -> tuple[int, dict]:
    rc = main(["run", "--suite", "default", "--accel", "tcg",
               "--build-dir", str(BUILD), "--initramfs", str(INITRAMFS),
               "--results", str(tmp_path), *extra])
    data = json.loads((tmp_path / "latest" / "results.json").read_text())
    return rc, data


def test_unknown_trigger_is_a_clear_skip_and_exit_2(tmp_path, capsys):
    """The guest's LKDTM decides what is unknown; asked for by name with no
    golden file expecting that, it is SKIP in the results and exit 2 (a
    typo must not pass a gate, issue #33)."""
    rc, data = run(tmp_path, "--trigger", "NO_SUCH_TRIGGER")
    (result,) = data["triggers"]
    assert result["verdict"] == "SKIP"
    assert "not listed by provoke-crash/DIRECT" in result["summary"]
    assert rc == 2
    assert "--trigger NO_SUCH_TRIGGER: not a crash type of the guest's LKDTM" \
        in capsys.readouterr().err
    assert Path(result["log"]).read_text().count("outcome=unknown-trigger") == 1


def test_hanging_guest_is_an_error_with_its_log_kept(tmp_path):
    # LKDTM's LOOP spins forever with preemption off: the END marker never
    # comes.  The guest burns a core until the timeout, counted from START.
    rc, data = run(tmp_path, "--trigger", "LOOP", "--trigger-timeout", "3")
    (result,) = data["triggers"]
    assert rc == 1
    assert result["verdict"] == "ERROR"
    log = Path(result["log"]).read_text()
    assert "lkdtm: Performing direct entry LOOP" in log
    assert "no USERCOPY-LAB-END within 3s" in log
