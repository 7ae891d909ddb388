"""A run that is stopped keeps every result it had and says it was stopped
(issue #33): SIGTERM as Ctrl-C (a CI timeout, `timeout`, a cancelled job),
and a disk that fills up under the results folder.  The fake QEMU replays
real consoles, nothing boots (test_run_loop.py's lab).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from test_run_loop import FAULTS, REPO, _fakes_alive, args, lab, use_series  # noqa: F401

TRIGGERS = ["USERCOPY_SLAB_WHITELIST_TO", "LOOP", "USERCOPY_STACK_FRAME_TO"]


def spawn(lab: Path, *extra: str, prefix: list[str] | None = None,
          env: dict[str, str] | None = None) -> subprocess.Popen:
    # SIGINT at its default in the child (a shell that started make in the
    # background ignores it, and the child would inherit that).
    return subprocess.Popen([*(prefix or []), str(REPO / "usercopy-lab"), *args(lab, *extra)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_for_text(path: Path, text: str, proc: subprocess.Popen, limit: float = 60.0) -> None:
    """Until path holds text (an event the guest's console gives), or the
    run ended, or a generous limit passed (then the test fails, naming it)."""
    deadline = time.monotonic() + limit
    while not (path.is_file() and text in path.read_text(errors="replace")):
        assert proc.poll() is None, f"the run ended before {path} held {text!r}"
        assert time.monotonic() < deadline, f"{path} never held {text!r}"
        time.sleep(0.05)


def one_run_folder(lab: Path) -> Path:
    [run] = [p for p in (lab / "results").iterdir() if p.name != "latest"]
    return run


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("triggers", [TRIGGERS, ["LOOP"]], ids=["three", "one"])
def test_a_stop_signal_leaves_every_result_file_and_nothing_else(lab, signum, triggers):
    """The signal comes while LOOP hangs in its guest (its console says LKDTM
    took it): the finished triggers keep their verdicts, LOOP is ERROR
    (interrupted), the rest are listed as not run, results.json is whole
    and says so, KTAP and JUnit are written, and no lock, snapshot image,
    QMP folder or QEMU is left."""
    use_series(lab, "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_TO")
    shutil.copy(FAULTS / "guest-hang.log", lab / "consoles" / "LOOP.log")
    # a TMPDIR of the test's own, short enough for QMP sockets (socket_dir)
    tmpdir = Path(tempfile.mkdtemp(prefix="ucl-", dir="/tmp"))
    proc = spawn(lab, "--suite", "default", *[a for t in triggers for a in ("--trigger", t)],
                 "-j", "1", "--ktap", str(lab / "out.ktap"), "--junit", str(lab / "out.xml"),
                 env=dict(os.environ, TMPDIR=str(tmpdir)))
    wait_for_text(lab / "results" / "latest" / "default" / "LOOP.log",
                  "lkdtm: Performing direct entry LOOP", proc)
    proc.send_signal(signum)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, out
    assert "Traceback" not in out
    assert f"interrupted ({signal.Signals(signum).name})" in out
    run = one_run_folder(lab)
    data = json.loads((run / "results.json").read_text())
    assert (data["interrupted"], data["complete"]) == (True, False)
    done = triggers[:triggers.index("LOOP")]
    assert [(t["name"], t["verdict"], t["fault"]) for t in data["triggers"]] == \
        [(t, "PASS", None) for t in done] + [("LOOP", "ERROR", "interrupted")]
    assert data["not_run"] == [f"default/{t}" for t in triggers[triggers.index("LOOP") + 1:]]
    for ktap in (run / "results.ktap", lab / "out.ktap"):
        assert ktap.read_text().startswith("KTAP version 1\n")
    for junit in (run / "junit.xml", lab / "out.xml"):
        assert "<testcase" in junit.read_text()
    assert not (run / ".running").exists()
    assert not list(run.rglob("*.qcow2"))
    assert not list(tmpdir.glob("usercopy-lab-qmp-*"))
    tmpdir.rmdir()
    assert _fakes_alive(lab) == []


def test_qmp_sockets_fit_whatever_tmpdir_is(monkeypatch, tmp_path):
    """A TMPDIR too deep for a unix socket path (108 bytes) must not cost
    the run its snapshots (seen: pytest's own tmp folders): the socket's
    folder goes to /tmp then."""
    from usercopy_lab.capture.qmp import SOCKET_NAME, socket_dir
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    monkeypatch.setenv("TMPDIR", str(deep))
    monkeypatch.setattr(tempfile, "tempdir", None)     # read TMPDIR again
    folder = socket_dir()
    try:
        assert len(str(folder / SOCKET_NAME)) <= 107
        assert folder.parent == Path("/tmp")
    finally:
        folder.rmdir()


def test_a_stop_signal_before_the_first_guest_runs_none(lab, monkeypatch):
    """The run takes the signal from its start: one that comes while the run
    is still being planned (a CI job cancelled at once) stops it before any
    guest, every guest listed as not run, and the signal's exit status."""
    from usercopy_lab import cli
    from usercopy_lab.cli import run as cli_run
    real = cli_run.plan

    def plan_then_sigterm(*a, **k):
        jobs = real(*a, **k)
        os.kill(os.getpid(), signal.SIGTERM)   # handled at once, in this thread
        return jobs

    monkeypatch.setattr(cli_run, "plan", plan_then_sigterm)
    use_series(lab, "USERCOPY_SLAB_WHITELIST_TO")
    handler = signal.getsignal(signal.SIGTERM)
    rc = cli.main(args(lab, "--suite", "default", "--trigger", "USERCOPY_SLAB_WHITELIST_TO"))
    assert rc == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is handler
    data = json.loads((one_run_folder(lab) / "results.json").read_text())
    assert (data["interrupted"], data["triggers"]) == (True, [])
    assert data["not_run"] == ["default/USERCOPY_SLAB_WHITELIST_TO"]
    assert (one_run_folder(lab) / "junit.xml").is_file()


def _small_tmpfs_works() -> str | None:
    if shutil.which("unshare") is None:
        return "util-linux unshare missing"
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare -rm cannot mount a tmpfs here: {probe.stderr.strip()}"
    return None


@pytest.mark.skipif(bool(_small_tmpfs_works()), reason=str(_small_tmpfs_works()))
@pytest.mark.parametrize("size_k", [40, 120])
def test_a_full_disk_stops_the_run_names_the_path_and_keeps_the_verdicts(lab, size_k):
    """results/ on a tmpfs of a few consoles' size (unshare: a mount
    namespace of the test's own, as an unprivileged user): the disk fills
    up during the run.  Exit 2 with one line naming the file that could not
    be written; results.json, when the first verdicts fitted, holds those
    and says complete: false; no traceback."""
    names = ["USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_TO", "USERCOPY_KERNEL",
             "USERCOPY_VMALLOC", "USERCOPY_WHITELIST_DENTRY_TO", "USERCOPY_SLAB_SIZE_TO"]
    use_series(lab, *names)
    (lab / "results").mkdir()
    kept = lab / "kept"
    # the tmpfs goes with the namespace: copy what the run left out first
    mount = ["unshare", "-rm", "sh", "-c",
             f'mount -t tmpfs -o size={size_k}k tmpfs "$0" && "$@"; rc=$?; '
             f'cp -r "$0" {kept}; exit $rc', str(lab / "results")]
    proc = spawn(lab, "--suite", "default", *[a for n in names for a in ("--trigger", n)],
                 "-j", "1", "--boot", "full", prefix=mount)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2, out
    assert "Traceback" not in out
    [line] = [x for x in out.splitlines() if "the run stopped" in x]
    assert line.startswith(f"usercopy-lab: {lab / 'results'}/"), line
    assert ": No space left on device; " in line
    assert _fakes_alive(lab) == []
    verdicts = int(line.split("the verdicts of ")[1].split()[0])
    assert verdicts < len(names)
    [run] = [p for p in kept.iterdir() if p.name != "latest"]
    if verdicts:
        data = json.loads((run / "results.json").read_text())
        assert data["complete"] is False
        assert [t["name"] for t in data["triggers"]] == names[:verdicts]
        assert {t["verdict"] for t in data["triggers"]} == {"PASS"}
    else:
        assert not (run / "results.json").exists()


def test_results_json_says_complete_only_at_the_end(lab, monkeypatch):
    """Every results.json written while guests run says complete: false;
    only the last one, of a run that was not stopped, says true."""
    from usercopy_lab.cli import main
    from usercopy_lab.output import results_report
    seen = []
    real = results_report.ResultsJson.write

    def spy(self, results, meta, fresh=False):
        seen.append(meta.get("complete"))
        return real(self, results, meta, fresh)

    monkeypatch.setattr(results_report.ResultsJson, "write", spy)
    use_series(lab, "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_TO")
    assert main(args(lab, "--suite", "default", "--trigger", "USERCOPY_SLAB_WHITELIST_TO",
                     "--trigger", "USERCOPY_STACK_FRAME_TO", "-j", "1")) == 0
    assert seen[-1] is True and set(seen[:-1]) == {False}
    assert json.loads((lab / "results/latest/results.json").read_text())["complete"] is True
