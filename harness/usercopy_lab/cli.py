"""usercopy-lab command line: run suites, re-match logs, triage."""
from __future__ import annotations

import argparse
import datetime
import os
import sys
from pathlib import Path

from . import triage
from .golden import GoldenError, load_layered
from .qemu_boot import GuestSpec, choose_accel, qemu_available
from .results_report import print_table, write_json
from .suite import Suite, SuiteError, load_suites, pick
from .trigger_run import (RunLimits, TriggerResult, evaluate_check_log, evaluate_log,
                          run_trigger)
from .verdict import FAILING

REPO = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="usercopy-lab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="boot one fresh guest per trigger and match")
    run.add_argument("--suites-file", type=Path, default=REPO / "suites.toml")
    run.add_argument("--suite", action="append",
                     help="suite name (repeatable; default: every suite)")
    run.add_argument("--trigger", action="append",
                     help="only this trigger (repeatable; may be unknown to the suite)")
    run.add_argument("--build-dir", type=Path, default=REPO / "build")
    run.add_argument("--initramfs", type=Path, default=REPO / "build/initramfs.cpio")
    run.add_argument("--results", type=Path, default=REPO / "results")
    run.add_argument("--accel", choices=("auto", "tcg", "kvm"), default="auto")
    run.add_argument("--boot-timeout", type=float, default=60.0)
    run.add_argument("--trigger-timeout", type=float, default=60.0)
    run.add_argument("--live", action="store_true", help="show the console live")
    run.add_argument("--golden-overlay", action="append", default=[], metavar="SUITE=DIR",
                     help="golden folder searched before SUITE's own ones (repeatable; "
                     "e.g. what a test-only mutant kernel must print)")
    run.set_defaults(func=cmd_run)

    match = sub.add_parser("match", help="re-match captured logs against golden files")
    where = match.add_mutually_exclusive_group(required=True)
    where.add_argument("--suite", help="a suite of suites.toml: its golden folders "
                       "(variant first) and expected-text column")
    where.add_argument("--golden", type=Path, action="append",
                       help="golden folder (repeatable; searched in order)")
    match.add_argument("--suites-file", type=Path, default=REPO / "suites.toml")
    match.add_argument("logs", type=Path, nargs="+", help="TRIGGER.log files")
    match.set_defaults(func=cmd_match)

    sk = sub.add_parser("suite-kernel", help="print the kernel variant a suite boots")
    sk.add_argument("suite")
    sk.add_argument("--suites-file", type=Path, default=REPO / "suites.toml")
    sk.set_defaults(func=cmd_suite_kernel)

    triage.add_parser(sub)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (SuiteError, GoldenError) as exc:
        print(f"usercopy-lab: {exc}", file=sys.stderr)
        return 2


def cmd_suite_kernel(args: argparse.Namespace) -> int:
    [suite] = pick(load_suites(args.suites_file), [args.suite])
    print(suite.kernel)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    suites = load_suites(args.suites_file)
    names = args.suite or list(suites)
    pick(suites, names)
    for overlay in args.golden_overlay:
        suite, eq, folder = overlay.partition("=")
        if not eq or suite not in names or not folder:
            raise SuiteError(f"--golden-overlay {overlay!r}: want SUITE=DIR, SUITE one of "
                             f"the suites run ({', '.join(names)})")
    if not qemu_available():
        print("usercopy-lab: qemu-system-x86_64 not found (make deps)", file=sys.stderr)
        return 2
    if not args.initramfs.is_file():
        print(f"usercopy-lab: {args.initramfs} missing (make initramfs)", file=sys.stderr)
        return 2
    for n in names:
        image = suites[n].kernel_image(args.build_dir)
        if not image.is_file():
            print(f"usercopy-lab: {image} missing (make kernel KERNEL={suites[n].kernel})",
                  file=sys.stderr)
            return 2

    run_id = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    out_dir = args.results / run_id
    out_dir.mkdir(parents=True, exist_ok=True)
    latest = args.results / "latest"
    if latest.is_symlink() or not latest.exists():
        latest.unlink(missing_ok=True)
        latest.symlink_to(run_id)

    first = suites[names[0]]
    accel = choose_accel(args.accel, first.kernel_image(args.build_dir), args.initramfs)
    print(f"usercopy-lab: run {run_id}, accel {accel.accel} ({accel.reason}), "
          f"logs in {out_dir}", flush=True)
    limits = RunLimits(args.boot_timeout, args.trigger_timeout)
    results: list[TriggerResult] = []
    meta = {"run_id": run_id, "accel": accel.accel, "accel_reason": accel.reason,
            "suites": names}
    for n in names:
        results += _run_suite(suites[n], args, accel.accel, limits, out_dir)
        write_json(results, out_dir / "results.json", meta)
    print()
    print_table(results, sys.stdout)
    print(f"results: {out_dir / 'results.json'}")
    return 1 if any(r.verdict in FAILING for r in results) else 0


def _run_suite(suite: Suite, args: argparse.Namespace, accel: str,
               limits: RunLimits, out_dir: Path) -> list[TriggerResult]:
    overlays = [Path(d) for s, _, d in (o.partition("=") for o in args.golden_overlay)
                if s == suite.name]
    golden = load_layered((*overlays, *suite.golden_dirs))
    listed = {t.name: t for t in suite.triggers()}
    if args.trigger:   # a name of the suite's checks boots that check program
        wanted = [n for n in args.trigger if n not in suite.checks]
        checks = [n for n in args.trigger if n in suite.checks]
    else:
        wanted = [t.name for t in listed.values() if not t.skip_reason]
        checks = list(suite.checks)
    guests = [(name, GuestSpec(kernel=suite.kernel_image(args.build_dir),
                               initramfs=args.initramfs, trigger=name,
                               extra_cmdline=suite.cmdline, accel=accel))
              for name in wanted]
    guests += [(name, GuestSpec(kernel=suite.kernel_image(args.build_dir),
                                initramfs=args.initramfs, helper=name,
                                extra_cmdline=suite.cmdline, accel=accel))
               for name in checks]
    results = []
    for name, spec in guests:
        expected = listed[name].expected_text if name in listed and suite.expected_text else ""
        log = out_dir / suite.name / f"{name}.log"
        r = run_trigger(suite.name, spec, golden.get(name), expected, log, limits,
                        live=args.live)
        print(f"{suite.name}/{name}: {r.verdict} ({r.seconds:.1f}s) {r.summary}", flush=True)
        results.append(r)
    return results


def cmd_match(args: argparse.Namespace) -> int:
    expected: dict[str, str] = {}
    checks: tuple[str, ...] = ()
    if args.suite:
        [suite] = pick(load_suites(args.suites_file), [args.suite])
        name, golden, checks = suite.name, suite.golden(), suite.checks
        if suite.expected_text:
            expected = {t.name: t.expected_text for t in suite.triggers()}
    else:
        name, golden = args.golden[0].name, load_layered(args.golden)
    missing = [str(log) for log in args.logs if not log.is_file()]
    if missing:
        print(f"usercopy-lab: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    results = []
    for log in args.logs:
        trigger = log.stem
        if trigger in checks:
            results.append(evaluate_check_log(name, trigger, log, golden=golden.get(trigger)))
        else:
            results.append(evaluate_log(name, trigger, log, golden.get(trigger),
                                        expected.get(trigger, "")))
    print_table(results, sys.stdout)
    return 1 if any(r.verdict in FAILING for r in results) else 0

if __name__ == "__main__":
    sys.exit(main())
