"""The 6.12 line's two findings on the real consoles of stock 6.12
(testdata/console-series/stock-6.12, captured by the stock-6.12 suite on
2026-12-06): each PASSes the stock-6.12 golden files, which expect the
stock outcome, and FAILs the golden files of the fixed 6.1 seeds kernel
(the seeds suite: USERCOPY_VMALLOC BUGs, the RDS/TCP probe gets its
cookie), so a kernel without the fixes is told apart by the golden files.
The consoles of the patched kernel (testdata/console-series/series-6.12)
PASS the series-6.12 golden files and FAIL the stock ones.  Every check
console of both suites PASSes (the triggers' consoles:
test_suite_consoles.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import check_golden_name, evaluate_check_log, evaluate_log

REPO = Path(__file__).resolve().parents[2]
SERIES = Path(__file__).parent / "testdata" / "console-series"
CONSOLES = SERIES / "stock-6.12"
SUITES = load_suites(REPO / "suites.toml")


def verdict(suite: str, name: str, consoles: Path = CONSOLES) -> str:
    log = consoles / f"{name}.log"
    golden = SUITES[suite].golden()
    if name.isupper():
        return evaluate_log(suite, name, log, golden.get(name), "").verdict
    return evaluate_check_log(suite, name, log,
                              golden=golden.get(check_golden_name(name))).verdict


@pytest.mark.parametrize("name", ["USERCOPY_VMALLOC", "rds-tcp-cookie"])
def test_stock_passes_its_own_golden_files_and_fails_the_fixed_ones(name):
    assert verdict("stock-6.12", name) == "PASS"
    assert verdict("seeds" if name.islower() else "default", name) == "FAIL"


def test_the_stock_rds_report_names_the_cache_slub_merged_it_into():
    """The BUG names 'xfs_icr', not rds_tcp_incoming: the probe's alias
    lines show both (and ip6-frags) in one merged cache, :0000184."""
    text = (CONSOLES / "rds-tcp-cookie.log").read_text(errors="replace")
    assert "exposure attempt detected from SLUB object 'xfs_icr' (offset 112, size 8)" in text
    assert "cache rds_tcp_incoming -> :0000184" in text
    assert "cache xfs_icr -> :0000184" in text


@pytest.mark.parametrize("name", ["USERCOPY_VMALLOC", "rds-tcp-cookie"])
def test_the_patched_kernel_passes_the_series_golden_files_and_fails_the_stock_ones(name):
    series = SERIES / "series-6.12"
    assert verdict("series-6.12", name, series) == "PASS"
    assert verdict("stock-6.12", name, series) == "FAIL"


def test_the_patched_rds_probe_gets_its_cookie_with_no_report():
    text = (SERIES / "series-6.12" / "rds-tcp-cookie.log").read_text(errors="replace")
    assert "usercopy-lab-check: PASS: RDS_CMSG_RDMA_DEST cookie 0x9abcdef012345678" in text
    assert "usercopy:" not in text and "kernel BUG" not in text


@pytest.mark.parametrize("suite,check", [(suite, check) for suite in ("stock-6.12", "series-6.12")
                                         for check in SUITES[suite].checks])
def test_every_check_console_of_the_line_passes(suite, check):
    golden = SUITES[suite].golden().get(check_golden_name(check))
    result = evaluate_check_log(suite, check, SERIES / suite / f"{check}.log", golden=golden)
    assert result.verdict == "PASS", result.diffs
