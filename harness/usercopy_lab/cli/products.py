"""The command lines of the lab's other products: triage, the whitelist
audit's values, the gap finder, the hunt, the HTML pages and the checks of
a run's files.  Each reads its options into the wing's typed options and
calls the wing."""
from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path
from typing import Any

from ..gaps.options import GapsOptions
from ..hunt import options as hunt_options
from ..hunt.options import HuntOptions
from ..output import format_check, html_page, page_check
from ..output.page_io import page_command
from ..triage import options as triage_options
from ..triage.options import DEFAULT_MAX_DECOMPRESSED_MIB, DEFAULT_MAX_INPUT_MIB, TriageOptions
from .common import REPO, described, mib, options

# The hunt, the gap finder and the chart pages load when their command
# runs (the pages' and checks' modules are loaded already: run uses them).


def add_commands(sub: Any) -> None:
    _triage(sub)
    _audit(sub)
    _gaps(sub)
    _hunt(sub)
    _pages(sub)


def _triage(sub: Any) -> None:
    p = sub.add_parser("triage", help="classify, deduplicate and diff kernel reports in logs",
                       description=triage_options.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true",
                   help="one JSON object per report per line")
    p.add_argument("--baseline", type=Path, metavar="RESULTS_JSON_OR_DIR",
                   help="previous results.json (or JSON list of reports) or logs")
    p.add_argument("--vmlinux", type=Path, metavar="FILE",
                   help="resolve frames to file:line (needs debug info)")
    p.add_argument("--golden", type=Path, action="append", metavar="DIR",
                   help="golden directory (expected-oops/ or one suite of it)")
    p.add_argument("--syz-titles", action="store_true",
                   help="show syzkaller's titles (as on the syzbot dashboard) in the table")
    p.add_argument("--max-decompressed", type=mib, default=DEFAULT_MAX_DECOMPRESSED_MIB,
                   metavar="MIB", help="refuse a compressed log that expands past this "
                   f"(default {DEFAULT_MAX_DECOMPRESSED_MIB} MiB)")
    p.add_argument("--max-input", type=mib, default=DEFAULT_MAX_INPUT_MIB,
                   metavar="MIB", help="read at most this much of one log, the rest "
                   f"is ignored with a warning (default {DEFAULT_MAX_INPUT_MIB} MiB)")
    p.add_argument("paths", type=Path, nargs="+", metavar="LOG_OR_DIR",
                   help='log files, directories of logs, or "-" for standard input')
    p.set_defaults(func=_triage_run)


def _audit(sub: Any) -> None:
    audit = sub.add_parser("audit", help="the whitelist audit's tools")
    what = audit.add_subparsers(dest="audit_command", required=True, metavar="COMMAND")
    v = what.add_parser("values", help="print the audit golden file's offsetof/sizeof "
                        "terms for a kernel build",
                        description="Evaluate the audit golden file's offsetof/sizeof terms "
                        "for a kernel build (its vmlinux's DWARF, or the compiler in the "
                        "build beside it) and print them.  Exit status: 0 printed, 2 bad "
                        "input (one line).")
    v.add_argument("spec", type=Path)
    v.add_argument("--vmlinux", type=Path, required=True)
    v.add_argument("--cache", type=Path,
                   help="JSON file to reuse or write (default: compute only)")
    v.set_defaults(func=_audit_values)


def _gaps(sub: Any) -> None:
    p = sub.add_parser("gaps", help="static gap finder: copy sites against slab cache "
                       "regions (docs/gaps.md)", description="Exit status: 0 every candidate "
                       "has a status and every region without a site its reason; 1 some have "
                       "not (listed); 2 bad input (one line).")
    p.add_argument("--tree", type=Path, required=True, help="an extracted kernel tree")
    p.add_argument("--out", type=Path, required=True, help="folder for gaps.json, gaps.md")
    p.add_argument("--patch", action="append", default=[],
                   help="a patch applied on a copy of the files it changes (a mutation)")
    p.add_argument("--triage", type=Path, default=None, help="expected-oops/gaps/triage.toml")
    p.add_argument("--label", default="", help="the tree's name in gaps.md")
    p.add_argument("--base", type=Path, default=None,
                   help="with --patch: the output folder of the same tree's scan, whose "
                        "scan is reused for the files the patch does not change")
    p.add_argument("--force", action="store_true", help="scan even if nothing changed")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=_gaps_run)


