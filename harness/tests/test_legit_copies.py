"""The no-false-positive workload (initramfs-src/check-legit-copies.c) on
the consoles captured from the lab kernel, one per suite that runs it, and
what makes it FAIL: a usercopy report or WARNING anywhere on its console,
a FAIL line, or no count line."""
from __future__ import annotations

from pathlib import Path

import pytest

from usercopy_lab.capture.qemu_boot import NATIVE
from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import evaluate_check_log

REPO = Path(__file__).resolve().parents[2]
CONSOLES = Path(__file__).parent / "testdata" / "console-series"
# Guests of another arch (suites.toml arch): testdata/console-arch/README.md
ARCH_CONSOLES = Path(__file__).parent / "testdata" / "console-arch"
CHECK = "check-legit-copies"
SUITES = load_suites(REPO / "suites.toml")
RUN_BY = sorted(name for name, s in SUITES.items() if CHECK in s.checks)
GROUPS = ("dentry", "names", "auxv", "fpu", "sctp", "raw", "msg", "exec", "dup",
          "pipe", "proc", "sys")


def test_default_fallback_and_slab_run_the_workload():
    assert {"default", "fallback", "slab"} <= set(RUN_BY)


@pytest.mark.parametrize("suite", RUN_BY)
def test_workload_passes_on_its_console_with_every_count(suite):
    native = SUITES[suite].arch == NATIVE
    log = (CONSOLES if native else ARCH_CONSOLES) / suite / f"{CHECK}.log"
    result = evaluate_check_log(suite, CHECK, log)
    assert result.verdict == "PASS", result.diffs
    assert result.summary == f"{len(GROUPS)} checks passed, 0 failed"
    text = log.read_text(errors="replace")
    for group in GROUPS:
        assert f"usercopy-lab-check: PASS: {group}: " in text, group
    assert f"calls in {len(GROUPS)} groups, 0 groups failed" in text


def splice(tmp_path: Path, lines: list[str]) -> Path:
    """The default console with lines inserted just before its last group line."""
    text = (CONSOLES / "default" / f"{CHECK}.log").read_text(errors="replace")
    anchor = "usercopy-lab-check: PASS: sys: "
    log = tmp_path / f"{CHECK}.log"
    log.write_text(text.replace(anchor, "".join(lines) + anchor, 1))
    return log


def test_a_usercopy_warning_during_the_workload_fails_it(tmp_path):
    """The fallback's WARNING (captured for USERCOPY_SLAB_WHITELIST_TO),
    as a false positive of the workload would print it."""
    src = (CONSOLES / "fallback" / "USERCOPY_SLAB_WHITELIST_TO.log").read_text().splitlines(True)
    first = next(i for i, l in enumerate(src) if "cut here" in l)
    last = next(i for i, l in enumerate(src) if "end trace" in l)
    result = evaluate_check_log("default", CHECK, splice(tmp_path, src[first:last + 1]))
    assert result.verdict == "FAIL"
    assert [d.split(" (line")[0] for d in result.diffs] == [
        "report: unexpected usercopy: exposure from SLUB object 'lkdtm-usercopy' in "
        "do_usercopy_slab_whitelist"], result.diffs


def test_a_fail_line_fails_it(tmp_path):
    line = "usercopy-lab-check: FAIL: raw: 110 calls, 1 failed, first: x\n"
    result = evaluate_check_log("default", CHECK, splice(tmp_path, [line]))
    assert result.verdict == "FAIL"
    assert result.diffs == ["check: FAIL: raw: 110 calls, 1 failed, first: x"]
