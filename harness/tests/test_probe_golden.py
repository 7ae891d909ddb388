"""In-guest probes with golden files (expected-oops/<suite>/NAME.txt), on
the real consoles of the RDS probes (testdata/rds/) and of the Anybus-S
probe (testdata/anybus/; each folder's README.md says where they come
from): the fixed kernels, and the test-only mutants without the regions."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from usercopy_lab import cli
from usercopy_lab.run import run_loop
from usercopy_lab.judge.golden import load, load_dir
from usercopy_lab.run.suite import load_inputs, load_suites
from usercopy_lab.run.trigger_run import check_golden_name, evaluate_check_log

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "testdata"
RDS = DATA / "rds"
SUITES = load_suites(REPO / "suites.toml")
MUTANT = REPO / "expected-oops"

# (console testdata/PROBES/KERNEL/SUITE/NAME.log, mutant golden folder or
# None, verdict against the suite's own golden files)
PROBES = [("rds", "mutant-rds-no-region", ("seeds", "seeds-fallback"),
           ("rds-tcp-cookie", "rds-ib-cookie")),
          ("anybus", "mutant-anybuss-no-region", ("anybus", "anybus-fallback"),
           ("anybus-process-data",))]
CASES = [
    (f"{folder}/fixed/{suite}/{probe}.log", None, "PASS")
    for folder, _, suites, probes in PROBES for suite in suites for probe in probes
] + [
    (f"{folder}/{mutant}/{suite}/{probe}.log",
     mutant + ("-fallback" if suite.endswith("-fallback") else ""), "FAIL")
    for folder, mutant, suites, probes in PROBES for suite in suites for probe in probes
]
FIXED_TCP = RDS / "fixed/seeds/rds-tcp-cookie.log"
MUTANT_TCP = RDS / "mutant-rds-no-region/seeds/rds-tcp-cookie.log"
MUTANT_TCP_WARN = RDS / "mutant-rds-no-region/seeds-fallback/rds-tcp-cookie.log"


def judge(log: str, golden):
    path = DATA / log
    return evaluate_check_log(path.parent.name, path.stem, path, golden=golden)


@pytest.mark.parametrize("log,mutant,verdict", CASES)
def test_probe_console_against_the_suites_golden_files(log, mutant, verdict):
    path = DATA / log
    result = judge(log, SUITES[path.parent.name].golden().get(check_golden_name(path.stem)))
    assert result.verdict == verdict, result.diffs


@pytest.mark.parametrize("log,mutant,verdict", [c for c in CASES if c[1]])
def test_mutant_console_matches_its_own_golden_file(log, mutant, verdict):
    result = judge(log, load_dir(MUTANT / mutant)[check_golden_name(Path(log).stem)])
    assert result.verdict == "PASS", result.diffs


def test_mutant_golden_does_not_accept_the_fixed_kernel():
    golden = load(MUTANT / "mutant-rds-no-region" / "RDS_TCP_COOKIE.txt")
    result = evaluate_check_log("seeds", "rds-tcp-cookie", FIXED_TCP, golden=golden)
    assert result.verdict == "FAIL"
    assert any(d.startswith("outcome: expected killed") for d in result.diffs)


def test_bug_golden_does_not_accept_the_fallback_warning():
    golden = load(MUTANT / "mutant-rds-no-region" / "RDS_TCP_COOKIE.txt")
    result = evaluate_check_log("seeds", "rds-tcp-cookie", MUTANT_TCP_WARN, golden=golden)
    assert result.verdict == "FAIL"
    assert any("kind: expected usercopy_abort, saw usercopy_warn" in d for d in result.diffs)


def test_a_fail_line_fails_a_returned_golden(tmp_path):
    text = FIXED_TCP.read_text()
    assert "usercopy-lab-check: PASS: RDS_CMSG_RDMA_DEST cookie" in text
    log = tmp_path / "rds-tcp-cookie.log"
    log.write_text(text.replace("usercopy-lab-check: PASS: RDS_CMSG_RDMA_DEST cookie",
                                "usercopy-lab-check: FAIL: RDS_CMSG_RDMA_DEST cookie", 1))
    golden = SUITES["seeds"].golden()["RDS_TCP_COOKIE"]
    result = evaluate_check_log("seeds", "rds-tcp-cookie", log, golden=golden)
    assert result.verdict == "FAIL"
    assert result.diffs[0].startswith("check: FAIL: RDS_CMSG_RDMA_DEST cookie")


def test_match_judges_a_check_log_as_a_check(tmp_path, capsys):
    log = tmp_path / "rds-tcp-cookie.log"
    log.write_bytes(MUTANT_TCP.read_bytes())
    assert cli.main(["match", "--suite", "seeds", str(log)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "checks passed" in out
    log.write_bytes(FIXED_TCP.read_bytes())
    assert cli.main(["match", "--suite", "seeds", str(log)]) == 0


def test_run_rejects_a_malformed_golden_overlay(tmp_path, capsys):
    for bad in ("expected-oops/x", "fallback=expected-oops/x", "seeds="):
        rc = cli.main(["run", "--suite", "seeds", "--golden-overlay", bad,
                       "--results", str(tmp_path)])
        assert rc == 2
        assert "want SUITE=DIR" in capsys.readouterr().err
    rc = cli.main(["run", "--suite", "default", "--check", "rds-tcp-cookie",
                   "--results", str(tmp_path)])
    assert rc == 2
    assert "--check rds-tcp-cookie: not a check of suite default" in capsys.readouterr().err


FAKE_QEMU = Path(__file__).parent / "fake_qemu"


def run_fake(tmp_path, monkeypatch, consoles: str, suite: str, *extra: str):
    """`usercopy-lab run` of both RDS probes of suite, the fake QEMU
    (fake_qemu/) replaying testdata/rds/CONSOLES/SUITE/NAME.log; returns
    the exit status and results.json's triggers."""
    kernel = tmp_path / "build/kernel-seeds/arch/x86/boot/bzImage"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("fake kernel\n")
    (tmp_path / "initramfs.cpio").write_text("fake initramfs\n")
    monkeypatch.setenv("PATH", f"{FAKE_QEMU}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_QEMU_CONSOLES", str(RDS / consoles / suite))
    rc = cli.main(["run", "--suite", suite, "--accel", "tcg",
                   "--check", "rds-tcp-cookie", "--check", "rds-ib-cookie", *extra,
                   "--build-dir", str(tmp_path / "build"),
                   "--initramfs", str(tmp_path / "initramfs.cpio"),
                   "--results", str(tmp_path / "results")])
    data = json.loads((tmp_path / "results/latest/results.json").read_text())
    return rc, data["triggers"]


