"""scripts/kbuild-progress.py: kbuild's object lines become progress lines."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "kbuild-progress.py"
spec = importlib.util.spec_from_file_location("kbuild_progress", SCRIPT)
kp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kp)  # type: ignore[union-attr]


def test_objects_are_counted_and_other_lines_pass_through():
    p = kp.Progress("default", 4, every=10.0, now=0.0)
    assert p.feed("  CC      mm/slub.o\n", 1.0) is None
    assert p.feed("  AS      arch/x86/entry/entry_64.o\n", 2.0) is None
    assert p.feed("  LD      vmlinux.o\n", 3.0) is None          # not a compiled object
    assert p.feed("mm/slub.c:10:2: warning: unused\n", 4.0) == "mm/slub.c:10:2: warning: unused"
    assert p.feed("make[2]: Entering directory '/x'\n", 5.0) is None
    assert p.feed("  CC      mm/usercopy.o\n", 11.0) == "kernel default: 3/4 objects (75%), 11s"


def test_first_build_has_nothing_to_compare():
    p = kp.Progress("slab", None, every=0.0, now=0.0)
    assert p.feed("  CC      a.o\n", 65.0) == \
        "kernel slab: 1 objects (no earlier build to compare), 1m05s"


def run(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    fake = tmp_path / "make.sh"
    fake.write_text("#!/bin/sh\n" + body)
    fake.chmod(0o755)
    return subprocess.run([sys.executable, str(SCRIPT), "--every", "1000", "default",
                           str(tmp_path), "--", str(fake)], capture_output=True, text=True)


def test_full_build_count_is_kept_for_the_next_build(tmp_path):
    objects = "".join(f"echo '  CC      f{i}.o'\n" for i in range(10))
    done = run(tmp_path, objects)
    assert done.returncode == 0
    # the time is the host's: a loaded machine took 1s for this (make test, 2026-12-06)
    assert re.fullmatch(r"kernel default: done in \d+s, 10 objects compiled",
                        done.stdout.splitlines()[-1])
    assert (tmp_path / ".lab-objects").read_text() == "10\n"
    done = run(tmp_path, "echo '  CC      f1.o'\n")       # warm: one object
    assert "1 objects compiled (a full build compiles 10)" in done.stdout
    assert (tmp_path / ".lab-objects").read_text() == "10\n"


def test_build_failure_keeps_its_status_and_error_lines(tmp_path):
    done = run(tmp_path, "echo 'mm/x.c:1: error: boom'\nexit 2\n")
    assert done.returncode == 2
    assert "mm/x.c:1: error: boom" in done.stdout
    assert "build FAILED (status 2)" in done.stdout
