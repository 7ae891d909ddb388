"""usercopy-lab run, match, suite-kernel, shell and soak: boot the suites'
guests and judge them, judge captured consoles again, and the commands
beside them.  run and match exit 0 when every trigger passed (PASS, XFAIL
or SKIP), 1 when one FAILed or was an ERROR, 2 when they could not be done.
"""
from __future__ import annotations

import argparse
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from ..run import soak
from ..capture import shell
from ..capture.console_capture import pexpect_available
from ..capture.initramfs import with_modules
from ..capture.qemu_boot import ARCHES, NATIVE, choose_accel, qemu_available
from ..inputs import (CHECK, GUEST_MEMORY_MB, JOBS, KERNEL, TIMEOUT, TRIGGER, InputError,
                      parse_cmdline, shown, writable_dir)
from ..judge.golden import load_layered
from ..judge.verdict import FAILING, SKIP
from ..model import BootMode, TriggerResult
from ..output import html_page, result_formats
from ..output.page_model import PageError, baseline_run
from ..output.results_report import ResultsJson, print_table
from ..reports import MAX_CONSOLE_MIB, console_problem
from ..run.run_dir import open_run_dir
from ..run.run_loop import Job, RunOptions, StopSignals, default_jobs, execute, plan
from ..run.suite import Suite, SuiteInputs, default_names, load_inputs, load_suites, pick
from ..run.trigger_run import RunLimits, check_golden_name, evaluate_check_log, evaluate_log
from .common import REPO, arg_type, described, mib, options


