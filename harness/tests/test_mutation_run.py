"""scripts/mutation-run.sh refuses bad input with exit 2 and one line,
before it touches the tree or builds anything."""
from __future__ import annotations

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
    (["--kernel", "seeds", "--suite", "default"], TCP, "suite default boots kernel default, not seeds"),
    (["--kernel", "default"], TCP, "build the default kernel first"),
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
