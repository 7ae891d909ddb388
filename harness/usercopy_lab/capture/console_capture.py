"""Run one guest under pexpect and keep its whole serial console.

The raw console is written to the log file as it arrives, so it survives a
timeout, a QEMU crash, an interrupt or a harness error.  QEMU is always
killed and reaped.  The last line of every log says how the capture ended
(CaptureEnd), so a log can be judged again later without the harness.

pexpect is imported here only when a guest is started: `match` and
`triage` never boot and run without it.
"""
from __future__ import annotations

import ctypes
import errno
import io
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .qemu_boot import GuestSpec
from .run_clock import SLICE, RunClock

from ..model import BootMode
from ..protocol import Phase

if TYPE_CHECKING:
    import pexpect

TRAILER = "# usercopy-lab: capture ended: "


def is_disk_full(exc: OSError) -> bool:
    """A write failed for want of room (no space, quota): the run must stop
    and say where, not record an ERROR per guest."""
    return exc.errno in (errno.ENOSPC, errno.EDQUOT)


class CaptureEnd(str, Enum):
    """How a capture ended; written into the log's trailer line."""

    END_MARKER = "end-marker"        # init printed its END marker
    TIMEOUT = "timeout"              # QEMU still running, marker not seen in time
    QEMU_EXITED = "qemu-exited"      # console closed before the END marker
    INTERRUPTED = "interrupted"      # the run was cancelled (Ctrl-C)
    HARNESS_ERROR = "harness-error"  # the harness could not drive QEMU


@dataclass
class Capture:
    log_path: Path
    seconds: float
    mode: BootMode = BootMode.FULL
    phase: Phase | None = None   # the guest's phase: the last marker the capture saw
    end: CaptureEnd = CaptureEnd.HARNESS_ERROR
    qemu_exit: int | None = None
    error: str | None = None     # why the capture is incomplete, if it is
    # snapshot mode only: the restored guest never reached the trigger, so
    # the trigger may still be run by a full boot (trigger_run does that)
    restore_failed: bool = False
    # snapshot mode only: the snapshot was reloaded in a QEMU its worker
    # slot kept from its last trigger (restore.py), not in a new one
    reused_qemu: bool = False
    qemu_kept: bool = False      # paused and kept for the slot's next trigger
    # snapshot mode only: the QEMU the slot kept from its last trigger ended
    # (or never answered) before this trigger's END marker; why, in words.
    # No verdict comes from such a console: the trigger is restored again in
    # a new QEMU (trigger_run), and the snapshot is not blamed.
    kept_qemu_lost: str | None = None
    start_line: str = ""         # the START and END marker lines the capture matched
    end_line: str = ""

    @property
    def saw_start(self) -> bool:
        return self.phase is not None and self.phase.reached(Phase.STARTED)

    @property
    def saw_end(self) -> bool:
        return self.phase is Phase.ENDED

    def answers(self, name: str) -> bool:
        """Whether the START and END lines the capture waited for name the
        request's trigger or check (the verdict checks the whole console:
        verdict.bound_to; this is what the harness itself acts on)."""
        word = re.compile(rf"trigger={re.escape(name)}(?![A-Za-z0-9_,-])")
        return bool(word.search(self.start_line) and word.search(self.end_line))


