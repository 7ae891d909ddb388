"""The parser's open report as a state machine (reports/open_report.py):
its phases and their transitions, and the pieces of the segmenter that
route lines to it (report_routing.py) and join wrapped lines (line_joins.py)."""
from __future__ import annotations

from pathlib import Path

from usercopy_lab.reports.line_joins import continues_line, join_line
from usercopy_lab.reports.log_lines import LogLine, parse_line
from usercopy_lab.reports.oops_parser import iter_reports
from usercopy_lab.reports.open_report import (MAX_HEADER_LINES, MAX_UNKNOWN_RUN, Frames, Opener,
                                              OpenReport, ReportPhase)
from usercopy_lab.reports.report_analysis import RawReport
from usercopy_lab.reports.report_routing import continues_report, ends_report, owner
from usercopy_lab.reports.segmenter import Segmenter
from usercopy_lab.reports.trace_layout import TRIGGERS, header_group

TESTDATA = Path(__file__).parent / "testdata"
USERCOPY = ("usercopy: Kernel memory exposure attempt detected from SLUB object "
            "'kmalloc-64' (offset 0, size 100)!")
WARNING = "WARNING: CPU: 0 PID: 1 at mm/slub.c:10 foo+0x1/0x2"


def _opened(text: str, ctx: str = "k", stamped: bool = True) -> OpenReport:
    group = header_group(text)
    assert group is not None
    cur = OpenReport.start(ctx, RawReport("<t>", 1, 1, [], stamped=stamped), group, text, 1)
    cur.take(1, text, LogLine(text, stamped=stamped, width=len(text)), group)
    return cur


def _feed(cur: OpenReport, *lines: str) -> list[bool]:
    """Offer cur each line as the segmenter does; whether it took each."""
    taken = []
    for text in lines:
        ok = cur.absorb(text)
        if ok:
            cur.take(cur.raw.end_line + 1, text, LogLine(text))
        taken.append(ok)
    return taken


def test_a_syzkaller_header_opens_in_header_phase():
    cur = _opened(WARNING)
    assert (cur.phase, cur.opener, cur.frames) == (ReportPhase.HEADER, Opener.SYZ_HEADER, Frames.NONE)
    assert not cur.awaits_syz_header


def test_a_prelude_awaits_its_syzkaller_header_until_one_follows():
    cur = _opened(USERCOPY)
    assert cur.opener is Opener.PRELUDE and cur.awaits_syz_header
    bug = "kernel BUG at mm/usercopy.c:99!"
    assert continues_report(cur, bug, header_group(bug))
    cur.syz_header_followed()
    assert cur.opener is Opener.JOINED and not cur.awaits_syz_header
    assert not continues_report(cur, WARNING, header_group(WARNING))


def test_frames_move_it_to_trace_and_a_root_frame_completes_the_trace():
    cur = _opened(WARNING)
    assert _feed(cur, "Modules linked in: lkdtm", "Call Trace:", " foo+0x1/0x2") == [True] * 3
    assert (cur.phase, cur.frames, cur.trace_complete) == (ReportPhase.TRACE, Frames.PRINTED, False)
    _feed(cur, " entry_SYSCALL_64_after_hwframe+0x44/0xae")
    assert cur.trace_complete
    _feed(cur, "Call Trace:")       # a new trace starts over
    assert not cur.trace_complete and cur.phase is ReportPhase.TRACE


def test_a_trace_cut_by_other_output_is_cut_one_at_the_input_end_is_not():
    at_end, cut = _opened(WARNING), _opened(WARNING)
    for cur in (at_end, cut):
        _feed(cur, "Call Trace:", " foo+0x1/0x2")
    at_end.close(interrupted=False)
    assert not at_end.raw.cut and not at_end.raw.ended
    cut.close(interrupted=True)
    assert cut.raw.cut and not cut.raw.ended


def test_the_end_marker_ends_it_and_then_only_tails_and_frames_join():
    cur = _opened(WARNING)
    _feed(cur, "Call Trace:", " foo+0x1/0x2", "---[ end trace 0000000000000000 ]---")
    assert cur.phase is ReportPhase.ENDED
    assert not cur.absorb("some unrelated line")
    assert cur.absorb(" bar+0x3/0x4")
    cur.close(interrupted=True)
    assert cur.raw.ended and not cur.raw.cut


def test_a_panic_after_the_end_marker_reads_a_trace_again():
    cur = _opened(WARNING)
    _feed(cur, "---[ end trace 0000000000000000 ]---")
    panic = "Kernel panic - not syncing: panic_on_warn set ..."
    assert continues_report(cur, panic, header_group(panic))
    cur.panic_after_end()
    assert cur.phase is ReportPhase.TRACE and cur.frames is Frames.NONE


def test_unrelated_lines_end_a_trace_sooner_than_a_header():
    cur = _opened(WARNING)
    assert all(_feed(cur, *["noise"] * MAX_HEADER_LINES)) and not cur.absorb("noise")
    cur = _opened(WARNING)
    _feed(cur, "Call Trace:")
    assert all(_feed(cur, *["noise"] * MAX_UNKNOWN_RUN)) and not cur.absorb("noise")


def test_a_detached_opener_reads_its_header_again_when_its_body_comes():
    cur = _opened(WARNING)
    _feed(cur, "noise", "noise")
    cur.body_came()
    assert (cur.phase, cur.unknown, cur.after_trace) == (ReportPhase.HEADER, 0, 0)


def test_nmi_backtrace_lines_of_cpus_go_to_the_report_that_asked():
    cur = _opened(WARNING)
    cpu_line = parse_line("[   12.000000][    C1] NMI backtrace for cpu 1")
    assert owner({"k": cur}, "C1", cpu_line) is None
    _feed(cur, "Sending NMI from CPU 0 to CPUs 1:")
    assert cur.nmi_backtrace and owner({"k": cur}, "C1", cpu_line) is cur


def test_fault_injection_ends_the_report():
    assert ends_report("FAULT_INJECTION: forcing a failure.")
    assert not ends_report(" foo+0x1/0x2")


def test_a_wrapped_line_is_joined_to_the_line_it_continues():
    text = "BUG: KASAN: slab-out-of-bounds in"        # broken before its end
    cur = _opened(text, stamped=False)
    assert cur.last.broken
    rest = parse_line("foo+0x1/0x2")
    assert continues_line(cur, 2, rest, still_open=True)
    assert not continues_line(cur, 3, rest, still_open=True)      # not the next line
    assert not continues_line(cur, 2, rest, still_open=False)
    join_line(cur, 2, rest, rest.text)
    assert cur.raw.lines == ["BUG: KASAN: slab-out-of-bounds in foo+0x1/0x2"]
    assert not cur.last.broken and cur.last.number == cur.raw.end_line == 2


def test_header_phase_has_no_frames_on_real_consoles():
    """The routing relies on it: a report in its header took no frame."""
    for path in sorted(TESTDATA.rglob("*.log"))[:40]:
        seg = Segmenter(str(path))
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if seg.busy or any(t in line for t in TRIGGERS):     # as iter_reports does
                seg.feed(lineno, line)
            for cur in seg.book.open.values():
                assert cur.phase is not ReportPhase.HEADER or cur.frames is Frames.NONE, path
        seg.close_all()
        assert [r.to_json() for r in seg.ready()] == \
            [r.to_json() for r in iter_reports(path.read_text(errors="replace").splitlines(),
                                               str(path))]
