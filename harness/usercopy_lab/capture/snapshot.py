"""Snapshots of a guest at init's ready point, made once per machine.

make_snapshot() boots a Machine with lab.wait=console: init prints
the protocol's WAITING marker and waits for a request line on the console.  Then the
machine is saved over QMP (HMP `savevm ready`) into a qcow2 image attached
as a drive no guest device sees.  Every trigger afterwards is restored from
it (restore.py: -loadvm in a new QEMU, or loadvm over QMP in the QEMU its
worker kept from its last trigger), so each starts from the same clean
machine state without booting.  One image can only be opened by one QEMU
at a time, and loadvm writes to it, so each worker slot restores from its
own copy.

A snapshot that cannot be made (no qemu-img, boot or savevm failed) or
restored leaves the triggers to a full boot: SnapshotPool answers with the
reason, and trigger_run records it per trigger.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..protocol import WAITING, Phase
from .console_capture import Cancel, CaptureEnd, Guest, eof
from .qemu_boot import QEMU_IMG, Machine
from .qmp import SOCKET_NAME, QmpClient, QmpError, socket_dir
from .restore import Restore

SNAPSHOT_TAG = "ready"
IMAGE_SIZE = "64M"   # the disk itself is never used; savevm stores the RAM beside it
# How QEMU reads and writes the image.  Every restore reads the whole saved
# machine from it: with aio=threads QEMU hands each read to a worker thread,
# io_uring halves loadvm (the default suite -j1: median 66 -> 33 ms,
# 2026-12-05).  Not every kernel or sandbox allows io_uring (a container's
# seccomp profile may refuse it); image_aio() asks qemu-img first.
IMAGE_AIO = "io_uring"
FALLBACK_AIO = "threads"


class SnapshotError(Exception):
    """Why no snapshot: one line, also recorded as each trigger's fallback."""


@dataclass(frozen=True)
class Snapshot:
    machine: Machine
    image: Path
    boot_console: bytes      # console from QEMU start to the WAITING line
    seconds: float           # boot + savevm
    aio: str = FALLBACK_AIO  # how QEMU opens the image (image_aio())
    aio_note: str = ""       # why not IMAGE_AIO, when not

    def restore(self, image: Path) -> Restore:
        return Restore(image, SNAPSHOT_TAG, self.boot_console,
                       f"booted once to the ready point and saved in {self.seconds:.1f}s",
                       self.aio)


def image_aio(image: Path) -> tuple[str, str]:
    """The aio mode QEMU opens image with, and why not IMAGE_AIO ("" when
    it is): IMAGE_AIO when qemu-img can open image with it."""
    opts = (f"driver=qcow2,file.driver=file,file.aio={IMAGE_AIO},"
            f"file.filename={str(image).replace(',', ',,')}")
    try:
        done = subprocess.run([QEMU_IMG, "info", "--image-opts", opts], capture_output=True,
                              text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return FALLBACK_AIO, f"{QEMU_IMG} info: {exc}"
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()
        return FALLBACK_AIO, (f"{IMAGE_AIO} unusable here: "
                              f"{said[-1] if said else f'exit status {done.returncode}'}")
    return IMAGE_AIO, ""


def machine_dir_name(machine: Machine) -> str:
    """kernel-default-1a2b3c4d: the kernel's build folder and a hash of
    everything else that makes the machine."""
    kernel = machine.kernel
    build = kernel.parents[3].name if len(kernel.parents) > 3 else kernel.name
    key = json.dumps([str(kernel), str(machine.initramfs), machine.extra_cmdline,
                      machine.memory_mb, machine.accel, machine.qemu_args, machine.arch])
    return f"{build}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def make_snapshot(machine: Machine, directory: Path, boot_timeout: float,
                  cancel: Cancel | None = None) -> Snapshot:
    """Boot machine to the ready point and save it in directory/ready.qcow2;
    the boot console stays in directory/boot.log."""
    directory.mkdir(parents=True, exist_ok=True)
    image = directory / "ready.qcow2"
    log_path = directory / "boot.log"
    if shutil.which(QEMU_IMG) is None:
        raise SnapshotError(f"{QEMU_IMG} not found (apt-get install qemu-utils)")
    made = subprocess.run([QEMU_IMG, "create", "-q", "-f", "qcow2", str(image), IMAGE_SIZE],
                          capture_output=True, text=True, check=False)
    if made.returncode != 0:
        raise SnapshotError(f"{QEMU_IMG} create failed: {made.stderr.strip() or made.returncode}")
    aio, aio_note = image_aio(image)
    start = time.monotonic()
    sockets = socket_dir()
    try:
        qmp_path = sockets / SOCKET_NAME
        argv = machine.snapshot_argv(image, qmp_socket=qmp_path, aio=aio)
        with open(log_path, "wb") as log:
            log.write(("# qemu: " + " ".join(argv) + "\n").encode())
            log.flush()
            try:
                with Guest(argv, log, False, cancel) as guest:
                    ended = guest.expect(Phase.WAITING.pattern, boot_timeout)
                    if ended is CaptureEnd.TIMEOUT:
                        raise SnapshotError(f"no {WAITING} within {boot_timeout:.0f}s "
                                            f"(console: {log_path})")
                    if ended is not None:
                        raise SnapshotError(f"QEMU exited before {WAITING} (console: {log_path})")
                    _save(qmp_path, boot_timeout)
                    guest.expect(eof(), boot_timeout)
            except SnapshotError as exc:
                log.write(f"\n# usercopy-lab: no snapshot: {exc}\n".encode())
                raise
            except OSError as exc:
                log.write(f"\n# usercopy-lab: no snapshot: {exc}\n".encode())
                raise SnapshotError(f"{exc} (console: {log_path})") from exc
    except BaseException:
        image.unlink(missing_ok=True)     # no snapshot in it: tens of MB for nothing
        raise
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    console = log_path.read_bytes()
    body = console.split(b"\n", 1)[1] if console.startswith(b"# qemu:") else console
    cut = body.find(WAITING.encode())
    boot_console = body[:body.index(b"\n", cut) + 1] if cut >= 0 else body
    return Snapshot(machine, image, boot_console, time.monotonic() - start, aio, aio_note)


