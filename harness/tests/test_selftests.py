"""The upstream LKDTM selftest runner (run.sh) in the guest, and the
comparison of its verdicts with the golden files'.

Consoles: testdata/selftests/ (run.sh in the lab guest, see its README) and
testdata/console-series/default/ and seeds/ (our runner, same kernel series).
"""
from __future__ import annotations

import copy
import dataclasses
import os
import subprocess
from pathlib import Path

import pytest

from usercopy_lab.judge.selftests import (DEFAULT_EXPECT, evaluate_selftest_log, grep_eqi,
                                          lines_after_start, upstream_expect)
from usercopy_lab.output.selftests_comparison import COMPARISON_MD, compare, write_comparison
from usercopy_lab.run.suite import SuiteError, load_suites
from usercopy_lab.run.trigger_run import evaluate_log

REPO = Path(__file__).resolve().parents[2]
TESTDATA = Path(__file__).parent / "testdata"
SELFTESTS = TESTDATA / "selftests"
DEFAULT = TESTDATA / "console-series" / "default"
SEEDS = TESTDATA / "console-series" / "seeds"
# The per-cpu triggers XFAIL on the uniprocessor lab kernels; their console
# on the SMP kernel of `make series-vmalloc-proof` is in console-smp/.
SMP = TESTDATA / "console-smp"
SUITES = load_suites(REPO / "suites.toml")
GOLDEN = SUITES["default"].golden()
TREE = Path(os.environ.get("USERCOPY_LAB_TREE", REPO / "build" / "linux-source-6.1"))

def test_upstream_expectation_of_a_tests_txt_column():
    assert upstream_expect("") == (DEFAULT_EXPECT, 1)
    assert upstream_expect("repeat:2 ok: stack canaries differ") == \
        ("ok: stack canaries differ", 2)
    assert upstream_expect("call trace:|UBSAN: array-index-out-of-bounds") == \
        ("call trace:|UBSAN: array-index-out-of-bounds", 1)


def test_grep_is_posix_ere_case_insensitive():
    assert grep_eqi("SL[AU]B object", "usercopy: ... from slab object 'x'")
    assert not grep_eqi("copy_to_user() failed", "lkdtm: copy_to_user() failed")
    assert grep_eqi(r"copy_to_user\(\) failed", "lkdtm: copy_to_user() failed")
    with pytest.raises(ValueError, match="grep -E rejects"):
        grep_eqi("a(b", "a(b")


@pytest.mark.parametrize("trigger", [t.name for t in SUITES["default"].triggers()
                                     if not t.skip_reason])
def test_tests_txt_means_what_run_sh_greps_on_the_real_console(trigger):
    """Our tests.txt read the upstream way: `grep -E -qi EXPECT` over what
    the trigger added to the console of the default suite, or, for the
    seed-cache triggers that XFAIL there (run.sh: SKIP), of the seeds suite,
    and for the per-cpu ones of the SMP kernel.  A trigger that XFAILs on
    every kernel here (USERCOPY_WHITELIST_CAIF_*: 6.1's known defect) has
    no console that shows its text: there the text must not match and
    XFAIL must be said, so that run.sh says SKIP, never ok."""
    [line] = [t for t in SUITES["default"].triggers() if t.name == trigger]
    pattern, _ = upstream_expect(line.expected_text)
    console = DEFAULT / f"{trigger}.log"
    for other in (SEEDS, SMP):
        if GOLDEN[trigger].outcome == "xfail" and (other / f"{trigger}.log").is_file():
            assert grep_eqi("XFAIL:", lines_after_start(console.read_text(errors="replace")))
            console = other / f"{trigger}.log"
    new = lines_after_start(console.read_text(errors="replace"))
    if GOLDEN[trigger].outcome == "xfail" and console.parent == DEFAULT:
        assert grep_eqi("XFAIL:", new) and not grep_eqi(pattern, new), pattern
        return
    assert grep_eqi(pattern, new), pattern


def test_no_tests_txt_text_is_a_fail_line():
    """run.sh counts a test as ok when its text is on the console: a text
    that a FAIL: line of LKDTM carries would count a known failure as ok
    (the CAIF lines did until 2026-12-06, issue 36)."""
    fails = "".join(ln for console in sorted(DEFAULT.glob("*.log"))
                    for ln in lines_after_start(console.read_text(errors="replace"))
                    .splitlines(keepends=True) if "lkdtm: FAIL:" in ln)
    for t in SUITES["default"].triggers():
        if not t.skip_reason:
            pattern, _ = upstream_expect(t.expected_text)
            assert not grep_eqi(pattern, fails), t.name


