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


def run(tar: Path, tree: Path, patches: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(PREPARE), str(tar), str(tree), str(patches)],
                          capture_output=True, text=True, timeout=60, check=False)


def append(patches: Path, name: str, file: str, text: str) -> None:
    (patches / name).write_text(f"--- /dev/null\n+++ b/{file}\n@@ -0,0 +1 @@\n+{text}\n")
    with open(patches / "series", "a") as s:
        s.write(name + "\n")


def test_an_up_to_date_tree_does_not_wait_for_the_builds(tmp_path):
    tar, tree = tarball(tmp_path), tmp_path / "build" / "linux-test"
    patches = series(tmp_path, "one")
    assert run(tar, tree, patches).returncode == 0
    with open(f"{tree}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)       # a kbuild reading the tree
        again = run(tar, tree, patches)        # would time out if it waited
    assert again.returncode == 0, again.stderr
    assert "is up to date (1 patches)" in again.stdout


def test_a_grown_series_is_applied_on_top(tmp_path):
    tar, tree = tarball(tmp_path), tmp_path / "build" / "linux-test"
    patches = series(tmp_path, "one")
    assert run(tar, tree, patches).returncode == 0
    kept = (tree / "a.txt").stat().st_mtime_ns
    append(patches, "0002-b.patch", "b.txt", "new")
    out = run(tar, tree, patches)
    assert out.returncode == 0, out.stderr
    assert "has the first 1 patches of the series: applying the rest" in out.stdout
    assert "extracting" not in out.stdout
    assert (tree / "b.txt").read_text() == "new\n"
    assert (tree / "a.txt").stat().st_mtime_ns == kept   # not touched: no rebuild
    assert "is up to date (2 patches)" in run(tar, tree, patches).stdout


def test_a_changed_patch_or_a_missing_stamp_reextracts(tmp_path):
    tar, tree = tarball(tmp_path), tmp_path / "build" / "linux-test"
    patches = series(tmp_path, "one")
    append(patches, "0002-b.patch", "b.txt", "new")
    assert run(tar, tree, patches).returncode == 0
    series(tmp_path, "two")                    # 0001 changed, 0002 kept
    (patches / "series").write_text("0001-a.patch\n0002-b.patch\n")
    out = run(tar, tree, patches)
    assert "extracting" in out.stdout and out.returncode == 0, out.stderr
    assert (tree / "a.txt").read_text() == "two\n" and (tree / "b.txt").exists()

    # a mutation moved the stamp aside and left its change in the tree
    (tree / "a.txt").write_text("mutated\n")
    Path(f"{tree}.stamp").rename(f"{tree}.stamp.mutated")
    out = run(tar, tree, patches)
    assert "extracting" in out.stdout and out.returncode == 0, out.stderr
    assert (tree / "a.txt").read_text() == "two\n"