class Cancel:
    """Shared by the guests of one run: cancel() kills every QEMU started
    through it (and any started later), so all captures end at once."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._children: set[Any] = set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            children = list(self._children)
        for child in children:
            _kill(child)

    def register(self, child: Any) -> None:
        with self._lock:
            self._children.add(child)
            cancelled = self._event.is_set()
        if cancelled:
            _kill(child)

    def unregister(self, child: Any) -> None:
        with self._lock:
            self._children.discard(child)


class _Tee:
    """pexpect logfile_read target: the log file, plus stdout when live."""

    def __init__(self, log: IO[bytes], live: bool) -> None:
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


def pexpect_available() -> bool:
    try:
        import pexpect  # noqa: F401
    except ImportError:
        return False
    return True


def _die_with_parent() -> None:
    """In the QEMU child: get SIGKILL if the harness dies, even by SIGKILL."""
    pr_set_pdeathsig = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class Guest:
    """One running QEMU whose console goes to a log: a context manager that
    always kills and reaps it."""

    def __init__(self, argv: list[str], log: IO[bytes], live: bool,
                 cancel: Cancel | None) -> None:
        self.argv = argv
        self._log = log
        self._live = live
        self._cancel = cancel
        self.child: pexpect.spawn | None = None
        self.exit_status: int | None = None
        self.clock: RunClock | None = None

    def __enter__(self) -> Guest:
        import pexpect  # only where a guest boots

        self.child = pexpect.spawn(self.argv[0], self.argv[1:], timeout=None,
                                   logfile=None, echo=False, maxread=65536,
                                   preexec_fn=_die_with_parent)
        # pexpect sleeps 50 ms before every send (for programs that drop
        # input typed before they read it: QEMU's serial port keeps it) and
        # 0.1 ms after every read; in snapshot mode the request line is sent
        # for every trigger, and those 50 ms were a quarter of a restore.
        self.child.delaybeforesend = None
        self.child.delayafterread = None
        self.child.logfile_read = _Tee(self._log, self._live)
        if self._cancel is not None:
            self._cancel.register(self.child)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.child is None:
            return
        if self._cancel is not None:
            self._cancel.unregister(self.child)
        self.exit_status = _reap(self.child)

    def expect(self, pattern: Any, timeout: float) -> CaptureEnd | None:
        """None when pattern was seen, else how the wait ended.  timeout
        counts the guest's time (run_clock.RunClock: wall time less what
        QEMU spent waiting for a host CPU), so a loaded host does not turn
        a slow guest into a timeout; self.clock is the last wait's clock."""
        import pexpect

        assert self.child is not None
        self.clock = clock = RunClock(self.child.pid)
        try:
            while True:
                left = timeout - clock.elapsed()
                if left <= 0:
                    return CaptureEnd.TIMEOUT
                try:
                    self.child.expect(pattern, timeout=min(left, SLICE))
                    return None
                except pexpect.TIMEOUT:
                    continue
        except pexpect.EOF:
            return CaptureEnd.QEMU_EXITED

    def matched(self) -> str:
        """The text the last successful expect() matched."""
        after = self.child.after if self.child is not None else None
        return after.decode("utf-8", errors="replace") if isinstance(after, bytes) else ""

    def send_line(self, line: str) -> None:
        assert self.child is not None
        self.child.send(line + "\n")

    def alive(self) -> bool:
        return self.child is not None and self.child.isalive()

    def set_log(self, log: IO[bytes], live: bool) -> None:
        """From now on the console goes to log; what the last expect()
        read past its match is dropped (it is in the previous log)."""
        assert self.child is not None
        self.child.logfile_read = _Tee(log, live)
        self.child.buffer = self.child.string_type()
        self.child.before = self.child.after = self.child.match = None

    def take_unread(self) -> bytes:
        """What the console holds now, read without waiting and kept out of
        every log (the caller says where it belongs)."""
        assert self.child is not None
        held = self.child.logfile_read
        unread = io.BytesIO()
        self.child.logfile_read = unread
        try:
            self.drain()
        finally:
            self.child.logfile_read = held
        return unread.getvalue()

    def drain(self, settle: float = 0.0) -> None:
        """Copy what the console holds now to the log, without waiting
        (beyond settle seconds of quiet)."""
        import pexpect

        assert self.child is not None
        try:
            while True:
                self.child.read_nonblocking(65536, timeout=settle)
        except (pexpect.TIMEOUT, pexpect.EOF):
            pass

    def kill(self) -> None:
        if self.child is not None:
            _kill(self.child)


def capture_guest(spec: GuestSpec, log_path: Path, boot_timeout: float,
                  trigger_timeout: float, live: bool = False,
                  cancel: Cancel | None = None) -> Capture:
    """Full boot of spec: wait for READY, START, END and QEMU's exit."""
    cap = Capture(log_path=log_path, seconds=0.0, mode=BootMode.FULL)
    argv = spec.argv()
    with CaptureLog(log_path, argv, cap, cancel) as log:
        with Guest(argv, log.file, live, cancel) as guest:
            steps = ((Phase.READY, boot_timeout, "boot"),
                     (Phase.STARTED, trigger_timeout, "trigger"),
                     (Phase.ENDED, trigger_timeout, "trigger"))
            if log.run_steps(guest, steps):
                cap.end = CaptureEnd.END_MARKER
                if guest.expect(eof(), boot_timeout) is not None:
                    cap.error = f"guest did not power off within {boot_timeout:.0f}s"
        cap.qemu_exit = guest.exit_status
    return cap


