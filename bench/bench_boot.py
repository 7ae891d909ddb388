"""Boot-time benchmark: seconds from QEMU start to powered-off guest.

Boots the default lab kernel N times with USERCOPY_SLAB_WHITELIST_TO (the
trigger of a typical suite run) and reports min/median/max.  Target from
the project facts: ~1.7 s per trigger under TCG on the lab machines.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from usercopy_lab.console_capture import capture_guest  # noqa: E402
from usercopy_lab.qemu_boot import GuestSpec  # noqa: E402

TARGET_SECONDS = 1.7


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build-dir", type=Path, default=Path("build"))
    parser.add_argument("--initramfs", type=Path, default=Path("build/initramfs.cpio"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--trigger", default="USERCOPY_SLAB_WHITELIST_TO")
    args = parser.parse_args()
    kernel = args.build_dir / "kernel-default/arch/x86/boot/bzImage"
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            cap = capture_guest(GuestSpec(kernel, args.initramfs, trigger=args.trigger),
                                Path(tmp) / f"{i}.log", 60, 60)
            if cap.error:
                print(f"bench_boot: run {i}: {cap.error}", file=sys.stderr)
                return 1
            times.append(cap.seconds)
    med = statistics.median(times)
    print(f"boot+trigger+poweroff, {args.trigger}, {args.runs} runs (TCG): "
          f"min {min(times):.2f}s median {med:.2f}s max {max(times):.2f}s "
          f"(target ~{TARGET_SECONDS}s) -> {'ok' if med <= TARGET_SECONDS * 1.25 else 'SLOW'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
