"""check-xfs-inline (seed 009) on its real console from the seeds kernel."""
from pathlib import Path

from usercopy_lab.run.trigger_run import evaluate_check_log

CONSOLES = Path(__file__).parent / "testdata" / "console-series"
LOG = CONSOLES / "seeds" / "check-xfs-inline.log"
# A usercopy BUG as the seeds kernel prints it (from the captured
# USERCOPY_WHITELIST_ORANGEFS_TO console), renamed to the readlink path.
BUG = (CONSOLES / "seeds" / "USERCOPY_WHITELIST_ORANGEFS_TO.log").read_text()


def test_the_xfs_check_passes_on_its_console():
    result = evaluate_check_log("seeds", "check-xfs-inline", LOG)
    assert (result.verdict, result.diffs) == ("PASS", [])
    assert result.summary == "3 checks passed, 0 failed"


def test_a_usercopy_report_during_the_reads_fails_the_check(tmp_path):
    start = BUG.rindex("\n", 0, BUG.index("] usercopy: Kernel memory")) + 1
    report = BUG[start:BUG.index("Segmentation fault")]
    text = LOG.read_text().replace(
        "usercopy-lab-check: PASS: readlink", report + "usercopy-lab-check: PASS: readlink")
    log = tmp_path / "check-xfs-inline.log"
    log.write_text(text)
    result = evaluate_check_log("seeds", "check-xfs-inline", log)
    assert result.verdict == "FAIL"
    assert any(d.startswith("report: unexpected usercopy") for d in result.diffs), result.diffs


def test_a_wrong_link_target_fails_the_check(tmp_path):
    text = LOG.read_text().replace("PASS: readlink", "FAIL: readlink")
    log = tmp_path / "check-xfs-inline.log"
    log.write_text(text.replace("0 failed", "1 failed").replace("status=0", "status=1"))
    result = evaluate_check_log("seeds", "check-xfs-inline", log)
    assert result.verdict == "FAIL"
    assert result.diffs[0].startswith("check: FAIL: readlink of the inline symlink")
