"""The seeds suites' golden files must tell their kernels' outcomes apart."""
from pathlib import Path

import pytest

from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import evaluate_log

REPO = Path(__file__).resolve().parents[2]
CONSOLES = Path(__file__).parent / "testdata" / "console-series"
SUITES = load_suites(REPO / "suites.toml")


@pytest.mark.parametrize("name", ["USERCOPY_WHITELIST_ORANGEFS_TO",
                                  "USERCOPY_WHITELIST_RDS_IB_FROM"])
def test_in_object_violations_warn_only_with_the_fallback(name):
    seeds, fallback = SUITES["seeds"].golden()[name], SUITES["seeds-fallback"].golden()[name]
    assert seeds.reports[0].kind == "usercopy_abort"
    assert fallback.reports[0].kind == "usercopy_warn"
    # each golden file rejects the other boot variant's console
    assert evaluate_log("seeds", name, CONSOLES / "seeds-fallback" / f"{name}.log",
                        seeds, "").verdict == "FAIL"
    assert evaluate_log("seeds-fallback", name, CONSOLES / "seeds" / f"{name}.log",
                        fallback, "").verdict == "FAIL"


def test_copies_leaving_the_object_bug_with_the_fallback_too():
    golden = SUITES["seeds-fallback"].golden()["USERCOPY_WHITELIST_CIFS_SMALL_RQ_TO"]
    assert golden.path.parent.name == "seeds"
    assert golden.reports[0].kind == "usercopy_abort"


def test_caif_golden_needs_the_known_defect_line(tmp_path):
    """A kernel that gave CAIF its cache would not print LKDTM's XFAIL line
    about it (and would oops): the golden must not accept that, nor a FAIL
    line in its place (a known defect is an XFAIL, never a pass)."""
    name = "USERCOPY_WHITELIST_CAIF_TO"
    golden = SUITES["seeds"].golden()[name]
    text = (CONSOLES / "default" / f"{name}.log").read_text()
    line = "XFAIL: PF_CAIF sockets do not come from a 'PF_CAIF' cache"
    assert line in text
    assert evaluate_log("seeds", name, CONSOLES / "default" / f"{name}.log",
                        golden, "").verdict == "XFAIL"
    for replacement in ("PF_CAIF sockets come from their cache", line[1:]):
        log = tmp_path / f"{name}.log"
        log.write_text(text.replace(line, replacement))
        assert evaluate_log("seeds", name, log, golden, "").verdict == "FAIL"


@pytest.mark.parametrize("suite", ["lab", "slab"])
def test_kernels_without_the_seeds_say_xfail_for_the_subsystems_they_lack(suite):
    golden = SUITES[suite].golden()["USERCOPY_WHITELIST_CIFS_REQUEST_TO"]
    assert golden.outcome == "xfail"
    # the seeds kernel's console (a real BUG) is not an XFAIL
    log = CONSOLES / "seeds" / "USERCOPY_WHITELIST_CIFS_REQUEST_TO.log"
    assert evaluate_log(suite, "USERCOPY_WHITELIST_CIFS_REQUEST_TO", log,
                        golden, "").verdict == "FAIL"


def test_the_default_suite_on_the_seeds_kernel_expects_the_seed_reports():
    golden = SUITES["default"].golden()["USERCOPY_WHITELIST_CIFS_REQUEST_TO"]
    assert SUITES["default"].kernel == "seeds"
    assert (golden.outcome, golden.reports[0].kind) == ("killed", "usercopy_abort")
