"""scripts/build-initramfs.sh gives the same bytes for the same inputs
(issue #33): two builds of the guest's initramfs, from inputs whose files
have other mtimes and other paths, have one sha256, and every entry of the
archive has SOURCE_DATE_EPOCH as its mtime.

The inputs are `make initramfs`'s where they exist (build/initramfs-helpers,
build/initramfs-data, the kernel tree), copied once and never touched (make
test runs this beside the build that writes them), else a small set made
here: two helper files and a data file; gen_init_cpio is compiled from the
tree's usr/gen_init_cpio.c (else a copy of build/gen_init_cpio).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "build-initramfs.sh"
BUILD = REPO / "build"
TREE = Path(os.environ.get("USERCOPY_LAB_TREE") or BUILD / "linux-source-6.1")
EPOCH = 1_700_000_000
TRAILER = "TRAILER!!!"
# what the script reads from the project (its default SOURCE_DATE_EPOCH)
INPUTS = ["initramfs-src", "scripts/build-initramfs.sh", "scripts/initramfs-selftests.sh",
          "scripts/xfs-image.sh", "lkdtm-tests/tests.txt"]


def newc_entries(data: bytes) -> list[dict[str, int | str]]:
    """The entries of a newc ("070701") archive, trailer included."""
    fields = ("ino", "mode", "uid", "gid", "nlink", "mtime", "filesize", "devmajor",
              "devminor", "rdevmajor", "rdevminor", "namesize", "check")
    entries, at = [], 0
    while True:
        assert data[at:at + 6] == b"070701", at
        entry: dict[str, int | str] = {
            f: int(data[at + 6 + 8 * i:at + 14 + 8 * i], 16) for i, f in enumerate(fields)}
        name_end = at + 110 + int(entry["namesize"])
        entry["name"] = data[at + 110:name_end - 1].decode()
        entries.append(entry)
        at = (name_end + 3) & ~3
        at = (at + int(entry["filesize"]) + 3) & ~3
        if entry["name"] == TRAILER:
            return entries


def gen_init_cpio(tmp: Path) -> Path:
    """gen_init_cpio built from the tree's source, or a copy of make
    initramfs's (never build/gen_init_cpio itself: make test may be
    writing it right now)."""
    tool = tmp / "gen_init_cpio"
    source = TREE / "usr" / "gen_init_cpio.c"
    if source.is_file() and shutil.which("cc"):
        subprocess.run(["cc", "-O2", "-o", str(tool), str(source)], check=True, timeout=300)
    elif (BUILD / "gen_init_cpio").is_file():
        shutil.copy(BUILD / "gen_init_cpio", tool)
    else:
        pytest.skip(f"no {source} (make tree) with cc, nor {BUILD / 'gen_init_cpio'}")
    return tool


def snapshot(folder: Path, name: str) -> Path:
    """build/NAME copied once (make test may be writing it: every build here
    copies this copy), or a small made-up one."""
    out = folder / name
    out.mkdir(parents=True)
    real = BUILD / name
    if real.is_dir() and any(real.iterdir()):
        for path in real.iterdir():
            if path.is_file():
                shutil.copyfile(path, out / path.name)
    else:
        (out / f"{name}-a").write_bytes(b"\x7fELF a made-up helper\n")
        (out / f"{name}-b").write_bytes(b"another one\n" * 100)
    return out


def inputs(source: Path, folder: Path, mtime: int) -> Path:
    """A copy of source in folder, every file's mtime set to mtime."""
    out = folder / source.name
    shutil.copytree(source, out)
    for path in out.iterdir():
        os.utime(path, (mtime, mtime))
    return out


def build(tmp: Path, lab: tuple[Path, Path], where: str, mtime: int, epoch: int | None) -> bytes:
    gen, sources = lab
    folder = tmp / where
    helpers = inputs(sources / "initramfs-helpers", folder, mtime)
    data = inputs(sources / "initramfs-data", folder, mtime)
    out = folder / "initramfs.cpio"
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    if epoch is not None:
        env["SOURCE_DATE_EPOCH"] = str(epoch)
    tree = [str(TREE)] if (TREE / "tools/testing/selftests/lkdtm/run.sh").is_file() else [""]
    done = subprocess.run([str(SCRIPT), str(gen), str(out), str(helpers), *tree, str(data)],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return out.read_bytes()


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> tuple[Path, Path]:
    """gen_init_cpio, and the folder of the inputs' one copy."""
    if not Path("/bin/busybox").is_file() or not shutil.which("file"):
        pytest.skip("no /bin/busybox or file(1) (apt-get install busybox-static file)")
    sources = tmp_path_factory.mktemp("sources")
    for name in ("initramfs-helpers", "initramfs-data"):
        snapshot(sources, name)
    return gen_init_cpio(tmp_path_factory.mktemp("gen")), sources


@pytest.fixture(scope="module")
def first(tmp_path_factory, lab):
    """The archive of the inputs with mtime 1 111 111 111, at EPOCH."""
    return build(tmp_path_factory.mktemp("first"), lab, "one", 1_111_111_111, EPOCH)


def test_two_builds_from_the_same_inputs_are_byte_identical(tmp_path, lab, first):
    second = build(tmp_path, lab, "two", 1_222_222_222, EPOCH)
    assert hashlib.sha256(first).hexdigest() == hashlib.sha256(second).hexdigest()
    entries = newc_entries(first)
    assert entries[-1]["name"] == TRAILER and entries[-1]["mtime"] == 0     # gen_init_cpio's
    files = [e for e in entries[:-1] if int(e["mode"]) & 0o170000 == 0o100000]
    assert {e["name"] for e in files} >= {"init", "bin/busybox"}
    assert {(e["mtime"], e["uid"], e["gid"]) for e in entries[:-1]} == {(EPOCH, 0, 0)}
    assert len({e["ino"] for e in entries[:-1]}) == len(entries) - 1


def test_another_epoch_changes_the_times_only(tmp_path, lab, first):
    one = newc_entries(first)
    other = newc_entries(build(tmp_path, lab, "two", 1_111_111_111, EPOCH + 1))
    assert [dict(e, mtime=0) for e in one] == [dict(e, mtime=0) for e in other]
    assert {e["mtime"] for e in other[:-1]} == {EPOCH + 1}


def test_without_source_date_epoch_the_last_commit_of_its_inputs_is_the_time(tmp_path, lab):
    if not shutil.which("git") or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the default is 0, nothing to compare")
    commit = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%ct", "--", *INPUTS],
                            capture_output=True, text=True, check=True).stdout.strip()
    entries = newc_entries(build(tmp_path, lab, "one", 1_111_111_111, None))
    assert {e["mtime"] for e in entries[:-1]} == {int(commit)}