def _hunt(sub: Any) -> None:
    p = described(sub, "hunt", hunt_options.__doc__,
                  "the hunt: many guests, their reports harvested (docs/hunt.md)")
    what = p.add_subparsers(dest="hunt_command", required=True, metavar="COMMAND")
    defaults = HuntOptions()

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--results", type=Path, default=defaults.results)
        q.add_argument("--classifications", type=Path, default=defaults.classifications)
        q.add_argument("--notes", type=Path, default=defaults.notes)
        q.add_argument("--gaps", type=Path, default=defaults.gaps,
                       help="the gap finder's output for the hunt kernel's tree: the "
                       "coverage's denominator (make gaps; default %(default)s)")

    def calls(q: argparse.ArgumentParser, name: str) -> None:
        q.set_defaults(func=partial(_hunt_run, name))

    run = what.add_parser("run", help="boot the hunt's guests and harvest them")
    common(run)
    run.add_argument("--minutes", type=float, default=defaults.minutes,
                     help="wall time to fill with guests (default %(default)s)")
    run.add_argument("-j", "--jobs", type=int, default=defaults.jobs, help="guests at once")
    run.add_argument("--kernel", default=defaults.kernel, help="build/kernel-NAME (default hunt)")
    run.add_argument("--build-dir", type=Path, default=defaults.build_dir)
    run.add_argument("--initramfs", type=Path, default=defaults.initramfs)
    run.add_argument("--workloads", type=Path, default=defaults.workloads)
    run.add_argument("--workload", action="append", help="only this workload (repeatable)")
    run.add_argument("--guest-seconds", type=int, help="every guest's workload seconds")
    run.add_argument("--seed", type=int, help="the run seed (default: random, recorded)")
    run.add_argument("--no-calibrate", action="store_true",
                     help="leave out the calibration guest")
    run.add_argument("--accel", choices=("auto", "tcg", "kvm"), default=defaults.accel)
    run.add_argument("--smoke", action="store_true",
                     help="judge the pipeline only (make test): every guest ended, coverage "
                     "measured, calibration as expected; findings are reported, not judged")
    calls(run, "cmd_run")

    hv = what.add_parser("harvest", help="harvest a hunt's consoles again (no boot)")
    common(hv)
    hv.add_argument("run_dir", type=Path)
    calls(hv, "cmd_harvest")

    rp = what.add_parser("replay", help="boot recorded guests again")
    common(rp)
    rp.add_argument("run_dir", type=Path)
    rp.add_argument("--finding", action="append", help="a finding id (U-...)")
    rp.add_argument("--guest", action="append", help="a guest id (g001-...)")
    rp.add_argument("--tries", type=int, default=defaults.tries,
                    help="boots per finding (default 3)")
    calls(rp, "cmd_replay")


def _pages(sub: Any) -> None:
    page = sub.add_parser("page", help="write a run's HTML page again")
    what = page.add_subparsers(dest="page_command", required=True, metavar="PAGE")
    r = described(what, "run", html_page.__doc__, "RUN/index.html from RUN/results.json")
    r.add_argument("run_dir", type=Path, help="results/<run> (its results.json)")
    r.add_argument("--baseline", help="the run to diff against: its folder, its "
                   "results.json or a run id beside RUN_DIR (default: the run before "
                   "with the same suites)")
    r.add_argument("--repo", type=Path, default=REPO, help=argparse.SUPPRESS)
    r.set_defaults(func=_run_page)
    b = what.add_parser("bench", help="a bench folder's index.html (bench.json, charts)")
    b.add_argument("folder", type=Path, help="results/bench-<time>")
    b.set_defaults(func=_bench_page)
    h = what.add_parser("hunt", help="a hunt run's hunt/index.html (findings.json, charts)")
    h.add_argument("folder", type=Path, help="results/<run> of a hunt (its hunt/findings.json)")
    h.set_defaults(func=_hunt_page)

    check = sub.add_parser("check", help="check a run's files against its results.json")
    what = check.add_subparsers(dest="check_command", required=True, metavar="WHAT")
    pc = described(what, "page", page_check.__doc__, "index.html against results.json")
    pc.add_argument("run_dir", type=Path, help="results/<run-id>")
    pc.set_defaults(func=_check_page)
    fc = described(what, "formats", format_check.__doc__, "KTAP (through kunit.py parse), "
                   "JUnit and index.html against results.json")
    fc.add_argument("run_dir", type=Path, help="results/<run-id>")
    fc.add_argument("--kunit", type=Path, required=True,
                    help="the tree's tools/testing/kunit/kunit.py")
    fc.set_defaults(func=_check_formats)


def _triage_run(args: argparse.Namespace) -> int:
    from ..triage import command
    return command.run(options(TriageOptions, args))


def _audit_values(args: argparse.Namespace) -> int:
    from ..audit import whitelist_spec
    return whitelist_spec.command(args.spec, args.vmlinux, args.cache)


def _gaps_run(args: argparse.Namespace) -> int:
    from ..gaps import command
    return command.command(options(GapsOptions, args))


def _hunt_run(name: str, args: argparse.Namespace) -> int:
    from ..hunt import runner
    return runner.command(getattr(runner, name), options(HuntOptions, args))


def _run_page(args: argparse.Namespace) -> int:
    return page_command("page run", partial(html_page.write_page, args.run_dir, args.baseline,
                                            args.repo))


def _check_page(args: argparse.Namespace) -> int:
    return page_check.command(args.run_dir)


def _check_formats(args: argparse.Namespace) -> int:
    return format_check.command(args.run_dir, args.kunit)


def _bench_page(args: argparse.Namespace) -> int:
    from ..output import bench_page
    return page_command("page bench", partial(bench_page.write_bench_page, args.folder))


def _hunt_page(args: argparse.Namespace) -> int:
    from ..output import hunt_page
    return page_command("page hunt", partial(hunt_page.write_hunt_page, args.folder))
