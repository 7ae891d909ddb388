"""The folder of one run inside a results directory, safe beside other runs.

Every run gets its own results/<run-id>/ (time, pid and, if that exists, a
counter), so two runs never write the same file.  While it runs it holds a
lock on results/<run-id>/.running; a run that finds another run's lock held
says so.  results/latest is replaced atomically and names the run started
last.
"""
from __future__ import annotations

import datetime
import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

LOCK_NAME = ".running"


@dataclass
class RunDir:
    path: Path
    run_id: str
    others: list[str] = field(default_factory=list)   # run ids running beside it
    _lock: IO[str] | None = None

    def close(self) -> None:
        """Release the lock; the run's files stay."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None
            (self.path / LOCK_NAME).unlink(missing_ok=True)

    def __enter__(self) -> RunDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_run_dir(results: Path) -> RunDir:
    """Make results/<run-id>/, lock it and point results/latest at it.
    OSError (unwritable results) is the caller's to report."""
    results.mkdir(parents=True, exist_ok=True)
    others = running_runs(results)
    base = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    run_id, n = base, 1
    while True:
        try:
            (results / run_id).mkdir()
            break
        except FileExistsError:
            n += 1
            run_id = f"{base}.{n}"
    path = results / run_id
    lock = open(path / LOCK_NAME, "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    _point_latest(results, run_id)
    return RunDir(path, run_id, others, lock)


def running_runs(results: Path) -> list[str]:
    """Run ids in results whose lock is held by a live run."""
    found = []
    for lock_path in sorted(results.glob(f"*/{LOCK_NAME}")):
        try:
            with open(lock_path) as f:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            found.append(lock_path.parent.name)
        except OSError:
            continue
    return found


def _point_latest(results: Path, run_id: str) -> None:
    latest = results / "latest"
    if latest.exists() and not latest.is_symlink():
        return          # someone's own file or folder: leave it alone
    tmp = results / f".latest-{os.getpid()}-{run_id}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(run_id)
    os.replace(tmp, latest)
