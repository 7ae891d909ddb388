"""scripts/prepare-tree.sh: a re-extraction waits for the builds that read
the tree (they hold TREE.lock shared, Makefile TREE_READ) instead of
deleting their sources under them.  On 2026-12-06 a second make in the same
BUILD re-extracted the tree while a KASAN kernel compiled from it."""
from __future__ import annotations

import fcntl
import subprocess
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PREPARE = REPO / "scripts" / "prepare-tree.sh"


def tarball(tmp_path: Path) -> Path:
    src = tmp_path / "src" / "linux-test"
    src.mkdir(parents=True)
    (src / "Makefile").write_text("# a kernel tree, as far as prepare-tree looks\n")
    (src / "a.txt").write_text("pristine\n")
    out = tmp_path / "linux-test.tar"
    with tarfile.open(out, "w") as t:
        t.add(src, arcname="linux-test")
    return out


def series(tmp_path: Path, new: str) -> Path:
    d = tmp_path / "patches"
    d.mkdir(exist_ok=True)
    (d / "0001-a.patch").write_text(
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-pristine\n+" + new + "\n")
    (d / "series").write_text("0001-a.patch\n")
    return d


def test_a_reextraction_waits_for_the_builds_that_read_the_tree(tmp_path):
    tar, tree = tarball(tmp_path), tmp_path / "build" / "linux-test"
    first = subprocess.run([str(PREPARE), str(tar), str(tree), str(series(tmp_path, "one"))],
                           capture_output=True, text=True, timeout=60, check=False)
    assert first.returncode == 0, first.stderr
    assert (tree / "a.txt").read_text() == "one\n"

    patches = series(tmp_path, "two")          # the series changed: re-extract
    with open(f"{tree}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)       # a kbuild reading the tree
        proc = subprocess.Popen([str(PREPARE), str(tar), str(tree), str(patches)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        said = proc.stdout.readline()          # its first word, whenever it comes
        assert said == f"prepare-tree: waiting for the kernel builds that use {tree} to end\n"
        assert proc.poll() is None
        assert (tree / "a.txt").read_text() == "one\n"   # untouched while the build holds it
        fcntl.flock(lock, fcntl.LOCK_UN)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "ready (1 patches)" in out
    assert (tree / "a.txt").read_text() == "two\n"
