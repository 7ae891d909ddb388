"""capture/processes.py: finding processes and ending process trees."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from processes import alive, end_tree, kill_group, tree, with_environ

# A parent that starts a child that starts a grandchild, each writing
# "DEPTH PID" to the file named by argv[1]; with "stubborn" the grandchild
# ignores SIGTERM.
FAMILY = """
import os, signal, subprocess, sys, time
out, depth, stubborn = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "stubborn"
if depth < 2:
    subprocess.Popen([sys.executable, __file__, out, str(depth + 1), sys.argv[3]])
elif stubborn:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(out, "a") as f:
    f.write(f"{depth} {os.getpid()}\\n")
time.sleep(120)
"""


def start_family(tmp_path: Path, how: str, **kw) -> tuple[subprocess.Popen[bytes], list[int]]:
    """The family's leader and the pids of parent, child and grandchild."""
    script = tmp_path / "family.py"
    script.write_text(FAMILY)
    pids = tmp_path / "pids"
    proc = subprocess.Popen([sys.executable, str(script), str(pids), "0", how], **kw)
    deadline = time.monotonic() + 60
    while not pids.exists() or len(pids.read_text().splitlines()) < 3:
        assert time.monotonic() < deadline, "the family never started"
        time.sleep(0.02)
    by_depth = dict(line.split() for line in pids.read_text().splitlines())
    return proc, [int(by_depth[d]) for d in "012"]


def test_end_tree_ends_the_process_and_all_it_started(tmp_path):
    proc, family = start_family(tmp_path, "meek")
    assert sorted(p.pid for p in tree(proc.pid)) == sorted(family)
    assert end_tree(proc.pid, timeout=30) == []
    proc.wait(timeout=30)
    assert not any(alive(p) for p in family)


def test_end_tree_kills_what_ignores_sigterm(tmp_path):
    proc, family = start_family(tmp_path, "stubborn")
    stubborn = family[2]
    killed = end_tree(proc.pid, timeout=1)
    proc.wait(timeout=30)
    assert killed == [stubborn]
    assert not any(alive(p) for p in family)


def test_alive_is_false_for_a_zombie_and_a_pid_that_is_gone():
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 60
    while alive(child.pid):          # exited, not yet waited for: a zombie
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert Path(f"/proc/{child.pid}").exists()
    child.wait()
    assert not alive(child.pid)
    assert alive(os.getpid())


def test_with_environ_finds_the_processes_that_inherited_a_mark(tmp_path):
    mark = f"{os.getpid()}-{tmp_path.name}"
    env = dict(os.environ, LAB_TEST_MARK=mark)
    proc, family = start_family(tmp_path, "meek", env=env)
    try:
        assert sorted(with_environ("LAB_TEST_MARK", mark)) == sorted(family)
        assert with_environ("LAB_TEST_MARK", mark + "-other") == []
    finally:
        end_tree(proc.pid, timeout=30)
        proc.wait(timeout=30)


def test_kill_group_reaches_an_orphan_and_says_when_none_is_left(tmp_path):
    """The group's orphan (its parent gone) is out of the leader's tree,
    still in its group."""
    proc, family = start_family(tmp_path, "meek", start_new_session=True)
    os.kill(family[1], signal.SIGKILL)              # the grandchild is orphaned
    deadline = time.monotonic() + 60
    while family[2] in (p.pid for p in tree(proc.pid)):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert kill_group(proc.pid)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 60
    while alive(family[2]):
        assert time.monotonic() < deadline, "the orphan outlived its group's kill"
        time.sleep(0.02)
    gone = subprocess.Popen(["true"], start_new_session=True)
    gone.wait()
    assert not kill_group(gone.pid)
