"""Restore the saved ready guest for one trigger (snapshot mode).

The first trigger of a worker slot starts a QEMU with -loadvm.  When its
END marker comes, the guest is paused over QMP (`stop`) and the console
read to its end, and the slot keeps that QEMU (ResidentSlot).  The slot's
next trigger on the same machine reloads the snapshot in it over QMP
(`loadvm`, `cont`) instead of starting a new process: loadvm puts back the
whole machine (RAM, CPU and device state, clocks) from the same image, so
each trigger still starts from the identical saved state; what is saved is
QEMU's start and exit.  A QEMU whose guest did not reach END, exited, or
could not be paused is killed and never reused; a reload that fails is
written to the log and the trigger gets a new QEMU instead.

A kept QEMU can still end after it was paused and handed the next trigger
(a reboot or panic under -no-reboot that QEMU had taken in before `stop`,
seen late under load): whenever a reused QEMU's console ends, or it never
answers the request, before the trigger's END marker, the capture says so
(Capture.kept_qemu_lost) and gives no verdict; the caller restores the
trigger again in a new QEMU.  So no verdict depends on when a kept QEMU's
exit is noticed.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..inputs import shown
from ..model import BootMode
from ..protocol import Phase
from .console_capture import Cancel, Capture, CaptureEnd, CaptureLog, Guest
from .qemu_boot import GuestSpec, Machine
from .qmp import SOCKET_NAME, QmpClient, QmpError, socket_dir


@dataclass(frozen=True)
class Restore:
    """A saved ready guest to restore: image, tag, the console of its boot."""

    image: Path
    tag: str
    boot_console: bytes
    made: str                    # one line: when and how the snapshot was made
    aio: str = "threads"         # how QEMU opens image (snapshot.image_aio())


class ResidentQemu:
    """One QEMU restored from a snapshot, with a QMP socket to pause it and
    reload the snapshot in it."""

    def __init__(self, machine: Machine, restore: Restore, cancel: Cancel | None) -> None:
        self.machine = machine
        self.restore = restore
        self._cancel = cancel
        self._dir = socket_dir()
        self._qmp_path = self._dir / SOCKET_NAME
        self.argv = machine.snapshot_argv(restore.image, qmp_socket=self._qmp_path,
                                          loadvm=restore.tag, aio=restore.aio)
        self.guest: Guest | None = None
        self._qmp: QmpClient | None = None
        self.triggers = 0             # triggers this QEMU has run

    @property
    def pid(self) -> int | None:
        return self.guest.child.pid if self.guest and self.guest.child else None

    def alive(self) -> bool:
        return self.guest is not None and self.guest.alive()

    def start(self, log: IO[bytes], live: bool) -> Guest:
        self.guest = Guest(self.argv, log, live, self._cancel)
        self.guest.__enter__()
        self.triggers = 1
        return self.guest

    def reload(self, log: IO[bytes], live: bool, timeout: float) -> tuple[Guest, bytes]:
        """The paused guest back at the saved ready point, its console in
        log, running; and what its console still held from the last
        trigger (late bytes, read before loadvm: never this trigger's).
        QmpError if QEMU refuses."""
        assert self.guest is not None
        left = self.guest.take_unread()
        self.guest.set_log(log, live)
        qmp = self._client(timeout)
        said = qmp.hmp(f"loadvm {self.restore.tag}").strip()
        if said:
            raise QmpError(f"loadvm said: {said}")
        qmp.command("cont")
        self.triggers += 1
        return self.guest, left

    def pause(self, timeout: float) -> bool:
        """Stop the guest and copy what its console still holds to the
        current log; False (QEMU unusable) on any error, or when QEMU says
        the guest is anything but paused (shut down, panicked: about to
        end under -no-reboot)."""
        assert self.guest is not None
        try:
            qmp = self._client(timeout)
            qmp.command("stop")
            status = qmp.command("query-status")
        except QmpError:
            return False
        self.guest.drain()
        return isinstance(status, dict) and status.get("status") == "paused" and self.alive()

    def close(self) -> int | None:
        """Kill and reap QEMU; its exit status or signal."""
        if self._qmp is not None:
            self._qmp.close()
            self._qmp = None
        status = None
        if self.guest is not None:
            self.guest.__exit__(None, None, None)
            status = self.guest.exit_status
        shutil.rmtree(self._dir, ignore_errors=True)
        return status

    def _client(self, timeout: float) -> QmpClient:
        if self._qmp is None:
            self._qmp = QmpClient(self._qmp_path, timeout, alive=self.alive)
            try:
                self._qmp.connect()
            except QmpError:
                self._qmp = None
                raise
        return self._qmp


class ResidentSlot:
    """The QEMU a worker slot keeps between its triggers (at most one).
    Only that slot's worker uses it, so it needs no lock."""

    def __init__(self) -> None:
        self._qemu: ResidentQemu | None = None

    def take(self, machine: Machine, restore: Restore) -> ResidentQemu | None:
        """The kept QEMU if it holds this machine's snapshot image; any
        other kept QEMU is ended."""
        qemu, self._qemu = self._qemu, None
        if qemu is None:
            return None
        if qemu.machine == machine and qemu.restore.image == restore.image and qemu.alive():
            return qemu
        qemu.close()
        return None

    def keep(self, qemu: ResidentQemu) -> None:
        self.close()
        self._qemu = qemu

    def close(self) -> None:
        qemu, self._qemu = self._qemu, None
        if qemu is not None:
            qemu.close()


def restore_guest(spec: GuestSpec, restore: Restore, log_path: Path,
                  restore_timeout: float, trigger_timeout: float,
                  live: bool = False, cancel: Cancel | None = None,
                  slot: ResidentSlot | None = None, why: str | None = None) -> Capture:
    """Restore the ready guest (in slot's kept QEMU when it has one for this
    machine, else in a new QEMU), send spec's request over the console and
    wait for START and END.  Without slot, QEMU is ended after the trigger.
    why, if given, heads the log (why this trigger is restored again).

    The log holds the snapshot's boot console first, so it reads like the
    console of a full boot.  restore_failed is set when the restored guest
    never reached START: the caller may then boot the trigger in full.
    """
    cap = Capture(log_path=log_path, seconds=0.0, mode=BootMode.SNAPSHOT,
                  phase=Phase.WAITING)       # where the snapshot holds the guest
    machine = spec.machine
    kept = slot.take(machine, restore) if slot is not None else None
    qemu = kept or ResidentQemu(machine, restore, cancel)
    keep = False
    with CaptureLog(log_path, qemu.argv, cap, cancel) as log:
        try:
            if why:
                log.note(f"restored again: {why}")
            log.note(f"boot console of the snapshot ({restore.made}):")
            log.file.write(restore.boot_console.rstrip(b"\r\n") + b"\n")
            request = f"sending {spec.request()!r} over the console"
            if kept is not None:
                log.note(f"reloading snapshot {restore.tag!r} from {restore.image} in the "
                         f"QEMU this worker kept paused (pid {kept.pid}, its trigger "
                         f"{kept.triggers + 1}): QMP loadvm, cont; {request}")
                try:
                    guest, left = kept.reload(log.file, live, restore_timeout)
                    cap.reused_qemu = True
                    if left:
                        log.note("console bytes left from this QEMU's last trigger, read "
                                 "before loadvm (not this trigger's console): "
                                 + shown(left.decode("utf-8", "replace"), 400))
                except QmpError as exc:
                    kept.close()
                    qemu = ResidentQemu(machine, restore, cancel)
                    log.note(f"reload failed ({exc}); that QEMU ended, restoring in a new "
                             "one: " + " ".join(qemu.argv))
            if not cap.reused_qemu:
                log.note(f"restoring snapshot {restore.tag!r} from {restore.image} in a new "
                         f"QEMU; {request}")
                guest = qemu.start(log.file, live)
            guest.send_line(spec.request())
            steps = ((Phase.STARTED, restore_timeout, "restore"),
                     (Phase.ENDED, trigger_timeout, "trigger"))
            if log.run_steps(guest, steps):
                cap.end = CaptureEnd.END_MARKER
                if cap.answers(spec.name):
                    keep = slot is not None and qemu.pause(restore_timeout)
                elif slot is not None:
                    said = [w for line in (cap.start_line, cap.end_line)
                            for w in line.split() if w.startswith("trigger=")]
                    log.note(f"the guest answered {spec.request()!r} with the markers of "
                             f"another request ({shown(' and '.join(said), None)}): this "
                             "QEMU is ended, never reused")
            cap.restore_failed = not cap.saw_start and cap.end in (
                CaptureEnd.TIMEOUT, CaptureEnd.QEMU_EXITED)
        finally:
            if keep and slot is not None:
                slot.keep(qemu)
                cap.qemu_kept = True
            else:
                cap.qemu_exit = qemu.close()
    if kept is not None and qemu is kept and (lost := _kept_qemu_lost(cap)):
        cap.kept_qemu_lost = lost
        cap.restore_failed = False
    return cap


def _kept_qemu_lost(cap: Capture) -> str | None:
    """Why a reused QEMU's capture gives no verdict, or None: its console
    ended (or the harness lost it) before END, or it never answered the
    request.  A hang after START stays the trigger's own (guest-hang)."""
    if cap.saw_end or cap.end is CaptureEnd.INTERRUPTED:
        return None
    if cap.end in (CaptureEnd.QEMU_EXITED, CaptureEnd.HARNESS_ERROR):
        where = "after" if cap.saw_start else "before"
        return (f"the QEMU kept from this worker's last trigger ended {where} this "
                f"trigger's START marker ({cap.error}; exit status {cap.qemu_exit})")
    if not cap.saw_start:
        return f"the QEMU kept from this worker's last trigger never answered ({cap.error})"
    return None
