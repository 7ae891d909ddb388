"""The run loop end to end without booting: a fake qemu-system-x86_64
(fake_qemu/) replays captured consoles, as kunit_tool mocks its QEMU.

Snapshot mode and its per-trigger fallback to a full boot, -j ordering,
named harness faults (testdata/faults/, expectation in each header),
Ctrl-C, and two runs sharing one results directory.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from processes import alive, find

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FAKE = HERE / "fake_qemu"
SERIES = HERE / "testdata" / "console-series" / "default"
FAULTS = HERE / "testdata" / "faults"

pytestmark = pytest.mark.skipif(not (FAKE / "qemu-system-x86_64").exists(),
                                reason="fake QEMU missing")


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A build dir with placeholder kernels (the fake never reads them), a
    consoles folder for the fake, and PATH with the fake first."""
    for kernel in ("default", "seeds", "slab", "nosplit"):
        image = tmp_path / "build" / f"kernel-{kernel}" / "arch/x86/boot/bzImage"
        image.parent.mkdir(parents=True)
        image.write_text("fake kernel\n")
    (tmp_path / "initramfs.cpio").write_text("fake initramfs\n")
    consoles = tmp_path / "consoles"
    consoles.mkdir()
    # What the fake prints when it boots a guest to the ready point.
    series = (SERIES / "USERCOPY_SLAB_WHITELIST_TO.log").read_bytes()
    (consoles / "boot.log").write_bytes(series[:series.index(b"USERCOPY-LAB-READY")]
                                        + b"USERCOPY-LAB-READY\n")
    monkeypatch.setenv("PATH", f"{FAKE}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_QEMU_CONSOLES", str(consoles))
    return tmp_path


def args(lab: Path, *extra: str) -> list[str]:
    return ["run", "--accel", "tcg", "--build-dir", str(lab / "build"),
            "--initramfs", str(lab / "initramfs.cpio"), "--results", str(lab / "results"),
            *extra]


def cli(lab: Path, *extra: str) -> tuple[int, dict]:
    from usercopy_lab.cli import main
    rc = main(args(lab, *extra))
    return rc, json.loads((lab / "results" / "latest" / "results.json").read_text())


def use_series(lab: Path, *names: str) -> None:
    for name in names:
        shutil.copy(SERIES / f"{name}.log", lab / "consoles" / f"{name}.log")


def fault_case(path: Path) -> tuple[dict[str, str], bytes]:
    """A faults fixture: its '#!' header and the console the fake replays."""
    header, body = {}, []
    for line in path.read_bytes().splitlines(keepends=True):
        if line.startswith(b"#!"):
            key, _, value = line[2:].decode().partition(":")
            header[key.strip()] = value.strip()
        else:
            body.append(line)
    console = b"".join(body)
    if "console" in header:
        console = (path.parent / header["console"]).read_bytes()
    directives = "".join(f"#! {k}: {v}\n" for k, v in header.items() if k == "then")
    return header, directives.encode() + console


MINI = ["USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_FROM", "USERCOPY_KERNEL",
        "USERCOPY_VMALLOC", "USERCOPY_WHITELIST_DENTRY_TO"]


def mini_suite(lab: Path) -> list[str]:
    """A suite of five triggers and the check, on the default golden files."""
    path = lab / "suites.toml"
    path.write_text(f"""[mini]
kernel = "default"
golden = "{REPO / 'expected-oops/lab'}"
triggers = "{REPO / 'lkdtm-tests/tests.txt'}"
only = {json.dumps(MINI)}
checks = ["check-usersized-caches"]
""")
    # suites.toml checks that a check program's source is beside it
    (lab / "initramfs-src").mkdir(exist_ok=True)
    (lab / "initramfs-src/check-usersized-caches.c").symlink_to(
        REPO / "initramfs-src/check-usersized-caches.c")
    use_series(lab, *MINI, "check-usersized-caches")
    return ["--suites-file", str(path)]


