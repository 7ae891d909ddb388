"""An interactive lab guest: a busybox shell on the serial console.

`usercopy-lab shell` (make shell) boots the lab kernel with lab.shell=1:
init mounts proc, sysfs, debugfs and devtmpfs and starts a shell on the
console instead of firing a trigger.  QEMU's own serial chardev writes the
whole console to a log under results/shell/ as it arrives, so the log is
complete whatever ends the guest, and triage reads it afterwards.

The console is QEMU's stdio multiplexer: Ctrl-A X quits QEMU, Ctrl-A C
toggles the monitor, Ctrl-C goes to the guest.  In the guest, `poweroff`
(or `exit`) ends the machine.
"""
from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path
from dataclasses import dataclass

from ..inputs import shown, writable_dir
from .qemu_boot import GuestSpec, choose_accel, qemu_available

REPO = Path(__file__).resolve().parents[3]
SHELL_CMDLINE = "lab.shell=1"
PROMPT = "usercopy-lab:"    # start of the guest shell's prompt (initramfs-src/init)


def shell_argv(spec: GuestSpec, log: Path) -> list[str]:
    """spec's QEMU command line with the serial console on a stdio
    multiplexer (Ctrl-A X, monitor) that also logs to log."""
    argv = spec.argv()
    i = next(i for i in range(len(argv) - 1) if argv[i:i + 2] == ["-serial", "stdio"])
    path = str(log).replace(",", ",,")   # QEMU option syntax: ',' doubled
    chardev = f"stdio,id=con0,mux=on,signal=off,logfile={path},logappend=on"
    return argv[:i] + ["-chardev", chardev, "-serial", "chardev:con0",
                       "-mon", "chardev=con0,mode=readline"] + argv[i + 2:]


@dataclass(frozen=True)
class ShellOptions:
    """What `usercopy-lab shell` is asked (cli/ reads the command line into it)."""

    kernel: str = "seeds"
    cmdline: str = ""
    build_dir: Path = REPO / "build"
    initramfs: Path = REPO / "build/initramfs.cpio"
    results: Path = REPO / "results"
    accel: str = "auto"
    memory: int = 256


def run(args: ShellOptions) -> int:
    """Boot the kernel to a shell on this terminal, its console kept in RESULTS/shell/."""
    kernel = args.build_dir / f"kernel-{args.kernel}" / "arch/x86/boot/bzImage"
    for path, hint in ((kernel, f"make kernel KERNEL={args.kernel}"),
                       (args.initramfs, "make initramfs")):
        if not path.is_file():
            print(f"usercopy-lab: {shown(path, None)} missing ({hint})", file=sys.stderr)
            return 2
    if not qemu_available():
        print("usercopy-lab: qemu-system-x86_64 not found (make deps)", file=sys.stderr)
        return 2
    if problem := writable_dir(args.results / "shell"):
        print(f"usercopy-lab: {shown(args.results, None)}: cannot write the console log "
              f"there: {problem}", file=sys.stderr)
        return 2
    accel = choose_accel(args.accel, kernel, args.initramfs)
    extra = " ".join(x for x in (SHELL_CMDLINE, args.cmdline) if x)
    spec = GuestSpec(kernel=kernel, initramfs=args.initramfs, extra_cmdline=extra,
                     memory_mb=args.memory, accel=accel.accel)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    log = (args.results / "shell" / f"{stamp}.log").resolve()
    log.parent.mkdir(parents=True, exist_ok=True)
    argv = shell_argv(spec, log)
    log.write_text("# qemu: " + " ".join(argv) + "\n")
    print(f"usercopy-lab shell: kernel {kernel}, accel {accel.accel} ({accel.reason})\n"
          f"usercopy-lab shell: console log {log}\n"
          f"usercopy-lab shell: leave with 'poweroff' in the guest, or Ctrl-A X", flush=True)
    status = subprocess.run(argv, check=False).returncode
    with open(log, "a") as f:
        f.write(f"\n# usercopy-lab: qemu exit status {status}\n")
    print(f"\nusercopy-lab shell: QEMU exited {status}; console log {log}\n"
          f"usercopy-lab shell: triage it with ./usercopy-lab triage {log}")
    return 0 if status == 0 else 1
