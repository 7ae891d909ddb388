"""The results page (output/html_page.py) made from real runs' results
(testdata/results-page/, whose README says where each run came from):
one cell per trigger and suite with its verdict as text, every link to a
file that is there, the diff rows against the run before and against
--baseline, the trigger pages' parts, and bad input as one line, exit 2."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from usercopy_lab.model import TriggerResult, Verdict
from usercopy_lab.cli import main as cli_main
from usercopy_lab.output.html_page import INDEX, write_page
from usercopy_lab.output.page_check import check_page, read_page
from usercopy_lab.output.page_diff import DiffKind, classify

FIXTURE = Path(__file__).parent / "testdata" / "results-page" / "results"
NOW, BEFORE = "20261206-122629-8771", "20261206-102909-11035"
MODULE_FAIL, MODULE_FIXED = "20261206-131357-9950", "20261206-132009-20277"


@pytest.fixture()
def results(tmp_path) -> Path:
    root = tmp_path / "results"
    shutil.copytree(FIXTURE, root)
    return root


def test_every_trigger_has_its_cell_and_every_link_resolves(results):
    index = write_page(results / NOW)
    assert index == results / NOW / INDEX
    assert check_page(results / NOW) == []
    cells = read_page(index).cells
    assert len(cells) == 9
    assert ("nokmem", "USERCOPY_KMALLOC_SPLIT_TO", "PASS", "Δ PASS") in cells
    assert ("selftests-tree", "USERCOPY_VMALLOC", "SKIP", "SKIP") in cells
    for suite, trigger, _, _ in cells:
        page = results / NOW / "page" / suite / f"{trigger}.html"
        assert page.is_file()
        assert f'href="../../{suite}/{trigger}.log"' in page.read_text()


def test_the_diff_against_the_run_before_with_the_same_suites(results):
    text = write_page(results / NOW).read_text()
    assert f">{BEFORE}</a> (the run before with the same suites)" in text
    rows = read_page(results / NOW / INDEX).diff_rows
    assert sorted(rows) == ["CHANGED_SIGNATURE", "CHANGED_VERDICT", "FIRST"]
    assert "XFAIL: PF_CAIF sockets do not come" in text     # CAIF's new verdict, with why


def test_new_failure_and_fixed_with_baseline(results, capsys):
    assert cli_main(["page", "run", str(results / MODULE_FAIL), "--baseline", MODULE_FIXED]) == 0
    assert read_page(results / MODULE_FAIL / INDEX).diff_rows == ["NEW_FAILURE"]
    assert cli_main(["page", "run", str(results / MODULE_FIXED), "--baseline",
                 str(results / MODULE_FAIL / "results.json")]) == 0
    assert read_page(results / MODULE_FIXED / INDEX).diff_rows == ["FIXED"]
    # the module runs' suites differ: neither is the other's automatic baseline
    text = write_page(results / MODULE_FIXED).read_text()
    assert "First run: no earlier finished run of these suites" in text


def test_a_trigger_page_shows_reason_report_console_and_golden(results):
    write_page(results / NOW)
    page = (results / NOW / "page" / "default" / "USERCOPY_WHITELIST_DENTRY_TO.html").read_text()
    for part in ("usercopy_abort exposure SLUB object &#39;dentry&#39; off 55 size 33",
                 "<th scope=\"row\">cache</th><td>dentry</td>",
                 "lkdtm_usercopy_window", "<h2 id=\"golden\">",
                 "class=\"mark-report\"><span class=\"ln\">161 R1</span>",
                 "class=\"mark-marker\"", "class=\"reason\"># "):
        assert part in page, part
    write_page(results / MODULE_FAIL)
    fail = (results / MODULE_FAIL / "page" / "module" /
            "USERCOPY_WHITELIST_CIFS_REQUEST_TO.html").read_text()
    assert '<ul id="diffs">' in fail and "v-FAIL" in fail


@pytest.mark.parametrize("argv, words", [
    (["{tmp}/no-such-run"], "results.json: no such file"),
    (["{results}/" + NOW, "--baseline", "nope"], "--baseline nope: not a run"),
])
def test_bad_input_is_one_line_and_exit_2(results, tmp_path, capsys, argv, words):
    argv = [a.format(tmp=tmp_path, results=results) for a in argv]
    assert cli_main(["page", "run", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err


@pytest.mark.parametrize("entry, words", [
    ('{"suite": "x"}', "not a results.json (triggers[0]: lacks name, verdict)"),
    ('{"suite": "x", "name": "../../../x", "verdict": "PASS"}',
     "not a results.json (triggers[0].name: '../../../x' does not match "),
])
def test_a_broken_results_json_is_one_line(tmp_path, capsys, entry, words):
    (tmp_path / "results.json").write_text('{"triggers": [%s]}' % entry)
    assert cli_main(["page", "run", str(tmp_path)]) == 2
    assert words in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [tmp_path / "results.json"]      # nothing written


def _result(verdict: Verdict, summary: str = "s") -> TriggerResult:
    return TriggerResult("default", "T", verdict, summary, 0.1, "T.log", None)


@pytest.mark.parametrize("before, now, kind", [
    (None, Verdict.PASS, DiffKind.FIRST),
    (Verdict.PASS, None, DiffKind.GONE),
    (Verdict.PASS, Verdict.ERROR, DiffKind.NEW_FAILURE),
    (Verdict.FAIL, Verdict.ERROR, DiffKind.NEW_FAILURE),
    (Verdict.ERROR, Verdict.XFAIL, DiffKind.FIXED),
    (Verdict.PASS, Verdict.SKIP, DiffKind.CHANGED_VERDICT),
    (Verdict.FAIL, Verdict.FAIL, None),
])
def test_diff_kinds(before, now, kind):
    assert classify(before and _result(before), now and _result(now)) == kind
    assert classify(_result(Verdict.PASS, "a"), _result(Verdict.PASS, "b")) \
        == DiffKind.CHANGED_SIGNATURE
