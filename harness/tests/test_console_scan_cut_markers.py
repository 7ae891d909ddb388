"""A marker line cut by printk records, on a real console
(testdata/interleaved/rds-ib-cookie-start-cut.log, README beside it): the
START marker's newline came after four clocksource records, and the
console scan must join the marker with that newline, not with the next
program line it happened to look at."""
from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from usercopy_lab.judge.console_scan import scan_console
from usercopy_lab.judge.golden import load
from usercopy_lab.judge.verdict import Asked, bound_to
from usercopy_lab.reports.console_markers import read_markers
from usercopy_lab.reports.log_lines import begins_record, cut_by_record
from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import evaluate_check_log

REPO = Path(__file__).resolve().parents[2]
CUT = Path(__file__).parent / "testdata" / "interleaved" / "rds-ib-cookie-start-cut.log"


def test_the_fixture_is_what_its_readme_says():
    lines = [line.rstrip("\r") for line in CUT.read_bytes().decode().split("\n")]
    start = next(i for i, line in enumerate(lines) if line.startswith("USERCOPY-LAB-START"))
    assert cut_by_record(lines[start])
    assert all(begins_record(line) for line in lines[start + 1:start + 5])
    assert lines[start + 5] == ""


def test_the_scan_joins_the_marker_with_its_own_rest():
    markers = scan_console(CUT).markers
    assert markers.starts == ["rds-ib-cookie"] and markers.ends == ["rds-ib-cookie"]
    assert len([c for c in markers.checks if c.startswith("PASS:")]) == 3
    assert bound_to("rds-ib-cookie", markers, Asked.CHECK) is None


def test_the_scan_reads_the_markers_the_whole_console_gives():
    """The shortcut (only key lines and what follows them) agrees with
    reading every line."""
    whole = read_markers(CUT.read_bytes().decode().split("\n"))
    scanned = scan_console(CUT).markers
    assert (scanned.starts, scanned.ends, scanned.checks, scanned.lkdtm) == \
        (whole.starts, whole.ends, whole.checks, whole.lkdtm)


def test_match_judges_it_as_the_check_it_is():
    """The console is make mutation-rds's (the RDS mutant, seeds-fallback):
    PASS against the mutant's golden file, FAIL against the suite's --
    never the wrong-trigger ERROR it was before the fix."""
    mutant = load(REPO / "expected-oops/mutant-rds-no-region-fallback/RDS_IB_COOKIE.txt")
    result = evaluate_check_log("seeds-fallback", "rds-ib-cookie", CUT, golden=mutant)
    assert (result.verdict, result.fault) == ("PASS", None), (result.summary, result.diffs)
    suite = load_suites(REPO / "suites.toml")["seeds-fallback"].golden()["RDS_IB_COOKIE"]
    result = evaluate_check_log("seeds-fallback", "rds-ib-cookie", CUT, golden=suite)
    assert (result.verdict, result.fault) == ("FAIL", None), (result.summary, result.diffs)


SERIES = sorted((Path(__file__).parent / "testdata" / "console-series" / "default").glob("*.log"))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(console=st.sampled_from(SERIES), marker=st.sampled_from(["START", "END"]),
       cut=st.integers(min_value=1, max_value=200), records=st.integers(1, 6))
def test_any_cut_of_a_marker_by_any_number_of_records_is_joined(tmp_path, console, marker,
                                                                  cut, records):
    """A real console whose START or END line is cut by 1-6 printk
    records anywhere after its "USERCOPY-LAB-" prefix, the marker's rest
    on the line after them (as the serial console does it): the scan reads
    the same markers as before.  A cut inside the prefix is a known gap
    of the scan (it finds lines by that prefix; docs/reliability.md): at
    run time such a console falls back to a full boot."""
    lines = console.read_bytes().decode("utf-8", "replace").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(f"USERCOPY-LAB-{marker} "))
    line = lines[at].rstrip("\r")
    k = min(len("USERCOPY-LAB-") + cut, len(line) - 1)
    glued = [f"{line[:k]}[    9.{i:06d}] clocksource: record {i}" if i == 0
             else f"[    9.{i:06d}] clocksource: record {i}" for i in range(records)]
    cut_console = lines[:at] + glued + [line[k:]] + lines[at + 1:]
    path = tmp_path / f"{console.stem}-{marker}-{k}-{records}.log"
    path.write_bytes("\n".join(cut_console).encode())
    before = scan_console(console).markers
    after = scan_console(path).markers
    assert (after.starts, after.ends, after.outcome) == (before.starts, before.ends,
                                                        before.outcome)