def test_snapshot_mode_restores_every_trigger_and_matches_full_boot(lab):
    suite = mini_suite(lab)
    rc, snap = cli(lab, *suite, "-j", "2")
    assert rc == 0, [t["diffs"] for t in snap["triggers"] if t["verdict"] != "PASS"]
    assert {t["boot"] for t in snap["triggers"]} == {"snapshot"}
    assert all(t["boot_fallback"] is None for t in snap["triggers"])
    # The restored log reads like a full boot: the snapshot's boot console first.
    log = Path(snap["triggers"][0]["log"]).read_text()
    assert log.index("Linux version") < log.index("USERCOPY-LAB-WAITING") \
        < log.index("USERCOPY-LAB-START")
    assert "capture ended: end-marker; boot snapshot" in log
    rc, full = cli(lab, *suite, "--boot", "full", "-j", "1")
    assert rc == 0
    assert [t["name"] for t in full["triggers"]] == MINI + ["check-usersized-caches"]
    assert {t["boot"] for t in full["triggers"]} == {"full"}

    def fields(data):
        return [(t["name"], t["verdict"],
                 [{k: v for k, v in r.items() if k not in ("file", "line", "end_line")}
                  for r in t["reports"]]) for t in data["triggers"]]
    assert fields(snap) == fields(full)


def test_results_keep_plan_order_with_two_workers(lab):
    suite = mini_suite(lab)
    (lab / "consoles" / f"{MINI[0]}.log").write_bytes(
        b"#! delay: 1\n" + (SERIES / f"{MINI[0]}.log").read_bytes())
    rc, data = cli(lab, *suite, "-j", "2", "--boot", "full")
    assert [t["name"] for t in data["triggers"]] == MINI + ["check-usersized-caches"]
    assert rc == 0 and data["jobs"] == 2


def restore_pids(pids: Path) -> list[str]:
    """Pids of the fake QEMUs of a run, less the snapshot boot's (the first)."""
    return pids.read_text().split()[1:]


def test_one_worker_reloads_every_trigger_in_the_qemu_it_keeps(lab, monkeypatch):
    suite = mini_suite(lab)
    pids = lab / "pids"
    monkeypatch.setenv("FAKE_QEMU_PIDS", str(pids))
    rc, data = cli(lab, *suite, "-j", "1")
    assert rc == 0, [t["diffs"] for t in data["triggers"] if t["verdict"] != "PASS"]
    assert len(restore_pids(pids)) == 1
    assert [t["reused_qemu"] for t in data["triggers"]] == [False] + [True] * len(MINI)
    assert data["reuse_qemu"] is True
    for i, t in enumerate(data["triggers"]):
        log = Path(t["log"]).read_text()
        # Each log holds its own trigger's console only, none of the last one's.
        assert log.count("USERCOPY-LAB-START") == 1
        assert f"USERCOPY-LAB-START trigger={t['name']}" in log \
            or f"USERCOPY-LAB-START helper={t['name']}" in log
        assert ("in the QEMU this worker kept paused" in log) == (i > 0)
        assert "qemu paused and kept for the next trigger" in log


def test_a_crossed_reply_in_the_kept_qemu_is_set_aside_and_the_trigger_boots_in_full(
        lab, monkeypatch):
    """The kept QEMU answers the request for MINI[2] with MINI[3]'s console:
    that console gives no verdict of MINI[2] (wrong-trigger, naming both,
    kept beside the log), the QEMU is ended and the snapshot not used again,
    and MINI[2]'s verdict comes from a full boot; the run says so."""
    suite = mini_suite(lab)
    monkeypatch.setenv("FAKE_QEMU_CROSS", f"{MINI[2]}={MINI[3]}")
    rc, data = cli(lab, *suite, "-j", "1")
    assert rc == 0, [t["summary"] for t in data["triggers"]]
    assert {(t["verdict"], t["fault"]) for t in data["triggers"]} == {("PASS", None)}
    crossed = data["triggers"][2]
    assert crossed["name"] == MINI[2] and crossed["boot"] == "full"
    kept = Path(crossed["log"]).with_suffix(".wrong-trigger.log")
    assert crossed["boot_fallback"] == (
        "the restored guest answered another request: wrong-trigger: asked for "
        f"{MINI[2]}, the console's START/END markers name {MINI[3]} (console: {kept})")
    assert "this QEMU is ended, never reused" in kept.read_text()
    assert f"USERCOPY-LAB-START trigger={MINI[2]}" in Path(crossed["log"]).read_text()
    assert [t["boot"] for t in data["triggers"]] == ["snapshot"] * 2 + ["full"] * (len(MINI) - 1)
    assert [t["reused_qemu"] for t in data["triggers"]] == [False, True] + [False] * (len(MINI) - 1)
    assert all(t["boot_fallback"] for t in data["triggers"][3:])


