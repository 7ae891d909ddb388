"""Guest time limits count the guest's time, not the host's load
(capture/run_clock.py): wall time less the longest run-queue wait of one of
QEMU's threads."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from usercopy_lab import protocol
from usercopy_lab.capture import console_capture, run_clock
from usercopy_lab.capture.console_capture import CaptureEnd, Guest
from usercopy_lab.capture.run_clock import RunClock, thread_waits


class FakeProc:
    """A /proc with one process whose threads' schedstat we set."""

    def __init__(self, root: Path, pid: int = 4242) -> None:
        self.root, self.pid = root, pid

    def wait(self, tid: int, seconds: float) -> None:
        task = self.root / str(self.pid) / "task" / str(tid)
        task.mkdir(parents=True, exist_ok=True)
        (task / "schedstat").write_text(f"123 {int(seconds * 1e9)} 7\n")


class Now:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_the_longest_thread_wait_is_taken_off_the_wall_time(tmp_path):
    proc, now = FakeProc(tmp_path), Now()
    proc.wait(1, 5.0)           # waits before the clock starts do not count
    proc.wait(2, 0.0)
    clock = RunClock(proc.pid, proc=tmp_path, now=now)
    now.t += 60.0
    proc.wait(1, 5.0 + 45.0)    # the vCPU thread waited 45 s for a CPU
    proc.wait(2, 10.0)          # another thread 10 s, at the same time
    proc.wait(3, 2.0)           # a thread started meanwhile
    assert clock.elapsed() == pytest.approx(15.0)
    assert clock.waited == pytest.approx(45.0)
    assert clock.wall() == pytest.approx(60.0)


def test_an_idle_or_spinning_guest_gets_no_time_back(tmp_path):
    proc, now = FakeProc(tmp_path), Now()
    proc.wait(1, 1.0)
    clock = RunClock(proc.pid, proc=tmp_path, now=now)
    now.t += 60.0               # no thread was runnable and waiting
    assert clock.elapsed() == pytest.approx(60.0)


def test_a_thread_that_ended_keeps_the_wait_it_had(tmp_path):
    proc, now = FakeProc(tmp_path), Now()
    clock = RunClock(proc.pid, proc=tmp_path, now=now)
    now.t += 30.0
    proc.wait(9, 20.0)
    assert clock.elapsed() == pytest.approx(10.0)
    (tmp_path / str(proc.pid) / "task" / "9" / "schedstat").unlink()
    now.t += 5.0
    assert clock.elapsed() == pytest.approx(15.0)


def test_the_wait_never_exceeds_the_wall_time(tmp_path):
    proc, now = FakeProc(tmp_path), Now()
    clock = RunClock(proc.pid, proc=tmp_path, now=now)
    now.t += 1.0
    proc.wait(1, 3.0)           # counters and clock read at different moments
    assert clock.elapsed() == pytest.approx(0.0)


def test_without_schedstat_the_clock_is_the_wall_clock(tmp_path):
    now = Now()
    clock = RunClock(99999999, proc=tmp_path, now=now)
    now.t += 7.0
    assert thread_waits(99999999, tmp_path) == {}
    assert clock.elapsed() == pytest.approx(7.0)


def test_the_real_proc_has_the_field_for_this_process():
    waits = thread_waits(os.getpid())
    assert os.getpid() in waits or not Path("/proc/self/schedstat").exists()


class HeldBack(RunClock):
    """The clock of a QEMU that waited for a CPU 80 % of the time."""

    def elapsed(self) -> float:
        self.waited = 0.8 * self.wall()
        return self.wall() - self.waited


def _guest(tmp_path: Path, text: str) -> tuple[Guest, object]:
    log = open(tmp_path / "console.log", "wb")
    return Guest(["/bin/sh", "-c", text], log, False, None), log


@pytest.mark.parametrize("clock,want", [(RunClock, CaptureEnd.TIMEOUT), (HeldBack, None)])
def test_a_guest_that_waited_for_a_cpu_is_not_timed_out(tmp_path, monkeypatch, clock, want):
    """The same 1.5 s without output: a timeout of 1 s on an idle host,
    not when the host kept QEMU off the CPU meanwhile."""
    pytest.importorskip("pexpect")
    monkeypatch.setattr(console_capture, "RunClock", clock)
    monkeypatch.setattr(console_capture, "SLICE", 0.1)
    guest, log = _guest(tmp_path, "sleep 1.5; echo USERCOPY-LAB-END trigger=x")
    with log, guest:
        assert guest.expect(protocol.END_LINE, 1.0) is want


def test_a_timeout_says_how_long_the_guest_waited_for_a_cpu(tmp_path, monkeypatch):
    pytest.importorskip("pexpect")
    monkeypatch.setattr(console_capture, "RunClock", HeldBack)
    monkeypatch.setattr(console_capture, "SLICE", 0.1)
    guest, log = _guest(tmp_path, "sleep 5")
    with log, guest:
        assert guest.expect(protocol.END_LINE, 0.3) is CaptureEnd.TIMEOUT
        assert "waiting for a host CPU" in console_capture.waited(guest)


def test_the_slice_is_short_enough_to_notice_output_soon():
    assert run_clock.SLICE <= 1.0
