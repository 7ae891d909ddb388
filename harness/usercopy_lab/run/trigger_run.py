"""One trigger, end to end: guest -> console log -> reports -> verdict.

The guest is a restored snapshot (snapshot mode) or a fresh full boot; a
restore that never reaches the trigger, or whose console answers another
request (fault wrong-trigger: a crossed, stale or garbled reply), falls
back to a full boot, and the result records which boot its verdict came
from and why, with the restored guest's console kept beside the log.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..capture.console_capture import Cancel, Capture, capture_guest, is_disk_full
from ..capture.qemu_boot import GuestSpec
from ..capture.restore import ResidentSlot, Restore, restore_guest
from ..judge.console_scan import grep_after_start, scan_console
from ..judge.faults import ConsoleFacts, Fault, classify
from ..judge.golden import Golden
from ..judge.selftests import evaluate_selftest_log, upstream_expect
from ..audit.slab_audit import PROGRAM as AUDIT_PROGRAM
from ..judge.verdict import ERROR, FAIL, Decision, decide, decide_audit, decide_check
from ..model import Report, TriggerResult
from ..reports import ConsoleMarkers


@dataclass(frozen=True)
class RunLimits:
    boot_timeout: float = 60.0
    trigger_timeout: float = 60.0
    restore_timeout: float = 20.0    # restored guest to START, else full boot


@dataclass(frozen=True)
class Boot:
    """How run_trigger gets its guest: restore (snapshot mode; in the QEMU
    slot keeps, when it has one), or a full boot, with the reason when
    snapshot mode was asked for."""

    restore: Restore | None = None
    fallback: str | None = None
    on_restore_failed: Callable[[str], None] | None = None
    slot: ResidentSlot | None = None


def run_trigger(suite: str, spec: GuestSpec, golden: Golden | None,
                expected_text: str, log_path: Path, limits: RunLimits,
                live: bool = False, boot: Boot = Boot(),
                cancel: Cancel | None = None, selftests: bool = False) -> TriggerResult:
    fallback = boot.fallback
    retry = None
    try:
        cap: Capture | None = None
        if boot.restore is not None:
            cap = restore_guest(spec, boot.restore, log_path, limits.restore_timeout,
                                limits.trigger_timeout, live=live, cancel=cancel,
                                slot=boot.slot)
            if cap.kept_qemu_lost and not (cancel and cancel.is_set()):
                # Not the snapshot's fault and not the trigger's: the slot's
                # kept QEMU is gone (restore.py), so the trigger is restored
                # again, in a new QEMU, from the same snapshot.
                retry = _set_aside(log_path, ".kept-qemu-lost.log", cap.kept_qemu_lost)
                cap = restore_guest(spec, boot.restore, log_path, limits.restore_timeout,
                                    limits.trigger_timeout, live=live, cancel=cancel,
                                    slot=boot.slot, why=retry)
            if cap.restore_failed and not (cancel and cancel.is_set()):
                why = f"restore failed: {cap.error}"
                fallback = _set_aside(log_path, ".restore-failed.log", why)
                _blame_snapshot(boot, spec.name, why)
                cap = None
        if cap is not None:
            result = _evaluate(suite, spec, log_path, golden, expected_text, cap, selftests)
            if result.fault is Fault.WRONG_TRIGGER and not (cancel and cancel.is_set()):
                # The restored guest's console does not answer this request
                # (a crossed, stale or garbled reply): no verdict of the
                # trigger can come from it.  Its QEMU is never reused, the
                # snapshot is not trusted again, and a full boot -- the
                # request on the kernel command line -- decides.
                if boot.slot is not None:
                    boot.slot.close()
                why = "the restored guest answered another request: " + result.summary
                fallback = _set_aside(log_path, ".wrong-trigger.log", why)
                _blame_snapshot(boot, spec.name, why)
                cap = None
        if cap is None:
            cap = capture_guest(spec, log_path, limits.boot_timeout,
                                limits.trigger_timeout, live=live, cancel=cancel)
            result = _evaluate(suite, spec, log_path, golden, expected_text, cap, selftests)
    except Exception as exc:  # the log must still be reported, never lost
        if isinstance(exc, OSError) and is_disk_full(exc):
            raise                 # but a full disk stops the run (run_loop)
        return TriggerResult(suite, spec.name, ERROR, f"harness error: {exc!r}", 0.0,
                             str(log_path), None, fault=Fault.HARNESS_ERROR, fallback=fallback,
                             qemu_retry=retry)
    return replace(result, boot=cap.mode, fallback=fallback, reused_qemu=cap.reused_qemu,
                   qemu_retry=retry)


def _set_aside(log_path: Path, suffix: str, why: str) -> str:
    """Keep a restored guest's console that gave no verdict beside the log
    (the next guest writes log_path again); why, naming where it is kept."""
    kept = log_path.with_suffix(suffix)
    log_path.replace(kept)
    return f"{why} (console: {kept})"


def _blame_snapshot(boot: Boot, name: str, why: str) -> None:
    """The snapshot gave no verdict for name: mark it unusable (the rest of
    its triggers boot in full)."""
    if boot.on_restore_failed is not None:
        boot.on_restore_failed(f"{name}: {why}")


def _evaluate(suite: str, spec: GuestSpec, log_path: Path, golden: Golden | None,
              expected_text: str, cap: Capture, selftests: bool) -> TriggerResult:
    if spec.helper:
        return evaluate_check_log(suite, spec.helper, log_path, cap.error, cap.seconds,
                                  golden, spec.kernel)
    if selftests:
        return evaluate_selftest_log(suite, spec.trigger, log_path, golden,
                                     cap.error, cap.seconds)
    return evaluate_log(suite, spec.trigger, log_path, golden, expected_text,
                        cap.error, cap.seconds)


def evaluate_log(suite: str, trigger: str, log_path: Path, golden: Golden | None,
                 expected_text: str, capture_error: str | None = None,
                 seconds: float = 0.0) -> TriggerResult:
    """Verdict for an already captured console log (also used by tests)."""
    console = scan_console(log_path)
    markers, reports = console.markers, console.reports
    verdict: Decision = decide(trigger, capture_error, markers, reports, golden)
    seen = None
    if expected_text:
        # run.sh's own check: grep -E -qi over what the test added.
        seen = grep_after_start(upstream_expect(expected_text)[0], log_path)
        if not seen and verdict.verdict == "PASS":
            verdict.verdict = FAIL
            verdict.diffs.append(f"tests.txt: expected text {expected_text!r} not on the console")
    fault = _fault(verdict, console.facts, markers, reports)
    return TriggerResult(suite, trigger, verdict.verdict, verdict.summary, seconds,
                         str(log_path), str(golden.path) if golden else None,
                         verdict.diffs, seen, reports, fault)


def check_golden_name(check: str) -> str:
    """The golden file name (without .txt) of a check program: its name in
    trigger form, rds-tcp-cookie -> RDS_TCP_COOKIE (golden files are named
    TRIGGER.txt)."""
    return check.upper().replace("-", "_")


def evaluate_check_log(suite: str, name: str, log_path: Path,
                       capture_error: str | None = None,
                       seconds: float = 0.0, golden: Golden | None = None,
                       kernel: Path | None = None) -> TriggerResult:
    """Verdict for the console of an in-guest check program (and its golden
    file, when the suite has one for it).  The whitelist audit
    (slab_audit.PROGRAM) has its table judged against its own golden file
    and the DWARF of KERNEL's vmlinux instead."""
    audit = name == AUDIT_PROGRAM
    console = scan_console(log_path, keep_lines=audit)
    markers, reports = console.markers, console.reports
    verdict = decide_check(name, capture_error, markers, reports,
                           None if audit else golden)
    if audit and golden is not None and kernel is not None:
        verdict = decide_audit(verdict, console.lines, golden.path,
                               kernel_vmlinux(kernel), log_path.parent)
    fault = _fault(verdict, console.facts, markers, reports)
    return TriggerResult(suite, name, verdict.verdict, verdict.summary, seconds,
                         str(log_path), str(golden.path) if golden else None,
                         verdict.diffs, None, reports, fault)


def kernel_vmlinux(bzimage: Path) -> Path:
    """build/kernel-X/vmlinux beside build/kernel-X/arch/x86/boot/bzImage."""
    return bzimage.parents[3] / "vmlinux"


def _fault(verdict: Decision, facts: ConsoleFacts, markers: ConsoleMarkers,
           reports: list[Report]) -> Fault | None:
    """The named harness fault of an ERROR (faults.py); the summary says it too."""
    if verdict.verdict != ERROR:
        return None
    fault = verdict.fault or classify(facts, markers, reports)
    if fault is None:
        return None
    verdict.summary = f"{fault}: {verdict.summary}"
    return fault
