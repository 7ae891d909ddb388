"""How to start lab guests: the QEMU command lines and the accelerator.

A guest boots in one of two ways (BootMode):

- full: one fresh QEMU per trigger, the trigger on the kernel command line
  (lab.trigger=NAME); init fires it and reboots, -no-reboot ends QEMU;
- snapshot: per (kernel, command line) one guest boots to init's ready
  point (lab.wait=console: init waits for a request line on the console)
  and is saved with savevm into a qcow2 image (snapshot.py); then one fresh
  QEMU per trigger restores it with -loadvm and gets "trigger=NAME" over
  the console.  Both command lines must be identical apart from -loadvm and
  -qmp, so they are built by one function.

What differs between guest architectures (QEMU binary, machine, CPU,
console device, boot image) is the table ARCHES; docs/arches.md says why
each value is what it is.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..protocol import READY

QEMU_IMG = "qemu-img"


@dataclass(frozen=True)
class Arch:
    """One guest architecture: how QEMU runs it and where its kernel is."""

    name: str            # suites.toml `arch`
    qemu: str            # the QEMU system emulator
    machine: str         # -machine
    cpu: str             # -cpu
    console: str         # the kernel's console= device (the board's UART)
    image: str           # boot image, relative to build/kernel-NAME/
    kvm_hosts: tuple[str, ...]   # platform.machine() values whose KVM runs it
    cmdline: str = ""    # parameters only this arch's kernels know

    def kvm_possible(self, host: str | None = None) -> bool:
        return (host or platform.machine()) in self.kvm_hosts


# no_timer_check (x86 only: arch/x86/kernel/apic/io_apic.c): under TCG on a
# loaded host the IO-APIC timer check in check_timer() can miss its ticks
# and panic ("IO-APIC + timer doesn't work!") before init: 2 of 124 full
# boots at load ~10 on 2026-12-04.  The check validates real hardware's
# timer routing, which a lab guest does not test; virtual machines commonly
# skip it the same way.  arm64 has no such check, and an unknown parameter
# would be passed on to init.
# i8042.noaux (drivers/input/serio/i8042.c): no PS/2 mouse port.  The
# psmouse probe of QEMU's emulated mouse runs for ~0.3 s after init has
# started and holds the device lock that reboot(2)'s device_shutdown()
# waits for, so every full boot waited that long between its END marker
# and QEMU's exit (1.55 -> 1.22 s per full boot on 2026-12-05).  No lab
# guest has a pointing device to test.
# noapictimer (arch/x86/kernel/apic/apic.c): no local APIC timer, so no
# calibration of it against the PIT, a busy wait of ~0.2 s of every x86
# boot under TCG (QEMU's TCG has no TSC-deadline timer, which would skip
# it); the PIT is the guest's tick.  Full boot median 1.56 -> 1.33 s
# (make bench, 2026-12-05 and 06).
X86_CMDLINE = "no_timer_check i8042.noaux noapictimer"

# -cpu max everywhere: every feature the emulator has (the x86-64 golden
# files' XSAVE size is tied to it).  arm64's virt board has a PL011 UART.
ARCHES: dict[str, Arch] = {a.name: a for a in (
    Arch("x86_64", "qemu-system-x86_64", "pc", "max", "ttyS0",
         "arch/x86/boot/bzImage", ("x86_64",), X86_CMDLINE),
    Arch("i386", "qemu-system-i386", "pc", "max", "ttyS0",
         "arch/x86/boot/bzImage", ("x86_64", "i686"), X86_CMDLINE),
    Arch("arm64", "qemu-system-aarch64", "virt", "max", "ttyAMA0",
         "arch/arm64/boot/Image", ("aarch64",)),
)}
NATIVE = "x86_64"
QEMU = ARCHES[NATIVE].qemu

# Console and crash behaviour every lab guest gets: console= the board's
# UART; panic=-1 reboots at once on a panic, and -no-reboot turns any reboot
# into QEMU exiting; then the arch's own parameters.
CRASH_CMDLINE = "panic=-1 loglevel=7 printk.time=1"


def base_cmdline(arch: str = NATIVE) -> str:
    a = ARCHES[arch]
    return " ".join(p for p in (f"console={a.console}", CRASH_CMDLINE, a.cmdline) if p)


BASE_CMDLINE = base_cmdline(NATIVE)
# init waits on the console for a request instead of reading lab.trigger=.
WAIT_CMDLINE = "lab.wait=console"
# The qcow2 image that holds the saved machine is attached as a drive no
# guest device sees (if=none): it only gives savevm/loadvm a place to live.
SNAPSHOT_DRIVE_ID = "labsnap"


@dataclass(frozen=True)
class Machine:
    """Everything that makes two guests the same machine up to the init
    request: a snapshot is made and restored per Machine."""

    kernel: Path
    initramfs: Path
    extra_cmdline: str = ""
    memory_mb: int = 256
    accel: str = "tcg"
    qemu_args: tuple[str, ...] = ()      # e.g. ("-icount", "shift=0") for the bench
    arch: str = NATIVE                   # a key of ARCHES

    def argv(self, cmdline: str) -> list[str]:
        arch = ARCHES[self.arch]
        return [
            arch.qemu, "-machine", arch.machine, "-accel", self.accel,
            "-nodefaults", "-no-user-config", "-cpu", arch.cpu,
            "-m", str(self.memory_mb), "-nographic", "-serial", "stdio",
            "-no-reboot", "-kernel", str(self.kernel),
            "-initrd", str(self.initramfs), "-append", cmdline, *self.qemu_args,
        ]

    def ready_cmdline(self) -> str:
        return " ".join(p for p in (base_cmdline(self.arch), WAIT_CMDLINE,
                                    self.extra_cmdline) if p)

    def snapshot_argv(self, image: Path, *, qmp_socket: Path | None = None,
                      loadvm: str | None = None, aio: str = "threads") -> list[str]:
        """Boot to the ready point with image attached (and a QMP socket to
        save it through), or restore the snapshot named loadvm from it.
        aio: how QEMU reads and writes the image (snapshot.image_aio())."""
        argv = self.argv(self.ready_cmdline())
        # cache=unsafe: the image lives for one run and is never a disk the
        # guest sees, so savevm need not wait for it to reach the platter.
        # A comma in an option value is written twice.
        argv += ["-drive", f"if=none,id={SNAPSHOT_DRIVE_ID},format=qcow2,cache=unsafe,"
                           f"aio={aio},file={str(image).replace(',', ',,')}"]
        if qmp_socket is not None:
            argv += ["-qmp", f"unix:{qmp_socket},server=on,wait=off"]
        if loadvm is not None:
            argv += ["-loadvm", loadvm]
        return argv


@dataclass(frozen=True)
class GuestSpec:
    kernel: Path
    initramfs: Path
    trigger: str = ""
    helper: str = ""
    extra_cmdline: str = ""
    memory_mb: int = 256
    accel: str = "tcg"
    qemu_args: tuple[str, ...] = ()
    selftests: str = ""          # "tree" | "lab": init runs that run.sh for trigger
    arch: str = NATIVE

    @property
    def name(self) -> str:
        return self.trigger or self.helper

    @property
    def machine(self) -> Machine:
        return Machine(self.kernel, self.initramfs, self.extra_cmdline,
                       self.memory_mb, self.accel, self.qemu_args, self.arch)

    def cmdline(self) -> str:
        parts = [base_cmdline(self.arch)]
        if self.trigger:
            parts.append(f"lab.trigger={self.trigger}")
        if self.helper:
            parts.append(f"lab.helper={self.helper}")
        if self.selftests:
            parts.append(f"lab.selftests={self.selftests}")
        if self.extra_cmdline:
            parts.append(self.extra_cmdline)
        return " ".join(parts)

    def request(self) -> str:
        """The line sent over the console to a restored guest: what the
        full boot's command line adds to the machine's (lab.selftests too,
        so the selftests suites restore the same snapshot as the others)."""
        what = f"helper={self.helper}" if self.helper else f"trigger={self.trigger}"
        return f"selftests={self.selftests} {what}" if self.selftests else what

    def argv(self) -> list[str]:
        """Full boot: the request is on the kernel command line."""
        return self.machine.argv(self.cmdline())


@dataclass
class AccelChoice:
    accel: str
    reason: str


def qemu_available(arch: str = NATIVE) -> bool:
    return shutil.which(ARCHES[arch].qemu) is not None


def arch_accel(accel: str, arch: str, host: str | None = None) -> str:
    """The accelerator a guest of arch gets when the run chose accel: KVM
    only runs guests of the host's own architecture (an arm64 guest on an
    x86-64 host is always TCG)."""
    return accel if accel != "kvm" or ARCHES[arch].kvm_possible(host) else "tcg"


def choose_accel(requested: str, kernel: Path, initramfs: Path,
                 probe_timeout: float = 6.0, arch: str = NATIVE) -> AccelChoice:
    """Pick the accelerator: "tcg", "kvm", or "auto" (probe KVM, else TCG).

    KVM is only used if a probe guest of arch reaches the init marker
    within probe_timeout seconds; machines where /dev/kvm exists but guests
    hang fall back to TCG instead of waiting.  Each guest then gets
    arch_accel() of the choice.
    """
    if requested in ("tcg", "kvm"):
        return AccelChoice(requested, "requested")
    if not ARCHES[arch].kvm_possible():
        return AccelChoice("tcg", f"no KVM for {arch} guests on a {platform.machine()} host")
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return AccelChoice("tcg", "/dev/kvm not usable")
    spec = GuestSpec(kernel=kernel, initramfs=initramfs, accel="kvm", arch=arch)
    start = time.monotonic()
    try:
        proc = subprocess.run(spec.argv(), capture_output=True,
                              timeout=probe_timeout, check=False)
        ok = READY.encode() in proc.stdout
        reason = "KVM probe booted" if ok else \
            f"KVM probe exited {proc.returncode} without the init marker"
    except subprocess.TimeoutExpired:
        ok = False
        reason = "KVM probe did not reach init"
    return AccelChoice("kvm" if ok else "tcg",
                       f"{reason} in {time.monotonic() - start:.1f}s")
