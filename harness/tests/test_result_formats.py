"""KTAP and JUnit renderings of real results, read back by other parsers.

The results come from real captured consoles (testdata/console-series and
testdata/console) matched against the repository's golden files, so every
verdict appears: PASS, FAIL (BUG: no golden file), XFAIL (nosplit), SKIP
(a trigger DIRECT does not list) and ERROR (PANIC: no end marker).  The
KTAP goes through the kernel tree's own tools/testing/kunit/kunit.py
parse; the JUnit through ElementTree (and python3-junitparser if present).
"""
from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from collections import Counter
from pathlib import Path

import pytest

from usercopy_lab.cli import main
from usercopy_lab.output.format_check import (check_junit, check_kunit, check_run, load_expected,
                                              run_kunit_parse)
from usercopy_lab.output.html_page import write_page
from usercopy_lab.output.result_formats import (JUNIT_FILE, KTAP_FILE, KUNIT_STATUS, ktap_text,
                                                read_junit_verdicts, write_formats)
from usercopy_lab.output.results_report import ResultsJson, write_json
from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import evaluate_log
from usercopy_lab.model import TriggerResult

REPO = Path(__file__).resolve().parents[2]
TESTDATA = Path(__file__).parent / "testdata"
SUITES = load_suites(REPO / "suites.toml")
# The kernel tree: `make unit-test` passes the Makefile's $(TREE); without
# it, the default build folder.  Only a tree that is not there skips.
TREE = Path(os.environ.get("USERCOPY_LAB_TREE", REPO / "build" / "linux-source-6.1"))
KUNIT = TREE / "tools/testing/kunit/kunit.py"
META = {"run_id": "test", "accel": "tcg"}


def real_results() -> list[TriggerResult]:
    results = []
    for suite in ("default", "nosplit"):
        golden = SUITES[suite].golden()
        for t in SUITES[suite].triggers():
            if t.skip_reason:          # '#NAME reason': never booted
                continue
            log = TESTDATA / "console-series" / suite / f"{t.name}.log"
            results.append(evaluate_log(suite, t.name, log, golden.get(t.name), ""))
    for name in ("NO_SUCH_TRIGGER", "PANIC", "BUG"):
        results.append(evaluate_log("default", name, TESTDATA / "console" / f"{name}.log",
                                    None, ""))
    return results


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run")
    results = real_results()
    write_json(results, out / "results.json", META)
    write_formats(results, META, out)
    write_page(out)                 # the run's index.html, which check_run checks too
    return out


def test_the_fixture_covers_every_verdict(run_dir):
    verdicts = Counter(e.verdict for e in load_expected(run_dir / "results.json"))
    assert set(verdicts) == {"PASS", "FAIL", "XFAIL", "SKIP", "ERROR"}, verdicts


def test_ktap_says_verdict_diffs_log_and_signature(run_dir):
    text = (run_dir / KTAP_FILE).read_text()
    lines = text.splitlines()
    assert lines[:2] == ["KTAP version 1", "1..2"]
    assert "  # Subtest: default" in lines and "  # Subtest: nosplit" in lines
    assert "  ok 1 USERCOPY_SLAB_SIZE_TO" in lines
    assert "  # diff: golden: no golden file for BUG" in lines
    assert any(x.startswith("  not ok ") and x.endswith(" BUG") for x in lines)
    assert any(x.endswith(" PANIC # ERROR kernel-panic: no end marker; saw: kernel panic: dumptest")
               for x in lines)
    assert any(x.endswith(" NO_SUCH_TRIGGER # SKIP NO_SUCH_TRIGGER is not listed by "
                          "provoke-crash/DIRECT") for x in lines)
    assert any(re.fullmatch(r"  ok \d+ USERCOPY_KMALLOC_SPLIT_TO # XFAIL this kernel does not "
                            r"split user-sized kmalloc caches", x) for x in lines)
    log = TESTDATA / "console-series" / "default" / "USERCOPY_SLAB_SIZE_TO.log"
    assert f"  # log: {log}" in lines
    assert ("  # report 1: usercopy_abort exposure SLUB object 'kmalloc-1k' off 16 size 1024 "
            "(at mm/usercopy.c:132, rip usercopy_abort, guilty do_usercopy_slab_size) "
            "signature f16b2e885c6193ea, log line 156") in lines
    assert lines[-1] == "ok 2 nosplit" and "not ok 1 default" in lines


def test_kunit_py_parse_counts_agree_with_ours(run_dir):
    if not TREE.is_dir():
        pytest.skip(f"{TREE} not extracted yet (make tree)")
    assert KUNIT.is_file(), f"{TREE} exists but has no {KUNIT.name}"
    kunit = run_kunit_parse(KUNIT, run_dir / KTAP_FILE)
    expected = load_expected(run_dir / "results.json")
    assert check_kunit(expected, kunit) == []
    ours = Counter(KUNIT_STATUS[e.verdict] for e in expected)
    assert kunit.counts == {"passed": ours["PASS"], "failed": ours["FAIL"],
                            "skipped": ours["SKIP"]}
    assert kunit.statuses[("nosplit", "USERCOPY_KMALLOC_SPLIT_TO")] == "PASS"   # XFAIL
    assert kunit.statuses[("default", "PANIC")] == "FAIL"                    # ERROR
    assert check_run(run_dir, KUNIT) == []


