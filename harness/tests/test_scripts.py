"""The Makefile and shell-script review points of issue #13, each checked
by running the real target or function (make -n where a real run would
build or boot; nothing here needs root)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")


def make_n(*args: str) -> subprocess.CompletedProcess[str]:
    """make -n in the repository, with the kernel and initramfs steps marked
    done (-o) so that nothing is built."""
    return subprocess.run(["make", "--no-print-directory", "-n", "-o", "kernels",
                           "-o", "initramfs", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=False)


@needs_make
def test_absolute_build_reaches_the_booted_tests_unchanged(tmp_path):
    out = make_n("booted-test", f"BUILD={tmp_path}/b").stdout
    assert f"USERCOPY_LAB_BUILD={tmp_path}/b " in out, out
    assert f"USERCOPY_LAB_INITRAMFS={tmp_path}/b/initramfs.cpio " in out, out


@needs_make
def test_relative_build_is_made_absolute():
    out = make_n("booted-test", "BUILD=b2").stdout
    assert f"USERCOPY_LAB_BUILD={REPO}/b2 " in out, out


@needs_make
def test_make_boot_stops_when_the_suite_kernel_lookup_fails():
    # The '+' line runs even under -n: it must stop at the failed lookup
    # instead of building "kernel-" (an empty KERNEL).
    proc = make_n("boot", "TRIGGER=USERCOPY_KERNEL", "SUITE=no-such-suite")
    assert proc.returncode != 0
    assert "no suite no-such-suite" in proc.stderr
    assert "kernel-/" not in proc.stdout + proc.stderr


@needs_make
def test_unit_test_installs_only_what_it_needs():
    install = make_n("unit-test").stdout.splitlines()[0].split()
    assert install[:2] == ["scripts/install-deps.sh", "--only"], install
    assert "python3-pytest" in install and "linux-source-6.1" not in install


def test_install_deps_with_everything_present_needs_no_root(tmp_path):
    """install-deps.sh --only PACKAGE...: installed packages need neither apt
    nor root (apt-get and sudo are stubs that record being called)."""
    if shutil.which("dpkg-query") is None:
        pytest.skip("not a Debian system")
    for tool in ("apt-get", "sudo"):
        stub = tmp_path / tool
        stub.write_text(f"#!/bin/sh\necho {tool} >> {tmp_path}/called\nexit 1\n")
        stub.chmod(0o755)
    (tmp_path / "id").write_text("#!/bin/sh\necho 1000\n")
    (tmp_path / "id").chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    proc = subprocess.run([str(REPO / "scripts/install-deps.sh"), "--only", "dpkg"], env=env,
                          capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert not (tmp_path / "called").exists()


def test_booted_tests_with_a_wrong_build_fail_instead_of_skipping(tmp_path):
    env = {**os.environ, "USERCOPY_LAB_BUILD": str(tmp_path / "nope"),
           "USERCOPY_LAB_INITRAMFS": str(tmp_path / "nope/initramfs.cpio")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(REPO / "harness/booted_tests")], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0
    assert "the booted tests would all skip" in proc.stdout + proc.stderr


def bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", f"set -uo pipefail; {script}"], cwd=cwd,
                          capture_output=True, text=True, timeout=60, check=False)


def test_check_fragments_fails_on_a_missing_fragment(tmp_path):
    (tmp_path / "config").write_text("CONFIG_A=y\n")
    (tmp_path / "frag").write_text("CONFIG_A=y\n# CONFIG_B is not set\n")
    lib = REPO / "scripts/kconfig-lib.sh"
    ok = bash(f". {lib}; check_fragments 'p: ' config '' frag", tmp_path)
    assert ok.returncode == 0, ok.stderr
    bad = bash(f". {lib}; check_fragments 'p: ' config '' frag missing", tmp_path)
    assert bad.returncode == 1
    assert "p: missing: no such file" in bad.stderr


@pytest.mark.parametrize("series", ["missing", "a-directory"])
def test_load_series_fails_on_an_unreadable_series(tmp_path, series):
    (tmp_path / "a-directory").mkdir()
    proc = bash(f". {REPO}/scripts/series-lib.sh; load_series {series} && "
                "echo loaded ${#patches[@]}", tmp_path)
    assert proc.returncode == 1 and "loaded" not in proc.stdout
    assert f"series file {series} not found" in proc.stderr


def test_load_series_lists_the_patches(tmp_path):
    (tmp_path / "0001-a.patch").write_text("")
    (tmp_path / "series").write_text("# comment\n0001-a.patch  # trailing\n\n")
    proc = bash(f". {REPO}/scripts/series-lib.sh; load_series series && "
                "echo ${#patches[@]} ${patches[0]}", tmp_path)
    assert proc.stdout == "1 0001-a.patch\n", proc.stderr


def test_build_initramfs_stops_when_busybox_lists_no_applets(tmp_path):
    """A busybox whose --list fails used to give an initramfs without
    applets (the failure sat inside a for loop's word list)."""
    if shutil.which("cc") is None or shutil.which("file") is None:
        pytest.skip("cc/file not installed")
    (tmp_path / "bb.c").write_text("int main(void) { return 1; }\n")
    built = subprocess.run(["cc", "-static", "-o", str(tmp_path / "busybox"),
                            str(tmp_path / "bb.c")], capture_output=True, check=False)
    if built.returncode:
        pytest.skip("no static libc")
    gen = tmp_path / "gen_init_cpio"        # writes its file list as the "archive"
    gen.write_text('#!/bin/sh\ncat "$1"\n')
    gen.chmod(0o755)
    env = {**os.environ, "BUSYBOX": str(tmp_path / "busybox")}
    proc = subprocess.run([str(REPO / "scripts/build-initramfs.sh"), str(gen),
                           str(tmp_path / "out.cpio"), str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode != 0
    assert not (tmp_path / "out.cpio").exists()


def fragment_options(path: Path) -> set[str]:
    """The option lines of a kernel config fragment (as series-check's
    options_of reads them)."""
    return {line for line in path.read_text().splitlines()
            if line.startswith("CONFIG_") and "=" in line
            or line.startswith("# CONFIG_") and line.endswith(" is not set")}


def test_kept_matrix_rows_are_the_lab_kernels_they_name():
    """A matrix row with `# matrix-keep: NAME` is kept by series-check --keep
    as build/kernel-NAME and booted by the suites (PREBUILT=1): it must set
    exactly the options of that kernel's own fragment."""
    kept = {}
    for row in sorted((REPO / "kernel-config" / "matrix").glob("*.config")):
        for line in row.read_text().splitlines():
            if line.startswith("# matrix-keep:"):
                kept[row.name] = line.split(":", 1)[1].strip()
    assert kept == {"50-lkdtm-module.config": "module", "a0-i386.config": "i386",
                    "b0-arm64.config": "arm64"}
    for row, name in kept.items():
        frag = REPO / "kernel-config" / f"variant-{name}.config"
        if not frag.exists():
            frag = REPO / "kernel-config" / f"arch-{name}.config"
        assert fragment_options(REPO / "kernel-config" / "matrix" / row) == \
            fragment_options(frag), (row, frag.name)


@needs_make
def test_prebuilt_suites_build_no_kernel(tmp_path):
    for target in (["suite-module"], ["suite-arch", "ARCH=arm64"], ["suite-arch", "ARCH=i386"]):
        out = make_n(*target, "PREBUILT=1", f"BUILD={tmp_path}/b").stdout
        assert "PREBUILT: " in out, (target, out)
        assert "kbuild-progress" not in out and "kernel-config.sh" not in out, (target, out)