def _st(kind: str, trigger: str):
    return evaluate_selftest_log(f"selftests-{kind}", trigger,
                                 SELFTESTS / kind / f"{trigger}.log", GOLDEN.get(trigger))


def test_run_sh_verdicts_from_real_consoles():
    ok = _st("tree", "USERCOPY_SLAB_WHITELIST_TO")
    assert (ok.verdict, ok.summary) == ("PASS", "USERCOPY_SLAB_WHITELIST_TO: saw 'call trace:': ok")
    fail = _st("lab", "USERCOPY_VMALLOC")
    assert fail.verdict == "FAIL"
    assert fail.diffs == ["run.sh: USERCOPY_VMALLOC: missing 'copy_to_user() failed, "
                          "but lacked Oops': [FAIL]"]
    skip = _st("tree", "USERCOPY_VMALLOC")
    assert (skip.verdict, skip.summary) == (
        "SKIP", "not run: tree/tests.txt does not list USERCOPY_VMALLOC")
    assert _st("lab", "USERCOPY_FOLIO").verdict == "PASS"


def test_a_run_sh_console_cut_before_the_end_marker_is_an_error(tmp_path):
    text = (SELFTESTS / "lab" / "USERCOPY_FOLIO.log").read_text()
    log = tmp_path / "USERCOPY_FOLIO.log"
    log.write_text(text[:text.index("USERCOPY-LAB-END")])
    r = evaluate_selftest_log("selftests-lab", "USERCOPY_FOLIO", log, None, "timeout")
    assert r.verdict == "ERROR" and r.summary.startswith("timeout; run.sh: ")


def _comparison(golden_override=None):
    results = []
    for trigger in ("USERCOPY_VMALLOC", "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_FOLIO"):
        golden = (golden_override or {}).get(trigger, GOLDEN[trigger])
        results.append(evaluate_log("default", trigger, DEFAULT / f"{trigger}.log", golden, ""))
    for kind in ("tree", "lab"):
        for log in sorted((SELFTESTS / kind).glob("*.log")):
            results.append(_st(kind, log.stem))
    return results, {row.trigger: row for row in compare(results, SUITES)}


def test_comparison_says_why_run_sh_and_the_golden_file_differ():
    _, rows = _comparison()
    vmalloc = rows["USERCOPY_VMALLOC"]
    assert vmalloc.golden_verdict == "PASS"
    assert (vmalloc.runsh["tree"].verdict, vmalloc.runsh["lab"].verdict) == ("SKIP", "FAIL")
    assert vmalloc.why[0] == "tree: not run: tree/tests.txt does not list USERCOPY_VMALLOC"
    assert "as a POSIX ERE it does not match itself" in vmalloc.why[1]
    whitelist = rows["USERCOPY_SLAB_WHITELIST_TO"]
    assert whitelist.runsh["tree"].expect == "call trace:"
    assert [w.split(":")[0] for w in whitelist.why] == ["lab"]   # tree agrees
    assert rows["USERCOPY_FOLIO"].why == []


def test_comparison_takes_each_verdict_from_the_suite_that_ran_the_trigger():
    # [seeds] boots the same kernel with the same command line as [default]
    # and runs checks only: listed first, it must not hide default's verdicts.
    results, _ = _comparison()
    seeds_check = dataclasses.replace(results[0], suite="seeds", trigger="audit-slab-caches")
    suites = {"seeds": SUITES["seeds"], **{k: v for k, v in SUITES.items() if k != "seeds"}}
    assert (SUITES["seeds"].kernel, SUITES["seeds"].cmdline) == \
        (SUITES["default"].kernel, SUITES["default"].cmdline)
    rows = {row.trigger: row for row in compare([seeds_check, *results], suites)}
    assert rows["USERCOPY_VMALLOC"].golden_verdict == "PASS"
    assert rows["USERCOPY_SLAB_WHITELIST_TO"].golden_verdict == "PASS"