def test_a_stale_reply_is_never_taken_for_the_current_request(lab, monkeypatch):
    """Each reload prints the previous request's START and END again before
    the guest reads the new request (its reply arriving late): the harness
    reads them first, so that console is wrong-trigger naming the earlier
    request, never a PASS on the earlier reply; the trigger boots in full."""
    suite = mini_suite(lab)
    monkeypatch.setenv("FAKE_QEMU_STALE", "1")
    rc, data = cli(lab, *suite, "-j", "1")
    assert rc == 0
    names = [t["name"] for t in data["triggers"]]
    second = data["triggers"][1]
    assert second["boot"] == "full" and second["verdict"] == "PASS"
    assert second["boot_fallback"].startswith(
        "the restored guest answered another request: wrong-trigger: asked for "
        f"{names[1]}, the console's START/END markers name {names[0]} (console: ")
    assert [t["boot"] for t in data["triggers"]] == ["snapshot"] + ["full"] * len(MINI)
    assert {t["verdict"] for t in data["triggers"]} == {"PASS"}


def test_late_console_bytes_of_a_paused_guest_are_kept_out_of_every_log(tmp_path):
    """What a kept QEMU's console still held when its next trigger reloads
    the snapshot was written before the pause: take_unread() returns it
    (restore_guest notes it as the last trigger's) and no log gets it."""
    from usercopy_lab.capture.console_capture import Guest
    import select

    log = tmp_path / "log"
    with open(log, "wb") as f, Guest(["sh", "-c", "printf 'late line\\n'; sleep 30"],
                                     f, False, None) as guest:
        assert guest.child is not None
        # the pty may hand the line over in parts ("\r\n" after the text):
        # take what is there each time some comes, until the line is whole
        unread, deadline = b"", time.monotonic() + 60
        while unread.replace(b"\r", b"") != b"late line\n":
            assert time.monotonic() < deadline and len(unread) < 64, unread
            select.select([guest.child.child_fd], [], [], 1)
            unread += guest.take_unread()
        assert guest.take_unread() == b""
    assert log.read_bytes() == b""


def test_qemu_per_trigger_starts_a_qemu_for_every_trigger(lab, monkeypatch):
    suite = mini_suite(lab)
    pids = lab / "pids"
    monkeypatch.setenv("FAKE_QEMU_PIDS", str(pids))
    rc, data = cli(lab, *suite, "-j", "1", "--qemu-per-trigger")
    assert rc == 0
    assert len(restore_pids(pids)) == len(MINI) + 1
    assert not any(t["reused_qemu"] for t in data["triggers"])
    assert data["reuse_qemu"] is False


def test_a_failed_reload_restores_that_trigger_in_a_new_qemu(lab, monkeypatch):
    suite = mini_suite(lab)
    pids = lab / "pids"
    monkeypatch.setenv("FAKE_QEMU_PIDS", str(pids))
    monkeypatch.setenv("FAKE_QEMU_RELOAD", "fail")
    rc, data = cli(lab, *suite, "-j", "1")
    assert rc == 0
    assert len(restore_pids(pids)) == len(MINI) + 1
    assert {t["boot"] for t in data["triggers"]} == {"snapshot"}
    assert all(t["boot_fallback"] is None and not t["reused_qemu"] for t in data["triggers"])
    second = Path(data["triggers"][1]["log"]).read_text()
    assert "reload failed (loadvm said: Error: fake loadvm failure); that QEMU ended" in second