class CaptureLog:
    """The log file of one capture: header, marker steps, trailer line."""

    def __init__(self, path: Path, argv: list[str], cap: Capture,
                 cancel: Cancel | None) -> None:
        self.path = path
        self.argv = argv
        self.cap = cap
        self.cancel = cancel
        self.file: IO[bytes]
        self._start = 0.0

    def __enter__(self) -> CaptureLog:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._start = time.monotonic()
        self.file = open(self.path, "wb")
        self.file.write(("# qemu: " + " ".join(self.argv) + "\n").encode())
        self.file.flush()
        return self

    def note(self, text: str) -> None:
        self.file.write(f"# usercopy-lab: {text}\n".encode())
        self.file.flush()

    def run_steps(self, guest: Guest, steps: tuple[tuple[Phase, float, str], ...]) -> bool:
        """Wait for each phase's marker in turn; False (cap.end/error set)
        at the first one that does not come."""
        for phase, timeout, stage in steps:
            ended = guest.expect(phase.pattern, timeout)
            if ended is None:
                self._saw(phase, guest.matched())
                continue
            if self.cancel is not None and self.cancel.is_set():
                ended = CaptureEnd.INTERRUPTED
            marker = phase.marker
            self.cap.end = ended
            if ended is CaptureEnd.TIMEOUT:
                self.cap.error = f"no {marker} within {timeout:.0f}s ({stage}){waited(guest)}"
            elif ended is CaptureEnd.QEMU_EXITED:
                self.cap.error = f"console closed before {marker} ({stage})"
            else:
                self.cap.error = f"interrupted while waiting for {marker} ({stage})"
            return False
        return True

    def _saw(self, phase: Phase, text: str) -> None:
        self.cap.phase = phase
        if phase is Phase.STARTED:
            self.cap.start_line = text
        elif phase is Phase.ENDED:
            self.cap.end_line = text

    def __exit__(self, exc_type: type | None, exc: BaseException | None,
                 tb: object) -> bool:
        errors: tuple[type, ...] = (OSError,)
        try:
            import pexpect
            errors += (pexpect.ExceptionPexpect,)
        except ImportError:
            pass
        if isinstance(exc, OSError) and is_disk_full(exc):
            self.file.close()
            if exc.filename is None:     # a write names no file: this log's
                raise OSError(exc.errno, exc.strerror, str(self.path)) from exc
            return False
        handled = exc is not None and isinstance(exc, errors)
        if handled:
            self.cap.end = CaptureEnd.HARNESS_ERROR
            self.cap.error = f"harness error: {exc}"
        self.cap.seconds = time.monotonic() - self._start
        if self.cap.error:
            self.note(self.cap.error)
        qemu = "qemu paused and kept for the next trigger" if self.cap.qemu_kept \
            else f"qemu exit status {self.cap.qemu_exit}"
        self.file.write(f"{TRAILER}{self.cap.end.value}; boot {self.cap.mode.value}; "
                        f"{qemu}; {self.cap.seconds:.2f}s\n".encode())
        self.file.close()
        return handled


def waited(guest: Guest) -> str:
    """What a timed-out wait gave back for the host's load, if anything."""
    clock = guest.clock
    if clock is None or clock.waited < 0.05:
        return ""
    return f"; {clock.wall():.0f}s of wall time, {clock.waited:.0f}s of it waiting for a host CPU"


def eof() -> Any:
    """pexpect's end-of-console pattern."""
    import pexpect
    return pexpect.EOF


def _kill(child: Any) -> None:
    # pexpect's own kill: QEMU is one process that starts none, and
    # pexpect must see its end to reap it
    try:
        if child.isalive():
            child.kill(signal.SIGKILL)
    except OSError:
        pass


def _reap(child: Any) -> int | None:
    """Kill (if still running) and wait for QEMU; its exit status or signal.
    pexpect's own close() sleeps 0.1 s per guest even when QEMU is gone."""
    import pexpect

    _kill(child)
    try:
        child.wait()
    except pexpect.ExceptionPexpect:
        pass
    child.delayafterclose = 0
    child.ptyproc.delayafterclose = 0
    try:
        child.close(force=True)
    except (pexpect.ExceptionPexpect, OSError):
        pass
    return child.exitstatus if child.exitstatus is not None else child.signalstatus
