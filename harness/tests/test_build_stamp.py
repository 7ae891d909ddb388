"""scripts/build-stamp.py and the Makefile's use of it: a warm `make test`
skips kbuild only while every input of the last build is as it was; any
changed input (tree stamp, fragment, .config, bzImage, a file edited in the
tree) runs kbuild again.  Nothing here builds or boots a kernel."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "build-stamp.py"


def stamp(action: str, path: Path, *inputs: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), action, str(path), *inputs],
                          capture_output=True, text=True)


@pytest.fixture
def lab(tmp_path: Path) -> tuple[Path, list[str]]:
    tree = tmp_path / "tree"
    (tree / "mm").mkdir(parents=True)
    (tree / "mm/usercopy.c").write_text("int x;\n")
    old = 1_700_000_000
    os.utime(tree / "mm/usercopy.c", (old, old))
    (tmp_path / "tree.stamp").write_text("abc\n")
    (tmp_path / "frag.config").write_text("CONFIG_X=y\n")
    (tmp_path / "bzImage").write_bytes(b"kernel")
    inputs = ["--file", str(tmp_path / "tree.stamp"), "--stat", str(tmp_path / "tree.stamp"),
              "--tree", str(tree), "--file", str(tmp_path / "frag.config"),
              "--stat", str(tmp_path / "bzImage"), "--text", "CC=ccache gcc 12"]
    return tmp_path, inputs


def test_no_stamp_is_stale_and_a_written_one_is_up_to_date(lab):
    d, inputs = lab
    first = stamp("check", d / "s", *inputs)
    assert (first.returncode, first.stdout.strip()) == (1, "no stamp of an earlier build")
    assert stamp("write", d / "s", *inputs).returncode == 0
    assert stamp("check", d / "s", *inputs).returncode == 0


@pytest.mark.parametrize("change,named", [
    (lambda d: (d / "frag.config").write_text("CONFIG_X=n\n"), "frag.config"),
    (lambda d: (d / "tree.stamp").write_text("def\n"), "tree.stamp"),
    # a re-extracted tree has the same stamp text but a new mtime
    (lambda d: os.utime(d / "tree.stamp", (1, 1)), "tree.stamp"),
    (lambda d: os.utime(d / "bzImage", (1, 1)), "bzImage"),
    (lambda d: (d / "bzImage").unlink(), "bzImage"),
])
def test_a_changed_input_is_stale_and_named(lab, change, named):
    d, inputs = lab
    stamp("write", d / "s", *inputs)
    change(d)
    result = stamp("check", d / "s", *inputs)
    assert result.returncode == 1
    assert result.stdout.startswith("changed: ") and named in result.stdout


def test_another_command_line_is_stale(lab):
    d, inputs = lab
    stamp("write", d / "s", *inputs)
    result = stamp("check", d / "s", *inputs[:-1], "CC=gcc 13")
    assert result.returncode == 1 and "CC=gcc" in result.stdout


def test_a_file_edited_in_the_tree_after_the_build_is_stale(lab):
    d, inputs = lab
    stamp("write", d / "s", *inputs)
    assert stamp("check", d / "s", *inputs).returncode == 0
    (d / "tree/mm/usercopy.c").write_text("int y;\n")      # mtime now, after the stamp
    result = stamp("check", d / "s", *inputs)
    assert result.returncode == 1
    assert "mm/usercopy.c is newer than the stamp" in result.stdout
    # mutation-run.sh gives reverted files their old mtimes back: not stale
    os.utime(d / "tree/mm/usercopy.c", (1_700_000_000, 1_700_000_000))
    assert stamp("check", d / "s", *inputs).returncode == 0


def test_check_needs_inputs(tmp_path):
    assert stamp("check", tmp_path / "s").returncode == 2


def _make(build: Path, *extra: str) -> subprocess.CompletedProcess:
    # -o tree: no prepare-tree (no tarball here); the bzImage rule runs alone.
    return subprocess.run(["make", "-C", str(REPO), "--no-print-directory", "-o", "tree",
                           f"BUILD={build}", *extra,
                           f"{build}/kernel-lab/arch/x86/boot/bzImage"],
                          capture_output=True, text=True, timeout=120)


def test_the_makefile_skips_kbuild_only_while_the_stamp_holds(tmp_path):
    if not shutil.which("make"):
        pytest.skip("no make")
    build = tmp_path / "build"
    tree = build / "linux-source-6.1"
    tree.mkdir(parents=True)
    (build / "linux-source-6.1.stamp").write_text("abc\n")
    kernel = build / "kernel-lab"
    (kernel / "arch/x86/boot").mkdir(parents=True)
    (kernel / ".config").write_text("CONFIG_X=y\n")
    (kernel / "arch/x86/boot/bzImage").write_bytes(b"kernel")
    # The stamp as the Makefile's recipe would write it after a build.
    gcc = subprocess.run("gcc --version | head -n 1", shell=True, capture_output=True,
                         text=True).stdout.strip()
    inputs = ["--file", f"{build}/linux-source-6.1.stamp",
              "--stat", f"{build}/linux-source-6.1.stamp", "--tree", str(tree),
              "--file", "kernel-config/lab.config",
              "--file", "scripts/kernel-config.sh", "--file", "scripts/kconfig-lib.sh",
              "--stat", f"{kernel}/.config", "--stat", f"{kernel}/arch/x86/boot/bzImage",
              "--text", f"CC=ccache gcc {gcc}"]
    written = subprocess.run([sys.executable, str(SCRIPT), "write",
                              str(kernel / ".lab-build-stamp"), *inputs], cwd=REPO)
    assert written.returncode == 0
    warm = _make(build)
    assert warm.returncode == 0, warm.stdout + warm.stderr
    assert "up to date (build stamp" in warm.stdout
    # KBUILD_FORCE=1, and a changed .config: kbuild runs (and fails on this
    # empty tree, which is how the test sees that it ran).
    forced = _make(build, "KBUILD_FORCE=1")
    assert "kbuild runs" in forced.stdout and forced.returncode != 0
    assert not (kernel / ".lab-build-stamp").exists()       # removed before building
    subprocess.run([sys.executable, str(SCRIPT), "write", str(kernel / ".lab-build-stamp"),
                    *inputs], cwd=REPO, check=True)
    assert "up to date" in _make(build).stdout
    (kernel / ".config").write_text("CONFIG_X=n\n")
    changed = _make(build)
    assert "kbuild runs (changed: " in changed.stdout and ".config" in changed.stdout
    assert changed.returncode != 0
