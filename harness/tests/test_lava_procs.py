"""scripts/lava/procs.sh: what the LAVA scripts' tear-down finds and stops.

Real processes (sleep, setsid), no LAVA: run_pids must find a run's
descendants and the processes that name one of its paths (also when they
left the run's process tree, as lava-run does under lava-worker), never
the caller or an unrelated process; stop_pids must end them.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from processes import alive

PROCS = Path(__file__).resolve().parents[2] / "scripts" / "lava" / "procs.sh"


def bash(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f'set -euo pipefail; . "{PROCS}"; {script}'],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)


def wait_for(event, timeout: float = 60) -> bool:
    """Poll for an event that must come (a process ends, execs); the
    timeout only says that it never did, far beyond any load's delay."""
    deadline = time.monotonic() + timeout
    while not event():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def wait_gone(pid: int) -> bool:
    return wait_for(lambda: not alive(pid))


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_proc_start_tells_a_process_from_a_reused_id(tmp_path: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        out = bash(f"proc_start {sleeper.pid}; proc_start 999999999; echo end",
                   tmp_path)
        lines = out.stdout.split()
        assert out.returncode == 0, out.stderr
        assert lines[0].isdigit() and lines[1] == "end"
    finally:
        sleeper.kill()
        sleeper.wait()


def test_run_pids_finds_descendants_and_strays_not_bystanders(
        tmp_path: Path) -> None:
    run = tmp_path / "farm"
    run.mkdir()
    bystander = subprocess.Popen(["sleep", "31"])
    # A stray: detached from every tree (setsid, parent gone), it names the
    # run's folder only through where its output goes (lava-run's case).
    stray_pid_file = tmp_path / "stray.pid"
    subprocess.run(
        ["bash", "-c",
         f'setsid sleep 32 > "{run}/job.log" 2>&1 < /dev/null & '
         f'echo $! > "{stray_pid_file}"'], check=True)
    stray = int(stray_pid_file.read_text())
    # its output goes to the run's folder once it runs sleep (the
    # redirection comes before the exec)
    assert wait_for(lambda: cmdline(stray) == b"sleep\0" b"32\0"), cmdline(stray)
    try:
        # the subshell's sleep exists once the subshell has written its pid
        out = bash(
            'sleep 33 & child=$!; (sleep 34 & echo $! > inner; wait) & sub=$!; '
            'until [ -s inner ]; do sleep 0.01; done; '
            f'mapfile -t found < <(run_pids $$ "{run}/"); '
            'echo "child $child"; echo "found ${found[*]}"; echo "self $$"; '
            'stop_pids "${found[@]}"; wait',
            tmp_path)
        assert out.returncode == 0, out.stderr
        fields = dict(line.split(" ", 1) for line in out.stdout.splitlines())
        found = {int(p) for p in fields["found"].split()}
        assert int(fields["child"]) in found
        assert stray in found
        assert bystander.pid not in found
        assert int(fields["self"]) not in found
        # the child, the subshell and its sleep: no more, although every
        # process of the caller's shell names the run's folder (bash -c's
        # text), run_pids' own helpers among them
        assert len(found - {stray}) == 3
        assert wait_gone(stray)
        assert alive(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()
        if alive(stray):
            os.kill(stray, 9)


def test_stop_pids_kills_what_ignores_sigterm(tmp_path: Path) -> None:
    stubborn = subprocess.Popen(
        ["bash", "-c", "trap '' TERM; echo ignoring; while :; do sleep 0.1; done"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert stubborn.stdout is not None
        assert stubborn.stdout.readline() == "ignoring\n"     # its trap is set
        start = time.monotonic()
        out = bash(f"LAVA_STOP_GRACE=2 stop_pids {stubborn.pid}", tmp_path)
        assert out.returncode == 0
        assert "did not stop on SIGTERM within 2 s: SIGKILL" in out.stderr
        # ten 0.2 s sleeps before the SIGKILL: a floor, whatever the load
        assert time.monotonic() - start >= 1.9
        assert stubborn.wait(timeout=60) == -9
    finally:
        if stubborn.poll() is None:
            stubborn.kill()
            stubborn.wait()


def test_run_pids_refuses_the_callers_own_shell(tmp_path: Path) -> None:
    out = bash("run_pids $$ x", tmp_path)
    assert out.returncode == 2
    assert "subshell" in out.stderr

