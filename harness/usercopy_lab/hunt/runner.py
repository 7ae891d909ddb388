"""The hunt's commands (run, harvest, replay): the guests booted, their
consoles harvested, the coverage measured (hunt/options.py says what
`usercopy-lab hunt` is asked and what it exits with)."""
from __future__ import annotations

import dataclasses
import json
import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TextIO

from tabulate import tabulate

from ..capture.console_capture import Cancel, capture_guest, pexpect_available
from .compiled import CompiledError, CompiledSources, compiled_sources
from ..capture.qemu_boot import GuestSpec, choose_accel, qemu_available
from ..run.run_dir import open_run_dir
from ..run.trigger_run import kernel_vmlinux
from .console import read_guest
from .coverage import Coverage, CoverageError, ReachNote, load_notes, probe_offsets
from .denominator import DenominatorError, Figure, build as build_denominator, load_finder, \
    not_measured
from .findings import Findings, FindingsError, Occurrence, load_rules
from .harvest import Harvest, harvest, write_outputs
from .options import HuntOptions
from .plan import GuestPlan, PlanError, load_workloads, plan_guests

REPO = Path(__file__).resolve().parents[3]
FALLBACK = "slab_common.usercopy_fallback=1"
HELPER = "hunt-run"
MEMORY_MB = 768
# The 9p share every hunt guest gets (fs-probes mounts it: 9p-fcall-cache).
NINEP_TAG = "hunt9p"
# The files the booted kernel was compiled from (compiled.py), kept
# in the run when it starts: the finder's denominator of a later harvest
# stays that of the kernel the guests booted.
COMPILED = "compiled-sources.txt"


class HuntError(Exception):
    """Bad input: one line, exit 2."""


# ------------------------------------------------------------------ inputs
@dataclass(frozen=True)
class Setup:
    kernel: Path            # bzImage
    initramfs: Path
    accel: str
    probe: str              # "hunt.probe=S,N" or "" (no coverage)
    probe_note: str
    memory_mb: int = MEMORY_MB
    qemu_args: tuple[str, ...] = ()

    def spec(self, g: GuestPlan) -> GuestSpec:
        extra = " ".join(p for p in (FALLBACK, f"hunt.workload={g.workload}",
                                     f"hunt.seed={g.seed}", f"hunt.seconds={g.seconds}",
                                     self.probe) if p)
        return GuestSpec(kernel=self.kernel, initramfs=self.initramfs, helper=HELPER,
                         extra_cmdline=extra, memory_mb=self.memory_mb, accel=self.accel,
                         qemu_args=self.qemu_args)

    def to_json(self) -> dict[str, Any]:
        return {"kernel": str(self.kernel), "initramfs": str(self.initramfs),
                "accel": self.accel, "probe": self.probe, "probe_note": self.probe_note,
                "memory_mb": self.memory_mb, "qemu_args": list(self.qemu_args)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Setup:
        return cls(Path(data["kernel"]), Path(data["initramfs"]), data["accel"],
                   data["probe"], data.get("probe_note", ""), int(data["memory_mb"]),
                   tuple(data.get("qemu_args", ())))


def with_share(setup: Setup, share: Path) -> Setup:
    """SETUP with a 9p share at SHARE (QEMU -virtfs, mount tag hunt9p)."""
    share.mkdir(parents=True, exist_ok=True)
    return dataclasses.replace(setup, qemu_args=(
        "-virtfs", f"local,path={share.resolve()},mount_tag={NINEP_TAG},security_model=none,"
        f"id={NINEP_TAG}"))


def make_setup(build: Path, kernel: str, initramfs: Path, accel: str) -> Setup:
    image = build / f"kernel-{kernel}" / "arch/x86/boot/bzImage"
    if not image.is_file():
        raise HuntError(f"{image} missing (make kernel KERNEL={kernel})")
    if not initramfs.is_file():
        raise HuntError(f"{initramfs} missing (make initramfs-hunt)")
    if not qemu_available():
        raise HuntError("qemu-system-x86_64 not found (make deps)")
    if not pexpect_available():
        raise HuntError("python3-pexpect is needed to boot guests (make deps)")
    try:
        offsets = probe_offsets(kernel_vmlinux(image))
        probe, note = offsets.cmdline, (f"offsetof(struct slab, slab_cache) = "
                                        f"{offsets.slab_cache}, offsetof(struct kmem_cache, "
                                        f"name) = {offsets.name}, from {kernel_vmlinux(image)}")
    except CoverageError as exc:
        probe, note = "", f"coverage not measured: {exc}"
    chosen = choose_accel(accel, image, initramfs)
    # Absolute: plan.json records them for a replay from any directory.
    return Setup(image.resolve(), initramfs.resolve(), chosen.accel, probe, note)


# ------------------------------------------------------------------- guests
@dataclass
class GuestRun:
    plan: GuestPlan
    log: Path
    seconds: float = 0.0
    end: str = ""
    error: str | None = None

    def to_json(self, root: Path) -> dict[str, Any]:
        return {**self.plan.to_json(), "log": str(self.log.relative_to(root)),
                "wall_seconds": round(self.seconds, 1), "capture_end": self.end,
                "error": self.error}


def run_guests(guests: list[GuestPlan], setup: Setup, out: Path, jobs: int,
               stream: TextIO) -> tuple[list[GuestRun], bool]:
    """Boot every guest, JOBS at once; (runs, interrupted)."""
    cancel = Cancel()
    lock = threading.Lock()
    done: list[GuestRun] = []
    started = time.monotonic()

    def one(g: GuestPlan) -> GuestRun:
        run = GuestRun(g, out / "guests" / f"{g.id}.log")
        if cancel.is_set():
            return run
        cap = capture_guest(setup.spec(g), run.log, boot_timeout=180.0,
                            trigger_timeout=g.seconds + 240.0, cancel=cancel)
        run.seconds, run.end, run.error = cap.seconds, cap.end.value, cap.error
        with lock:
            done.append(run)
            print(f"hunt: [{len(done)}/{len(guests)}] {g.id} seed {g.seed}: "
                  f"{run.end}{' (' + run.error + ')' if run.error else ''}, "
                  f"{run.seconds:.0f}s; {time.monotonic() - started:.0f}s into the hunt",
                  file=stream, flush=True)
        return run

    interrupted = False
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="hunt")
    futures = [pool.submit(one, g) for g in guests]
    try:
        for f in futures:
            while not f.done():
                time.sleep(0.5)
    except KeyboardInterrupt:
        interrupted = True
        print("hunt: interrupted: stopping every guest", file=stream, flush=True)
        cancel.cancel()
        for f in futures:
            f.cancel()
    pool.shutdown(wait=True, cancel_futures=True)
    runs = [f.result() for f in futures if f.done() and not f.cancelled()]
    return [r for r in runs if r.log.exists()], interrupted


