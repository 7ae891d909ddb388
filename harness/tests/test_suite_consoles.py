"""Every golden file of a suite against the real console captured for it."""
from __future__ import annotations

from pathlib import Path

import pytest

from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import evaluate_check_log, evaluate_log

REPO = Path(__file__).resolve().parents[2]
CONSOLES = Path(__file__).parent / "testdata" / "console-series"
SUITES = load_suites(REPO / "suites.toml")
CASES = [(suite, t.name, t.expected_text if SUITES[suite].expected_text else "")
         for suite in sorted(p.name for p in CONSOLES.iterdir() if p.is_dir())
         for t in SUITES[suite].triggers() if not t.skip_reason]


@pytest.mark.parametrize("suite,trigger,expected_text", CASES)
def test_golden_matches_captured_console(suite, trigger, expected_text):
    golden = SUITES[suite].golden()[trigger]
    log = CONSOLES / suite / f"{trigger}.log"
    result = evaluate_log(suite, trigger, log, golden, expected_text)
    want = "XFAIL" if golden.outcome == "xfail" else "PASS"
    assert result.verdict == want, result.diffs


def test_split_trigger_on_a_split_kernel_is_not_an_xfail():
    # The nosplit golden file must not accept the split kernel's oops.
    golden = SUITES["nosplit"].golden()["USERCOPY_KMALLOC_SPLIT_TO"]
    log = CONSOLES / "default" / "USERCOPY_KMALLOC_SPLIT_TO.log"
    assert evaluate_log("nosplit", "USERCOPY_KMALLOC_SPLIT_TO", log, golden, "").verdict == "FAIL"


def test_fallback_golden_is_not_the_default_one_for_in_object_violations():
    # The variant must really differ where the fallback changes the outcome.
    default, fallback = SUITES["default"].golden(), SUITES["fallback"].golden()
    for name in ("USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_WHITELIST_MM_STRUCT_FROM"):
        assert default[name].reports[0].kind == "usercopy_abort"
        assert fallback[name].reports[0].kind == "usercopy_warn"
    log = CONSOLES / "fallback" / "USERCOPY_SLAB_WHITELIST_TO.log"
    assert evaluate_log("fallback", "USERCOPY_SLAB_WHITELIST_TO", log,
                        default["USERCOPY_SLAB_WHITELIST_TO"], "").verdict == "FAIL"


def test_window_cross_check_catches_a_shifted_window(tmp_path):
    # What a kernel whose saved_auxv window moved by 8 would print: the
    # trigger announces the new window, the oops still names the old offset.
    text = (CONSOLES / "default" / "USERCOPY_WHITELIST_MM_STRUCT_TO.log").read_text()
    text = text.replace("attempting bad copy_to_user at offset 303 size 369",
                        "attempting bad copy_to_user at offset 311 size 369")
    log = tmp_path / "USERCOPY_WHITELIST_MM_STRUCT_TO.log"
    log.write_text(text)
    golden = SUITES["default"].golden()["USERCOPY_WHITELIST_MM_STRUCT_TO"]
    result = evaluate_log("default", "USERCOPY_WHITELIST_MM_STRUCT_TO", log, golden, "")
    assert result.verdict == "FAIL"
    assert any(d.startswith("cross-check offset/size") for d in result.diffs)


@pytest.mark.parametrize("suite", ["default", "slab", "kasan"])
def test_usersized_cache_check_passes_on_its_console(suite):
    result = evaluate_check_log(suite, "check-usersized-caches",
                                CONSOLES / suite / "check-usersized-caches.log")
    assert result.verdict == "PASS", result.diffs
    assert result.summary.endswith("0 failed")


def test_usersized_cache_check_fails_on_a_fail_line(tmp_path):
    text = (CONSOLES / "default" / "check-usersized-caches.log").read_text()
    text = text.replace("usercopy-lab-check: PASS: 128 messages of 16 bytes",
                        "usercopy-lab-check: FAIL: 128 messages of 16 bytes", 1)
    log = tmp_path / "check.log"
    log.write_text(text)
    result = evaluate_check_log("default", "check-usersized-caches", log)
    assert result.verdict == "FAIL"
    assert result.diffs[0].startswith("check: FAIL: 128 messages of 16 bytes")


def test_objcg_check_fails_on_the_kernel_with_the_memcg_bug():
    # Real console of the series before patches/0003 cleared __GFP_USERCOPY
    # in OBJCGS_CLEAR_MASK (testdata/objcg/README.md).
    log = Path(__file__).parent / "testdata" / "objcg" / "check-objcg-caches-unfixed.log"
    result = evaluate_check_log("memcg", "check-objcg-caches", log)
    assert result.verdict == "FAIL"
    assert "check: FAIL: 104 objcg arrays in usersized-* or msg_msg* caches (want 0)" in result.diffs


def test_objcg_check_passes_on_the_fixed_kernel():
    result = evaluate_check_log("memcg", "check-objcg-caches",
                                CONSOLES / "memcg" / "check-objcg-caches.log")
    assert result.verdict == "PASS", result.diffs


@pytest.mark.parametrize("trigger", ["USERCOPY_WHITELIST_CIFS_REQUEST_TO",
                                     "USERCOPY_WHITELIST_RDS_IB_FROM"])
def test_module_suites_goldens_tell_an_absent_module_from_a_loaded_one(trigger):
    # A seed module absent (module/) must not pass for a loaded one
    # (module-seeds/), nor for a kernel without the subsystem (default).
    absent, loaded = SUITES["module"].golden(), SUITES["module-seeds"].golden()
    without = SUITES["lab"].golden()
    for golden, suite in ((absent, "module-seeds"), (loaded, "module"), (without, "module")):
        log = CONSOLES / suite / f"{trigger}.log"
        assert evaluate_log(suite, trigger, log, golden[trigger], "").verdict == "FAIL"
