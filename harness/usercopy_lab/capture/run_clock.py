"""The time a guest had, as opposed to the time that passed.

A TCG guest makes progress only while its QEMU runs on a host CPU.  On a
shared machine at load 10 (two cores, kernel builds and other sessions'
guests beside it) a QEMU can spend most of a minute runnable but waiting
for a CPU: on 2026-12-06 the series-6.12 check-legit-copies guest, 2.4 s on
a quiet machine, ran past a 60 s wall-clock limit while every trigger of
the same run took 5-50 s instead of 0.2-0.5 s.  A wall-clock limit turns
such a wait into an ERROR that says nothing about the kernel.

RunClock counts wall time less the time the QEMU process spent waiting on
a host run queue: the kernel's per-thread schedstat (/proc/PID/task/TID/
schedstat, second field: nanoseconds runnable but not running).  The
largest wait of any one thread is subtracted (QEMU's threads wait at the
same time: summing them would count one wait twice), so the clock never
runs slower than the thread held back the longest.  A guest that hangs
idle (no thread runnable) or spins (running) sees its limit at the same
wall time as on an idle machine; one that waits for a CPU gets that wait
back.  Where schedstat cannot be read (no process, no such file) the clock
is the wall clock.
"""
from __future__ import annotations

import time
from pathlib import Path

# How often a wait for console output stops to read the clock (seconds).
SLICE = 0.5


def thread_waits(pid: int, proc: Path = Path("/proc")) -> dict[int, int]:
    """Run-queue wait in nanoseconds of each thread of pid ({} if unreadable)."""
    waits: dict[int, int] = {}
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        return waits
    for task in tasks:
        try:
            fields = (task / "schedstat").read_text().split()
            waits[int(task.name)] = int(fields[1])
        except (OSError, ValueError, IndexError):
            continue
    return waits


class RunClock:
    """Seconds since creation, less the longest run-queue wait of one of
    pid's threads since then (threads started later count from 0)."""

    def __init__(self, pid: int | None, proc: Path = Path("/proc"),
                 now=time.monotonic) -> None:
        self._pid = pid
        self._proc = proc
        self._now = now
        self._start = now()
        self._base = thread_waits(pid, proc) if pid else {}
        self.waited = 0.0       # the last reading's subtracted wait, seconds

    def elapsed(self) -> float:
        wall = self._now() - self._start
        if self._pid:
            waits = thread_waits(self._pid, self._proc)
            longest = max((ns - self._base.get(tid, 0) for tid, ns in waits.items()),
                          default=0)
            self.waited = max(self.waited, min(wall, longest / 1e9))
        return wall - self.waited

    def wall(self) -> float:
        return self._now() - self._start
