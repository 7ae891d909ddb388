"""Run one guest under pexpect and keep its whole serial console.

The raw console is written to the log file as it arrives, so it survives a
timeout, a QEMU crash or a harness error.  QEMU is always killed and reaped.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pexpect

from .qemu_boot import GuestSpec

READY = "USERCOPY-LAB-READY"
START = "USERCOPY-LAB-START"
END = "USERCOPY-LAB-END"


@dataclass
class Capture:
    log_path: Path
    seconds: float
    saw_ready: bool = False
    saw_start: bool = False
    saw_end: bool = False
    qemu_exit: int | None = None
    error: str | None = None     # why the capture is incomplete, if it is


class _Tee:
    """pexpect logfile_read target: the log file, plus stdout when live."""

    def __init__(self, log, live: bool) -> None:
        self._log = log
        self._live = live

    def write(self, data: bytes) -> None:
        self._log.write(data)
        self._log.flush()
        if self._live:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()

    def flush(self) -> None:
        self._log.flush()


def capture_guest(spec: GuestSpec, log_path: Path, boot_timeout: float,
                  trigger_timeout: float, live: bool = False) -> Capture:
    """Boot spec, wait for READY, START, END and QEMU's exit."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    cap = Capture(log_path=log_path, seconds=0.0)
    argv = spec.argv()
    with open(log_path, "wb") as log:
        log.write(("# qemu: " + " ".join(argv) + "\n").encode())
        log.flush()
        child = None
        try:
            child = pexpect.spawn(argv[0], argv[1:], timeout=None,
                                  logfile=None, echo=False)
            child.logfile_read = _Tee(log, live)
            cap.saw_ready = _expect(child, READY, boot_timeout)
            if not cap.saw_ready:
                cap.error = _why(child, f"no {READY} within {boot_timeout:.0f}s (boot)")
            else:
                cap.saw_start = _expect(child, START, trigger_timeout)
                if not cap.saw_start:
                    cap.error = _why(child, f"no {START} within {trigger_timeout:.0f}s")
                else:
                    cap.saw_end = _expect(child, END + r"[^\r\n]*[\r\n]", trigger_timeout)
                    if not cap.saw_end:
                        cap.error = _why(child, f"no {END} within {trigger_timeout:.0f}s (trigger)")
                    elif not _expect(child, pexpect.EOF, boot_timeout):
                        cap.error = f"guest did not power off within {boot_timeout:.0f}s"
        except (pexpect.ExceptionPexpect, OSError) as exc:
            cap.error = f"harness error: {exc}"
        finally:
            if child is not None:
                cap.qemu_exit = _reap(child)
            cap.seconds = time.monotonic() - start
            if cap.error:
                log.write(f"\n# usercopy-lab: {cap.error}\n".encode())
            log.write(f"# usercopy-lab: qemu exit status {cap.qemu_exit}, "
                      f"{cap.seconds:.1f}s\n".encode())
    return cap


def _expect(child: pexpect.spawn, pattern, timeout: float) -> bool:
    try:
        child.expect(pattern, timeout=timeout)
        return True
    except (pexpect.TIMEOUT, pexpect.EOF):
        return False


def _why(child: pexpect.spawn, timeout_msg: str) -> str:
    if not child.isalive():
        return f"QEMU exited early (status {child.exitstatus}, signal {child.signalstatus})"
    return timeout_msg


def _reap(child: pexpect.spawn) -> int | None:
    if child.isalive():
        child.terminate(force=True)
    try:
        child.close(force=True)
    except pexpect.ExceptionPexpect:
        pass
    return child.exitstatus if child.exitstatus is not None else child.signalstatus
