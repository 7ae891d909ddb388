"""faults.classify on whole consoles: the names run and match give an ERROR."""
from __future__ import annotations

from pathlib import Path

import pytest

from usercopy_lab.reports.console_markers import read_markers
from usercopy_lab.judge.faults import Fault, capture_end, classify, console_only, is_garbage
from usercopy_lab.reports.oops_parser import iter_reports

TESTDATA = Path(__file__).parent / "testdata"
REAL = sorted((TESTDATA / "console-series").rglob("*.log")) + \
    sorted((TESTDATA / "console").glob("*.log"))


def fault_of(text: str) -> Fault | None:
    lines = text.splitlines()
    return classify(text, read_markers(lines), list(iter_reports(lines, "x")))


@pytest.mark.parametrize("log", REAL, ids=[f"{p.parent.name}/{p.stem}" for p in REAL])
def test_no_real_console_is_garbage(log):
    # SeaBIOS's escape sequences and CRLFs are not garbage.
    assert not is_garbage(console_only(log.read_text(errors="replace")))


def test_a_console_with_its_end_marker_has_no_fault():
    text = (TESTDATA / "console-series/default/USERCOPY_SLAB_WHITELIST_TO.log").read_text()
    assert fault_of(text) is None


def test_the_trailer_says_how_the_capture_ended():
    text = "x\n# usercopy-lab: capture ended: timeout; boot full; qemu exit status 9; 8.00s\n"
    assert capture_end(text) == "timeout"
    # Logs from before the trailer line existed said only this on a timeout.
    assert capture_end("# usercopy-lab: no USERCOPY-LAB-END within 8s (trigger)\n") == "timeout"
    assert capture_end("no trailer\n") is None


@pytest.mark.parametrize("end,fault", [("interrupted", Fault.INTERRUPTED),
                                       ("harness-error", Fault.HARNESS_ERROR),
                                       ("timeout", Fault.GUEST_HANG),
                                       ("qemu-exited", Fault.QEMU_EXITED_EARLY)])
def test_capture_end_names_the_fault_of_a_console_without_end_marker(end, fault):
    text = ("USERCOPY-LAB-READY\nUSERCOPY-LAB-START trigger=X\n"
            f"# usercopy-lab: capture ended: {end}; boot full; qemu exit status 0; 1.00s\n")
    assert fault_of(text) is fault


def test_a_panic_after_init_is_a_kernel_panic():
    text = (TESTDATA / "console/PANIC.log").read_text()
    assert fault_of(text) is Fault.KERNEL_PANIC
