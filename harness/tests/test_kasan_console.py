"""The kasan suite's rule: a console holds the usercopy report its golden
file expects and nothing KASAN printed (suites.toml [kasan])."""
from __future__ import annotations

from pathlib import Path

from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import evaluate_log

REPO = Path(__file__).resolve().parents[2]
KASAN = load_suites(REPO / "suites.toml")["kasan"]
TESTDATA = Path(__file__).parent / "testdata"


def test_a_kasan_report_at_boot_fails_a_trigger_that_oopsed_as_expected():
    name = "USERCOPY_STACK_FRAME_TO"
    log = TESTDATA / "kasan-boot" / f"{name}.log"
    result = evaluate_log("kasan", name, log, KASAN.golden()[name], "")
    assert result.verdict == "FAIL"
    assert any("saw kasan" in d for d in result.diffs), result.diffs
    assert [r.kind for r in result.reports][:1] == ["kasan"]


def test_no_captured_kasan_console_holds_a_kasan_report():
    logs = sorted((TESTDATA / "console-series" / "kasan").glob("*.log"))
    assert len(logs) == 58
    assert [p.name for p in logs if "BUG: KASAN" in p.read_text(errors="replace")] == []