def add_commands(sub: Any, entry: Callable[[list[str]], int]) -> None:
    """run, match, suite-kernel, shell and soak (ENTRY: the whole command
    line, which each of soak's runs goes through as a user's would)."""
    run = sub.add_parser("run", help="boot one fresh guest per trigger and match")
    run.add_argument("--suites-file", type=Path, default=REPO / "suites.toml")
    run.add_argument("--suite", action="append",
                     help="suite name (repeatable; default: every suite not marked "
                     "on_demand in suites.toml)")
    run.add_argument("--trigger", action="append", type=arg_type(TRIGGER.parse),
                     help="only this trigger (repeatable; may be unknown to the suite; "
                     "[A-Z0-9_]+)")
    run.add_argument("--check", action="append", type=arg_type(CHECK.parse),
                     help="only this check program (repeatable; must be one of a "
                     "suite's checks; with --trigger: both)")
    run.add_argument("--build-dir", type=Path, default=REPO / "build")
    run.add_argument("--initramfs", type=Path, default=REPO / "build/initramfs.cpio")
    run.add_argument("--results", type=Path, default=REPO / "results")
    run.add_argument("--accel", choices=("auto", "tcg", "kvm"), default="auto")
    run.add_argument("--boot-timeout", type=arg_type(TIMEOUT.parse), default=60.0)
    run.add_argument("--trigger-timeout", type=arg_type(TIMEOUT.parse), default=60.0)
    run.add_argument("--restore-timeout", type=arg_type(TIMEOUT.parse), default=20.0,
                     help="seconds for a restored guest to start its trigger, "
                     "else that trigger boots in full")
    run.add_argument("--boot", choices=[m.value for m in BootMode],
                     default=BootMode.SNAPSHOT.value,
                     help="snapshot: boot once per kernel and command line, restore "
                     "that state per trigger (default; falls back to full per trigger); "
                     "full: boot every trigger from scratch")
    run.add_argument("--qemu-per-trigger", action="store_true",
                     help="snapshot mode: restore every trigger in a new QEMU (-loadvm) "
                     "instead of reloading the snapshot in the QEMU each worker keeps "
                     "paused between its triggers")
    run.add_argument("-j", "--jobs", type=arg_type(JOBS.parse),
                     default=min(default_jobs(), JOBS.high),
                     help=f"guests at once, {JOBS.low}-{JOBS.high} (default: the number "
                     "of cores, %(default)s)")
    run.add_argument("--keep-snapshots", action="store_true",
                     help="keep the snapshot images under RESULTS/RUN/snapshots/")
    run.add_argument("--live", action="store_true",
                     help="show the console live (one guest at a time)")
    run.add_argument("--golden-overlay", action="append", default=[], metavar="SUITE=DIR",
                     help="golden folder searched before SUITE's own ones (repeatable; "
                     "e.g. what a test-only mutant kernel must print)")
    run.add_argument("--baseline", metavar="RUN",
                     help="index.html diffs against this run (its folder, results.json or "
                     "run id in --results; default: the run before with the same suites)")
    _format_options(run)
    run.set_defaults(func=cmd_run)

    match = sub.add_parser("match", help="re-match captured logs against golden files")
    where = match.add_mutually_exclusive_group(required=True)
    where.add_argument("--suite", help="a suite of suites.toml: its golden folders "
                       "(variant first) and expected-text column")
    where.add_argument("--golden", type=Path, action="append",
                       help="golden folder (repeatable; searched in order)")
    match.add_argument("--suites-file", type=Path, default=REPO / "suites.toml")
    match.add_argument("--max-input", type=mib, default=MAX_CONSOLE_MIB, metavar="MIB",
                       help="refuse a log (a .gz: expanded) over this, exit 2 (default "
                       f"{MAX_CONSOLE_MIB} MiB; a lab console is under 1 MB)")
    match.add_argument("logs", type=Path, nargs="+", help="TRIGGER.log files")
    _format_options(match)
    match.set_defaults(func=cmd_match)

    sk = sub.add_parser("suite-kernel", help="print the kernel variant a suite boots")
    sk.add_argument("suite")
    sk.add_argument("--suites-file", type=Path, default=REPO / "suites.toml")
    sk.set_defaults(func=cmd_suite_kernel)

    sh = sub.add_parser(
        "shell", help="boot a lab kernel to a shell on the serial console (Ctrl-A X quits)")
    sh.add_argument("--kernel", default="seeds", type=arg_type(KERNEL.parse),
                    help="kernel variant: build/kernel-NAME (default: seeds, the kernel "
                         "of the default suite)")
    sh.add_argument("--cmdline", default="", type=arg_type(parse_cmdline),
                    help="extra kernel command line (as suites.toml's cmdline)")
    sh.add_argument("--build-dir", type=Path, default=REPO / "build")
    sh.add_argument("--initramfs", type=Path, default=REPO / "build/initramfs.cpio")
    sh.add_argument("--results", type=Path, default=REPO / "results")
    sh.add_argument("--accel", choices=("auto", "tcg", "kvm"), default="auto")
    sh.add_argument("--memory", type=arg_type(GUEST_MEMORY_MB.parse), default=256,
                    help=f"guest memory in MiB ({GUEST_MEMORY_MB.low}-{GUEST_MEMORY_MB.high})")
    sh.set_defaults(func=lambda a: shell.run(options(shell.ShellOptions, a)))

    so = described(sub, "soak", soak.__doc__, "run the same suites many times, count flakes")
    so.add_argument("--runs", type=arg_type(soak.RUNS.parse), default=20)
    so.add_argument("--results", type=Path, default=Path("results/soak"),
                    help="each run's folder is made under RESULTS/<soak-id>/; every "
                    "other option is passed on to usercopy-lab run")
    so.set_defaults(func=lambda a: soak.soak(a.runs, a.results, a.extra, entry), passes_on=True)


def _format_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ktap", type=Path, help="also write the results as KTAP to FILE")
    p.add_argument("--junit", type=Path, help="also write the results as JUnit XML to FILE")


def check_outputs(ktap: Path | None, junit: Path | None, results: Path | None = None) -> None:
    """Every file and folder a run or match writes, checked before the
    first boot (and before matching): InputError naming the first that
    cannot be written."""
    for option, form, path in (("--ktap", "KTAP", ktap), ("--junit", "JUnit", junit)):
        if path is not None and (problem := result_formats.output_problem(path, form)):
            raise InputError(f"{option} {problem}")
    if ktap is not None and junit is not None and ktap.resolve() == junit.resolve():
        raise InputError(f"--ktap and --junit: both name {shown(ktap, None)}")
    if results is not None and (problem := writable_dir(results)):
        raise InputError(f"{shown(results, None)}: cannot write results there: {problem}")


def cmd_suite_kernel(args: argparse.Namespace) -> int:
    [suite] = pick(load_suites(args.suites_file), [args.suite])
    print(suite.kernel)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    # From here on SIGINT and SIGTERM only mark the run stopped: one that
    # comes before the first guest still leaves whole result files.
    with StopSignals() as stop:
        return _plan_and_run(args, stop)