def _save(qmp_path: Path, timeout: float) -> None:
    try:
        with QmpClient(qmp_path, timeout) as qmp:
            out = qmp.hmp(f"savevm {SNAPSHOT_TAG}")
            if out.strip():
                raise SnapshotError(f"savevm said: {out.strip()}")
            listed = qmp.hmp("info snapshots")
            if SNAPSHOT_TAG not in listed.split():
                raise SnapshotError(f"savevm left no snapshot {SNAPSHOT_TAG!r}: "
                                    f"{listed.strip()}")
            qmp.command("quit")
    except QmpError as exc:
        raise SnapshotError(str(exc)) from exc


@dataclass
class _Entry:
    lock: threading.Lock
    snapshot: Snapshot | None = None
    broken: str | None = None               # why this machine boots in full
    copies: dict[int, Path] | None = None   # worker slot -> its image


class SnapshotPool:
    """The snapshots of one run: made on first use (one boot per machine),
    one image copy per worker slot, broken ones remembered with the reason."""

    def __init__(self, directory: Path, boot_timeout: float, cancel: Cancel,
                 say: Callable[[str], None]) -> None:
        self._dir = directory
        self._boot_timeout = boot_timeout
        self._cancel = cancel
        self._say = say
        self._lock = threading.Lock()
        self._entries: dict[Machine, _Entry] = {}

    def _entry(self, machine: Machine) -> _Entry:
        with self._lock:
            return self._entries.setdefault(machine, _Entry(threading.Lock()))

    def restore_for(self, machine: Machine, slot: int) -> Restore | str:
        """What worker slot restores for machine, or why it must boot in full."""
        entry = self._entry(machine)
        with entry.lock:
            if entry.broken is None and entry.snapshot is None:
                name = machine_dir_name(machine)
                try:
                    entry.snapshot = make_snapshot(machine, self._dir / name,
                                                   self._boot_timeout, self._cancel)
                    entry.copies = {0: entry.snapshot.image}
                    aio = entry.snapshot.aio + (f" ({entry.snapshot.aio_note})"
                                                if entry.snapshot.aio_note else "")
                    self._say(f"snapshot {name}: ready point saved in "
                              f"{entry.snapshot.seconds:.1f}s ({machine.ready_cmdline()}); "
                              f"image aio={aio}")
                except SnapshotError as exc:
                    entry.broken = f"snapshot not made: {exc}"
                    self._say(f"snapshot {name}: {entry.broken}; its triggers boot in full")
            if entry.broken is not None:
                return entry.broken
            assert entry.snapshot is not None and entry.copies is not None
            if slot not in entry.copies:
                image = entry.snapshot.image.with_name(f"ready-slot{slot}.qcow2")
                shutil.copyfile(entry.snapshot.image, image)
                entry.copies[slot] = image
            return entry.snapshot.restore(entry.copies[slot])

    def mark_broken(self, machine: Machine, reason: str) -> None:
        entry = self._entry(machine)
        with entry.lock:
            if entry.broken is None:
                entry.broken = f"snapshot unusable: {reason}"
                self._say(f"snapshot {machine_dir_name(machine)}: {entry.broken}; "
                          "the remaining triggers boot in full")

    def remove_images(self) -> None:
        """Drop the qcow2 images (tens of MB each); boot.log stays."""
        with self._lock:
            entries = list(self._entries.values())
        for entry in entries:
            for image in (entry.copies or {}).values():
                image.unlink(missing_ok=True)
