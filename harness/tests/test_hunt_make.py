"""make hunt stays out of make kernels / make test's cold builds: the hunt
kernel (kernel-config/variant-hunt.config) is built by `make hunt` only, and
the smoke in `make test` runs on the seeds kernel that make test builds
anyway (CI budget: a cold make test under 60 min)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _database() -> str:
    if not shutil.which("make"):
        pytest.skip("no make")
    # -p prints make's database without running a recipe (-q: nothing is built)
    out = subprocess.run(["make", "-C", str(REPO), "-pq", "help"], capture_output=True,
                         text=True, timeout=60)
    return out.stdout


def test_the_hunt_kernel_is_no_kernel_variant_of_make_kernels():
    db = _database()
    assert (REPO / "kernel-config" / "variant-hunt.config").is_file()
    variants = re.search(r"^KERNEL_VARIANTS := (.*)$", db, re.M)
    assert variants, "KERNEL_VARIANTS not in make's database"
    kernels = re.search(r"^kernels: (.*)$", db, re.M).group(1)
    assert "kernel-hunt" not in kernels
    assert "kernel-seeds" in kernels


def test_make_test_runs_the_smoke_on_the_seeds_kernel_not_the_hunt_kernel():
    db = _database()
    test_deps = re.search(r"^test: (.*)$", db, re.M).group(1).split()
    assert "hunt-smoke" in test_deps and "hunt" not in test_deps
    smoke = re.search(r"^hunt-smoke: (.*)$", db, re.M).group(1)
    assert "kernel-seeds" in smoke and "kernel-hunt" not in smoke


def test_the_hunt_is_measured_against_the_finders_output_for_the_lab_tree():
    if not shutil.which("make"):
        pytest.skip("no make")
    out = subprocess.run(["make", "-C", str(REPO), "-s", "--no-print-directory", "BUILD=/b",
                          "--eval", "show-hunt-gaps: ; @echo $(HUNT_GAPS)", "show-hunt-gaps"],
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "/b/gaps/6.1-series/gaps.json"
    db = _database()
    recipe = re.search(r"^hunt: .*\n(?:#.*\n)*((?:\t.*\n)+)", db, re.M).group(1)
    assert "gaps-series" in recipe and "--gaps $(HUNT_GAPS)" in recipe
    assert re.search(r"^gaps-series:", db, re.M)
