"""Snapshot mode and the run loop on real guests (run by `make test`).

- equivalence: every trigger and check of the default suite booted in full,
  restored from a snapshot in a new QEMU each, and reloaded in the QEMU
  each worker keeps gives the same verdict and the same parsed reports
  (offsets may differ only where the golden file pins them relative to
  LKDTM's printed address, offset-base);
- fallback: with no usable qemu-img the snapshot cannot be made and every
  trigger boots in full, recorded per trigger;
- a crossed reply: a restored guest sent another trigger's request is set
  aside as wrong-trigger and the trigger boots in full;
- Ctrl-C mid-suite: partial results.json, no QEMU left, exit status 130;
- two runs into one results directory at once: separate folders, both
  complete, and the second says that the first is running.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from guest_env import BUILD, INITRAMFS, KERNEL, needs_guests

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
pytestmark = needs_guests

# Parsed report fields that describe the machine's run, not the report.
_WHERE = ("file", "line", "end_line")


def lab_argv(results: Path, *extra: str) -> list[str]:
    return [str(REPO / "usercopy-lab"), "run", "--accel", "tcg", "--build-dir", str(BUILD),
            "--initramfs", str(INITRAMFS), "--results", str(results), *extra]


def run(results: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    done = subprocess.run(lab_argv(results, *extra), capture_output=True, text=True,
                          timeout=900, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    data = json.loads((results / "latest" / "results.json").read_text())
    return done.returncode, data


def comparable(trigger: dict, golden_dir: Path) -> tuple:
    """Verdict and parsed reports.  lkdtm_address is the address LKDTM
    printed (a page's address differs between any two boots); a golden file
    pins it only through offset-base, so there offset - address is compared."""
    golden = golden_dir / f"{trigger['name']}.txt"
    relative = golden.is_file() and "offset-base:" in golden.read_text()
    reports = []
    for r in trigger["reports"]:
        fields = {k: v for k, v in r.items() if k not in _WHERE + ("lkdtm_address",)}
        if relative:
            fields["offset"] = r["offset"] - r["lkdtm_address"]
        reports.append(fields)
    return trigger["name"], trigger["verdict"], trigger["fault"], reports


def test_every_default_trigger_is_the_same_restored_and_booted(tmp_path):
    _, full = run(tmp_path / "full", "--suite", "default", "--boot", "full")
    _, fresh = run(tmp_path / "fresh", "--suite", "default", "--qemu-per-trigger")
    _, kept = run(tmp_path / "kept", "--suite", "default", "-j", "2")
    assert {t["boot"] for t in full["triggers"]} == {"full"}
    for snap in (fresh, kept):
        assert {t["boot"] for t in snap["triggers"]} == {"snapshot"}, \
            [t["boot_fallback"] for t in snap["triggers"]]
    assert not any(t["reused_qemu"] for t in fresh["triggers"])
    # two workers: each restores its first trigger in a new QEMU, then reloads
    # (a guest that rebooted before the pause at its END marker was not kept)
    new_qemu = [t["name"] for t in kept["triggers"] if not t["reused_qemu"]]
    assert len(new_qemu) == 2, new_qemu
    assert qemu_of(tmp_path / "kept") == []
    golden = REPO / "expected-oops" / "lab"
    expected = [comparable(t, golden) for t in full["triggers"]]
    assert [comparable(t, golden) for t in fresh["triggers"]] == expected
    assert [comparable(t, golden) for t in kept["triggers"]] == expected


def test_no_snapshot_means_full_boot_per_trigger(tmp_path):
    # A qemu-img that fails: the snapshot cannot be made, real QEMU boots in full.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "qemu-img").write_text("#!/bin/sh\necho 'qemu-img: disabled by the test' >&2\n"
                                      "exit 1\n")
    (bin_dir / "qemu-img").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    rc, data = run(tmp_path / "r", "--suite", "default", "--trigger",
                   "USERCOPY_SLAB_WHITELIST_TO", env=env)
    (result,) = data["triggers"]
    assert (rc, result["verdict"], result["boot"]) == (0, "PASS", "full")
    assert result["boot_fallback"] == ("snapshot not made: qemu-img create failed: "
                                       "qemu-img: disabled by the test")


def qemu_of(results: Path) -> list[int]:
    """pids of QEMUs whose command line names a file under results."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "qemu-system" in cmd and str(results) in cmd:
            pids.append(int(proc.name))
    return pids


def default_suite_guests() -> int:
    """Guests of the default suite: its listed triggers and its checks."""
    import sys
    sys.path.insert(0, str(REPO / "harness"))
    from usercopy_lab.run.suite import load_inputs, load_suites
    suites = load_suites(REPO / "suites.toml")
    triggers = load_inputs(suites)["default"].triggers
    return sum(1 for t in triggers if not t.skip_reason) + len(suites["default"].checks)


def test_ctrl_c_mid_suite(tmp_path):
    results = tmp_path / "r"
    # SIGINT back to its default in the child: a shell that started make in
    # the background ignores SIGINT, the lab inherits that, and a Ctrl-C
    # test would then time the suite instead (seen 2026-12-05: exit 0).
    proc = subprocess.Popen(lab_argv(results, "--suite", "default", "-j", "2"),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("[2/"):
            break
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, rest
    assert "Traceback" not in rest
    data = json.loads((results / "latest" / "results.json").read_text())
    assert data["interrupted"] is True
    assert len(data["triggers"]) >= 2 and data["not_run"]
    assert len(data["triggers"]) + len(data["not_run"]) == default_suite_guests()
    for t in data["triggers"]:
        assert Path(t["log"]).is_file()
    # a QEMU that was killed is gone once it has ended: wait for that,
    # however long the load makes it take
    deadline = time.monotonic() + 60
    while qemu_of(results):
        assert time.monotonic() < deadline, qemu_of(results)
        time.sleep(0.05)


def test_two_runs_share_a_results_directory(tmp_path):
    results = tmp_path / "r"
    extra = ["--suite", "default", "-j", "1", "--trigger", "USERCOPY_SLAB_WHITELIST_TO",
             "--trigger", "USERCOPY_STACK_FRAME_TO"]
    first = subprocess.Popen(lab_argv(results, *extra), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    assert first.stdout is not None
    # The first run's first line comes once it holds its lock and before it
    # starts any QEMU: stopped there, it is running for as long as the
    # second needs, whatever the load, and no timeout of its own is pending.
    assert first.stdout.readline().startswith("usercopy-lab: run ")
    first.send_signal(signal.SIGSTOP)
    try:
        second = subprocess.run(lab_argv(results, *extra), capture_output=True, text=True,
                                timeout=600)
    finally:
        first.send_signal(signal.SIGCONT)
    first_out = first.communicate(timeout=600)[0]
    assert (first.returncode, second.returncode) == (0, 0), first_out + second.stdout
    assert "is also writing to" in second.stdout
    runs = sorted(p for p in results.iterdir() if p.name != "latest")
    assert len(runs) == 2
    for path in runs:
        data = json.loads((path / "results.json").read_text())
        assert [t["verdict"] for t in data["triggers"]] == ["PASS", "PASS"]
        assert all(t["log"].startswith(str(path)) for t in data["triggers"])


def test_a_restored_guest_answering_another_request_boots_the_trigger_in_full(tmp_path):
    """The real guest restored from a snapshot is sent the request of
    USERCOPY_SLAB_SIZE_FROM while the harness asked for
    USERCOPY_SLAB_SIZE_TO (a crossed reply, made on purpose): that console
    is kept as wrong-trigger naming both, and the verdict comes from a full
    boot with the right request on the kernel command line."""
    import sys
    sys.path.insert(0, str(REPO / "harness"))
    from usercopy_lab.capture.qemu_boot import GuestSpec
    from usercopy_lab.capture.snapshot import make_snapshot
    from usercopy_lab.run.suite import load_suites
    from usercopy_lab.run.trigger_run import Boot, RunLimits, run_trigger

    class Crossed(GuestSpec):
        def request(self) -> str:
            return "trigger=USERCOPY_SLAB_SIZE_FROM"

    asked = "USERCOPY_SLAB_SIZE_TO"
    spec = Crossed(KERNEL, INITRAMFS, trigger=asked)
    snapshot = make_snapshot(spec.machine, tmp_path / "snapshot", 60.0)
    golden = load_suites(REPO / "suites.toml")["default"].golden()[asked]
    log = tmp_path / f"{asked}.log"
    result = run_trigger("default", spec, golden, "", log, RunLimits(),
                         boot=Boot(restore=snapshot.restore(snapshot.image)))
    kept = tmp_path / f"{asked}.wrong-trigger.log"
    assert (result.verdict, result.boot, result.fault) == ("PASS", "full", None), result
    assert result.fallback == (
        f"the restored guest answered another request: wrong-trigger: asked for {asked}, "
        f"the console's START/END markers name USERCOPY_SLAB_SIZE_FROM (console: {kept})")
    assert "lkdtm: Performing direct entry USERCOPY_SLAB_SIZE_FROM" in kept.read_text()
    assert f"lkdtm: Performing direct entry {asked}" in log.read_text()
