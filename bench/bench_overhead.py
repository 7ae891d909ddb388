"""In-guest cost of hardened usercopy and of the user-sized kmalloc split.

Boots initramfs-src/usercopy-bench.c (lab.helper=usercopy-bench) in three
configurations, --reps times each, interleaved so that host load drifts
over all of them alike:

  off      build/kernel-default, hardened_usercopy=off
  on       build/kernel-default (the same image), hardening on, split on
  nosplit  build/kernel-nosplit: hardening on, split off (no boot option
           turns the split off, so this is the variant kernel)

and prints per syscall case the ns per call and the ratios on/off
(hardening's cost) and on/nosplit (the split's cost): the median ratio
over the repetitions and its spread (min..max), each repetition's ratio
taken between guests booted next to each other.
"""
from __future__ import annotations

import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import TextIO

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from usercopy_lab.console_capture import capture_guest  # noqa: E402
from usercopy_lab.qemu_boot import GuestSpec  # noqa: E402

HELPER = "usercopy-bench"
_LINE_RE = re.compile(r"usercopy-lab-bench: (\S+) (\d+) ns=([\d.]+) calls=(\d+)")
CONFIGS = {
    "off": ("default", "hardened_usercopy=off"),
    "on": ("default", ""),
    "nosplit": ("nosplit", ""),
}


def boot_once(build_dir: Path, initramfs: Path, config: str, log: Path) -> dict[str, float]:
    """One guest: ns per call for every case it printed."""
    kernel, cmdline = CONFIGS[config]
    spec = GuestSpec(build_dir / f"kernel-{kernel}" / "arch/x86/boot/bzImage", initramfs,
                     helper=HELPER, extra_cmdline=cmdline)
    cap = capture_guest(spec, log, 60, 600)
    text = log.read_text(errors="replace")
    found = {f"{m[1]} {m[2]}": float(m[3]) for m in _LINE_RE.findall(text)}
    if cap.error or "usercopy-lab-bench: done" not in text:
        raise SystemExit(f"bench: {config}: {cap.error or 'usercopy-bench did not finish'} "
                         f"(console: {log})")
    return found


def spread(values: list[float]) -> str:
    return (f"{statistics.median(values):.3f} "
            f"({min(values):.3f}..{max(values):.3f})")


def run_all(build_dir: Path, initramfs: Path, out: Path, reps: int, log: TextIO) -> bool:
    samples: dict[str, list[dict[str, float]]] = defaultdict(list)
    for rep in range(reps):
        for config in CONFIGS:
            path = out / "overhead" / f"{config}-{rep + 1}.log"
            samples[config].append(boot_once(build_dir, initramfs, config, path))
            print(f"bench: overhead {config} run {rep + 1}/{reps} done", flush=True)
    cases = list(samples["on"][0])
    print(f"\n== in-guest overhead (ns per call, median of {reps}; ratio median "
          f"(min..max) over {reps} adjacent pairs) ==", file=log)
    head = f"{'case':<34}{'off':>11}{'on':>11}{'nosplit':>11}  {'on/off':<22}{'on/nosplit':<22}"
    print(head, file=log)
    for case in cases:
        med = {c: statistics.median(s[case] for s in samples[c]) for c in CONFIGS}
        hard = [samples["on"][i][case] / samples["off"][i][case] for i in range(reps)]
        split = [samples["on"][i][case] / samples["nosplit"][i][case] for i in range(reps)]
        print(f"{case:<34}{med['off']:>11.0f}{med['on']:>11.0f}{med['nosplit']:>11.0f}  "
              f"{spread(hard):<22}{spread(split):<22}", file=log)
    return True
