"""`usercopy-lab run` exit status: 0 all pass, 1 a trigger FAILed, 2 the run
could not be done (one line on stderr, no traceback, no guest booted).

QEMU is replaced by a fake qemu-system-x86_64 on PATH that replays the
console captured from the real lab kernel for the trigger on its command
line (testdata/console-series/default/) and records every start, the way
kunit_tool's tests stand in for QEMU.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from usercopy_lab.cli import main

REPO = Path(__file__).resolve().parents[2]
CONSOLES = Path(__file__).parent / "testdata" / "console-series" / "default"

FAKE_QEMU = f"""#!{sys.executable}
# Fake qemu-system-x86_64: prints the console captured for lab.trigger=NAME
# (FAKE_QEMU_REPLAY=NAME replays another trigger's console instead) and
# appends its command line to $FAKE_QEMU_STARTS.
import os, sys
append = sys.argv[sys.argv.index("-append") + 1]
name = [a.split("=", 1)[1] for a in append.split() if a.startswith("lab.trigger=")][0]
with open(os.environ["FAKE_QEMU_STARTS"], "a") as starts:
    starts.write(append + "\\n")
name = os.environ.get("FAKE_QEMU_REPLAY") or name
sys.stdout.buffer.write(open(os.path.join({str(CONSOLES)!r}, name + ".log"), "rb").read())
"""


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A build folder with a (never booted) kernel and initramfs, and the
    fake QEMU first on PATH; returns the argument list for `run`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    qemu = bin_dir / "qemu-system-x86_64"
    qemu.write_text(FAKE_QEMU)
    qemu.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_QEMU_STARTS", str(tmp_path / "starts"))
    image = tmp_path / "build/kernel-seeds/arch/x86/boot/bzImage"
    image.parent.mkdir(parents=True)
    image.write_text("not a kernel")
    (tmp_path / "initramfs.cpio").write_text("not an initramfs")
    return ["run", "--accel", "tcg", "--suite", "default",
            "--build-dir", str(tmp_path / "build"),
            "--initramfs", str(tmp_path / "initramfs.cpio"),
            "--results", str(tmp_path / "results")]


def starts(tmp_path: Path) -> list[str]:
    path = tmp_path / "starts"
    return path.read_text().splitlines() if path.exists() else []


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


def test_all_pass_is_0(lab, tmp_path):
    assert main(lab + ["--trigger", "USERCOPY_SLAB_SIZE_TO"]) == 0
    data = json.loads((tmp_path / "results/latest/results.json").read_text())
    assert [t["verdict"] for t in data["triggers"]] == ["PASS"]


def test_a_failed_trigger_is_1(lab, tmp_path):
    # The real console against a golden file whose size is 8 bytes off.
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    golden = (REPO / "expected-oops/lab/USERCOPY_SLAB_SIZE_TO.txt").read_text()
    (overlay / "USERCOPY_SLAB_SIZE_TO.txt").write_text(golden.replace("size: 1024", "size: 1016"))
    assert main(lab + ["--trigger", "USERCOPY_SLAB_SIZE_TO",
                       "--golden-overlay", f"default={overlay}"]) == 1
    data = json.loads((tmp_path / "results/latest/results.json").read_text())
    assert [t["verdict"] for t in data["triggers"]] == ["FAIL"]
    assert data["triggers"][0]["diffs"] == ["report 1 size: expected '1016', saw 1024"]


def test_a_console_of_another_trigger_is_an_error_naming_both(lab, tmp_path, monkeypatch):
    """QEMU answered the request for SIZE_TO with SIZE_FROM's console (a
    crossed reply): ERROR wrong-trigger, exit 1, never that console's PASS."""
    monkeypatch.setenv("FAKE_QEMU_REPLAY", "USERCOPY_SLAB_SIZE_FROM")
    assert main(lab + ["--trigger", "USERCOPY_SLAB_SIZE_TO"]) == 1
    [t] = json.loads((tmp_path / "results/latest/results.json").read_text())["triggers"]
    assert (t["verdict"], t["fault"]) == ("ERROR", "wrong-trigger")
    assert t["summary"] == ("wrong-trigger: asked for USERCOPY_SLAB_SIZE_TO, the console's "
                            "START/END markers name USERCOPY_SLAB_SIZE_FROM")


@pytest.mark.parametrize("name", ["X rdinit=/bin/sh", "../x", "X*", "usercopy_kernel"])
def test_hostile_trigger_name_is_2_before_any_boot(lab, tmp_path, capsys, name):
    with pytest.raises(SystemExit) as exc:
        main(lab + ["--trigger", name])
    assert exc.value.code == 2
    err = one_line_error(capsys)
    assert "must match [A-Z0-9_]+" in err and "--help" in err
    assert starts(tmp_path) == [] and not (tmp_path / "results").exists()


