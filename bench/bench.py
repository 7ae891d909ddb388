#!/usr/bin/python3
"""`make bench`: every number of the lab's speed and cost in one run.

  1. harness speed (bench_speed.py): per-trigger median/p90 in full and
     snapshot boot, default-suite wall time -j1 vs -jN and full vs snapshot,
     every suite as `make test` runs them;
  2. in-guest overhead (bench_overhead.py): usercopy-bench with
     hardened_usercopy=off vs on, split on vs off;
  3. triage throughput (bench_triage.py);
  4. with --warm-test only: a warm `make test` with nothing changed, each
     step timed (bench_warm.py), beside issue #23's old figures;
  5. with --rebuild only: warm rebuild of the seeds kernel after a change
     to one patch (re-extract + re-apply + kbuild with ccache).

Everything printed is also written to RESULTS/bench-<time>/bench.txt,
beside the runs' own results and consoles, and drawn in its index.html
(harness/usercopy_lab/output/bench_page.py: time per guest, overhead per
syscall).  Exit status 1 when a target is
missed or a verdict differs between modes.
"""
from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import bench_overhead  # noqa: E402
import bench_speed  # noqa: E402
import bench_triage  # noqa: E402
import bench_warm  # noqa: E402

sys.path.insert(0, str(REPO / "harness"))
from usercopy_lab.output.bench_page import write_bench_page  # noqa: E402
from usercopy_lab.output.page_model import PageError  # noqa: E402
from usercopy_lab.run.run_loop import default_jobs  # noqa: E402


def rebuild(build_dir: Path, log: io.TextIOBase) -> None:
    """Time `make kernel` after one patch changed (a no-op edit of its
    commit message), then again after it is restored."""
    series = (REPO / "patches" / "series").read_text().split()
    patch = REPO / "patches" / series[0]
    original = patch.read_bytes()
    make = ["make", "-C", str(REPO), f"BUILD={build_dir}", "kernel", "KERNEL=seeds"]
    try:
        patch.write_bytes(original.replace(b"\n\n", b"\n\nbench: touched\n", 1))
        t0 = time.monotonic()
        subprocess.run(make, check=True, stdout=subprocess.DEVNULL)
        touched = time.monotonic() - t0
    finally:
        patch.write_bytes(original)
    t0 = time.monotonic()
    subprocess.run(make, check=True, stdout=subprocess.DEVNULL)
    restored = time.monotonic() - t0
    print(f"\n== warm rebuild (kbuild + ccache), kernel seeds ==\n"
          f"after changing {patch.name}: {touched:.0f}s; after restoring it: {restored:.0f}s",
          file=log)


class Tee(io.TextIOBase):
    def __init__(self, *outs: io.TextIOBase) -> None:
        self.outs = outs

    def write(self, text: str) -> int:
        for out in self.outs:
            out.write(text)
            out.flush()
        return len(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", type=Path, default=REPO / "build")
    ap.add_argument("--initramfs", type=Path, default=REPO / "build/initramfs.cpio")
    ap.add_argument("--results", type=Path, default=REPO / "results")
    ap.add_argument("-j", "--jobs", type=int, default=default_jobs())
    ap.add_argument("--reps", type=int, default=3, help="overhead repetitions per configuration")
    ap.add_argument("--triage-mb", type=int, default=500)
    ap.add_argument("--current", type=Path, default=REPO / "docs/bench.md",
                    help="rewritten with this run's output: the current numbers")
    ap.add_argument("--rebuild", action="store_true",
                    help="also time a warm kernel rebuild (rebuilds build/kernel-seeds)")
    ap.add_argument("--warm-test", action="store_true",
                    help="also time a warm `make test`, step by step (about 2-6 min)")
    ap.add_argument("--only-warm-test", action="store_true",
                    help="time only the warm `make test` (no speed, overhead, triage runs)")
    args = ap.parse_args()
    out = args.results / time.strftime("bench-%Y%m%d-%H%M%S")
    out.mkdir(parents=True)
    with open(out / "bench.txt", "w") as f:
        log = Tee(sys.stdout, f)  # type: ignore[arg-type]
        print(f"bench: {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, "
              f"load average before {os.getloadavg()[0]:.1f}; output in {out}", file=log)
        if args.only_warm_test:
            ok = bench_warm.run_all(args.build_dir, args.results, out, log)
            print(f"bench: written to {out / 'bench.txt'} (docs/bench.md left alone)")
            return 0 if ok else 1
        ok = bench_speed.run_all(args.build_dir, args.initramfs, out, args.jobs, log)
        print(f"(load average now {os.getloadavg()[0]:.1f})", file=log)
        ok &= bench_overhead.run_all(args.build_dir, args.initramfs, out, args.reps, log)
        print(f"(load average now {os.getloadavg()[0]:.1f})", file=log)
        print("\n== triage ==", file=log)
        sys.stdout = log  # bench_triage prints its lines
        try:
            ok &= bench_triage.main(["--mb", str(args.triage_mb)]) == 0
        finally:
            sys.stdout = sys.__stdout__
        if args.warm_test:
            ok &= bench_warm.run_all(args.build_dir, args.results, out, log)
        if args.rebuild:
            rebuild(args.build_dir, log)
    write_current(args.current, (out / "bench.txt").read_text(), ok)
    print(f"bench: written to {out / 'bench.txt'} and {args.current}")
    try:
        print(f"bench: page {write_bench_page(out)}")
    except (PageError, OSError) as exc:
        print(f"bench: no page: {exc}", file=sys.stderr)
        ok = False
    return 0 if ok else 1


def write_current(path: Path, text: str, ok: bool) -> None:
    """The current numbers: this run's output, whole.  Earlier figures stay
    in docs/history.md (by date, superseded ones marked)."""
    path.write_text(
        "# Current numbers (`make bench` rewrites this file)\n\n"
        "What each number measures: docs/measuring.md.  Older runs: docs/history.md.\n"
        f"This run's targets: {'met' if ok else 'NOT met (see the output)'}.\n\n"
        "```\n" + text.rstrip("\n") + "\n```\n")


if __name__ == "__main__":
    sys.exit(main())
