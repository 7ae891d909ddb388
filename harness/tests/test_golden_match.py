"""Golden files of expected-oops/lab against real captured consoles.

Every log in testdata/console/ was captured from the lab kernel; these tests
prove both that the golden files describe what the kernel really printed and
that changing any pinned field makes the matcher fail, naming the field.
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from usercopy_lab.judge.golden import GoldenError, load, load_dir
from usercopy_lab.gaps import triage as gaps_triage
from usercopy_lab.hunt.coverage import load_notes
from usercopy_lab.hunt.findings import load_rules
from usercopy_lab.run.trigger_run import evaluate_log

REPO = Path(__file__).resolve().parents[2]
CONSOLE = Path(__file__).parent / "testdata" / "console"
GOLDEN = REPO / "expected-oops" / "lab"
# testdata/console/ is stock 6.1.192, whose USERCOPY_VMALLOC is the
# guard-page gap that patches/0001 closes: see the test of its own below.
# The stack triggers' offsets are taken at the stack pointer in
# __check_object_size(), which reserves 8 more bytes with patches/0001 (the
# vmap area's start it asks vmap_area_usercopy_end() for): the stock
# consoles report 8 more than the golden files, see the test below.
STACK_TRIGGERS = ("USERCOPY_STACK_BEYOND", "USERCOPY_STACK_FRAME_FROM",
                  "USERCOPY_STACK_FRAME_TO")
UPSTREAM_TRIGGERS = sorted(p.stem for p in GOLDEN.glob("USERCOPY_*.txt")
                           if (CONSOLE / f"{p.stem}.log").exists()
                           and p.stem != "USERCOPY_VMALLOC"
                           and p.stem not in STACK_TRIGGERS)


def verdict_of(trigger: str, golden, log: str | None = None):
    return evaluate_log("default", trigger, CONSOLE / (log or f"{trigger}.log"), golden, "")


def test_every_upstream_trigger_has_a_log_and_a_golden_file():
    assert len(UPSTREAM_TRIGGERS) == 6


@pytest.mark.parametrize("trigger", STACK_TRIGGERS)
def test_stock_stack_offsets_are_8_bytes_above_the_golden_ones(trigger):
    golden = load(GOLDEN / f"{trigger}.txt")
    stock = copy.deepcopy(golden)
    offset = (int(golden.reports[0].fields["offset"]) + 8) % 2**64
    stock.reports[0].fields["offset"] = str(offset)
    assert verdict_of(trigger, stock).verdict == "PASS"
    assert verdict_of(trigger, golden).verdict == "FAIL"


def test_stock_vmalloc_gap_fails_the_golden_of_the_fixed_kernel():
    # Stock 6.1.192 lets the copy run into the guard page (no report,
    # "lacked Oops"); the default golden expects patches/0001's BUG.
    result = verdict_of("USERCOPY_VMALLOC", load(GOLDEN / "USERCOPY_VMALLOC.txt"))
    assert result.verdict == "FAIL"
    assert "report 1: expected usercopy_abort exposure vmalloc off 2048 size 4096, saw none" \
        in result.diffs


@pytest.mark.parametrize("trigger", UPSTREAM_TRIGGERS)
def test_captured_console_matches_its_golden_file(trigger):
    result = verdict_of(trigger, load(GOLDEN / f"{trigger}.txt"))
    assert result.verdict == "PASS", result.diffs
    assert result.diffs == []


def _mutated(trigger: str, key: str, value: str):
    golden = copy.deepcopy(load(GOLDEN / f"{trigger}.txt"))
    golden.reports[0].fields[key] = value
    return golden


@pytest.mark.parametrize("key,value", [
    ("cache", "kmalloc-1k"),
    ("offset", "256"),
    ("size", "65"),
    ("direction", "overwrite"),
    ("object", "SLAB object"),
    ("rip", "__check_heap_object"),
    ("bug-site", "mm/slub.c"),
])
def test_changed_field_turns_pass_into_fail_naming_the_field(key, value):
    result = verdict_of("USERCOPY_SLAB_WHITELIST_TO",
                        _mutated("USERCOPY_SLAB_WHITELIST_TO", key, value))
    assert result.verdict == "FAIL"
    assert len(result.diffs) == 1
    assert result.diffs[0].startswith(f"report 1 {key}: expected {value!r}")


def test_missing_frame_fails_and_names_it():
    golden = copy.deepcopy(load(GOLDEN / "USERCOPY_SLAB_SIZE_TO.txt"))
    golden.reports[0].frames.insert(2, "seq_read_iter")
    result = verdict_of("USERCOPY_SLAB_SIZE_TO", golden)
    assert result.verdict == "FAIL"
    assert "missing from 'seq_read_iter'" in result.diffs[0]


def test_frames_out_of_order_fail():
    golden = copy.deepcopy(load(GOLDEN / "USERCOPY_SLAB_SIZE_TO.txt"))
    golden.reports[0].frames = ["direct_entry", "__check_heap_object"]
    assert verdict_of("USERCOPY_SLAB_SIZE_TO", golden).verdict == "FAIL"


def test_kernel_text_offset_is_checked_against_lkdtm_address():
    golden = copy.deepcopy(load(GOLDEN / "USERCOPY_KERNEL.txt"))
    golden.reports[0].fields["offset-base"] = "0xffffffff81000010"
    result = verdict_of("USERCOPY_KERNEL", golden)
    assert result.verdict == "FAIL"
    assert result.diffs == ["report 1 offset: expected '661136', saw 661152"]


def test_log_of_another_trigger_is_an_error_naming_both():
    result = verdict_of("USERCOPY_SLAB_WHITELIST_TO",
                        load(GOLDEN / "USERCOPY_SLAB_WHITELIST_TO.txt"),
                        log="USERCOPY_SLAB_WHITELIST_FROM.log")
    assert (result.verdict, result.fault) == ("ERROR", "wrong-trigger")
    assert result.summary == ("wrong-trigger: asked for USERCOPY_SLAB_WHITELIST_TO, the "
                              "console's START/END markers name USERCOPY_SLAB_WHITELIST_FROM")


def test_truncated_report_is_not_trusted():
    result = verdict_of("USERCOPY_SLAB_SIZE_TO", load(GOLDEN / "USERCOPY_SLAB_SIZE_TO.txt"),
                        log="truncated-USERCOPY_SLAB_SIZE_TO.log")
    assert result.verdict == "ERROR"   # the log also ends before the END marker


def test_report_cut_after_the_golden_frames_is_fail_truncated(tmp_path):
    """The guest ended normally (END marker) but the console lost the end of
    the call trace: every pinned field and frame still matches, and the
    verdict is FAIL only because a cut-off report is not trusted."""
    lines = (CONSOLE / "USERCOPY_SLAB_SIZE_TO.log").read_text().splitlines(True)
    cut = next(i for i, l in enumerate(lines) if "direct_entry" in l) + 1
    end = next(i for i, l in enumerate(lines) if l.startswith("Segmentation fault"))
    log = tmp_path / "USERCOPY_SLAB_SIZE_TO.log"
    log.write_text("".join(lines[:cut] + lines[end:]))
    result = evaluate_log("default", "USERCOPY_SLAB_SIZE_TO", log,
                          load(GOLDEN / "USERCOPY_SLAB_SIZE_TO.txt"), "")
    assert result.verdict == "FAIL"
    assert [d.split(":")[0] for d in result.diffs] == ["report 1 truncated"], result.diffs


def test_a_console_that_ran_two_triggers_is_an_error():
    # lab.trigger=WARNING,USERCOPY_SLAB_WHITELIST_FROM: one boot, two requests.
    result = verdict_of("USERCOPY_SLAB_WHITELIST_FROM",
                        load(GOLDEN / "USERCOPY_SLAB_WHITELIST_FROM.txt"),
                        log="two-reports-WARNING-then-USERCOPY_SLAB_WHITELIST_FROM.log")
    assert (result.verdict, result.fault) == ("ERROR", "wrong-trigger")
    assert "START/END markers name WARNING" in result.summary


def test_two_reports_where_one_is_expected_fail(tmp_path):
    # The same console without WARNING's markers and LKDTM line: its
    # WARNING is a report the request did not expect.
    log = tmp_path / "USERCOPY_SLAB_WHITELIST_FROM.log"
    lines = (CONSOLE / "two-reports-WARNING-then-USERCOPY_SLAB_WHITELIST_FROM.log"
             ).read_text().splitlines(True)
    log.write_text("".join(l for l in lines if not l.rstrip().endswith(
        ("trigger=WARNING", "trigger=WARNING outcome=returned status=0",
         "Performing direct entry WARNING"))))
    assert len(log.read_text().splitlines()) == len(lines) - 3
    result = evaluate_log("default", "USERCOPY_SLAB_WHITELIST_FROM", log,
                          load(GOLDEN / "USERCOPY_SLAB_WHITELIST_FROM.txt"), "")
    assert result.verdict == "FAIL"
    assert result.diffs[0].startswith("report 1 kind: expected usercopy_abort, saw warning")
    assert "report 2: unexpected" in result.diffs[-1] or \
        any("report 2" in d for d in result.diffs)


def test_unknown_trigger_is_skip_without_golden_and_fail_with_one():
    assert verdict_of("NO_SUCH_TRIGGER", None).verdict == "SKIP"
    golden = copy.deepcopy(load(GOLDEN / "USERCOPY_SLAB_SIZE_TO.txt"))
    result = verdict_of("NO_SUCH_TRIGGER", golden)
    assert result.verdict == "FAIL"
    assert result.diffs == ["outcome: expected killed, saw unknown-trigger"]


def test_panic_without_end_marker_is_error():
    result = verdict_of("PANIC", None)
    assert result.verdict == "ERROR"


def test_missing_golden_file_is_fail():
    result = verdict_of("USERCOPY_SLAB_SIZE_TO", None)
    assert result.verdict == "FAIL"
    assert result.diffs == ["golden: no golden file for USERCOPY_SLAB_SIZE_TO"]


def test_no_oops_where_one_is_expected_fails():
    result = verdict_of("USERCOPY_VMALLOC", load(GOLDEN / "USERCOPY_FOLIO.txt"),
                        log="USERCOPY_VMALLOC.log")
    assert result.verdict == "FAIL"
    assert "outcome: expected killed, saw returned (status 0)" in result.diffs


def test_lkdtm_fail_line_is_always_a_fail(tmp_path):
    log = tmp_path / "USERCOPY_SLAB_SIZE_TO.log"
    text = (CONSOLE / "USERCOPY_SLAB_SIZE_TO.log").read_text()
    marker = "USERCOPY-LAB-END"
    text = text.replace(marker, "[    0.700000] lkdtm: FAIL: bad usercopy not detected!\n"
                        + marker, 1)
    log.write_text(text)
    result = evaluate_log("default", "USERCOPY_SLAB_SIZE_TO", log,
                          load(GOLDEN / "USERCOPY_SLAB_SIZE_TO.txt"), "")
    assert result.verdict == "FAIL"
    assert result.diffs == ["lkdtm-absent: LKDTM said 'FAIL: bad usercopy not detected!'"]


def test_tests_txt_expected_text_must_be_on_the_console():
    result = evaluate_log("default", "USERCOPY_SLAB_SIZE_TO",
                          CONSOLE / "USERCOPY_SLAB_SIZE_TO.log",
                          load(GOLDEN / "USERCOPY_SLAB_SIZE_TO.txt"), "from SLUB object 'kmalloc-2k'")
    assert result.verdict == "FAIL"
    assert result.expected_text_seen is False


def test_every_golden_directory_loads():
    # expected-oops/hunt holds the hunt's judgements (classifications and
    # coverage notes, TOML), expected-oops/gaps the gap finder's triage,
    # not golden files: each must load as those.
    for suite_dir in (REPO / "expected-oops").iterdir():
        if suite_dir.name == "hunt":
            assert not load_dir(suite_dir)
            load_rules(suite_dir / "classifications.toml")
            load_notes(suite_dir / "coverage-notes.toml")
        elif suite_dir.name == "gaps":
            assert not load_dir(suite_dir)
            assert gaps_triage.load(suite_dir / "triage.toml").entries
        elif suite_dir.is_dir():
            assert load_dir(suite_dir)


@pytest.mark.parametrize("text,message", [
    ("trigger: X\noutcome: killed\nreport: none\ncolour: red\n", "unknown key 'colour'"),
    ("trigger: Y\noutcome: killed\nreport: none\n", "does not match the file name"),
    ("trigger: X\noutcome: maybe\n", "outcome must be one of"),
    ("trigger: X\noutcome: killed\n", "needs either 'report: none' or report blocks"),
    ("trigger: X\noutcome: killed\ncache: kmalloc-64\n", "before any 'report:' line"),
    ("trigger: X\noutcome: killed\nreport: usercopy_abort\noffset: 0x10\n", "offset must be a number"),
    ("trigger: X\noutcome: killed\nreport: usercopy_abort\nlkdtm-expect\n", "expected 'key: value'"),
])
def test_bad_golden_file_names_the_problem(tmp_path, text, message):
    path = tmp_path / "X.txt"
    path.write_text(text)
    with pytest.raises(GoldenError, match=message):
        load(path)


def test_lkdtm_before_line_moved_after_the_report_fails(tmp_path):
    """lkdtm-before means before the first report, not just present: the
    real console with LKDTM's "bad copy" line moved below the oops FAILs."""
    golden = load(GOLDEN / "USERCOPY_SLAB_WHITELIST_TO.txt")
    lines = (CONSOLE / "USERCOPY_SLAB_WHITELIST_TO.log").read_text().splitlines(True)
    bad = next(i for i, l in enumerate(lines) if "attempting bad copy_to_user" in l)
    end = next(i for i, l in enumerate(lines) if "---[ end trace" in l)
    moved = lines[:bad] + lines[bad + 1:end + 1] + [lines[bad]] + lines[end + 1:]
    log = tmp_path / "USERCOPY_SLAB_WHITELIST_TO.log"
    log.write_text("".join(moved))
    assert verdict_of("USERCOPY_SLAB_WHITELIST_TO", golden).verdict == "PASS"
    result = evaluate_log("default", "USERCOPY_SLAB_WHITELIST_TO", log, golden, "")
    assert result.verdict == "FAIL"
    report_line = result.reports[0].line
    assert result.diffs == [
        "lkdtm-before: expected 'attempting bad copy_to_user outside whitelist' (in order, "
        f"before the first report), only at line {end + 1}, after the report at line "
        f"{report_line}"]
    assert "usercopy: Kernel memory exposure" in moved[report_line - 1]
