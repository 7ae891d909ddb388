"""How to start one fresh lab guest: the QEMU command line and accelerator."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

QEMU = "qemu-system-x86_64"

# Console and crash behaviour every lab guest gets.  panic=-1 reboots at once
# on a panic, and -no-reboot turns any reboot into QEMU exiting.
BASE_CMDLINE = "console=ttyS0 panic=-1 loglevel=7 printk.time=1"


@dataclass(frozen=True)
class GuestSpec:
    kernel: Path
    initramfs: Path
    trigger: str = ""
    helper: str = ""
    extra_cmdline: str = ""
    memory_mb: int = 256
    accel: str = "tcg"

    def cmdline(self) -> str:
        parts = [BASE_CMDLINE]
        if self.trigger:
            parts.append(f"lab.trigger={self.trigger}")
        if self.helper:
            parts.append(f"lab.helper={self.helper}")
        if self.extra_cmdline:
            parts.append(self.extra_cmdline)
        return " ".join(parts)

    def argv(self) -> list[str]:
        return [
            QEMU, "-machine", "pc", "-accel", self.accel,
            "-nodefaults", "-no-user-config", "-cpu", "max",
            "-m", str(self.memory_mb), "-nographic", "-serial", "stdio",
            "-no-reboot", "-kernel", str(self.kernel),
            "-initrd", str(self.initramfs), "-append", self.cmdline(),
        ]


@dataclass
class AccelChoice:
    accel: str
    reason: str


def qemu_available() -> bool:
    return shutil.which(QEMU) is not None


def choose_accel(requested: str, kernel: Path, initramfs: Path,
                 probe_timeout: float = 6.0) -> AccelChoice:
    """Pick the accelerator: "tcg", "kvm", or "auto" (probe KVM, else TCG).

    KVM is only used if a probe guest reaches the init marker within
    probe_timeout seconds; machines where /dev/kvm exists but guests hang
    fall back to TCG instead of waiting.
    """
    if requested in ("tcg", "kvm"):
        return AccelChoice(requested, "requested")
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return AccelChoice("tcg", "/dev/kvm not usable")
    spec = GuestSpec(kernel=kernel, initramfs=initramfs, accel="kvm")
    start = time.monotonic()
    try:
        proc = subprocess.run(spec.argv(), capture_output=True,
                              timeout=probe_timeout, check=False)
        ok = b"USERCOPY-LAB-READY" in proc.stdout
        reason = "KVM probe booted" if ok else \
            f"KVM probe exited {proc.returncode} without the init marker"
    except subprocess.TimeoutExpired:
        ok = False
        reason = "KVM probe did not reach init"
    return AccelChoice("kvm" if ok else "tcg",
                       f"{reason} in {time.monotonic() - start:.1f}s")
