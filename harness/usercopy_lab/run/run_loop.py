"""The run loop: every guest of the chosen suites, N at a time.

plan() lists the guests in the order of the results table (suites in the
order asked, each suite's triggers in tests.txt order, then its checks).
execute() runs them on `jobs` workers; each worker slot restores snapshots
from its own image copy (snapshot.py), in the QEMU it keeps paused between
its triggers (restore.py; RunOptions.reuse_qemu), or boots in full.
Results come back in plan order whatever order the guests finish in; one
progress line per guest is printed as it finishes.  With more than one
worker, every snapshot is made up front, beside the first guests.  Ctrl-C
or SIGTERM (a CI timeout, `timeout`, a cancelled job) cancels the run:
every QEMU is killed, the guests cut short are kept as ERROR
(interrupted), the rest are listed as not run, and the caller still
writes every result file.
"""
from __future__ import annotations

import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..capture.console_capture import Cancel, is_disk_full
from ..capture.qemu_boot import GuestSpec, Machine, arch_accel
from ..capture.restore import ResidentSlot
from ..capture.snapshot import SnapshotPool
from ..inputs import shown
from ..audit.dwarf_layout import DwarfError
from ..judge.golden import Golden
from ..audit.slab_audit import PROGRAM as AUDIT_PROGRAM
from ..judge.verdict import ERROR
from ..audit.whitelist_spec import VALUES_CACHE, SpecError, load_or_compute, load_spec
from ..model import BootMode, Fault, TriggerResult
from .suite import Suite, SuiteError, SuiteInputs
from .trigger_run import Boot, RunLimits, check_golden_name, kernel_vmlinux, run_trigger


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Job:
    suite: str
    spec: GuestSpec
    golden: Golden | None
    expected_text: str
    log: Path            # relative to the run's folder: SUITE/NAME.log
    selftests: bool = False   # judged by run.sh's exit status (selftests.py)

    @property
    def label(self) -> str:
        return f"{self.suite}/{self.spec.name}"


@dataclass(frozen=True)
class RunOptions:
    boot: BootMode = BootMode.SNAPSHOT
    jobs: int = 1
    limits: RunLimits = RunLimits()
    live: bool = False
    keep_snapshots: bool = False
    reuse_qemu: bool = True      # snapshot mode: a worker reloads in its kept QEMU


@dataclass
class RunOutcome:
    results: list[TriggerResult]       # plan order; only guests that ran
    interrupted: bool = False
    signal: int | None = None          # the signal that interrupted it
    not_run: list[str] = field(default_factory=list)   # suite/name never started
    wall_seconds: float = 0.0
    disk_full: str | None = None       # "PATH: strerror" that stopped the run


def plan(suites: list[Suite], inputs: dict[str, SuiteInputs], triggers: list[str] | None,
         build_dir: Path, initramfs: Path, accel: str,
         checks_only: list[str] | None = None,
         initramfs_of: dict[str, Path] | None = None) -> list[Job]:
    """Every guest of suites, in table order, from each suite's checked
    inputs (suite.load_inputs).  triggers (--trigger) and checks_only
    (--check) replace each suite's trigger list and checks: only the named
    ones run (a check where the suite lists it).  A selftests suite boots
    its triggers with lab.selftests=KIND on the command line (run.sh in the
    guest).  A check gets its golden file if the suite has one for it: the
    whitelist audit's (slab_audit, whose offsetof/sizeof values are made ready here,
    before any boot: prepare_audit), or a golden file named after the
    check in trigger form (check_golden_name).  A suite boots its arch's
    QEMU with initramfs_of[suite] if given (a modules suite's archive,
    initramfs.with_modules()), else suite.initramfs(initramfs), and KVM
    only where its arch can have it (arch_accel)."""
    jobs = []
    for suite in suites:
        golden = inputs[suite.name].golden
        listed = {t.name: t for t in inputs[suite.name].triggers}
        if triggers or checks_only:
            wanted = triggers or []
            checks = [c for c in checks_only or () if c in suite.checks]
        else:
            wanted = [t.name for t in listed.values() if not t.skip_reason]
            checks = list(suite.checks)
        kernel = suite.kernel_image(build_dir)
        cmdline = suite.cmdline
        userland = (initramfs_of or {}).get(suite.name) or suite.initramfs(initramfs)
        guest_accel = arch_accel(accel, suite.arch)
        for name in wanted:
            expected = listed[name].expected_text if name in listed and suite.expected_text else ""
            spec = GuestSpec(kernel=kernel, initramfs=userland, trigger=name,
                             extra_cmdline=cmdline, accel=guest_accel, selftests=suite.selftests,
                             arch=suite.arch)
            jobs.append(Job(suite.name, spec, golden.get(name), expected,
                            Path(suite.name, f"{name}.log"), bool(suite.selftests)))
        if suite.slab_audit is not None and AUDIT_PROGRAM in checks:
            prepare_audit(suite, kernel)
        for name in checks:
            spec = GuestSpec(kernel=kernel, initramfs=userland, helper=name,
                             extra_cmdline=cmdline, accel=guest_accel, arch=suite.arch)
            check_golden = golden.get(name) or golden.get(check_golden_name(name))
            jobs.append(Job(suite.name, spec, check_golden, "",
                            Path(suite.name, f"{name}.log")))
    return jobs


