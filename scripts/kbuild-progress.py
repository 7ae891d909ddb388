#!/usr/bin/python3
"""kbuild-progress.py NAME OUTDIR -- make -C TREE O=OUTDIR ... bzImage

Runs a kernel build and shows its progress instead of kbuild's thousands
of "  CC  file.o" lines: which kernel, elapsed time, objects compiled so
far out of the count the last full build of OUTDIR compiled (OUTDIR/.lab-objects).
Every other line (warnings, errors, config questions) is passed through.
A progress line is printed every --every seconds (newline-terminated, so
CI logs stay readable).  Exits with the build's own status.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

# kbuild's quiet-mode line for one compiled object: "  CC      mm/slub.o",
# "  AS      arch/x86/entry/entry_64.o", "  CC [M]  fs/x.o"
_OBJECT_RE = re.compile(r"^\s+(?:CC|AS)(?: \[M\])?\s+\S+\.o\s*$")
_QUIET_RE = re.compile(r"^\s+[A-Z][A-Z0-9_]*(?: \[M\])?\s+\S"
                       r"|^make\[\d+\]: (?:Entering|Leaving) directory")
COUNT_FILE = ".lab-objects"


def fmt_time(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"


class Progress:
    def __init__(self, name: str, expected: int | None, every: float,
                 now: float) -> None:
        self.name = name
        self.expected = expected
        self.every = every
        self.start = now
        self.last = now
        self.built = 0

    def line(self, now: float) -> str:
        if self.expected:
            pct = min(100, 100 * self.built // self.expected)
            done = f"{self.built}/{self.expected} objects ({pct}%)"
        else:
            done = f"{self.built} objects (no earlier build to compare)"
        return f"kernel {self.name}: {done}, {fmt_time(now - self.start)}"

    def feed(self, text: str, now: float) -> str | None:
        """A line to show for this kbuild line, or None."""
        if _OBJECT_RE.match(text):
            self.built += 1
        elif not _QUIET_RE.match(text):
            return text.rstrip("\n")
        if now - self.last >= self.every:
            self.last = now
            return self.line(now)
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name")
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--every", type=float, default=15.0)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no build command after --")
    count_file = args.outdir / COUNT_FILE
    try:
        expected: int | None = int(count_file.read_text())
    except (OSError, ValueError):
        expected = None
    progress = Progress(args.name, expected, args.every, time.monotonic())
    print(f"kernel {args.name}: building in {args.outdir}"
          + (f" ({expected} objects last time)" if expected else ""), flush=True)
    # close_fds=False: make's jobserver pipes must reach the sub-make.
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", close_fds=False)
    assert proc.stdout is not None
    for text in proc.stdout:
        shown = progress.feed(text, time.monotonic())
        if shown is not None:
            print(shown, flush=True)
    status = proc.wait()
    elapsed = fmt_time(time.monotonic() - progress.start)
    if status != 0:
        print(f"kernel {args.name}: build FAILED (status {status}) after {elapsed}",
              flush=True)
        return status
    # A warm rebuild compiles a few objects: keep the full build's count.
    if expected is None or progress.built > expected // 2:
        count_file.write_text(f"{progress.built}\n")
    print(f"kernel {args.name}: done in {elapsed}, {progress.built} objects compiled"
          + (f" (a full build compiles {expected})" if expected else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