def test_comparison_names_what_the_golden_file_checks_and_run_sh_does_not():
    # A window that moved by 8 bytes: the golden file's offset no longer
    # matches, run.sh's 'call trace:' still does.
    golden = copy.deepcopy(GOLDEN["USERCOPY_SLAB_WHITELIST_TO"])
    golden.reports[0].fields["offset"] = "263"
    _, rows = _comparison({"USERCOPY_SLAB_WHITELIST_TO": golden})
    row = rows["USERCOPY_SLAB_WHITELIST_TO"]
    assert row.golden_verdict == "FAIL" and row.runsh["tree"].verdict == "PASS"
    assert row.why[0] == ("tree: run.sh only needs 'call trace:' somewhere in the new dmesg "
                          "lines; the golden file also checks: report 1 offset: expected "
                          "'263', saw 255")


def test_comparison_table_is_written_only_for_runs_with_selftests(tmp_path):
    results, _ = _comparison()
    rows = write_comparison(results, SUITES, tmp_path)
    table = (tmp_path / COMPARISON_MD).read_text()
    assert "| trigger | golden (our runner) | run.sh + tree/tests.txt | " \
           "run.sh + lkdtm-tests/tests.txt | why they differ |" in table
    assert table.count("\n| USERCOPY_") == len(rows) == 3
    other = tmp_path / "other"
    other.mkdir()
    assert write_comparison([r for r in results if r.suite == "default"], SUITES, other) == []
    assert list(other.iterdir()) == []


def test_selftests_key_must_name_tree_or_lab(tmp_path):
    (tmp_path / "t.txt").write_text("A\n")
    (tmp_path / "suites.toml").write_text(
        '[s]\nkernel = "default"\ngolden = "g"\ntriggers = "t.txt"\nselftests = "upstream"\n')
    with pytest.raises(SuiteError, match='selftests: must be "tree" or "lab"'):
        load_suites(tmp_path / "suites.toml")


def test_initramfs_gets_run_sh_one_script_per_listed_test_and_comm():
    if not TREE.is_dir():
        pytest.skip(f"{TREE} not extracted yet (make tree)")
    out = subprocess.run([str(REPO / "scripts/initramfs-selftests.sh"), str(TREE),
                          str(REPO / "lkdtm-tests/tests.txt"), "/bin/busybox"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert f"file /selftests/lkdtm/run.sh " \
           f"{(TREE / 'tools/testing/selftests/lkdtm/run.sh').resolve()} 0755 0 0" in out
    assert "slink /selftests/lkdtm/lab/USERCOPY_VMALLOC.sh ../run.sh 0777 0 0" in out
    assert "slink /selftests/lkdtm/tree/USERCOPY_KERNEL.sh ../run.sh 0777 0 0" in out
    # 6.1's own tests.txt predates USERCOPY_VMALLOC: no script, as upstream.
    assert "slink /selftests/lkdtm/tree/USERCOPY_VMALLOC.sh ../run.sh 0777 0 0" not in out
    busybox_has_comm = "comm" in subprocess.run(["/bin/busybox", "--list"], capture_output=True,
                                                 text=True, check=True).stdout.split()
    assert any(x.startswith("file /bin/comm ") for x in out) != busybox_has_comm


def test_selftests_suites_restore_the_default_suites_snapshot(tmp_path):
    # lab.selftests= goes into the console request, not the machine: the
    # selftests suites restore the default suite's snapshot (one boot to
    # the ready point instead of three), and a full boot still carries it
    # on the command line.
    from usercopy_lab.run.run_loop import plan
    from usercopy_lab.run.suite import load_inputs

    names = ["default", "selftests-tree", "selftests-lab"]
    suites = [SUITES[n] for n in names]
    jobs = plan(suites, load_inputs({n: SUITES[n] for n in names}),
                ["USERCOPY_SLAB_SIZE_TO"], tmp_path, tmp_path / "initramfs.cpio", "tcg")
    specs = {j.suite: j.spec for j in jobs}
    assert len({s.machine for s in specs.values()}) == 1
    assert specs["default"].request() == "trigger=USERCOPY_SLAB_SIZE_TO"
    assert specs["selftests-tree"].request() == "selftests=tree trigger=USERCOPY_SLAB_SIZE_TO"
    assert "lab.selftests=lab" in specs["selftests-lab"].cmdline().split()
    assert "lab.selftests" not in specs["default"].cmdline()
