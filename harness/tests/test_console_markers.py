from pathlib import Path

from usercopy_lab.reports.console_markers import read_markers

CONSOLE = Path(__file__).parent / "testdata" / "console"


def markers(name: str):
    return read_markers((CONSOLE / name).read_text().splitlines())


def test_killed_child_is_reported_with_its_signal():
    m = markers("USERCOPY_SLAB_WHITELIST_TO.log")
    assert (m.started, m.ended, m.outcome, m.signal) == (
        "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_SLAB_WHITELIST_TO", "killed", 11)
    assert "attempting bad copy_to_user outside whitelist" in m.lkdtm


def test_returning_child_and_lkdtm_warning():
    m = markers("USERCOPY_VMALLOC.log")
    assert (m.outcome, m.status) == ("returned", 0)
    assert not any(line.startswith("FAIL:") for line in m.lkdtm)
    assert "Good, copy_to_user() failed, but lacked Oops(?!)" in m.lkdtm


def test_unknown_trigger_outcome():
    assert markers("NO_SUCH_TRIGGER.log").outcome == "unknown-trigger"


def test_usercopy_lab_window_and_bad_copy_lines():
    m = read_markers([
        "[    1.0] lkdtm: expecting window offset 1216 size 64 in 'mm_struct'",
        "[    1.1] lkdtm: attempting bad copy_to_user at offset 1216 size 65",
        "[    1.2] lkdtm: XFAIL: option off",
    ])
    assert (m.window.cache, m.window.offset, m.window.size) == ("mm_struct", 1216, 64)
    assert m.bad_copy == (1216, 65)
    assert m.lkdtm_xfail == ["XFAIL: option off"]


def test_a_printk_record_glued_into_a_check_or_end_line_hides_neither():
    rec = "[    3.000001] clocksource: Long readout interval, skipping watchdog check"
    m = read_markers([
        "USERCOPY-LAB-START trigger=check-x",
        f"usercopy-lab-check: PASS: one{rec}", "",
        f"USERCOPY-LAB-END trigger=check-x out{rec}", "come=returned status=0",
        f"junk{rec[:15]} lkdtm: XFAIL: glued record",
    ])
    assert m.checks == ["PASS: one"]
    assert (m.ended, m.outcome, m.status) == ("check-x", "returned", 0)
    assert m.lkdtm == ["XFAIL: glued record"] and m.lkdtm_line == [6]
