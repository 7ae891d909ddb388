#!/usr/bin/python3
"""build-stamp.py check|write STAMP [--file PATH]... [--stat PATH]... [--text S]...
                 [--tree DIR]

Skips a kbuild pass that cannot change anything.  A warm `make test` ran
kbuild's no-op pass on four kernels and rebuilt the RDS mutant every time;
this records, after a successful build, a digest of everything that build
read, and `check` exits 0 only when every input is as it was then:

  --file PATH   its content (sha256): config fragments, scripts, patches,
                the tree's prepare-tree stamp (the tarball and series hash);
  --stat PATH   its size and mtime (ns): the outputs (bzImage, vmlinux),
                and the tree stamp's mtime (a re-extracted tree is new);
  --text S      a literal: the kbuild command line, the compiler's version;
  --tree DIR    no file under DIR is newer than STAMP (a hand edit in the
                extracted tree: kbuild would have seen its mtime).

A missing input is an input too ("missing"), so a deleted bzImage makes the
stamp stale.  Exit status of check: 0 up to date, 1 stale (the reason on
stdout), 2 usage.  `write` removes nothing and exits 0; the Makefile writes
only after the build succeeded and removes the stamp before building.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass
from enum import Enum
from pathlib import Path


class Kind(Enum):
    FILE = "file"
    STAT = "stat"
    TEXT = "text"


@dataclass(frozen=True)
class Input:
    kind: Kind
    value: str

    def line(self) -> str:
        """One line of the stamp: what the input is and what it was."""
        if self.kind is Kind.TEXT:
            return f"text {self.value}"
        path = Path(self.value)
        try:
            if self.kind is Kind.FILE:
                return f"file {self.value} {hashlib.sha256(path.read_bytes()).hexdigest()}"
            st = path.stat()
            return f"stat {self.value} {st.st_size} {st.st_mtime_ns}"
        except OSError:
            return f"{self.kind.value} {self.value} missing"


def stamp_text(inputs: list[Input]) -> str:
    return "".join(i.line() + "\n" for i in inputs)


def newer_file(tree: Path, stamp: Path) -> str | None:
    """A file under tree newer than stamp, or None (find: fast on 80k files)."""
    done = subprocess.run(["find", str(tree), "-newer", str(stamp), "-type", "f",
                           "-print", "-quit"], capture_output=True, text=True)
    if done.returncode != 0:
        return f"find failed: {done.stderr.strip()}"
    return done.stdout.strip() or None


def check(stamp: Path, inputs: list[Input], trees: list[Path]) -> str | None:
    """None when up to date, else why not."""
    try:
        old = stamp.read_text()
    except OSError:
        return "no stamp of an earlier build"
    new = stamp_text(inputs)
    if old != new:
        old_lines = set(old.splitlines())
        changed = [line.split(" ")[1] for line in new.splitlines() if line not in old_lines]
        return "changed: " + (", ".join(changed) if changed else "inputs removed")
    for tree in trees:
        edited = newer_file(tree, stamp)
        if edited:
            return f"{edited} is newer than the stamp"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=("check", "write"))
    ap.add_argument("stamp", type=Path)
    ap.add_argument("--file", action="append", default=[])
    ap.add_argument("--stat", action="append", default=[])
    ap.add_argument("--text", action="append", default=[])
    ap.add_argument("--tree", action="append", default=[], type=Path)
    args = ap.parse_args(argv)
    inputs = ([Input(Kind.FILE, v) for v in args.file] + [Input(Kind.STAT, v) for v in args.stat]
              + [Input(Kind.TEXT, v) for v in args.text])
    if not inputs:
        ap.error("no inputs")
    if args.action == "write":
        tmp = args.stamp.with_name(args.stamp.name + ".new")
        tmp.write_text(stamp_text(inputs))
        os.replace(tmp, args.stamp)
        return 0
    why = check(args.stamp, inputs, args.tree)
    if why is None:
        return 0
    print(why)
    return 1


if __name__ == "__main__":
    sys.exit(main())
