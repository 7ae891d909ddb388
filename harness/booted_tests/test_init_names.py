"""The guest's init refuses names that are not plain words (booted).

The harness never sends such names (usercopy_lab.inputs); these boots give
init the kernel command line directly, as a hand-made or hostile boot would.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HARNESS))

from guest_env import INITRAMFS, KERNEL, needs_guests  # noqa: E402
from usercopy_lab.capture.console_capture import capture_guest  # noqa: E402
from usercopy_lab.reports.console_markers import read_markers  # noqa: E402
from usercopy_lab.capture.qemu_boot import GuestSpec  # noqa: E402


pytestmark = needs_guests


def boot(tmp_path: Path, cmdline: str) -> str:
    log = tmp_path / "console.log"
    capture_guest(GuestSpec(kernel=KERNEL, initramfs=INITRAMFS, extra_cmdline=cmdline,
                            accel="tcg"), log, boot_timeout=60, trigger_timeout=20)
    return log.read_bytes().decode("utf-8", errors="replace")


@pytest.mark.parametrize("param,value", [
    ("trigger", "USERCOPY_KERNE."),   # a regex would match USERCOPY_KERNEL
    ("trigger", "*"),                 # a glob would expand to / entries
    ("helper", "../init"),            # /bin/../init
])
def test_init_refuses_a_name_that_is_not_a_plain_word(tmp_path, param, value):
    console = boot(tmp_path, f"lab.{param}={value}")
    assert f"USERCOPY-LAB: refusing lab.{param} (not a plain name): {value}" in console
    assert read_markers(console.splitlines()).started is None
    assert "lkdtm: Performing direct entry" not in console


def test_init_fires_a_comma_list_one_by_one(tmp_path):
    # Parts of a real name (USERCOPY_KERNEL) are not names: DIRECT's list is
    # matched a whole line at a time.
    names = ("USERCOPY_KERNE", "SERCOPY_KERNEL")
    console = boot(tmp_path, f"lab.trigger={','.join(names)}")
    ends = [line for line in console.splitlines() if line.startswith("USERCOPY-LAB-END")]
    assert ends == [f"USERCOPY-LAB-END trigger={n} outcome=unknown-trigger" for n in names]
    assert read_markers(console.splitlines()).ended == names[-1]