def test_a_qemu_that_exits_after_its_trigger_is_not_reused(lab, monkeypatch):
    suite = mini_suite(lab)
    pids = lab / "pids"
    monkeypatch.setenv("FAKE_QEMU_PIDS", str(pids))
    # The guest of the second trigger reboots after END: -no-reboot ends QEMU.
    second = lab / "consoles" / f"{MINI[1]}.log"
    second.write_bytes(b"#! then: exit 0\n" + second.read_bytes())
    rc, data = cli(lab, *suite, "-j", "1")
    assert rc == 0
    assert len(restore_pids(pids)) == 2
    assert [t["reused_qemu"] for t in data["triggers"]] == \
        [False, True, False] + [True] * (len(MINI) - 2)


@pytest.mark.parametrize("phase", ["stop", "loadvm", "request", "START"])
def test_a_kept_qemu_that_ends_late_never_decides_a_verdict(lab, monkeypatch, phase):
    """The second trigger's QEMU ends only once the run loop has decided
    (issue #33's race, forced instead of waited for): when paused (QEMU says
    shutdown), on the next loadvm, on reading the next request, or right
    after the next START.  Whichever, the third trigger's verdict comes from
    a new QEMU restored from the same snapshot, never a full boot, never an
    ERROR; the snapshot is not blamed, and the result says when it was
    restored again."""
    suite = mini_suite(lab)
    pids = lab / "pids"
    monkeypatch.setenv("FAKE_QEMU_PIDS", str(pids))
    second = lab / "consoles" / f"{MINI[1]}.log"
    second.write_bytes(f"#! then: exit 0 at next {phase}\n".encode() + second.read_bytes())
    rc, data = cli(lab, *suite, "-j", "1")
    triggers = data["triggers"]
    assert rc == 0, [(t["name"], t["summary"]) for t in triggers if t["verdict"] != "PASS"]
    assert {t["verdict"] for t in triggers} == {"PASS"}
    assert {t["boot"] for t in triggers} == {"snapshot"}
    assert all(t["boot_fallback"] is None for t in triggers)
    assert [t["reused_qemu"] for t in triggers] == [False, True, False] + [True] * (len(MINI) - 2)
    assert len(restore_pids(pids)) == 2
    third = triggers[2]
    if phase in ("request", "START"):
        # handed the trigger, then gone: set aside, restored again
        where = "before" if phase == "request" else "after"
        assert third["qemu_retry"].startswith(
            "the QEMU kept from this worker's last trigger ended "
            f"{where} this trigger's START marker")
        lost = Path(third["log"]).with_suffix(".kept-qemu-lost.log")
        assert lost.is_file() and third["qemu_retry"].endswith(f"(console: {lost})")
        assert "restored again: " in Path(third["log"]).read_text()
    else:
        # seen before the trigger was handed over: never given one
        assert third["qemu_retry"] is None
    assert [t["qemu_retry"] is None for t in triggers] == \
        [True, True, phase in ("stop", "loadvm")] + [True] * (len(MINI) - 2)


def test_a_worker_ends_its_kept_qemu_when_the_machine_changes(lab, monkeypatch):
    pids = lab / "pids"
    monkeypatch.setenv("FAKE_QEMU_PIDS", str(pids))
    use_series(lab, "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_TO")
    rc, data = cli(lab, "--suite", "default", "--suite", "fallback",
                   "--trigger", "USERCOPY_SLAB_WHITELIST_TO",
                   "--trigger", "USERCOPY_STACK_FRAME_TO", "-j", "1")
    assert [t["reused_qemu"] for t in data["triggers"]] == [False, True, False, True]
    # two snapshot boots and two restoring QEMUs, none left running
    started = pids.read_text().split()
    assert len(started) == 4
    for pid in started:
        assert not alive(int(pid))