@pytest.mark.parametrize("boot", ["snapshot", "full"])
@pytest.mark.parametrize("suite", ["seeds", "seeds-fallback"])
def test_run_check_judges_by_the_overlay_first_in_both_boot_modes(tmp_path, monkeypatch,
                                                                  boot, suite):
    """run --check NAME boots only the suite's check programs named, through
    run_loop.plan()/execute(); --golden-overlay SUITE=DIR is searched before
    the suite's golden folders.  The mutant consoles PASS against the mutant
    golden files, and FAIL against the suite's own."""
    mutant = "mutant-rds-no-region" + ("-fallback" if suite == "seeds-fallback" else "")
    overlay = MUTANT / mutant
    rc, results = run_fake(tmp_path / "a", monkeypatch, "mutant-rds-no-region", suite,
                           "--boot", boot, "--golden-overlay", f"{suite}={overlay}")
    assert [(r["name"], r["verdict"], r["boot"], r["golden"]) for r in results] == [
        ("rds-tcp-cookie", "PASS", boot, str(overlay / "RDS_TCP_COOKIE.txt")),
        ("rds-ib-cookie", "PASS", boot, str(overlay / "RDS_IB_COOKIE.txt"))], results
    assert rc == 0
    rc, results = run_fake(tmp_path / "b", monkeypatch, "mutant-rds-no-region", suite,
                           "--boot", boot)
    assert [(r["name"], r["verdict"]) for r in results] == [
        ("rds-tcp-cookie", "FAIL"), ("rds-ib-cookie", "FAIL")]
    assert rc == 1
    rc, results = run_fake(tmp_path / "c", monkeypatch, "fixed", suite, "--boot", boot)
    assert [(r["name"], r["verdict"], r["golden"]) for r in results] == [
        ("rds-tcp-cookie", "PASS", str(REPO / "expected-oops/seeds/RDS_TCP_COOKIE.txt")),
        ("rds-ib-cookie", "PASS", str(REPO / "expected-oops/seeds/RDS_IB_COOKIE.txt"))]
    assert rc == 0


def test_run_trigger_and_check_together_plan_both(tmp_path):
    """--trigger and --check together: the named triggers, then the named
    checks, each with its golden file."""
    inputs = load_inputs({"seeds": SUITES["seeds"]})
    jobs = run_loop.plan([SUITES["seeds"]], inputs, ["USERCOPY_KERNEL"], tmp_path,
                         tmp_path / "initramfs.cpio", "tcg", ["rds-tcp-cookie"])
    assert [(j.spec.trigger, j.spec.helper, j.golden.path if j.golden else None)
            for j in jobs] == [
        ("USERCOPY_KERNEL", "", REPO / "expected-oops/lab/USERCOPY_KERNEL.txt"),
        ("", "rds-tcp-cookie", REPO / "expected-oops/seeds/RDS_TCP_COOKIE.txt")]
