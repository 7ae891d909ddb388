"""scripts/mutation-run.sh refuses bad input with exit 2 and one line,
before it touches the tree or builds anything."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts/mutation-run.sh"
TCP = "lkdtm-tests/mutations/rds-tcp-incoming-no-region.patch"
IB = "lkdtm-tests/mutations/rds-ib-incoming-no-region.patch"


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    tree, build = tmp_path / "tree", tmp_path / "build"
    (build / "kernel-seeds").mkdir(parents=True, exist_ok=True)
    (build / "kernel-seeds/.config").write_text("")
    tree.mkdir(exist_ok=True)
    (tmp_path / "tree.stamp").write_text("x")
    return subprocess.run([str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True)


def positional(tmp_path: Path, mutation: str) -> list[str]:
    return [str(tmp_path / "tree"), str(tmp_path / "build"), "initramfs.cpio",
            str(tmp_path / "results"), mutation, "rds-tcp-cookie"]


@pytest.mark.parametrize("opts,mutation,message", [
    (["--kernel", "seeds", "--suite", "seeds", "--golden-overlay", "seeds=no/such/dir"],
     TCP, "--golden-overlay seeds=no/such/dir: no folder no/such/dir"),
    (["--kernel", "seeds", "--suite", "slab"], TCP, "suite slab boots kernel slab, not seeds"),
    (["--kernel", "lab"], TCP, "build the lab kernel first"),
    # without --kernel, the kernel the first suite boots ([lab]: default)
    (["--suite", "lab"], TCP, "build the lab kernel first"),
    (["--kernel", "seeds", "--suite", "seeds"], f"{TCP},no-such.patch", "no mutation patch no-such.patch"),
    (["--kernel", "seeds", "--suite", "seeds"], f"{TCP},{IB}", "does not apply to"),
    (["--colour", "red"], TCP, "unknown option --colour"),
])
def test_bad_input_is_exit_2_before_anything_is_built(tmp_path, opts, mutation, message):
    result = run(tmp_path, *opts, *positional(tmp_path, mutation))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert (tmp_path / "tree.stamp").exists()           # the tree was not touched
    assert not (tmp_path / "build/kernel-mutant").exists()


def _fake_lab(tmp_path: Path) -> tuple[list[str], Path]:
    """A tree with one file, a seeds build with a vmlinux, a mutation of that
    file: enough for mutation-run.sh to get as far as its build stamp."""
    tree, build = tmp_path / "tree", tmp_path / "build"
    (tree / "net").mkdir(parents=True)
    (tree / "net/x.c").write_text("int x = 1;\n")
    seeds = build / "kernel-seeds"
    seeds.mkdir(parents=True)
    (seeds / ".config").write_text("CONFIG_X=y\n")
    (seeds / "vmlinux").write_bytes(b"elf")
    (tmp_path / "tree.stamp").write_text("abc\n")
    old = 1_700_000_000
    os.utime(tree / "net/x.c", (old, old))
    os.utime(tmp_path / "tree.stamp", (old, old))
    patch = tmp_path / "m.patch"
    patch.write_text("--- a/net/x.c\n+++ b/net/x.c\n@@ -1 +1 @@\n-int x = 1;\n+int x = 2;\n")
    argv = [str(SCRIPT), "--kernel", "seeds", "--suite", "seeds", str(tree), str(build),
            str(tmp_path / "no-initramfs.cpio"), str(tmp_path / "results"), str(patch),
            "rds-tcp-cookie"]
    return argv, patch


def test_an_unchanged_mutant_is_not_rebuilt_and_a_changed_patch_rebuilds_it(tmp_path):
    argv, patch = _fake_lab(tmp_path)
    first = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120)
    # No stamp yet: copied and built (kbuild fails on this fake tree, and the
    # mutation is reverted with the tree's stamp back in place).
    assert "the mutant kernel is built again (no stamp of an earlier build)" in first.stdout
    assert first.returncode != 0
    assert (tmp_path / "tree/net/x.c").read_text() == "int x = 1;\n"
    assert (tmp_path / "tree.stamp").exists()
    mutant = tmp_path / "build/kernel-mutant"
    assert (mutant / "vmlinux").exists() and not (mutant / ".lab-mutant-stamp").exists()
    # As a successful build would leave it: a bzImage and the stamp.
    (mutant / "arch/x86/boot").mkdir(parents=True)
    (mutant / "arch/x86/boot/bzImage").write_bytes(b"mutant")
    inputs = ["--file", str(tmp_path / "tree.stamp"), "--stat", str(tmp_path / "tree.stamp"),
              "--tree", str(tmp_path / "tree"),
              "--file", str(tmp_path / "build/kernel-seeds/.config"),
              "--stat", str(tmp_path / "build/kernel-seeds/vmlinux"),
              "--file", str(SCRIPT), "--file", str(REPO / "scripts/copy-build.sh"),
              "--stat", str(mutant / "arch/x86/boot/bzImage"),
              "--text", "variant=seeds CCACHE_BASEDIR=unset " + subprocess.run(
                  "gcc --version | head -n 1", shell=True, capture_output=True,
                  text=True).stdout.strip(),
              "--file", str(patch)]
    subprocess.run([str(REPO / "scripts/build-stamp.py"), "write",
                    str(mutant / ".lab-mutant-stamp"), *inputs], check=True)
    env = {k: v for k, v in os.environ.items() if k != "CCACHE_BASEDIR"}
    warm = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert "the mutant kernel is up to date" in warm.stdout, warm.stdout + warm.stderr
    assert "building the mutant kernel" not in warm.stdout
    # The harness then cannot boot (no initramfs): exit 2, nothing proven.
    assert warm.returncode == 2
    assert (mutant / ".lab-mutant-stamp").exists()
    # A changed mutation patch (same effect, other text): built again.
    patch.write_text(patch.read_text().replace("int x = 2;", "int x = 3;"))
    again = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert "the mutant kernel is built again (changed: " in again.stdout
    assert "m.patch" in again.stdout
    assert (tmp_path / "tree/net/x.c").read_text() == "int x = 1;\n"