def drives(argv_log: Path) -> list[str]:
    """The -drive option of every QEMU the fake recorded."""
    out = []
    for line in argv_log.read_text().splitlines():
        argv = json.loads(line)
        if "-drive" in argv:
            out.append(argv[argv.index("-drive") + 1])
    return out


@pytest.mark.parametrize("refused", ["", "Unable to use io_uring: Operation not permitted"])
def test_snapshot_image_opened_with_io_uring_where_qemu_can(lab, monkeypatch, capfd,
                                                            refused):
    use_series(lab, "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_TO")
    monkeypatch.setenv("FAKE_QEMU_ARGV", str(lab / "argv.jsonl"))
    if refused:
        monkeypatch.setenv("FAKE_QEMU_IMG_AIO", refused)
    rc, data = cli(lab, "--suite", "default", "--trigger", "USERCOPY_SLAB_WHITELIST_TO",
                   "--trigger", "USERCOPY_STACK_FRAME_TO", "-j", "1")
    assert rc == 0
    assert [t["boot"] for t in data["triggers"]] == ["snapshot", "snapshot"]
    aio = "threads" if refused else "io_uring"
    # the snapshot boot and the QEMU that restores both triggers
    assert [d.split(",aio=")[1].split(",")[0] for d in drives(lab / "argv.jsonl")] == [aio] * 2
    said = "".join(capfd.readouterr())
    if refused:
        assert f"image aio=threads (io_uring unusable here: qemu-img: {refused})" in said
    else:
        assert "image aio=io_uring\n" in said


def test_results_path_with_a_comma_keeps_snapshots(lab):
    # QEMU's -drive reads "a,b" as two options unless the comma is doubled
    from usercopy_lab.cli import main
    use_series(lab, "USERCOPY_SLAB_WHITELIST_TO")
    argv = args(lab, "--suite", "default", "--trigger", "USERCOPY_SLAB_WHITELIST_TO")
    argv[argv.index("--results") + 1] = str(lab / "a,b")
    rc = main(argv)
    data = json.loads((lab / "a,b" / "latest" / "results.json").read_text())
    assert (rc, [t["boot"] for t in data["triggers"]]) == (0, ["snapshot"])


@pytest.mark.parametrize("env,why", [
    ({"FAKE_QEMU_LOADVM": "fail"}, "restore failed"),
    ({"FAKE_QEMU_IMG": "fail"}, "snapshot not made: qemu-img create failed"),
    ({"FAKE_QEMU_SAVEVM": "fail"}, "snapshot not made: savevm said: Error"),
])
def test_snapshot_failure_falls_back_to_full_boot_per_trigger(lab, monkeypatch, env, why):
    use_series(lab, "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_TO")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    rc, data = cli(lab, "--suite", "default", "--trigger", "USERCOPY_SLAB_WHITELIST_TO",
                   "--trigger", "USERCOPY_STACK_FRAME_TO", "-j", "1")
    assert rc == 0
    first, second = data["triggers"]
    assert [first["verdict"], second["verdict"]] == ["PASS", "PASS"]
    assert first["boot"] == second["boot"] == "full"
    assert why in first["boot_fallback"]
    if why == "restore failed":
        # The failed restore's console is kept; the machine is not tried again.
        kept = Path(first["log"]).with_suffix(".restore-failed.log")
        assert "Snapshot 'ready' does not exist" in kept.read_text()
        assert second["boot_fallback"].startswith("snapshot unusable: USERCOPY_SLAB_WHITELIST_TO")
    else:
        assert second["boot_fallback"] == first["boot_fallback"]


FAULT_FIXTURES = sorted(FAULTS.glob("*.log"))


