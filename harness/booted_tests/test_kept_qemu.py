"""A kept QEMU that ends late, on a real guest (run by `make test`).

The kept-QEMU exit race of issue #33: a guest that reboots or panics just
after its END marker ends its QEMU (-no-reboot), and the harness may see
that only after it paused the QEMU, kept it, or even handed it the next
trigger.  A real guest does not reboot at a chosen moment, so the test
makes QEMU itself do it at the moment that matters, with QMP
`system_reset` (what a guest's reboot asks QEMU for; under -no-reboot QEMU
then ends): right after the next trigger's reload (`loadvm`, `cont`) and
request, and right before the pause.  Each time the verdict must be the
golden file's, from a guest restored from the snapshot: never an ERROR,
never a full boot, the snapshot never blamed.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from guest_env import INITRAMFS, KERNEL, needs_guests

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "harness"))
pytestmark = needs_guests

FIRST, SECOND = "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_FROM"


def run_two(tmp_path: Path, monkeypatch, moment: str) -> tuple:
    """FIRST then SECOND in one worker slot (so SECOND goes to the QEMU
    FIRST left), QEMU reset at moment; both results and the slot's QEMUs."""
    from usercopy_lab.capture import restore as restore_mod
    from usercopy_lab.capture.qemu_boot import GuestSpec
    from usercopy_lab.capture.snapshot import make_snapshot
    from usercopy_lab.run.suite import load_suites
    from usercopy_lab.run.trigger_run import Boot, RunLimits, run_trigger

    started: list[int] = []
    real_start, real_reload = restore_mod.ResidentQemu.start, restore_mod.ResidentQemu.reload
    real_pause = restore_mod.ResidentQemu.pause

    def start(self, log, live):
        guest = real_start(self, log, live)
        started.append(self.pid)
        return guest

    def reload_then_reset(self, log, live, timeout):
        answer = real_reload(self, log, live, timeout)
        self._client(timeout).command("system_reset")     # the guest "reboots"
        return answer

    def reset_then_pause(self, timeout):
        self._client(timeout).command("system_reset")
        return real_pause(self, timeout)

    monkeypatch.setattr(restore_mod.ResidentQemu, "start", start)
    if moment == "after-handover":
        monkeypatch.setattr(restore_mod.ResidentQemu, "reload", reload_then_reset)
    else:
        monkeypatch.setattr(restore_mod.ResidentQemu, "pause", reset_then_pause)

    spec = GuestSpec(KERNEL, INITRAMFS, trigger=FIRST)
    snapshot = make_snapshot(spec.machine, tmp_path / "snapshot", 60.0)
    golden = load_suites(REPO / "suites.toml")["default"].golden()
    blamed: list[str] = []
    slot = restore_mod.ResidentSlot()
    try:
        results = []
        for name in (FIRST, SECOND):
            boot = Boot(restore=snapshot.restore(snapshot.image), slot=slot,
                        on_restore_failed=blamed.append)
            results.append(run_trigger("default", GuestSpec(KERNEL, INITRAMFS, trigger=name),
                                       golden[name], "", tmp_path / f"{name}.log",
                                       RunLimits(), boot=boot))
    finally:
        slot.close()
    return results, started, blamed


@pytest.mark.parametrize("moment", ["after-handover", "before-pause"])
def test_a_kept_qemu_that_ends_late_never_decides_a_verdict(tmp_path, monkeypatch, moment):
    (first, second), started, blamed = run_two(tmp_path, monkeypatch, moment)
    assert blamed == []
    assert (first.verdict, first.boot, first.fallback) == ("PASS", "snapshot", None), first
    assert (second.verdict, second.boot, second.fallback) == ("PASS", "snapshot", None), second
    assert second.reused_qemu is False     # its verdict came from a new QEMU
    assert len(started) == 2
    lost = tmp_path / f"{SECOND}.kept-qemu-lost.log"
    if moment == "after-handover":
        # handed the trigger, then gone: its console set aside, restored again
        assert second.qemu_retry is not None and second.qemu_retry.startswith(
            "the QEMU kept from this worker's last trigger ended ")
        assert lost.is_file() and second.qemu_retry.endswith(f"(console: {lost})")
        assert "restored again: " in (tmp_path / f"{SECOND}.log").read_text()
    else:
        # reset before the pause: QEMU is not paused (or gone), never kept
        assert second.qemu_retry is None and not lost.exists()