def _plan_and_run(args: argparse.Namespace, stop: StopSignals) -> int:
    suites = load_suites(args.suites_file)
    names = args.suite or default_names(suites)
    if not names:
        raise InputError(f"{shown(args.suites_file, None)}: no suite to run (the file "
                         "defines none that runs without --suite)")
    pick(suites, names)
    if args.trigger and len(set(args.trigger)) < len(args.trigger):
        twice = sorted({t for t in args.trigger if args.trigger.count(t) > 1})
        print(f"usercopy-lab: --trigger {', '.join(twice)} given more than once; "
              "each runs once", file=sys.stderr)
        args.trigger = list(dict.fromkeys(args.trigger))
    inputs = load_inputs(suites)   # every suite's goldens and triggers, before any boot
    for overlay in args.golden_overlay:
        suite, eq, folder = overlay.partition("=")
        if not eq or suite not in names or not folder:
            raise InputError(f"--golden-overlay '{shown(overlay)}': want SUITE=DIR, SUITE one of "
                             f"the suites run ({', '.join(names)})")
        # An overlay golden is the whole expectation of its trigger on
        # another kernel (a mutant, an SMP build): tests.txt's text, which is
        # the stock kernel's, does not apply to it; the overlay says in its
        # own lkdtm-expect lines what that kernel prints.
        overlaid = load_layered([Path(folder)])
        inputs[suite] = SuiteInputs(
            {**inputs[suite].golden, **overlaid},
            [replace(t, expected_text="") if t.name in overlaid else t
             for t in inputs[suite].triggers])
    for check in args.check or ():
        if not any(check in suites[n].checks for n in names):
            raise InputError(f"--check {check}: not a check of suite {', '.join(names)}")
    if args.baseline:
        baseline_run(args.baseline, args.results)     # PageError (exit 2) before any boot
    check_outputs(args.ktap, args.junit, args.results)
    for arch in dict.fromkeys(suites[n].arch for n in names):
        if not qemu_available(arch):
            print(f"usercopy-lab: {ARCHES[arch].qemu} not found "
                  f"(make {'deps' if arch == NATIVE else 'arch-deps'})", file=sys.stderr)
            return 2
    if not pexpect_available():
        print("usercopy-lab: python3-pexpect is needed to boot guests (make deps)",
              file=sys.stderr)
        return 2
    for n in names:
        userland = suites[n].initramfs(args.initramfs)
        if not userland.is_file():
            target = "initramfs" if userland == args.initramfs else f"initramfs-{suites[n].arch}"
            print(f"usercopy-lab: {shown(userland, None)} missing (make {target})",
                  file=sys.stderr)
            return 2
        image = suites[n].kernel_image(args.build_dir)
        if not image.is_file():
            print(f"usercopy-lab: {shown(image, None)} missing "
                  f"(make kernel KERNEL={suites[n].kernel})", file=sys.stderr)
            return 2
    # A modules suite's guest: its userland followed by its kernel's modules.
    initramfs_of = {n: with_modules(suites[n].initramfs(args.initramfs),
                                    suites[n].modules_archive(args.build_dir),
                                    args.results / "initramfs", suites[n].kernel,
                                    suites[n].modules.make_command(suites[n].kernel))
                    for n in names if suites[n].modules}

    chosen = [suites[n] for n in names]
    first = chosen[0]
    accel = choose_accel(args.accel, first.kernel_image(args.build_dir),
                         initramfs_of.get(first.name) or first.initramfs(args.initramfs),
                         arch=first.arch)
    jobs = plan(chosen, inputs, args.trigger, args.build_dir, args.initramfs, accel.accel,
                args.check, initramfs_of)
    try:
        run_dir = open_run_dir(args.results)
    except OSError as exc:
        print(f"usercopy-lab: {shown(args.results, None)}: cannot write results there: "
              f"{shown(exc.strerror or exc, None)}", file=sys.stderr)
        return 2
    with run_dir:
        for other in run_dir.others:
            print(f"usercopy-lab: run {other} is also writing to {args.results} now; "
                  f"this run writes only to {run_dir.path}, and "
                  f"{args.results / 'latest'} names the run started last", flush=True)
        meta = {"run_id": run_dir.run_id, "accel": accel.accel,
                "accel_reason": accel.reason, "suites": names}
        return _run(args, jobs, run_dir.path, meta, suites, stop)