def test_kunit_check_notices_a_wrong_result_line(run_dir, tmp_path):
    if not KUNIT.is_file():
        pytest.skip(f"{KUNIT} not there (make tree)")
    bad = tmp_path / "bad.ktap"
    bad.write_text((run_dir / KTAP_FILE).read_text().replace(
        "  ok 2 USERCOPY_SLAB_SIZE_FROM", "  not ok 2 USERCOPY_SLAB_SIZE_FROM"))
    problems = check_kunit(load_expected(run_dir / "results.json"), run_kunit_parse(KUNIT, bad))
    assert "kunit.py: default/USERCOPY_SLAB_SIZE_FROM: expected PASS, parsed FAIL" in problems


def test_junit_parses_and_counts(run_dir):
    root = ET.parse(run_dir / JUNIT_FILE).getroot()
    expected = load_expected(run_dir / "results.json")
    assert root.tag == "testsuites" and root.get("tests") == str(len(expected))
    default = root.find("testsuite[@name='default']")
    assert default.get("failures") == "1" and default.get("errors") == "1"
    bug = default.find("testcase[@name='BUG']")
    assert bug.find("failure").get("type") == "FAIL"
    assert "golden: no golden file for BUG" in bug.find("failure").text
    assert "log: " in bug.find("system-out").text
    split = root.find("testsuite[@name='nosplit']/testcase[@name='USERCOPY_KMALLOC_SPLIT_TO']")
    assert split.find("skipped").get("type") == "xfail"
    assert check_junit(expected, run_dir / JUNIT_FILE) == []
    assert read_junit_verdicts(run_dir / JUNIT_FILE) == {
        (e.suite, e.name): e.verdict for e in expected}


def test_junit_check_notices_a_missing_failure(run_dir, tmp_path):
    tree = ET.parse(run_dir / JUNIT_FILE)
    case = tree.getroot().find("testsuite[@name='default']/testcase[@name='BUG']")
    case.remove(case.find("failure"))
    bad = tmp_path / "bad.xml"
    tree.write(bad)
    problems = check_junit(load_expected(run_dir / "results.json"), bad)
    assert "junit: default/BUG: expected <failure>, found <pass>" in problems
    assert any("failures=1, but 0 <failure> cases" in p for p in problems)


def test_junitparser_reads_it(run_dir):
    junitparser = pytest.importorskip("junitparser")
    xml = junitparser.JUnitXml.fromfile(str(run_dir / JUNIT_FILE))
    results = {(s.name, c.name): [type(r).__name__ for r in c.result]
               for s in xml for c in s}
    assert results[("default", "BUG")] == ["Failure"]
    assert results[("default", "PANIC")] == ["Error"]
    assert results[("default", "USERCOPY_SLAB_SIZE_TO")] == []


def test_console_bytes_xml_cannot_carry_are_escaped(tmp_path):
    r = TriggerResult("default", "X", "FAIL", "saw \x1b[0m\x00", 0.0, "x.log", None,
                      ["report 1: cache \x07"])
    write_formats([r], META, tmp_path)
    case = ET.parse(tmp_path / JUNIT_FILE).getroot().find(".//testcase")
    assert case.find("failure").text == "report 1: cache \\x07"
    assert case.find("failure").get("message") == "FAIL: saw \\x1b[0m\\x00"
    assert ktap_text([r], META).count("not ok 1 X") == 1


def test_match_writes_ktap_and_junit_where_asked(tmp_path, capsys):
    log = TESTDATA / "console-series" / "fallback" / "USERCOPY_KERNEL.log"
    assert main(["match", "--suite", "fallback", str(log), "--ktap", str(tmp_path / "m.ktap"),
                 "--junit", str(tmp_path / "m.xml")]) == 0
    assert "  ok 1 USERCOPY_KERNEL" in (tmp_path / "m.ktap").read_text()
    assert read_junit_verdicts(tmp_path / "m.xml") == {("fallback", "USERCOPY_KERNEL"): "PASS"}


def test_format_check_bad_input_is_one_line(tmp_path, capsys):
    (tmp_path / "results.json").write_text(json.dumps({"triggers": []}))
    assert main(["check", "formats", str(tmp_path), "--kunit", str(KUNIT)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_results_json_rewrites_are_exactly_json_dumps(tmp_path):
    # The run rewrites results.json after every guest from texts encoded
    # once per result; each rewrite must be what json.dumps would write.
    results, path = real_results(), tmp_path / "results.json"
    writer = ResultsJson(path)

    def expect(rs, meta):
        return json.dumps({**meta, "triggers": [r.to_json() for r in rs]}, indent=2) + "\n"

    shown: list[TriggerResult] = []
    for r in [results[3], results[0], results[-1], *results[1:3]]:   # out of plan order
        shown.append(r)
        writer.write(shown, META)
        assert path.read_text() == expect(shown, META)
    writer.write([], META)
    assert path.read_text() == expect([], META)
    results[0] = replace(results[0], summary="changed after its first write")
    final = {**META, "interrupted": False, "not_run": [], "wall_seconds": 1.5}
    writer.write(results, final, fresh=True)
    assert path.read_text() == expect(results, final)
    assert json.loads(path.read_text())["triggers"][0]["summary"] == "changed after its first write"
