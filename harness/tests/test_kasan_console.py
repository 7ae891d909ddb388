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


ARM64_KASAN = load_suites(REPO / "suites.toml")["arm64-kasan"]


def test_a_tagged_vmalloc_pointer_is_bounded_on_arm64_sw_tags():
    """patches/0001 compares the untagged pointer: on the SW_TAGS guest the
    buffer's top byte is a KASAN tag, not 0xff, and the copy past it BUGs
    as on x86-64.  Compared raw, 0x6fff... is below the area's untagged end
    by more than any copy and the check would let it through."""
    consoles = TESTDATA / "console-arch" / "arm64-kasan"
    name = "USERCOPY_VMALLOC"
    log = consoles / f"{name}.log"
    text = log.read_text(errors="replace")
    addr = text.split("bad copy_to_user() from kernel vmalloc: ", 1)[1].split()[0]
    assert int(addr, 16) >> 56 != 0xff               # tagged
    result = evaluate_log("arm64-kasan", name, log, ARM64_KASAN.golden()[name], "")
    assert result.verdict == "PASS", result.diffs
    for other in ARM64_KASAN.only:
        if other != name:
            r = evaluate_log("arm64-kasan", other, consoles / f"{other}.log",
                             ARM64_KASAN.golden()[other], "")
            assert r.verdict == "PASS", (other, r.diffs)