def _run(args: argparse.Namespace, jobs: list[Job], out_dir: Path,
         meta: dict[str, object], suites: dict[str, Suite], stop: StopSignals) -> int:
    options = RunOptions(BootMode(args.boot), args.jobs,
                         RunLimits(args.boot_timeout, args.trigger_timeout,
                                   args.restore_timeout),
                         args.live, args.keep_snapshots, not args.qemu_per_trigger)
    meta.update(boot=options.boot.value, jobs=options.jobs)
    if options.boot is BootMode.SNAPSHOT:
        meta.update(reuse_qemu=options.reuse_qemu)
    reuse = ", QEMU kept per worker" if options.boot is BootMode.SNAPSHOT \
        and options.reuse_qemu else ""
    print(f"usercopy-lab: run {meta['run_id']}, accel {meta['accel']} "
          f"({meta['accel_reason']}), boot {options.boot.value}{reuse}, "
          f"{options.jobs} at once, "
          f"logs in {out_dir}", flush=True)
    json_path = out_dir / "results.json"
    results_json = ResultsJson(json_path)

    def save(results: list[TriggerResult]) -> None:
        # "complete": false until the last write: a results.json left by a
        # run that died never reads like a whole run
        results_json.write(results, {**meta, "complete": False})

    outcome = execute(jobs, options, out_dir, sys.stdout, on_result=save, stop=stop)
    if outcome.disk_full:
        print(f"usercopy-lab: {outcome.disk_full}; the run stopped, the verdicts of "
              f"{results_json.written} guest(s) are in {shown(json_path, None)} "
              "(complete: false)", file=sys.stderr)
        return 2
    results_json.write(outcome.results, {**meta, "complete": not outcome.interrupted,
                                         "interrupted": outcome.interrupted,
                                         "not_run": outcome.not_run,
                                         "wall_seconds": round(outcome.wall_seconds, 2)},
                       fresh=True)
    result_formats.write_run_files(outcome.results, meta, out_dir, suites,
                                   args.ktap, args.junit)
    print()
    print_table(outcome.results, sys.stdout)
    print(f"guest wall time {outcome.wall_seconds:.1f}s; results: {json_path}")
    try:
        print(f"page: {html_page.write_page(out_dir, args.baseline)}")
    except (PageError, OSError) as exc:     # the verdicts stand without their page
        print(f"usercopy-lab: index.html not written: {shown(exc, None)}", file=sys.stderr)
    if outcome.interrupted:
        how = signal.Signals(outcome.signal or signal.SIGINT)
        print(f"usercopy-lab: interrupted ({how.name}); {len(outcome.not_run)} guest(s) "
              f"not run, partial results in {json_path}", file=sys.stderr)
        return 128 + how.value
    if unknown := _unknown_triggers(args.trigger or [], outcome.results):
        print(f"usercopy-lab: --trigger {', '.join(unknown)}: not a crash type of the "
              "guest's LKDTM (provoke-crash/DIRECT does not list it) and no golden file "
              "expects that", file=sys.stderr)
        return 2
    return 1 if any(r.verdict in FAILING for r in outcome.results) else 0


def _unknown_triggers(asked: list[str], results: list[TriggerResult]) -> list[str]:
    """The triggers named with --trigger that the guest's LKDTM did not
    know (SKIP, decide()) with no golden file saying it should not: a
    typo must not pass a gate.  A suite's own list may hold triggers a
    kernel lacks (their SKIP is the suite's answer); a name asked for by
    hand is meant to run."""
    return sorted({r.trigger for r in results
                   if r.trigger in asked and r.verdict == SKIP and r.golden is None})


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
    missing = [shown(log, None) for log in args.logs if not log.is_file()]
    if missing:
        print(f"usercopy-lab: not a file: {', '.join(missing)}", file=sys.stderr)
        return 2
    for log in args.logs:
        if problem := console_problem(log, args.max_input << 20):
            print(f"usercopy-lab: {problem} (--max-input MIB)", file=sys.stderr)
            return 2
    check_outputs(args.ktap, args.junit)
    results = []
    for log in args.logs:
        trigger = log.stem
        if trigger in checks:
            results.append(evaluate_check_log(name, trigger, log,
                                              golden=golden.get(check_golden_name(trigger))))
        else:
            results.append(evaluate_log(name, trigger, log, golden.get(trigger),
                                        expected.get(trigger, "")))
    print_table(results, sys.stdout)
    result_formats.write_formats(results, {"command": "match", "suite": name},
                                 ktap=args.ktap, junit=args.junit)
    return 1 if any(r.verdict in FAILING for r in results) else 0

