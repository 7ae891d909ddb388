"""The exit status of a LAVA run of a suite: what a CI gates on.

`make lava-run` (scripts/lava/run-suite.sh) and `make lava-farm`
(scripts/lava/farm.sh) both end in scripts/lava/judge.sh, which exits with
`usercopy-lab lava compare`'s status: 0 every source agrees and no job is FAIL
or ERROR, 1 every source agrees and some job is FAIL or ERROR (as
`usercopy-lab run`), 3 the sources differ on a job, 2 nothing to judge.

1. compare() and the command line on verdict files written by the lab's
   own writers (results.json, match's JUnit);
2. run-suite.sh itself, end to end, with a stand-in for lava-run that is
   LAVA on a recorded console: it replays the job's steps on it
   (lava/replay.py, which test_lava_replay.py holds to pexpect and to real
   lava-run logs) and writes a lava-run log of what LAVA records; the rest
   (`usercopy-lab lava write`, `lava verdicts`, match, `lava compare`, the
   exit status) is the real thing.  No guest boots.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from usercopy_lab.model import TriggerResult
from usercopy_lab.cli import main as cli_main
from usercopy_lab.lava.jobs import suite_jobs
from usercopy_lab.lava.results import DIFFERENT, FAILED, PASSED, UNUSABLE, compare
from usercopy_lab.output.result_formats import write_formats
from usercopy_lab.output.results_report import write_json
from usercopy_lab.run.suite import load_suites

REPO = Path(__file__).resolve().parents[2]
TESTDATA = Path(__file__).parent / "testdata"
SUITES = load_suites(REPO / "suites.toml")
NOSPLIT = SUITES["nosplit"]
# What each nosplit job is on its own kernel's console (6 PASS, 6 XFAIL).
OWN = {j.name: j.plan.all_pass for j in suite_jobs(NOSPLIT)}


def results(verdicts: dict[str, str]) -> list[TriggerResult]:
    return [TriggerResult("nosplit", name, v, f"{v} here", 0.0, f"{name}.log", None)
            for name, v in verdicts.items()]


def sources(tmp_path: Path, lava: dict[str, str], match: dict[str, str],
            ours: dict[str, str] | None = None) -> dict[str, Path]:
    """LAVA's verdicts as lava/results.py writes them, match's as its JUnit,
    ours as usercopy-lab run's results.json."""
    out = {"LAVA": tmp_path / "lava-results.json", "match": tmp_path / "match-junit.xml"}
    write_json(results(lava), out["LAVA"], {"source": "test"})
    write_formats(results(match), {"command": "match", "suite": "nosplit"}, junit=out["match"])
    if ours is not None:
        out["ours"] = tmp_path / "results.json"
        write_json(results(ours), out["ours"], {"source": "test"})
    return out


def test_all_pass_and_xfail_in_agreement_is_0(tmp_path):
    assert sorted(set(OWN.values())) == ["PASS", "XFAIL"]
    lines: list[str] = []
    assert compare(sources(tmp_path, OWN, OWN, OWN), NOSPLIT, lines.append) == PASSED == 0
    assert lines[-2].startswith("lava: 12 same, 0 different")
    assert lines[-1] == "lava: exit 0: 6 PASS, 6 XFAIL where all agree; 0 different, 0 FAIL or ERROR"


@pytest.mark.parametrize("bad", ["FAIL", "ERROR"])
def test_a_fail_or_error_every_source_agrees_on_is_1(tmp_path, bad):
    wrong = {**OWN, "USERCOPY_MEMDUP_USER_TO": bad}
    lines: list[str] = []
    assert compare(sources(tmp_path, wrong, wrong, wrong), NOSPLIT, lines.append) == FAILED == 1
    assert f"1 {bad}" in lines[-1] and "0 different, 1 FAIL or ERROR" in lines[-1]


def test_every_job_failing_in_agreement_is_1(tmp_path):
    wrong = dict.fromkeys(OWN, "FAIL")
    assert compare(sources(tmp_path, wrong, wrong), NOSPLIT, lambda _: None) == FAILED


def test_lava_and_match_differing_is_3_even_where_all_pass(tmp_path):
    match = {**OWN, "USERCOPY_MEMDUP_USER_TO": "FAIL"}
    lines: list[str] = []
    assert compare(sources(tmp_path, OWN, match), NOSPLIT, lines.append) == DIFFERENT == 3
    # a column per source, named in the head
    assert lines[0].split() == ["job", "LAVA", "match"]
    assert ["DIFFERENT", "nosplit/USERCOPY_MEMDUP_USER_TO", "PASS", "FAIL"] in [
        line.split() for line in lines]
    assert ["same", "nosplit/USERCOPY_MEMDUP_USER_FROM", "PASS", "PASS"] in [
        line.split() for line in lines]
    assert lines[-1].startswith("lava: exit 3:")