@pytest.mark.parametrize("fixture", FAULT_FIXTURES, ids=[p.stem for p in FAULT_FIXTURES])
@pytest.mark.parametrize("boot", ["full", "snapshot"])
def test_harness_fault_is_a_named_error_with_its_log_kept(lab, fixture, boot):
    header, console = fault_case(fixture)
    trigger = header["trigger"]
    (lab / "consoles" / f"{trigger}.log").write_bytes(console)
    verdict, fault = header["expect"].split()
    # In snapshot mode a console that never reaches init's START fails the
    # restore, and the fault is then named by the full boot it falls back to.
    rc, data = cli(lab, "--suite", "default", "--trigger", trigger, "--boot", boot,
                   "--trigger-timeout", "2", "--boot-timeout", "4")
    (result,) = data["triggers"]
    assert (result["verdict"], result["fault"]) == (verdict, fault), result["summary"]
    assert result["summary"].startswith(f"{fault}: ")
    assert rc == 1
    log = Path(result["log"]).read_bytes()
    assert b"# usercopy-lab: capture ended: " in log
    # The log keeps what the guest printed (its last console line is in it).
    last = [l for l in console.splitlines() if l.strip() and not l.startswith(b"#")][-1]
    assert last in log


def test_match_names_the_fault_of_a_kept_log(lab, capsys):
    header, console = fault_case(FAULTS / "guest-hang.log")
    log = lab / "LOOP.log"
    log.write_bytes(console + b"# usercopy-lab: capture ended: timeout; boot full; "
                              b"qemu exit status 9; 8.00s\n")
    from usercopy_lab.cli import main
    assert main(["match", "--suite", "default", str(log)]) == 1
    assert "guest-hang: " in capsys.readouterr().out


