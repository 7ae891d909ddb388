"""`usercopy-lab shell` (make shell) driven by hand through pexpect.

Boots the default lab kernel to its serial-console shell, looks at what a
user would (DIRECT's trigger list, a cache's whitelist in sysfs), fires one
trigger the way the banner says, sees the oops, checks that the shell
survived, powers off, and reads the console log it left under results/.
Run by `make test` with USERCOPY_LAB_BUILD and USERCOPY_LAB_INITRAMFS set.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pexpect

HARNESS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HARNESS))

from guest_env import BUILD, INITRAMFS, needs_guests  # noqa: E402
from usercopy_lab.reports.oops_parser import parse_file  # noqa: E402
from usercopy_lab.capture.shell import PROMPT  # noqa: E402

REPO = HARNESS.parent
PROMPT_RE = PROMPT + r"/\S*# "

pytestmark = needs_guests


def _sync(child: pexpect.spawn, tries: int = 6) -> None:
    """Type until the shell answers: busybox's line editor may drop what
    arrives while it sets up the terminal after its first prompt."""
    for _ in range(tries):
        child.sendline("echo sync-$((20 + 22))")
        if child.expect([r"sync-42\r*\n", pexpect.TIMEOUT], timeout=10) == 0:
            child.expect(PROMPT_RE)
            return
    raise AssertionError("the guest shell never answered")


def test_fire_one_trigger_by_hand_and_keep_the_log(tmp_path):
    child = pexpect.spawn(str(REPO / "usercopy-lab"),
                          ["shell", "--accel", "tcg", "--build-dir", str(BUILD),
                           "--initramfs", str(INITRAMFS), "--results", str(tmp_path)],
                          timeout=90, encoding="utf-8", codec_errors="replace",
                          dimensions=(50, 200))
    transcript = open(tmp_path / "pexpect.log", "w")   # what the test saw, kept
    child.logfile_read = transcript
    try:
        child.expect(PROMPT_RE)
        _sync(child)
        child.sendline("grep -x USERCOPY_SLAB_SIZE_TO /sys/kernel/debug/provoke-crash/DIRECT")
        child.expect(r"\nUSERCOPY_SLAB_SIZE_TO\r*\n")
        child.expect(PROMPT_RE)
        child.sendline("cat /sys/kernel/slab/lkdtm-usercopy/useroffset "
                       "/sys/kernel/slab/lkdtm-usercopy/usersize")
        # LKDTM's own cache (drivers/misc/lkdtm/usercopy.c): cache_size 1024,
        # kmem_cache_create_usercopy(..., cache_size / 4, cache_size / 16, NULL),
        # so useroffset 256 and usersize 64.  The kernel's own console lines
        # may come between them (a serial console shows printk as it comes:
        # "clocksource: Switched to clocksource tsc" ~1.7 s into the boot).
        child.expect(r"\n256\r*\n(?:\[ *\d+\.\d+\][^\n]*\n)*64\r*\n")
        child.expect(PROMPT_RE)
        child.sendline("echo USERCOPY_SLAB_SIZE_TO | cat > /sys/kernel/debug/provoke-crash/DIRECT")
        child.expect("usercopy: Kernel memory exposure attempt detected from SLUB object "
                     "'kmalloc-1k'")
        child.expect(r"end trace")
        child.expect(PROMPT_RE)          # the oops killed cat, not the shell
        child.sendline("echo shell-still-here-$((6 * 7))")
        child.expect("shell-still-here-42")
        child.expect(PROMPT_RE)
        child.sendline("poweroff")
        child.expect("USERCOPY-LAB-SHELL: power off")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
        transcript.close()
    assert child.exitstatus == 0
    (log,) = (tmp_path / "shell").glob("*.log")
    text = log.read_text(errors="replace")
    assert text.startswith("# qemu: ")
    assert "echo USERCOPY_SLAB_SIZE_TO | cat" in text
    assert "# usercopy-lab: qemu exit status 0" in text
    reports = parse_file(log)
    assert [(r.kind, r.direction, r.cache) for r in reports] == [
        ("usercopy_abort", "exposure", "kmalloc-1k")]
    assert reports[0].guilty_frame == "do_usercopy_slab_size"
