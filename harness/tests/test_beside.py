"""scripts/beside.sh: make test's unit tests beside the kernel builds."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BESIDE = REPO / "scripts" / "beside.sh"


def beside(log: Path, background: str, *foreground: str,
           timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BESIDE), str(log), background, *foreground],
                          capture_output=True, text=True, timeout=timeout, check=False)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_background_runs_at_nice_19_and_its_output_is_shown_and_kept(tmp_path):
    log = tmp_path / "beside.log"
    done = beside(log, "sleep 0.3; echo nice=$(nice); echo second line",
                  "sh", "-c", "echo foreground; nice >&2")
    assert done.returncode == 0, done.stderr
    assert "nice=19\nsecond line\n" in done.stdout
    assert done.stderr == f"{os.nice(0)}\n"      # the foreground at this niceness
    assert done.stdout.index("foreground") < done.stdout.index("nice=19")
    assert log.read_text() == "nice=19\nsecond line\n"


def test_a_failed_background_fails_after_the_foreground_ran(tmp_path):
    done = beside(tmp_path / "l", "echo unit tests failed; exit 3",
                  "sh", "-c", "sleep 0.2; echo kernels built")
    assert done.returncode == 3
    assert "kernels built" in done.stdout and "unit tests failed" in done.stdout


def test_a_failed_foreground_is_the_status_and_the_background_still_ends(tmp_path):
    log = tmp_path / "l"
    done = beside(log, "sleep 0.5; echo finished", "sh", "-c", "exit 4")
    assert done.returncode == 4
    assert log.read_text() == "finished\n"


def test_ctrl_c_ends_the_background_and_what_it_started(tmp_path):
    """Ctrl-C reaches the terminal's process group: the foreground and
    beside.sh, not the background's own session, which beside.sh ends.
    Under make test, this test itself runs in beside.sh's background
    command: had bash's ignored SIGINT been left there, beside.sh could not
    trap it here and this test would time out."""
    log = tmp_path / "l"
    pidfile = tmp_path / "pid"
    proc = subprocess.Popen([str(BESIDE), str(log), f"sleep 60 & echo $! > {pidfile}; wait",
                             "sleep", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    deadline = time.monotonic() + 10
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline, "the background never started"
        time.sleep(0.05)
    grandchild = int(pidfile.read_text())
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 130, err
    assert "stopped" in err and str(log) in err
    deadline = time.monotonic() + 5
    while alive(grandchild):
        assert time.monotonic() < deadline, "the background's own child outlived it"
        time.sleep(0.05)


def test_bad_usage_is_one_line_and_status_2(tmp_path):
    for args in ([], [str(tmp_path / "l"), "true"], [str(tmp_path / "l"), "", "true"]):
        done = subprocess.run([str(BESIDE), *args], capture_output=True, text=True,
                              timeout=10, check=False)
        assert done.returncode == 2
        assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("beside: ")


def test_ctrl_c_at_any_moment_leaves_nothing_of_the_background(tmp_path):
    """Early or late, Ctrl-C ends beside.sh and nothing the background
    started outlives it: the trap is set before the background starts.

    A Ctrl-C can be lost, as in any bash script: sent while bash forks the
    foreground, the child takes it before its exec and runs on, and bash,
    seeing its child exit normally, lets the signal go (3 to 8 of 80 tries
    a millisecond apart here).  A second Ctrl-C is what a user gives then,
    and what this test gives."""
    for i, delay in enumerate((0, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32)):
        pids = tmp_path / f"pids{i}"
        proc = subprocess.Popen(
            [str(BESIDE), str(tmp_path / f"l{i}"),
             f"echo $$ >> {pids}; sleep 60 & echo $! >> {pids}; wait", "sleep", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGINT)          # the first one was lost
            _, err = proc.communicate(timeout=10)
        assert proc.returncode in (130, -signal.SIGINT), (delay, err)
        time.sleep(0.3)         # a background that escaped has written its pids by now
        started = [int(p) for p in pids.read_text().split()] if pids.exists() else []
        deadline = time.monotonic() + 5
        while any(alive(p) for p in started):
            assert time.monotonic() < deadline, (delay, "the background outlived Ctrl-C")
            time.sleep(0.05)
