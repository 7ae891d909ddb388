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
