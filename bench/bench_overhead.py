"""In-guest cost of hardened usercopy and of the user-sized kmalloc split.

Boots initramfs-src/usercopy-bench.c (lab.helper=usercopy-bench) in three
configurations, --reps times each, one of each in turn:

  off      build/kernel-seeds (the default suite's kernel), hardened_usercopy=off
  on       build/kernel-seeds (the same image), hardening on, split on
  nosplit  build/kernel-seeds (the same image), hardening on, split off
           at boot (slab_common.usercopy_split=0, patches/0003: the
           usersized types alias the general caches; kmalloc_type() runs
           the same code, so this is the split's cost in that image)

and prints per syscall case the cost per call and the ratios on/off
(hardening's cost) and on/nosplit (the split's cost): the median ratio
over the repetitions and its spread (min..max), each repetition's ratio
taken between the guests of one turn.

The guests run with QEMU's -icount shift=0: the guest clock advances one
nanosecond per guest instruction, so "ns" are instructions executed, the
same on an idle and on a loaded host.  (Timed by the host's clock instead,
as TCG normally does, the same case varied by a factor of two between two
boots on the shared 2-core lab machine, more than the cost measured.)  It
counts instructions, not cache or branch effects.
"""
from __future__ import annotations

import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import TextIO

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from usercopy_lab.capture.console_capture import capture_guest  # noqa: E402
from usercopy_lab.capture.qemu_boot import GuestSpec  # noqa: E402

HELPER = "usercopy-bench"
ICOUNT = ("-icount", "shift=0")
BUDGET_MS = 5       # per case, in guest (instruction) time
_LINE_RE = re.compile(r"usercopy-lab-bench: (\S+) (\d+) ns=([\d.]+) calls=(\d+)")
CONFIGS = {
    "off": ("seeds", "hardened_usercopy=off"),
    "on": ("seeds", ""),
    "nosplit": ("seeds", "slab_common.usercopy_split=0"),
}


def boot_once(build_dir: Path, initramfs: Path, config: str, log: Path) -> dict[str, float]:
    """One guest: ns per call for every case it printed."""
    cmdline = " ".join(p for p in (CONFIGS[config][1], f"USERCOPY_BENCH_MS={BUDGET_MS}") if p)
    spec = GuestSpec(kernel_of(build_dir, config), initramfs, helper=HELPER,
                     extra_cmdline=cmdline, qemu_args=ICOUNT)
    cap = capture_guest(spec, log, 60, 600)
    text = log.read_text(errors="replace")
    found = {f"{m[0]} {m[1]}": float(m[2]) for m in _LINE_RE.findall(text)}
    if cap.error or "usercopy-lab-bench: done" not in text:
        raise SystemExit(f"bench: {config}: {cap.error or 'usercopy-bench did not finish'} "
                         f"(console: {log})")
    return found


def spread(values: list[float]) -> str:
    return (f"{statistics.median(values):.3f} "
            f"({min(values):.3f}..{max(values):.3f})")


def kernel_of(build_dir: Path, config: str) -> Path:
    return build_dir / f"kernel-{CONFIGS[config][0]}" / "arch/x86/boot/bzImage"


def run_all(build_dir: Path, initramfs: Path, out: Path, reps: int, log: TextIO) -> bool:
    samples: dict[str, list[dict[str, float]]] = defaultdict(list)
    configs = [c for c in CONFIGS if kernel_of(build_dir, c).is_file()]
    for config in CONFIGS:
        if config not in configs:
            print(f"bench: overhead {config}: {kernel_of(build_dir, config)} missing; "
                  "its column is left out", file=log)
    for rep in range(reps):
        for config in configs:
            path = out / "overhead" / f"{config}-{rep + 1}.log"
            samples[config].append(boot_once(build_dir, initramfs, config, path))
            print(f"bench: overhead {config} run {rep + 1}/{reps} done", flush=True)
    # The samples as data, for the bench page (output/bench_page.py).
    (out / "overhead" / "samples.json").write_text(json.dumps(
        {"unit": "guest instructions per call (-icount shift=0)", "reps": reps,
         "samples": samples}, indent=1) + "\n")
    cases = list(samples["on"][0])
    print(f"\n== in-guest overhead (guest instructions per call under -icount shift=0, "
          f"median of {reps}; ratio median (min..max) over {reps} adjacent pairs) ==",
          file=log)
    ratios = [(f"on/{c}", c) for c in configs if c != "on"]
    print(f"{'case':<34}" + "".join(f"{c:>11}" for c in configs) + "  "
          + "".join(f"{name:<22}" for name, _ in ratios), file=log)
    for case in cases:
        row = "".join(f"{statistics.median(s[case] for s in samples[c]):>11.0f}"
                      for c in configs)
        for _, base in ratios:
            pairs = [samples["on"][i][case] / samples[base][i][case] for i in range(reps)]
            row += f"  {spread(pairs):<20}"
        print(f"{case:<34}{row}", file=log)
    return True