def test_a_difference_outranks_a_fail_everyone_agrees_on(tmp_path):
    lava = {**OWN, "USERCOPY_MEMDUP_USER_TO": "FAIL", "USERCOPY_MEMDUP_USER_FROM": "PASS"}
    match = {**lava, "USERCOPY_MEMDUP_USER_FROM": "FAIL"}
    assert compare(sources(tmp_path, lava, match), NOSPLIT, lambda _: None) == DIFFERENT


def test_our_runner_differing_from_lava_and_match_is_3(tmp_path):
    ours = {**OWN, "USERCOPY_KMALLOC_SPLIT_TO": "ERROR"}
    assert compare(sources(tmp_path, OWN, OWN, ours), NOSPLIT, lambda _: None) == DIFFERENT


def test_a_job_one_source_lacks_is_3(tmp_path):
    lava = {n: v for n, v in OWN.items() if n != "USERCOPY_MEMDUP_USER_TO"}
    assert compare(sources(tmp_path, lava, OWN), NOSPLIT, lambda _: None) == DIFFERENT


def test_the_command_line_exits_with_compares_status(tmp_path, capsys):
    match = {**OWN, "USERCOPY_MEMDUP_USER_TO": "FAIL"}
    paths = sources(tmp_path, match, match)
    argv = ["compare", "--suite", "nosplit", "--lava", str(paths["LAVA"]),
            "--match", str(paths["match"])]
    assert cli_main(["lava", *argv]) == FAILED
    assert "lava: exit 1:" in capsys.readouterr().out


@pytest.mark.parametrize("how", ["missing", "not-json", "wrong-shape", "one-source"])
def test_nothing_to_compare_is_2_in_one_line(tmp_path, how):
    paths = sources(tmp_path, OWN, OWN)
    lava = paths["LAVA"]
    if how == "missing":
        lava.unlink()
    elif how == "not-json":
        lava.write_text("{")
    elif how == "wrong-shape":
        lava.write_text(json.dumps({"triggers": ["x"]}))
    argv = ["compare", "--suite", "nosplit", "--lava", str(lava)]
    if how != "one-source":
        argv += ["--match", str(paths["match"])]
    out = run_module(argv)
    assert out.returncode == UNUSABLE == 2
    assert len(out.stderr.splitlines()) == 1 and "Traceback" not in out.stderr


def test_a_bad_option_is_2_in_one_line():
    out = run_module(["compare", "--suite"])
    assert out.returncode == 2
    assert len(out.stderr.splitlines()) == 1 and "usage" not in out.stderr


@pytest.mark.parametrize("suite,log,status", [
    ("lab", "lab--USERCOPY_SLAB_SIZE_TO.lava.yaml", PASSED),
    ("default", "default--USERCOPY_KMALLOC_SPLIT_TO--nosplit-kernel.lava.yaml", FAILED),
])
def test_verdicts_of_real_lava_run_logs_exit_1_on_a_fail(tmp_path, suite, log, status):
    name = log.removesuffix(".lava.yaml").split("--")[1]
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(TESTDATA / "lava" / log, logs / f"{name}.yaml")
    out = run_module(["verdicts", "--suite", suite, "--logs", str(logs)])
    assert out.returncode == status, out.stdout + out.stderr


def run_module(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "harness")}
    return subprocess.run([sys.executable, "-m", "usercopy_lab", "lava", *argv],
                          capture_output=True, text=True, env=env, timeout=120, check=False)


# ------------------------------------------------------- run-suite.sh, end to end

