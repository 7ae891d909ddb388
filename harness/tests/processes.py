"""Processes and process trees, through psutil: whether one still runs,
which run with a given environment variable, and ending one with all it
started: the one place the tests and their tools (hostile_inputs.py) find
and end processes (the harness ends its only child, QEMU, through pexpect).

A process group is the unit where one exists for the purpose (a command
started with start_new_session=True, its session's group): kill_group()
reaches what its members started even after they were orphaned, which a
walk of the tree from the leader cannot.
"""
from __future__ import annotations

import os
import signal
import time
from typing import Callable

import psutil


def alive(pid: int) -> bool:
    """pid runs: it exists and is not a zombie (one that has ended and
    waits only for its parent's wait)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def find(test: Callable[[psutil.Process], bool]) -> list[psutil.Process]:
    """The processes for which test is true.  One that test cannot read
    (gone meanwhile, another user's, a zombie's environment) is left out."""
    found = []
    for proc in psutil.process_iter():
        try:
            if test(proc):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def with_environ(name: str, value: str) -> list[int]:
    """The live processes whose environment has name=value (each process
    inherits it: one that a command and all it started share)."""
    return [p.pid for p in find(lambda p: p.environ().get(name) == value)]


def tree(pid: int) -> list[psutil.Process]:
    """pid and every process it started that is still its descendant
    (parent first); empty when pid is gone."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def end_tree(pid: int, timeout: float = 10.0) -> list[int]:
    """SIGTERM to pid and its descendants, SIGKILL to those still running
    after timeout seconds; the pids that had to be killed.  The tree is
    read before the first signal, so that a child whose parent dies first
    is still ended."""
    procs = tree(pid)
    for proc in procs:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
    left = _wait_ended(procs, timeout)
    for proc in left:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    _wait_ended(left, timeout)
    return [p.pid for p in left]


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_ended(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait until every one of procs has ended (a zombie has: its parent's
    wait is all it lacks; wait_procs reaps those that are ours); those
    still running after timeout seconds."""
    deadline = time.monotonic() + timeout
    left = procs
    while left:
        _, left = psutil.wait_procs(left, timeout=0.05)
        left = [p for p in left if _running(p)]
        if time.monotonic() > deadline:
            break
    return left


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """sig to every process of the group pgid; False when none is left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True