# ---------------------------------------------------------------- commands
def cmd_run(args: HuntOptions) -> int:
    workloads = load_workloads(args.workloads)
    run_seed = args.seed if args.seed is not None else random.randrange(1, 2**31)
    guests = plan_guests(workloads, args.minutes, args.jobs, run_seed, args.workload,
                         args.guest_seconds, not args.no_calibrate)
    load_notes(args.notes)                    # likewise the coverage notes
    if args.gaps.exists():
        load_finder(args.gaps)                # and the finder's output, when there is one
    load_rules(args.classifications)          # a bad file stops the run before any boot
    setup = make_setup(args.build_dir, args.kernel, args.initramfs, args.accel)
    run_dir = open_run_dir(args.results)
    with run_dir:
        root = run_dir.path
        (root / "hunt" / "guests").mkdir(parents=True)
        setup = with_share(setup, root / "hunt" / "9p-share")
        keep_compiled(setup.kernel, root / "hunt" / COMPILED)
        meta = {"run_id": run_dir.run_id, "kernel": args.kernel, "minutes": args.minutes,
                "jobs": args.jobs, "run_seed": run_seed, "setup": setup.to_json(),
                "command": " ".join(sys.argv)}
        (root / "hunt" / "plan.json").write_text(json.dumps(
            {**meta, "guests": [g.to_json() for g in guests]}, indent=1) + "\n")
        print(f"hunt: run {run_dir.run_id}: {len(guests)} guests of kernel {args.kernel}, "
              f"{args.jobs} at once, about {args.minutes:g} min, run seed {run_seed} "
              f"(--seed {run_seed} plans the same guests); accel {setup.accel}; "
              f"{setup.probe_note}; consoles in {root / 'hunt' / 'guests'}", flush=True)
        start = time.monotonic()
        runs, interrupted = run_guests(guests, setup, root / "hunt", args.jobs, sys.stdout)
        wall = time.monotonic() - start
        rows = [r.to_json(root) for r in sorted(runs, key=lambda r: r.plan.id)]
        (root / "hunt" / "guests.json").write_text(json.dumps(rows, indent=1) + "\n")
        meta.update(wall_seconds=round(wall, 1), interrupted=interrupted,
                    guest_seconds=sum(r.seconds for r in runs))
        (root / "hunt" / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        return _report(root, rows, meta, args, interrupted)


def _report(root: Path, rows: list[dict[str, Any]], meta: dict[str, Any],
            args: HuntOptions, interrupted: bool = False) -> int:
    h = harvest(root, rows, args.classifications)
    notes = load_notes(args.notes)
    finder = finder_figure(root, meta, args.gaps, h.coverage, notes)
    path = write_outputs(root, h, notes, meta, finder)
    findings = h.findings.ordered()
    print(f"\nhunt: {len(rows)} guests, {len(findings)} unique usercopy report(s), "
          f"{len(h.findings.others)} other oops signature(s)")
    if findings:
        rows = [(f.key.id, f.klass.value, f.reported_cache, f.key.direction, f.key.offset,
                 f.key.size, f.key.frame, f"x{len(f.occurrences)}",
                 f"{f.first.workload} seed {f.first.seed}") for f in findings]
        for line in tabulate(rows, headers=("id", "class", "cache", "direction", "offset",
                                            "size", "frame", "seen", "first"),
                             tablefmt="plain", disable_numparse=True).splitlines():
            print("  " + line.rstrip())
    for o in h.findings.others.values():
        print(f"  other: {o.title} x{len(o.occurrences)} (first: {o.occurrences[0].workload} "
              f"seed {o.occurrences[0].seed})")
    for g in h.guests:
        if g.get("stopped_early"):
            print(f"hunt: {g['id']} stopped early: {g['stopped_early']} ({g['log']})")
    print(f"hunt: coverage against the finder's denominator (make gaps, restricted to the "
          f"files this kernel compiled): {finder['summary']}")
    print(f"hunt: coverage against every cache with a region of the booted kernel (the old "
          f"denominator): {h.coverage.summary() if h.coverage.guests else 'not measured'}")
    cal = h.calibration
    if cal.get("ran"):
        print(f"hunt: calibration: {'as expected' if cal['ok'] else 'NOT as expected'} "
              f"(warning harvested: {cal['warning_harvested']}, probe hits: "
              f"{cal['probe_hits']})")
    print(f"hunt: {path}, findings.md and triage.txt")
    if interrupted:
        return 130
    if getattr(args, "smoke", False):
        return _smoke_verdict(h)
    bad = h.findings.untriaged() or (cal.get("ran") and not cal["ok"])
    if h.findings.untriaged():
        print(f"hunt: {len(h.findings.untriaged())} finding(s) untriaged: classify them in "
              f"{args.classifications}", file=sys.stderr)
    return 1 if bad else 0


def keep_compiled(image: Path, out: Path) -> None:
    """The files IMAGE's build compiled, into the run (COMPILED); a build
    directory that cannot say (no vmlinux.a) leaves a note instead."""
    try:
        out.write_text(compiled_sources(kbuild_dir(image)).to_text())
    except CompiledError as exc:
        out.with_suffix(".why").write_text(f"{exc}\n")


def kbuild_dir(image: Path) -> Path:
    return image.parents[3]         # KBUILD/arch/x86/boot/bzImage


def finder_figure(root: Path, meta: dict[str, Any], gaps: Path, coverage: Coverage,
                  notes: list[ReachNote]) -> dict[str, Any]:
    """The coverage against the finder's denominator (denominator.py) as
    findings.json keeps it, or why it was not measured."""
    if not coverage.guests:
        return not_measured("no guest's coverage was measured")
    if not gaps.is_file():
        return not_measured(f"{gaps} not found (make gaps writes it)")
    kept = root / "hunt" / COMPILED
    try:
        if kept.is_file():
            compiled = CompiledSources.from_text(kept.read_text())
        else:
            compiled = compiled_sources(kbuild_dir(Path(meta["setup"]["kernel"])))
    except (CompiledError, KeyError, IndexError) as exc:
        why = kept.with_suffix(".why")
        return not_measured(why.read_text().strip() if why.is_file()
                            else f"what the kernel compiled is not known ({exc})")
    denominator = build_denominator(load_finder(gaps), compiled, list(coverage.caches))
    return Figure(denominator, coverage).to_json(notes)


def _smoke_verdict(h: Harvest) -> int:
    """make test's smoke judges the pipeline, not the kernel: every guest
    ended and printed its table, the probe measured coverage in every
    guest and counted the calibration's copies, and the calibration's
    WARNING was harvested.  Findings are reported, not
    judged (a new one is the hunt's business, not a broken pipeline)."""
    problems = [f"{g['id']}: no END marker" for g in h.guests if not g.get("ended")]
    problems += [f"{g['id']}: no alias table" for g in h.guests if not g.get("alias_table")]
    problems += [f"{g['id']}: {g['stopped_early']}" for g in h.guests if g.get("stopped_early")]
    problems += [f"no coverage: {why}" for why in h.coverage.guests_without]
    if not h.coverage.guests:
        problems.append("coverage measured in no guest")
    if not h.calibration.get("ok"):
        problems.append(f"calibration not as expected: {h.calibration}")
    if (h.calibration.get("probe_hits") or 0) < 2:      # the probe must have fired
        problems.append("the coverage kprobe counted no calibration copy "
                        f"(probe hits {h.calibration.get('probe_hits')})")
    for p in problems:
        print(f"hunt: smoke: {p}", file=sys.stderr)
    print(f"hunt: smoke: {'FAIL' if problems else 'PASS'}")
    return 1 if problems else 0


def cmd_harvest(args: HuntOptions) -> int:
    root = args.run_dir
    try:
        rows = json.loads((root / "hunt" / "guests.json").read_text())
        meta = json.loads((root / "hunt" / "meta.json").read_text())
    except (OSError, ValueError) as exc:
        raise HuntError(f"{root}: not a hunt run ({exc})") from None
    return _report(root, rows, meta, args)


def cmd_replay(args: HuntOptions) -> int:
    src = args.run_dir
    try:
        plan = json.loads((src / "hunt" / "plan.json").read_text())
        findings = json.loads((src / "hunt" / "findings.json").read_text())["findings"] \
            if (src / "hunt" / "findings.json").exists() else []
    except (OSError, ValueError, KeyError) as exc:
        raise HuntError(f"{src}: not a hunt run ({exc})") from None
    guests = {g["id"]: GuestPlan(**g) for g in plan["guests"]}
    by_id = {f["id"]: f for f in findings}
    targets: list[tuple[GuestPlan, dict[str, Any] | None]] = []
    for fid in args.finding or ():
        if fid not in by_id:
            raise HuntError(f"--finding {fid}: not in {src}/hunt/findings.json "
                            f"(have: {', '.join(by_id) or 'none'})")
        targets.append((guests[by_id[fid]["first"]["guest"]], by_id[fid]))
    for gid in args.guest or ():
        if gid not in guests:
            raise HuntError(f"--guest {gid}: not in the plan (have: {', '.join(guests)})")
        targets.append((guests[gid], None))
    if not targets:
        raise HuntError("replay: name a --finding or a --guest")
    setup = Setup.from_json(plan["setup"])
    share = src / "hunt" / "9p-share"
    setup = with_share(setup, share) if setup.qemu_args else setup
    for p in (setup.kernel, setup.initramfs):
        if not p.is_file():
            raise HuntError(f"{p} missing: the replay needs the recorded kernel and initramfs")
    run_dir = open_run_dir(args.results)
    failed = 0
    with run_dir:
        root = run_dir.path
        (root / "hunt" / "guests").mkdir(parents=True)
        rows = []
        for g, finding in targets:
            what = f"finding {finding['id']}" if finding else f"guest {g.id}"
            print(f"hunt: replay of {what}: {g.workload} seed {g.seed}, {g.seconds}s, "
                  f"kernel {setup.kernel}", flush=True)
            for attempt in range(1, args.tries + 1):
                tried = GuestPlan(f"{g.id}.replay{attempt}", g.workload, g.family, g.seed,
                                  g.seconds)
                runs, interrupted = run_guests([tried], setup, root / "hunt", 1, sys.stdout)
                if interrupted:
                    return 130
                rows += [r.to_json(root) for r in runs]
                if finding is None:
                    break
                got = read_guest(root / "hunt" / "guests" / f"{tried.id}.log")
                h = Findings()
                for rep in got.reports:
                    h.add_report(rep, got.table, tried.id, g.workload, g.seed)
                for r in got.repeats:
                    h.add_repeat(r.direction, r.object, r.cache, r.offset, r.size, got.table,
                                 Occurrence(tried.id, "", r.line, g.workload, g.seed, "repeat"))
                if any(k.id == finding["id"] for k in h.findings):
                    print(f"hunt: {finding['id']} reproduced (try {attempt})", flush=True)
                    break
                print(f"hunt: {finding['id']} not seen in try {attempt}", flush=True)
            else:
                failed += 1
        (root / "hunt" / "guests.json").write_text(json.dumps(rows, indent=1) + "\n")
        meta = {"run_id": run_dir.run_id, "replay_of": str(src), "kernel": plan["kernel"],
                "run_seed": plan["run_seed"], "jobs": 1, "minutes": "replay",
                "setup": plan["setup"], "guest_seconds": 0.0}
        (root / "hunt" / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        _report(root, rows, meta, args)
    return 1 if failed else 0


# ------------------------------------------------------------------ entry
def command(func: Callable[[HuntOptions], int], args: HuntOptions) -> int:
    """Run one hunt command: its exit status, or 2 with one line on stderr
    for a bad option or input, 130 when interrupted."""
    if args.jobs < 1 or args.tries < 1:
        print("hunt: -j and --tries need at least 1", file=sys.stderr)
        return 2
    if not 0 < args.minutes < 10**6:      # also NaN and inf
        print("hunt: --minutes needs a positive number (below a million)", file=sys.stderr)
        return 2
    try:
        return func(args)
    except (HuntError, PlanError, CoverageError, FindingsError, DenominatorError) as exc:
        print(f"hunt: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"hunt: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hunt: interrupted", file=sys.stderr)
        return 130