def _spawn_cli(lab: Path, *extra: str) -> subprocess.Popen:
    # SIGINT at its default in the child even when the tests run under a
    # shell that ignores it (make started in the background).
    return subprocess.Popen([str(REPO / "usercopy-lab"), *args(lab, *extra)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _fakes_alive(lab: Path) -> list[str]:
    """The command lines of the fake QEMUs of lab still running."""
    def fake_of_lab(proc: psutil.Process) -> bool:
        cmd = " ".join(proc.cmdline())
        return str(FAKE) in cmd and str(lab) in cmd

    return [" ".join(p.cmdline()) for p in find(fake_of_lab)]


def test_ctrl_c_writes_partial_results_kills_qemu_and_exits_130(lab):
    use_series(lab, "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_TO")
    shutil.copy(FAULTS / "guest-hang.log", lab / "consoles" / "LOOP.log")
    proc = _spawn_cli(lab, "--suite", "default", "--trigger", "USERCOPY_SLAB_WHITELIST_TO",
                      "--trigger", "LOOP", "--trigger", "USERCOPY_STACK_FRAME_TO",
                      "-j", "1", "--boot", "full")
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("[1/3]"):
            break
    # LOOP is hanging in its guest once its console says it ran the trigger
    loop_log = lab / "results" / "latest" / "default" / "LOOP.log"
    deadline = time.monotonic() + 60
    while not (loop_log.is_file()
               and b"Performing direct entry LOOP" in loop_log.read_bytes()):
        assert proc.poll() is None and time.monotonic() < deadline, "".join(seen)
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, "".join(seen) + rest
    assert "Traceback" not in rest
    data = json.loads((lab / "results" / "latest" / "results.json").read_text())
    assert data["interrupted"] is True
    assert [(t["name"], t["verdict"], t["fault"]) for t in data["triggers"]] == [
        ("USERCOPY_SLAB_WHITELIST_TO", "PASS", None), ("LOOP", "ERROR", "interrupted")]
    assert data["not_run"] == ["default/USERCOPY_STACK_FRAME_TO"]
    assert "lkdtm: Performing direct entry LOOP" in Path(data["triggers"][1]["log"]).read_text()
    assert _fakes_alive(lab) == []


def test_ctrl_c_while_a_progress_line_is_printed_stops_the_run_cleanly(lab, monkeypatch):
    # Ctrl-C must not raise in the run loop's thread: a KeyboardInterrupt
    # between a lock's acquire and its release left the lab hanging after
    # "interrupted: stopping every guest" (booted test, 2026-12-05).  Here
    # SIGINT arrives while the first progress line is formatted, under
    # the print lock; the run stops after that guest and the handler that
    # was there before is back afterwards.
    from usercopy_lab.run import run_loop
    suite = mini_suite(lab)
    handlers = []
    real = run_loop.progress_line

    def progress_then_ctrl_c(result):
        handlers.append(signal.getsignal(signal.SIGINT))
        if len(handlers) == 1:
            signal.raise_signal(signal.SIGINT)
        return real(result)

    monkeypatch.setattr(run_loop, "progress_line", progress_then_ctrl_c)
    before = signal.getsignal(signal.SIGINT)
    rc, data = cli(lab, *suite, "-j", "1", "--boot", "full")
    assert rc == 130 and data["interrupted"] is True
    assert signal.default_int_handler not in handlers
    assert data["triggers"][0]["verdict"] == "PASS" and data["not_run"]
    assert len(data["triggers"]) + len(data["not_run"]) == len(MINI) + 1
    assert signal.getsignal(signal.SIGINT) is before


def _lock_held(results: Path) -> bool:
    """Whether a run holds the lock of a folder in results (as
    run_dir.running_runs() asks)."""
    import fcntl
    for lock_path in results.glob("*/.running"):
        try:
            with open(lock_path) as f:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            continue
    return False


def test_two_runs_in_one_results_directory_do_not_collide(lab):
    """The second run starts while the first holds its lock: the first is
    stopped (SIGSTOP) from when its lock is held until the second has said
    that it saw it, however slowly either starts; no sleep decides it."""
    names = ["USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_TO"]
    use_series(lab, *names)
    extra = ["--suite", "default", "-j", "1"] + [a for n in names for a in ("--trigger", n)]
    first = _spawn_cli(lab, *extra)
    try:
        deadline = time.monotonic() + 60
        while not _lock_held(lab / "results"):
            assert first.poll() is None and time.monotonic() < deadline, "no lock"
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGSTOP)
        second = _spawn_cli(lab, *extra)
        assert second.stdout is not None
        said = [second.stdout.readline()]
        while said[-1] and "is also writing to" not in said[-1]:
            said.append(second.stdout.readline())
    finally:
        os.kill(first.pid, signal.SIGCONT)
    outs = [p.communicate(timeout=120)[0] for p in (first, second)]
    outs[1] = "".join(said) + outs[1]
    assert [first.returncode, second.returncode] == [0, 0], outs
    assert "is also writing to" in outs[1]
    runs = sorted(p for p in (lab / "results").iterdir() if p.name != "latest")
    assert len(runs) == 2
    for run in runs:
        data = json.loads((run / "results.json").read_text())
        assert data["run_id"] == run.name
        assert [t["verdict"] for t in data["triggers"]] == ["PASS", "PASS"]
        assert all(Path(t["log"]).parent.parent == run for t in data["triggers"])
        assert not (run / ".running").exists()


def test_a_harness_bug_in_one_guest_is_an_error_not_a_crash(lab, monkeypatch):
    use_series(lab, "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_TO")
    import usercopy_lab.run.run_loop as run_loop
    real = run_loop.run_trigger

    def buggy(suite, spec, *args, **kwargs):
        if spec.trigger == "USERCOPY_SLAB_WHITELIST_TO":
            raise RuntimeError("bug in the harness")
        return real(suite, spec, *args, **kwargs)
    monkeypatch.setattr(run_loop, "run_trigger", buggy)
    rc, data = cli(lab, "--suite", "default", "--trigger", "USERCOPY_SLAB_WHITELIST_TO",
                   "--trigger", "USERCOPY_STACK_FRAME_TO", "-j", "2")
    assert rc == 1
    assert [(t["verdict"], t["fault"]) for t in data["triggers"]] == [
        ("ERROR", "harness-error"), ("PASS", None)]
    assert "bug in the harness" in data["triggers"][0]["summary"]