def test_unknown_option_is_one_line(lab, capsys):
    with pytest.raises(SystemExit) as exc:
        main(lab + ["--trigger-timout", "3"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --trigger-timout" in one_line_error(capsys)


def test_unwritable_results_is_2_before_any_boot(lab, tmp_path, capsys):
    results = tmp_path / "results-is-a-file"
    results.write_text("")
    args = lab[:-1] + [str(results), "--trigger", "USERCOPY_SLAB_SIZE_TO"]
    assert main(args) == 2
    assert one_line_error(capsys).startswith(f"usercopy-lab: {results}: cannot write results")
    assert starts(tmp_path) == []


def test_bad_golden_of_another_suite_is_2_before_the_first_boot(lab, tmp_path, capsys):
    bad = tmp_path / "bad-golden"
    bad.mkdir()
    (bad / "USERCOPY_KERNEL.txt").write_bytes(b"trigger: USERCOPY_KERNEL\n\xff\n")
    suites = tmp_path / "suites.toml"
    suites.write_text(
        f'[default]\nkernel = "default"\ngolden = "{REPO}/expected-oops/lab"\n'
        f'triggers = "{REPO}/lkdtm-tests/tests.txt"\n'
        f'[second]\nkernel = "default"\ngolden = "{bad}"\n'
        f'triggers = "{REPO}/lkdtm-tests/tests.txt"\n')
    args = lab + ["--suites-file", str(suites), "--trigger", "USERCOPY_SLAB_SIZE_TO"]
    assert main(args) == 2
    assert one_line_error(capsys) == \
        f"usercopy-lab: {bad}/USERCOPY_KERNEL.txt:2: not UTF-8 (byte 0xff)"
    assert starts(tmp_path) == []


def test_missing_triggers_file_is_2(lab, tmp_path, capsys):
    suites = tmp_path / "suites.toml"
    suites.write_text(f'[default]\nkernel = "default"\ngolden = "{REPO}/expected-oops/lab"\n'
                      'triggers = "no-such-tests.txt"\n')
    assert main(lab + ["--suites-file", str(suites)]) == 2
    assert one_line_error(capsys) == \
        f"usercopy-lab: {tmp_path}/no-such-tests.txt: No such file or directory"
    assert starts(tmp_path) == []


def test_missing_kernel_and_missing_qemu_are_2(lab, tmp_path, capsys, monkeypatch):
    (tmp_path / "build/kernel-seeds/arch/x86/boot/bzImage").unlink()
    assert main(lab) == 2
    assert "bzImage missing (make kernel KERNEL=seeds)" in one_line_error(capsys)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert main(lab) == 2
    assert "qemu-system-x86_64 not found" in one_line_error(capsys)
    assert starts(tmp_path) == []


def test_match_of_a_directory_is_2(tmp_path, capsys):
    assert main(["match", "--suite", "default", str(tmp_path)]) == 2
    assert one_line_error(capsys) == f"usercopy-lab: not a file: {tmp_path}"


SMP = Path(__file__).parent / "testdata" / "console-smp"
PERCPU = ["USERCOPY_VMALLOC_PERCPU_TO", "USERCOPY_VMALLOC_PERCPU_FROM"]


@pytest.mark.parametrize("consoles,overlay,want", [
    # make series-vmalloc-proof: the SMP kernel copies a per-cpu chunk's last
    # bytes without a report, as expected-oops/smp says ...
    (SMP, "smp", "PASS"),
    # ... the mutant with the first version's bound BUGs there, as its
    # overlay says; tests.txt's "OK: ..." is the stock kernel's expectation
    # and must not fail a run judged by an overlay golden ...
    (SMP / "mutant-vmalloc-old-bound", "mutant-vmalloc-old-bound", "PASS"),
    # ... and each console FAILs against the other's expectation.
    (SMP / "mutant-vmalloc-old-bound", "smp", "FAIL"),
    (SMP, "mutant-vmalloc-old-bound", "FAIL"),
])
def test_an_overlay_golden_is_the_whole_expectation(lab, tmp_path, monkeypatch,
                                                    consoles, overlay, want):
    fake = tmp_path / "bin/qemu-system-x86_64"
    fake.write_text(FAKE_QEMU.replace(repr(str(CONSOLES)), repr(str(consoles))))
    argv = lab + ["--golden-overlay", f"default={REPO / 'expected-oops' / overlay}"]
    for name in PERCPU:
        argv += ["--trigger", name]
    assert main(argv) == (0 if want == "PASS" else 1)
    data = json.loads((tmp_path / "results/latest/results.json").read_text())
    assert [t["verdict"] for t in data["triggers"]] == [want, want]


def test_without_an_overlay_the_smp_kernel_fails_the_up_golden(lab, tmp_path):
    """The default golden of the per-cpu triggers is the uniprocessor lab
    kernel's XFAIL: the SMP console does not satisfy it."""
    fake = tmp_path / "bin/qemu-system-x86_64"
    fake.write_text(FAKE_QEMU.replace(repr(str(CONSOLES)), repr(str(SMP))))
    assert main(lab + ["--trigger", PERCPU[0]]) == 1
