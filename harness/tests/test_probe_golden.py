"""In-guest probes with golden files (expected-oops/<suite>/NAME.txt), on
the real consoles of the RDS probes (testdata/rds/, see its README.md):
the fixed seeds kernel, and the test-only mutants without the regions."""
from __future__ import annotations

from pathlib import Path

import pytest

from usercopy_lab import cli, run_loop
from usercopy_lab.golden import load, load_dir
from usercopy_lab.suite import load_suites
from usercopy_lab.trigger_run import TriggerResult, check_golden_name, evaluate_check_log

REPO = Path(__file__).resolve().parents[2]
RDS = Path(__file__).parent / "testdata" / "rds"
SUITES = load_suites(REPO / "suites.toml")
MUTANT = REPO / "expected-oops"

# (console testdata/rds/KERNEL/SUITE/NAME.log, mutant golden folder or None,
# verdict against the suite's own golden files)
CASES = [
    (f"fixed/{suite}/{probe}.log", None, "PASS")
    for suite in ("seeds", "seeds-fallback") for probe in ("rds-tcp-cookie", "rds-ib-cookie")
] + [
    (f"mutant-rds-no-region/{suite}/{probe}.log",
     "mutant-rds-no-region" + ("-fallback" if suite == "seeds-fallback" else ""), "FAIL")
    for suite in ("seeds", "seeds-fallback") for probe in ("rds-tcp-cookie", "rds-ib-cookie")
]
FIXED_TCP = RDS / "fixed/seeds/rds-tcp-cookie.log"
MUTANT_TCP = RDS / "mutant-rds-no-region/seeds/rds-tcp-cookie.log"
MUTANT_TCP_WARN = RDS / "mutant-rds-no-region/seeds-fallback/rds-tcp-cookie.log"


def judge(log: str, golden):
    path = RDS / log
    return evaluate_check_log(path.parent.name, path.stem, path, golden=golden)


@pytest.mark.parametrize("log,mutant,verdict", CASES)
def test_probe_console_against_the_suites_golden_files(log, mutant, verdict):
    path = RDS / log
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


def test_run_boots_a_named_check_with_the_overlay_golden(tmp_path, monkeypatch):
    """`run --check NAME` boots the suite's check program NAME and judges
    it by the overlay folder first (QEMU mocked)."""
    seen = []

    def fake_run_trigger(suite, spec, golden, expected, log, limits, **_):
        seen.append((suite, spec.helper, spec.trigger, golden.path if golden else None))
        return TriggerResult(suite, spec.helper or spec.trigger, "PASS", "", 0.0, str(log), None)

    kernel = tmp_path / "build/kernel-seeds/arch/x86/boot/bzImage"
    kernel.parent.mkdir(parents=True)
    kernel.write_bytes(b"")
    initramfs = tmp_path / "initramfs.cpio"
    initramfs.write_bytes(b"")
    monkeypatch.setattr(run_loop, "run_trigger", fake_run_trigger)
    monkeypatch.setattr(cli, "qemu_available", lambda: True)
    overlay = MUTANT / "mutant-rds-no-region"
    rc = cli.main(["run", "--suite", "seeds", "--accel", "tcg", "--boot", "full", "-j", "1",
                   "--check", "rds-tcp-cookie",
                   "--trigger", "USERCOPY_KERNEL", "--golden-overlay", f"seeds={overlay}",
                   "--build-dir", str(tmp_path / "build"), "--initramfs", str(initramfs),
                   "--results", str(tmp_path / "results")])
    assert rc == 0
    assert seen == [
        ("seeds", "", "USERCOPY_KERNEL", REPO / "expected-oops/default/USERCOPY_KERNEL.txt"),
        ("seeds", "rds-tcp-cookie", "", overlay / "RDS_TCP_COOKIE.txt")]