FAKE_LAVA_RUN = '''#!/usr/bin/python3
"""lava-run on a recorded console: $FAKE_LAVA_CONSOLES/NAME.log replayed
through the job's steps as LAVA's interactive action reads them; the log
(stderr) holds the console and what LAVA records.  $FAKE_LAVA_LIE=NAME:
every case of NAME recorded pass, whatever the console says."""
import json, os, sys
from pathlib import Path
import yaml
from usercopy_lab.lava.checks import COMPLETE, SUITE
from usercopy_lab.lava.jobs import LOADER, REPO, find_job
from usercopy_lab.lava.replay import replay
from usercopy_lab.run.suite import load_suites

meta = {}
for item in yaml.load(Path(sys.argv[-1]).read_text(), Loader=LOADER)["metadata"].items():
    meta[str(item[0])] = str(item[1])
name = meta.get("usercopy-lab.trigger") or meta["usercopy-lab.check"]
job = find_job(load_suites(REPO / "suites.toml"), meta["usercopy-lab.suite"], name)
console = (Path(os.environ["FAKE_LAVA_CONSOLES"]) / f"{name}.log").read_text(errors="replace")
rec = replay(job.plan, console)
cases, health = rec.results, rec.health
if os.environ.get("FAKE_LAVA_LIE") == name:
    cases, health = dict.fromkeys(job.plan.cases, "pass"), COMPLETE
def log(lvl, msg):
    print(json.dumps({"dt": "2026-12-06T00:00:00.000000", "lvl": lvl, "msg": msg}),
          file=sys.stderr)
for line in console.splitlines():
    log("target", line)
for case, result in cases.items():
    log("results", {"definition": SUITE, "case": case, "result": result})
log("results", {"definition": "lava", "case": "job",
                "result": "pass" if health == COMPLETE else "fail", "error_msg": rec.error})
'''

needs_run_suite = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("bc"),
    reason="run-suite.sh wants root (lava-run does) and bc")


def run_suite(tmp_path: Path, suite: str, consoles: dict[str, Path], lie: str = ""
              ) -> tuple[int, str]:
    """run-suite.sh on SUITE's jobs (on 'another kernel': no runner of
    ours), two at a time, lava-run replaying CONSOLES; its status and output."""
    pytest.importorskip("lava_common", reason="lava-common not installed (make lava)")
    bin_dir, console_dir = tmp_path / "bin", tmp_path / "consoles"
    bin_dir.mkdir()
    console_dir.mkdir()
    (bin_dir / "lava-run").write_text(FAKE_LAVA_RUN)
    (bin_dir / "lava-run").chmod(0o755)
    for name, path in consoles.items():
        shutil.copy(path, console_dir / f"{name}.log")
    for name in ("initramfs.cpio", "bzImage"):
        (tmp_path / name).write_bytes(b"")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
           "PYTHONPATH": str(REPO / "harness"), "PYTHON": sys.executable, "LAVA_PARALLEL": "2",
           "FAKE_LAVA_CONSOLES": str(console_dir), "FAKE_LAVA_LIE": lie}
    out = subprocess.run(
        [str(REPO / "scripts/lava/run-suite.sh"), str(tmp_path / "build"),
         str(tmp_path / "initramfs.cpio"), str(tmp_path / "results"), suite,
         str(tmp_path / "bzImage")],
        capture_output=True, text=True, env=env, timeout=600, check=False)
    return out.returncode, out.stdout + out.stderr


def consoles_of(suite: str, **instead: str) -> dict[str, Path]:
    """The recorded console of each of SUITE's jobs on its own kernel,
    NAME=SUITE2 taking NAME's from SUITE2's instead."""
    return {j.name: TESTDATA / "console-series" / instead.get(j.name, suite) / f"{j.name}.log"
            for j in suite_jobs(SUITES[suite])}


@needs_run_suite
def test_run_suite_where_all_pass_or_xfail_exits_0(tmp_path):
    status, output = run_suite(tmp_path, "nosplit", consoles_of("nosplit"))
    assert status == 0, output
    assert "lava: exit 0: 6 PASS, 6 XFAIL where all agree" in output


@needs_run_suite
def test_run_suite_with_a_fail_lava_and_match_agree_on_exits_1(tmp_path):
    """The default suite's console under nokmem's golden file: the cache
    is usersized-kmalloc-cg-1k, not -1k (a wrong kernel, as the runs with
    2 or 47 FAILs that exited 0 before)."""
    consoles = consoles_of("nokmem", USERCOPY_KMALLOC_SPLIT_CG_TO="default")
    status, output = run_suite(tmp_path, "nokmem", consoles)
    assert status == 1, output
    assert "DIFFERENT" not in output
    assert "lava: exit 1: 1 FAIL, 11 PASS where all agree; 0 different, 1 FAIL or ERROR" in output


@needs_run_suite
def test_run_suite_where_lava_and_match_differ_exits_3(tmp_path):
    consoles = consoles_of("nokmem", USERCOPY_KMALLOC_SPLIT_CG_TO="default")
    status, output = run_suite(tmp_path, "nokmem", consoles, lie="USERCOPY_KMALLOC_SPLIT_CG_TO")
    assert status == 3, output
    assert re.search(r"^ +job +LAVA +match\b", output, re.M), output
    assert re.search(r"^DIFFERENT +nokmem/USERCOPY_KMALLOC_SPLIT_CG_TO +PASS +FAIL\b", output,
                     re.M), output