def prepare_audit(suite: Suite, kernel: Path) -> None:
    """The offsetof/sizeof values of the whitelist audit, before any guest
    boots: computed for the kernel's build once (its DWARF, or the compiler
    in each unit; then cached beside vmlinux, whitelist_spec.load_or_compute);
    SuiteError if they cannot be."""
    vmlinux = kernel_vmlinux(kernel)
    try:
        load_or_compute(load_spec(suite.slab_audit), vmlinux,
                        vmlinux.parent / VALUES_CACHE, progress=sys.stderr)
    except (SpecError, DwarfError) as exc:
        raise SuiteError(f"suite [{suite.name}] slab_audit: {exc}") from None


def progress_line(result: TriggerResult) -> str:
    boot = "" if result.boot is BootMode.SNAPSHOT else ", full boot"
    return (f"{shown(result.suite)}/{shown(result.trigger)}: {result.verdict} "
            f"({result.seconds:.1f}s{boot}) {shown(result.summary, None)}")


def execute(jobs: list[Job], options: RunOptions, out_dir: Path, out: TextIO,
            on_result: Callable[[list[TriggerResult]], None] | None = None,
            stop: StopSignals | None = None) -> RunOutcome:
    """Run jobs; on_result gets the results so far (plan order) after each
    guest.  stop: the caller's StopSignals, entered before execute (a
    signal that came earlier stops the run before its first guest); without
    it, execute takes SIGINT and SIGTERM itself while it runs."""
    if stop is None:
        with StopSignals() as own:
            return execute(jobs, options, out_dir, out, on_result, own)
    start = time.monotonic()
    cancel = Cancel()
    print_lock = threading.Lock()

    def say(line: str) -> None:
        with print_lock:
            print(f"usercopy-lab: {line}", file=out, flush=True)

    pool = SnapshotPool(out_dir / "snapshots", options.limits.boot_timeout, cancel, say) \
        if options.boot is BootMode.SNAPSHOT else None
    workers = 1 if options.live else max(1, options.jobs)
    slots: queue.Queue[int] = queue.Queue()
    for slot in range(workers):
        slots.put(slot)
    residents = {slot: ResidentSlot() for slot in range(workers)} \
        if pool is not None and options.reuse_qemu else {}
    results: list[TriggerResult | None] = [None] * len(jobs)

    def work(job: Job) -> TriggerResult | None:
        slot = slots.get()
        try:
            if cancel.is_set():
                return None
            return run_trigger(job.suite, job.spec, job.golden, job.expected_text,
                               out_dir / job.log, options.limits, live=options.live,
                               boot=_boot_for(job, pool, slot, residents.get(slot)),
                               cancel=cancel,
                               selftests=job.selftests)
        finally:
            slots.put(slot)

    def prepare(job: Job) -> None:
        """Make job's snapshot ahead of its first trigger, beside other work."""
        slot = slots.get()
        try:
            if pool is not None and not cancel.is_set():
                _boot_for(job, pool, slot)
        finally:
            slots.put(slot)

    interrupted = False
    finished = 0
    # Ctrl-C only sets an event that the loop below polls: a KeyboardInterrupt
    # raised at an arbitrary point of this thread can leave print_lock (or a
    # lock inside queue/concurrent.futures) held, and the cleanup then waits
    # on it for ever (seen 2026-12-05: booted test_ctrl_c_mid_suite, a lab
    # after "interrupted: stopping every guest" with three threads in
    # futex waits, 41 min later).  A disk that fills up (a console log or
    # results.json that cannot be written) stops the run the same way: no
    # later verdict could be kept.
    full: list[str] = []
    executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="guest")
    futures: dict[Future[TriggerResult | None], int] = {}
    try:
        if stop.event.is_set():     # stopped before the first guest: none starts
            jobs_to_start: list[Job] = []
        else:
            jobs_to_start = jobs
        if pool is not None and workers > 1 and jobs_to_start:
            firsts: dict[Machine, Job] = {}
            for job in jobs:
                firsts.setdefault(job.spec.machine, job)
            for job in firsts.values():
                executor.submit(prepare, job)
        futures = {executor.submit(work, job): i for i, job in enumerate(jobs_to_start)}
        pending = set(futures)
        while pending and not stop.event.is_set() and not full:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=futures.__getitem__):
                finished += 1
                try:
                    _collect(fut, futures[fut], results, jobs, out_dir)
                    if (r := results[futures[fut]]) is not None:
                        with print_lock:
                            print(f"[{finished}/{len(jobs)}] {progress_line(r)}", file=out,
                                  flush=True)
                    if on_result is not None:
                        on_result([r for r in results if r is not None])
                except OSError as exc:
                    if not is_disk_full(exc):
                        raise
                    full.append(f"{shown(exc.filename or out_dir, None)}: {exc.strerror}")
                    say(f"{full[0]}: stopping every guest")
                    break
        if full:
            cancel.cancel()
            for fut in futures:
                fut.cancel()
            wait(futures)
        elif stop.event.is_set():
            # A second Ctrl-C during the cleanup only sets the event again.
            interrupted = True
            say("interrupted: stopping every guest")
            cancel.cancel()
            for fut in futures:
                fut.cancel()
            wait(futures)
            for fut, i in futures.items():
                _collect(fut, i, results, jobs, out_dir)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
        for resident in residents.values():
            resident.close()
        if pool is not None and not options.keep_snapshots:
            pool.remove_images()
    outcome = RunOutcome([r for r in results if r is not None], interrupted,
                         stop.signum if interrupted else None,
                         [j.label for j, r in zip(jobs, results) if r is None],
                         time.monotonic() - start, full[0] if full else None)
    if on_result is not None and not full:
        on_result(outcome.results)
    return outcome


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """While entered (on the main thread), SIGINT and SIGTERM (a CI
    timeout, `timeout`, a cancelled job) set event and are recorded
    instead of ending the process, so that a run stopped by either still
    writes every result file; left, the old handlers are back.  Off the
    main thread, where Python cannot set handlers, it changes nothing."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signum: int | None = None
        self._old: dict[int, Any] = {}

    def _caught(self, signum: int, _frame: object) -> None:
        if self.signum is None:
            self.signum = signum
        self.event.set()

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            self._old = {signum: signal.signal(signum, self._caught) for signum in STOP_SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._old.items():
            if handler is not None:
                signal.signal(signum, handler)
        self._old = {}


def _collect(fut: Future[TriggerResult | None], i: int, results: list[TriggerResult | None],
             jobs: list[Job], out_dir: Path) -> None:
    if fut.cancelled() or not fut.done():
        return
    exc = fut.exception()
    if exc is None:
        results[i] = fut.result()
        return
    if isinstance(exc, OSError) and is_disk_full(exc):
        raise exc
    job = jobs[i]      # a harness bug: keep the run going, name it in the results
    results[i] = TriggerResult(job.suite, job.spec.name, ERROR, f"harness-error: {exc!r}",
                               0.0, str(out_dir / job.log), None, fault=Fault.HARNESS_ERROR)


def _boot_for(job: Job, pool: SnapshotPool | None, slot: int,
              resident: ResidentSlot | None = None) -> Boot:
    if pool is None:
        return Boot()
    machine = job.spec.machine
    try:
        restore = pool.restore_for(machine, slot)
    except OSError as exc:       # e.g. no room for the slot's image copy
        return Boot(fallback=f"snapshot not usable: {exc}")
    if isinstance(restore, str):
        return Boot(fallback=restore)
    return Boot(restore=restore, slot=resident,
                on_restore_failed=lambda why: pool.mark_broken(machine, why))
