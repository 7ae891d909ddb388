"""scripts/beside.sh: make test's unit tests beside the kernel builds."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from processes import alive, with_environ

REPO = Path(__file__).resolve().parents[2]
BESIDE = REPO / "scripts" / "beside.sh"


def beside(log: Path, background: str, *foreground: str,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BESIDE), str(log), background, *foreground],
                          capture_output=True, text=True, timeout=timeout, check=False)


def wait_for(event, what: str, timeout: float = 60) -> None:
    """Poll for an event that must come; timeout is only the verdict that
    it never did, far beyond what any load makes of it."""
    deadline = time.monotonic() + timeout
    while not event():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def ctrl_c_reaches() -> None:
    """SIGINT at its default in beside.sh, as under a terminal: started from
    a shell's background job (make &, nohup ... &), these tests would
    inherit it ignored, and beside.sh keeps an ignored SIGINT ignored, as
    any shell does."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


MARK = "USERCOPY_LAB_BESIDE_TEST"


def marked(mark: str) -> list[int]:
    """Live processes started under MARK=mark: beside.sh, the foreground,
    the background and all they started (each inherits the environment;
    a zombie's reads empty).  No pid file to wait for: a process that
    exists is seen, whether or not it has written anything yet."""
    return with_environ(MARK, mark)


def test_the_background_runs_at_nice_19_and_its_output_is_shown_and_kept(tmp_path):
    log = tmp_path / "beside.log"
    done = beside(log, "sleep 0.3; echo nice=$(nice); echo second line",
                  "sh", "-c", "echo foreground; nice >&2")
    assert done.returncode == 0, done.stderr
    assert "nice=19\nsecond line\n" in done.stdout
    assert done.stderr == f"{os.nice(0)}\n"      # the foreground at this niceness
    assert done.stdout.index("foreground") < done.stdout.index("nice=19")
    assert log.read_text() == "nice=19\nsecond line\n"


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(),
                    reason="this kernel has no scheduler autogroups (CONFIG_SCHED_AUTOGROUP)")
def test_the_background_session_is_niced_as_a_whole(tmp_path):
    """Its own session is its own autogroup, which the CFS weighs by the
    group's nice value: the tasks' nice 19 alone would leave it an equal
    share beside the kernel build.  The background polls its group until
    beside.py has set it (it does so once the spawn returned); a group left
    at nice 0 prints that after 30 s and fails."""
    done = beside(tmp_path / "l",
                  "for i in $(seq 600); do grep -q ' nice 19$' /proc/self/autogroup && break;"
                  " sleep 0.05; done; cat /proc/self/autogroup",
                  "true")
    assert done.returncode == 0, done.stderr
    groups = re.findall(r"^(/autogroup-\d+) nice (\d+)$", done.stdout, re.M)
    assert [nice for _, nice in groups] == ["19"], done.stdout
    mine = Path("/proc/self/autogroup").read_text().split()[0]
    assert groups[0][0] != mine           # a group of its own, not this one


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
    command: had that been started with SIGINT ignored (as bash starts a
    background job), beside.sh would not take it here and this test would
    time out."""
    log = tmp_path / "l"
    pidfile = tmp_path / "pid"
    proc = subprocess.Popen([str(BESIDE), str(log), f"sleep 60 & echo $! > {pidfile}; wait",
                             "sleep", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=ctrl_c_reaches)
    wait_for(lambda: pidfile.exists() and pidfile.read_text().endswith("\n"),
             "the background never started")
    grandchild = int(pidfile.read_text())
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "stopped" in err and str(log) in err
    wait_for(lambda: not alive(grandchild), "the background's own child outlived it")


def test_one_ctrl_c_at_any_moment_ends_everything(tmp_path):
    """One Ctrl-C, early or late, ends beside.sh, the foreground and
    everything the background started; a second one is never needed.

    The bash version lost one in the fork of the foreground (it reached
    the child before its exec, and bash, seeing the child exit normally,
    let it go: 3 to 8 of 80 tries a millisecond apart), and as `cmd &`
    and `wait` it lost one that came just before `wait` blocked (1 to 6 of
    300).  beside.py blocks SIGINT before it starts anything and takes it
    with sigwaitinfo().  The moments are a millisecond apart through
    beside.sh's start (Python's start, then the two spawns), then further
    apart.  The foreground runs 60 s: a lost Ctrl-C is beside.sh still
    running 30 s on.  A Ctrl-C before beside.sh's env has blocked SIGINT
    ends it, dead of SIGINT, with nothing started.  (Python must not see
    one: its start printed a KeyboardInterrupt in its check of the script
    path and went on, 3 of 300 tries at 0.07-0.08 s beside two busy loops,
    when Python blocked SIGINT itself.)"""
    moments = [i / 1000 for i in range(0, 40, 1)] + [0.08, 0.16, 0.32, 0.64]
    for i, delay in enumerate(moments):
        log = tmp_path / f"l{i}"
        mark = f"{os.getpid()}-{tmp_path.name}-{i}"
        proc = subprocess.Popen([str(BESIDE), str(log), "sleep 60 & wait", "sleep", "60"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, env=dict(os.environ, **{MARK: mark}),
                                preexec_fn=ctrl_c_reaches)
        time.sleep(delay)           # when the Ctrl-C comes: not a wait for anything
        os.killpg(proc.pid, signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            ended = proc.poll() is not None
            for pid in marked(mark):
                os.kill(pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"Ctrl-C {delay} s after the start: "
                        + ("beside.sh ended, its foreground did not" if ended
                           else "lost: beside.sh still runs 30 s later"))
        if "runs beside this" in out:
            assert proc.returncode == 130, (delay, out, err)
            assert err.splitlines()[-1] == (f"beside: stopped; 'sleep 60 & wait' ended, "
                                            f"its output so far in {log}"), (delay, err)
        else:
            assert proc.returncode == -signal.SIGINT, (delay, out, err)
        wait_for(lambda: not marked(mark), f"Ctrl-C {delay} s after the start: "
                 "a process of beside.sh's outlived it")


def test_bad_usage_is_one_line_and_status_2(tmp_path):
    for args in ([], [str(tmp_path / "l"), "true"], [str(tmp_path / "l"), "", "true"]):
        done = subprocess.run([str(BESIDE), *args], capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 2
        assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("beside: ")
