"""A follow-on report whose header the capture's end cut (arm64).

The kept console testdata/console-arm64/USERCOPY_KMALLOC_SPLIT_CG_TO.log is
the FAIL of the arm64 suite of 2026-12-05 04:26 (57/58): after the expected
usercopy BUG and the END marker, the kernel began the one-time
`WARNING in ct_kernel_exit` (suites.toml [arm64] follow_on) and the capture
ended in the middle of its header line, so the harness's trailer was
appended to "... ct_kerne".  The trailer is the harness's line, never part
of a kernel line; a header cut by the capture's end is a follow-on when
what it printed of the function begins a follow_on title.
"""
from __future__ import annotations

import io
from pathlib import Path

from usercopy_lab.capture.console_capture import TRAILER
from usercopy_lab.judge.console_scan import _TrailerOwnLine, scan_console
from usercopy_lab.reports.oops_parser import iter_reports
from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import evaluate_log

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LOG = HERE / "testdata" / "console-arm64" / "USERCOPY_KMALLOC_SPLIT_CG_TO.log"
TRIGGER = "USERCOPY_KMALLOC_SPLIT_CG_TO"
CUT = "kernel/context_tracking.c:128 ct_kerne"


def arm64_golden(follow_on: bool = True):
    golden = load_suites(REPO / "suites.toml")["arm64"].golden()[TRIGGER]
    if not follow_on:
        golden.follow_on = ()
    return golden


def test_the_kept_console_really_ends_inside_the_warning_header():
    tail = LOG.read_bytes().rsplit(b"\n", 2)[-2]
    assert (CUT + "# usercopy-lab: capture ended: end-marker").encode() in tail


def test_the_real_arm64_console_passes_with_the_suites_follow_on():
    result = evaluate_log("arm64", TRIGGER, LOG, arm64_golden(), "")
    assert (result.verdict, result.diffs) == ("PASS", [])


def test_the_cut_header_is_read_without_the_trailer():
    reports = scan_console(LOG).reports
    assert [r.title for r in reports][1:] == ["WARNING in ct_kerne"]
    assert [r.header_cut for r in reports] == [False, True]
    assert reports[0].kind == "usercopy_abort" and reports[0].size == 1025


def test_without_follow_on_the_cut_warning_is_still_unexpected():
    result = evaluate_log("arm64", TRIGGER, LOG, arm64_golden(follow_on=False), "")
    assert result.verdict == "FAIL"
    assert "report 2: unexpected WARNING in ct_kerne (line 152)" in result.diffs


def _edited(tmp_path: Path, old: bytes, new: bytes) -> Path:
    data = LOG.read_bytes()
    assert old in data
    log = tmp_path / LOG.name
    log.write_bytes(data.replace(old, new))
    return log


def test_a_cut_header_of_another_function_is_not_a_follow_on(tmp_path):
    log = _edited(tmp_path, b"128 ct_kerne#", b"128 do_idl#")
    result = evaluate_log("arm64", TRIGGER, log, arm64_golden(), "")
    assert result.verdict == "FAIL"
    assert "report 2: unexpected WARNING in do_idl (line 152)" in result.diffs


def test_a_complete_line_with_a_short_function_is_not_a_follow_on(tmp_path):
    # the same text, but the console ended its line: the function is
    # ct_kerne, whole, and not ct_kernel_exit
    log = _edited(tmp_path, b"128 ct_kerne#", b"128 ct_kerne\r\r\n#")
    result = evaluate_log("arm64", TRIGGER, log, arm64_golden(), "")
    assert result.verdict == "FAIL"
    assert not any(r.header_cut for r in scan_console(log).reports)


def test_a_header_cut_before_its_function_is_not_a_follow_on(tmp_path):
    log = _edited(tmp_path, b"context_tracking.c:128 ct_kerne#", b"context_track#")
    result = evaluate_log("arm64", TRIGGER, log, arm64_golden(), "")
    assert result.verdict == "FAIL"


def test_the_follow_on_never_stands_in_for_the_expected_report(tmp_path):
    data = LOG.read_bytes()
    start = data.index(b"[    0.406229] usercopy:")
    end = data.index(b"---[ end trace")
    end = data.index(b"\n", end) + 1
    log = tmp_path / LOG.name
    log.write_bytes(data[:start] + data[end:])
    result = evaluate_log("arm64", TRIGGER, log, arm64_golden(), "")
    assert result.verdict == "FAIL"
    assert any(d.startswith("report 1 ") for d in result.diffs), result.diffs


def test_a_harness_line_never_continues_a_cut_kernel_line():
    lines = ["[    0.429205] ------------[ cut here ]------------\n",
             "[    0.429614] WARNING: CPU: 0 PID: 0 at " + CUT + "\n",
             TRAILER + "end-marker; boot snapshot; 0.40s\n"]
    assert [r.title for r in iter_reports(lines)] == ["WARNING in ct_kerne"]


class _Drip(io.BytesIO):
    """Gives at most n bytes a read, so the trailer spans reads."""

    def __init__(self, data: bytes, n: int) -> None:
        super().__init__(data)
        self.n = n

    def read(self, size: int | None = -1) -> bytes:
        return super().read(self.n)


def test_the_trailer_is_split_off_whatever_the_reads():
    data = LOG.read_bytes()
    for n in (1, 7, 31, 64, 1 << 16):
        own = _TrailerOwnLine(_Drip(data, n))
        out = b"".join(iter(lambda: own.read(1 << 16), b""))
        assert out == data.replace(b"ct_kerne#", b"ct_kerne\n#"), n
        assert own.console_cut and own.cut_line == data.count(b"\n"), n


def test_a_trailer_on_its_own_line_is_left_alone():
    data = b"USERCOPY-LAB-END trigger=X outcome=killed\r\r\n" + TRAILER.encode() + b"end\n"
    own = _TrailerOwnLine(_Drip(data, 5))
    assert b"".join(iter(lambda: own.read(4096), b"")) == data
    assert not own.console_cut
