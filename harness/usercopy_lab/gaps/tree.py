"""The source tree the finder reads: its files, an overlay of changed files
(a mutation's), and each file read and parsed once."""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .csource import Source
from .model import GapsError

# Directories never read: other architectures' code (the lab is x86-64),
# documentation, user-space tools and samples.
SKIP_TOP = frozenset({"Documentation", "tools", "samples", "scripts", "usr", "LICENSES"})
ARCH = "x86"
MAX_FILE = 8 << 20        # the largest C file of 6.1 is 4.5 MB (amdgpu register headers: 14 MB, skipped)


@dataclass
class Tree:
    root: Path
    overlay: Path | None = None
    _files: list[str] | None = None
    _sources: dict[str, Source] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (self.root / "Makefile").is_file() or not (self.root / "mm").is_dir():
            raise GapsError(f"{self.root}: not a kernel source tree (no Makefile and mm/)")
        if self.overlay is not None and not self.overlay.is_dir():
            raise GapsError(f"{self.overlay}: overlay is not a directory")

    def files(self) -> list[str]:
        """Every .c and .h file, relative, sorted (overlay files included)."""
        if self._files is None:
            found = set()
            for base in [self.root] + ([self.overlay] if self.overlay else []):
                for dirpath, dirnames, filenames in os.walk(base):
                    rel = os.path.relpath(dirpath, base)
                    parts = [] if rel == "." else rel.split(os.sep)
                    if not parts:
                        dirnames[:] = [d for d in dirnames if d not in SKIP_TOP and not d.startswith(".")]
                    elif parts[0] == "arch" and len(parts) == 1:
                        dirnames[:] = [d for d in dirnames if d == ARCH]
                    for f in filenames:
                        if f.endswith((".c", ".h")):
                            found.add(f if not parts else "/".join(parts + [f]))
            self._files = sorted(found)
        return self._files

    def path(self, rel: str) -> Path:
        if self.overlay is not None and (self.overlay / rel).is_file():
            return self.overlay / rel
        return self.root / rel

    def text(self, rel: str) -> str:
        p = self.path(rel)
        try:
            if p.stat().st_size > MAX_FILE:
                return ""
            return p.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise GapsError(f"{p}: {exc.strerror}") from None

    def source(self, rel: str) -> Source:
        src = self._sources.get(rel)
        if src is None:
            src = Source.parse(rel, self.text(rel))
            if len(self._sources) > 4000:
                self._sources.clear()
            self._sources[rel] = src
        return src

    def files_matching(self, patterns: list[str], among: list[str] | None = None) -> list[str]:
        """The files of AMONG (every file) in which one of PATTERNS (extended
        regular expressions) matches: GNU grep over the tree, which reads
        it many times faster than Python does (the fixpoint rounds of
        derive.py and the field flow ask this of the whole tree)."""
        among = self.files() if among is None else among
        if not patterns or not among:
            return []
        wanted = set(among)
        found: set[str] = set()
        with tempfile.NamedTemporaryFile("w", suffix=".pat") as pat:
            pat.write("\n".join(patterns) + "\n")
            pat.flush()
            for base in [self.root] + ([self.overlay] if self.overlay else []):
                done = subprocess.run(["grep", "-rlE", "-f", pat.name, "--include=*.c",
                                       "--include=*.h", "."], cwd=base, capture_output=True,
                                      text=True, errors="replace")
                if done.returncode not in (0, 1):
                    return [f for f in among if any(re.search(p, self.text(f)) for p in patterns)]
                found.update(line[2:] for line in done.stdout.splitlines() if line.startswith("./"))
        return sorted(f for f in found if f in wanted)
