"""Guests of other architectures and modules suites, end to end without
booting: the fake QEMU (fake_qemu/, also linked as qemu-system-i386 and
qemu-system-aarch64) replays captured consoles and records each command
line ($FAKE_QEMU_ARGV), as kunit_tool mocks the QEMU of its arch.

What is checked: each arch's QEMU binary, machine, CPU, console device,
kernel image and initramfs; KVM never asked for where the arch cannot have
it; the on_demand suites stay out of a run without --suite; a modules
suite's initramfs is the userland followed by its kernel's modules archive;
the missing pieces exit 2 naming the make target that builds them.
"""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from usercopy_lab.capture.qemu_boot import ARCHES, GuestSpec, Machine, arch_accel
from usercopy_lab.capture.snapshot import machine_dir_name
from usercopy_lab.run.suite import SuiteError, load_suites

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FAKE = HERE / "fake_qemu"
SERIES = HERE / "testdata" / "console-series" / "default"
TRIGGERS = ["USERCOPY_SLAB_SIZE_TO", "USERCOPY_VMALLOC"]

pytestmark = pytest.mark.skipif(not (FAKE / "qemu-system-aarch64").exists(),
                                reason="fake QEMU missing")


def suites_toml(lab: Path, body: str) -> list[str]:
    path = lab / "suites.toml"
    path.write_text(body)
    return ["--suites-file", str(path)]


def suite_block(name: str, kernel: str, extra: str = "") -> str:
    return f"""[{name}]
kernel = "{kernel}"
golden = "{REPO / 'expected-oops/lab'}"
triggers = "{REPO / 'lkdtm-tests/tests.txt'}"
only = {json.dumps(TRIGGERS)}
{extra}
"""


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """Placeholder kernels and userlands of every arch (the fake never
    reads them), consoles of the default suite to replay, PATH with the
    fakes first, and the fakes' command lines recorded in argv.jsonl."""
    for arch in ARCHES.values():
        kernel = "lab" if arch.name == "x86_64" else arch.name
        image = tmp_path / "build" / f"kernel-{kernel}" / arch.image
        image.parent.mkdir(parents=True, exist_ok=True)
        image.write_text(f"fake {arch.name} kernel\n")
    (tmp_path / "build" / "initramfs.cpio").write_bytes(b"x86_64 userland\n")
    (tmp_path / "build" / "initramfs-i386.cpio").write_bytes(b"i386 userland\n")
    (tmp_path / "build" / "initramfs-arm64.cpio").write_bytes(b"arm64 userland\n")
    consoles = tmp_path / "consoles"
    consoles.mkdir()
    for name in TRIGGERS:
        shutil.copy(SERIES / f"{name}.log", consoles / f"{name}.log")
    monkeypatch.setenv("PATH", f"{FAKE}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_QEMU_CONSOLES", str(consoles))
    monkeypatch.setenv("FAKE_QEMU_ARGV", str(tmp_path / "argv.jsonl"))
    return tmp_path


def run(lab: Path, *extra: str) -> tuple[int, dict | None]:
    from usercopy_lab.cli import main
    rc = main(["run", "--build-dir", str(lab / "build"),
               "--initramfs", str(lab / "build" / "initramfs.cpio"),
               "--results", str(lab / "results"), *extra])
    results = lab / "results" / "latest" / "results.json"
    return rc, json.loads(results.read_text()) if rc != 2 else None


def started(lab: Path) -> list[list[str]]:
    path = lab / "argv.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def opt(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


@pytest.mark.parametrize("arch,machine,console", [("arm64", "virt", "ttyAMA0"),
                                                  ("i386", "pc", "ttyS0")])
@pytest.mark.parametrize("boot", ["snapshot", "full"])
def test_an_arch_suite_boots_its_own_qemu_kernel_userland_and_console(lab, arch, machine,
                                                                      console, boot):
    toml = suites_toml(lab, suite_block(arch, arch, f'arch = "{arch}"\non_demand = true'))
    rc, res = run(lab, *toml, "--suite", arch, "--boot", boot, "--accel", "tcg", "-j", "1")
    assert rc == 0, [t["diffs"] for t in res["triggers"]]
    assert [t["name"] for t in res["triggers"]] == TRIGGERS
    assert {t["boot"] for t in res["triggers"]} == {boot}
    argvs = started(lab)
    assert argvs
    for argv in argvs:
        assert argv[0] == ARCHES[arch].qemu
        assert (opt(argv, "-machine"), opt(argv, "-cpu")) == (machine, "max")
        assert opt(argv, "-kernel") == str(lab / "build" / f"kernel-{arch}" / ARCHES[arch].image)
        assert opt(argv, "-initrd") == str(lab / "build" / f"initramfs-{arch}.cpio")
        assert opt(argv, "-append").split()[0] == f"console={console}"


def test_kvm_is_asked_for_only_where_the_arch_can_have_it(lab):
    toml = suites_toml(lab, suite_block("arm64", "arm64", 'arch = "arm64"')
                       + suite_block("i386", "i386", 'arch = "i386"'))
    # --accel kvm: the x86 guests get it on an x86-64 host, the arm64 ones TCG.
    rc, _ = run(lab, *toml, "--suite", "arm64", "--suite", "i386", "--accel", "kvm",
                "--boot", "full", "-j", "1")
    assert rc == 0
    accels = {(argv[0], opt(argv, "-accel")) for argv in started(lab)}
    assert ("qemu-system-aarch64", "tcg") in accels
    assert arch_accel("kvm", "arm64", host="x86_64") == "tcg"
    assert arch_accel("kvm", "i386", host="x86_64") == "kvm"
    assert arch_accel("kvm", "arm64", host="aarch64") == "kvm"
    assert arch_accel("tcg", "x86_64", host="x86_64") == "tcg"


def test_on_demand_suites_stay_out_of_a_run_without_suite(lab):
    toml = suites_toml(lab, suite_block("default", "lab")
                       + suite_block("arm64", "arm64", 'arch = "arm64"\non_demand = true'))
    rc, res = run(lab, *toml, "--accel", "tcg", "--boot", "full", "-j", "1")
    assert rc == 0
    assert {t["suite"] for t in res["triggers"]} == {"default"}
    assert {argv[0] for argv in started(lab)} == {"qemu-system-x86_64"}


def test_a_missing_arch_userland_names_its_make_target(lab, capsys):
    (lab / "build" / "initramfs-arm64.cpio").unlink()
    toml = suites_toml(lab, suite_block("arm64", "arm64", 'arch = "arm64"'))
    rc, _ = run(lab, *toml, "--suite", "arm64", "--accel", "tcg")
    assert rc == 2
    err = capsys.readouterr().err
    assert "initramfs-arm64.cpio missing (make initramfs-arm64)" in err
    assert len(err.strip().splitlines()) == 1
    assert not started(lab)


def test_a_missing_arch_qemu_names_make_arch_deps(lab, tmp_path, monkeypatch, capsys):
    only_x86 = tmp_path / "only-x86"
    only_x86.mkdir()
    for name in ("qemu-system-x86_64", "qemu-img"):
        (only_x86 / name).symlink_to(FAKE / name)
    monkeypatch.setenv("PATH", str(only_x86))
    toml = suites_toml(lab, suite_block("arm64", "arm64", 'arch = "arm64"'))
    rc, _ = run(lab, *toml, "--suite", "arm64", "--accel", "tcg")
    assert rc == 2
    assert capsys.readouterr().err.strip() == \
        "usercopy-lab: qemu-system-aarch64 not found (make arch-deps)"


def test_a_missing_arch_kernel_names_its_image(lab, capsys):
    image = lab / "build" / "kernel-arm64" / ARCHES["arm64"].image
    image.unlink()
    toml = suites_toml(lab, suite_block("arm64", "arm64", 'arch = "arm64"'))
    rc, _ = run(lab, *toml, "--suite", "arm64", "--accel", "tcg")
    assert rc == 2
    assert f"{image} missing (make kernel KERNEL=arm64)" in capsys.readouterr().err


@pytest.mark.parametrize("boot", ["snapshot", "full"])
def test_a_modules_suite_boots_the_userland_followed_by_its_kernels_modules(lab, boot):
    kdir = lab / "build" / "kernel-lab"
    (kdir / "modules.cpio").write_bytes(b"lkdtm.ko archive\n")
    toml = suites_toml(lab, suite_block("module", "lab", 'modules = "lkdtm"'))
    rc, res = run(lab, *toml, "--suite", "module", "--boot", boot, "--accel", "tcg", "-j", "1")
    assert rc == 0, [t["diffs"] for t in res["triggers"]]
    initrds = {opt(argv, "-initrd") for argv in started(lab)}
    assert len(initrds) == 1
    initrd = Path(initrds.pop())
    assert initrd.parent == lab / "results" / "initramfs"
    assert initrd.read_bytes() == b"x86_64 userland\nlkdtm.ko archive\n"
    # Another run with the same archives boots the same file; a rebuilt
    # kernel's modules get a new one.
    rc, _ = run(lab, *toml, "--suite", "module", "--boot", boot, "--accel", "tcg", "-j", "1")
    assert {opt(argv, "-initrd") for argv in started(lab)} == {str(initrd)}
    (kdir / "modules.cpio").write_bytes(b"rebuilt lkdtm.ko archive\n")
    rc, _ = run(lab, *toml, "--suite", "module", "--boot", boot, "--accel", "tcg", "-j", "1")
    assert len({opt(argv, "-initrd") for argv in started(lab)}) == 2
    assert sorted(p.name for p in initrd.parent.iterdir() if p.name.startswith(".")) == []


def test_a_modules_suite_without_its_modules_archive_names_the_target(lab, capsys):
    toml = suites_toml(lab, suite_block("module", "lab", 'modules = "lkdtm"'))
    rc, _ = run(lab, *toml, "--suite", "module", "--accel", "tcg")
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("kernel-lab/modules.cpio missing "
                        "(make modules-cpio KERNEL=lab MODULE_SET=lkdtm)")
    assert not started(lab)


def test_an_installed_modules_suite_boots_that_archive_and_names_its_target(lab, capsys):
    toml = suites_toml(lab, suite_block("module-seeds", "lab", 'modules = "installed"'))
    kdir = lab / "build" / "kernel-lab"
    (kdir / "modules.cpio").write_bytes(b"lkdtm.ko archive\n")
    rc, _ = run(lab, *toml, "--suite", "module-seeds", "--accel", "tcg")
    assert rc == 2                         # LKDTM's archive alone is not enough
    err = capsys.readouterr().err.strip()
    assert err.endswith("kernel-lab/modules-installed.cpio missing "
                        "(make modules-cpio KERNEL=lab MODULE_SET=installed)")
    assert not started(lab)
    (kdir / "modules-installed.cpio").write_bytes(b"every module and a modprobe\n")
    rc, res = run(lab, *toml, "--suite", "module-seeds", "--accel", "tcg", "-j", "1")
    assert rc == 0, [t["diffs"] for t in res["triggers"]]
    initrds = {Path(opt(argv, "-initrd")).read_bytes() for argv in started(lab)}
    assert initrds == {b"x86_64 userland\nevery module and a modprobe\n"}


@pytest.mark.parametrize("line,problem", [
    ('arch = "riscv64"', "arch: must be"),
    ('arch = 64', "arch: must be"),
    ('on_demand = "yes"', "on_demand: must be true or false"),
    ('modules = 1', 'modules: must be "lkdtm" or "installed"'),
    ('modules = true', 'modules: must be "lkdtm" or "installed"'),
])
def test_bad_arch_keys_stop_the_run_naming_the_line(tmp_path, line, problem):
    path = tmp_path / "suites.toml"
    path.write_text(suite_block("x", "lab", line))
    with pytest.raises(SuiteError, match=problem) as err:
        load_suites(path)
    assert f"{path}:6:" in str(err.value)    # the line of the key


def test_the_repo_arch_suites_name_their_kernel_image_and_userland():
    suites = load_suites(REPO / "suites.toml")
    build = Path("/b")
    for arch, image in (("i386", "kernel-i386/arch/x86/boot/bzImage"),
                        ("arm64", "kernel-arm64/arch/arm64/boot/Image")):
        suite = suites[arch]
        assert (suite.arch, suite.on_demand) == (arch, True)
        assert suite.kernel_image(build) == build / image
        assert suite.initramfs(build / "initramfs.cpio") == build / f"initramfs-{arch}.cpio"
    assert suites["default"].initramfs(build / "initramfs.cpio") == build / "initramfs.cpio"


def test_snapshots_of_two_arches_never_share_a_folder():
    x86 = Machine(Path("/b/kernel-k/arch/x86/boot/bzImage"), Path("/i.cpio"))
    i386 = Machine(x86.kernel, x86.initramfs, arch="i386")
    assert machine_dir_name(x86) != machine_dir_name(i386)
    assert machine_dir_name(i386).startswith("kernel-k-")
    spec = GuestSpec(x86.kernel, x86.initramfs, trigger="T", arch="arm64")
    assert spec.machine.arch == "arm64"
    assert spec.cmdline().startswith("console=ttyAMA0 ")
    assert spec.argv()[0] == "qemu-system-aarch64"


def foreign_elf(path: Path) -> None:
    """A static aarch64 executable as far as file(1) can tell (ELF header,
    e_machine 183, one PT_LOAD, no PT_INTERP): exec fails with ENOEXEC
    here, as another arch's busybox does (bash: status 126)."""
    header = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack(
        "<HHIQQQIHHHHHH", 2, 183, 1, 0x400000, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    load = struct.pack("<IIQQQQQQ", 1, 5, 0, 0x400000, 0x400000, 120, 120, 0x1000)
    path.write_bytes(header + load)
    path.chmod(0o755)


def fake_gen(tmp_path: Path) -> Path:
    gen = tmp_path / "gen_init_cpio"        # writes its file list (its last argument,
    gen.write_text('#!/bin/sh\nfor a; do :; done\ncat "$a"\n')     # after -t) as the "archive"
    gen.chmod(0o755)
    return gen


def test_build_initramfs_with_another_archs_busybox_links_only_sh(tmp_path):
    if shutil.which("file") is None:
        pytest.skip("file not installed")
    foreign_elf(tmp_path / "busybox")
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    (helpers / "check-x").write_text("helper\n")
    env = {**os.environ, "BUSYBOX": str(tmp_path / "busybox")}
    proc = subprocess.run([str(REPO / "scripts/build-initramfs.sh"), str(fake_gen(tmp_path)),
                           str(tmp_path / "out.cpio"), str(helpers)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "init links the other applets at boot" in proc.stdout
    listing = (tmp_path / "out.cpio").read_text().splitlines()
    assert [line for line in listing if line.startswith("slink /bin/")] == \
        ["slink /bin/sh busybox 0777 0 0"]
    # packed from a copy stamped with SOURCE_DATE_EPOCH (build-initramfs.sh)
    assert [line.split()[3:] for line in listing if line.startswith("file /bin/check-x ")] == \
        [["0755", "0", "0"]]
    # init makes the links itself when it finds no applet but sh.
    init = (REPO / "initramfs-src/init").read_text()
    assert "[ -e /bin/mount ] || /bin/busybox --install -s /bin" in init
    assert init.index("--install") < init.index("mount -t proc")


def test_modules_cpio_lists_the_modules_in_load_order(tmp_path):
    kdir = tmp_path / "kernel"
    for m in ("drivers/misc/lkdtm/lkdtm.ko", "lib/a.ko"):
        (kdir / m).parent.mkdir(parents=True, exist_ok=True)
        (kdir / m).write_text("module\n")
    out = tmp_path / "modules.cpio"
    proc = subprocess.run([str(REPO / "scripts/modules-cpio.sh"), str(fake_gen(tmp_path)),
                           str(kdir), str(out), "lib/a.ko", "drivers/misc/lkdtm/lkdtm.ko"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    listing = out.read_text().splitlines()
    assert listing[:2] == ["dir /lib 0755 0 0", "dir /lib/modules 0755 0 0"]
    assert f"file /lib/modules/lkdtm.ko {kdir / 'drivers/misc/lkdtm/lkdtm.ko'} 0644 0 0" \
        in listing
    assert "a.ko lkdtm.ko" in proc.stdout          # the load list, in the order given
    missing = subprocess.run([str(REPO / "scripts/modules-cpio.sh"), str(fake_gen(tmp_path)),
                              str(kdir), str(out), "nope.ko"],
                             capture_output=True, text=True, timeout=60, check=False)
    assert missing.returncode == 1
    assert "nope.ko missing" in missing.stderr


ARM64_CONSOLE = HERE / "testdata" / "console-arm64" / "USERCOPY_KMALLOC_DMA_TO.log"
CT_WARNING = "WARNING in ct_kernel_exit"


def arm64_dma_golden(follow_on: tuple[str, ...] = ()):
    """The default golden of USERCOPY_KMALLOC_DMA_TO with the frames this
    older arm64 kernel printed (testdata/console-arm64/README.md)."""
    from usercopy_lab.judge.golden import load
    golden = load(REPO / "expected-oops/lab/USERCOPY_KMALLOC_DMA_TO.txt")
    golden.reports[0].frames = ["__check_heap_object", "__check_object_size",
                                "do_usercopy_window", "do_usercopy_kmalloc_dma",
                                "direct_entry"]
    golden.follow_on = follow_on
    return golden


def arm64_verdict(golden, log: Path = ARM64_CONSOLE):
    from usercopy_lab.run.trigger_run import evaluate_log
    return evaluate_log("arm64", "USERCOPY_KMALLOC_DMA_TO", log, golden, "")


def test_a_follow_on_warning_fails_a_golden_without_follow_on():
    result = arm64_verdict(arm64_dma_golden())
    assert result.verdict == "FAIL"
    assert [d for d in result.diffs if d.startswith("report 2: unexpected "
                                                      f"{CT_WARNING}")], result.diffs


def test_a_follow_on_warning_after_the_expected_report_passes():
    result = arm64_verdict(arm64_dma_golden((CT_WARNING,)))
    assert (result.verdict, result.diffs) == ("PASS", [])


def test_follow_on_never_stands_in_for_the_expected_report(tmp_path):
    # The same console without the BUG's report block: the WARNING alone
    # is compared with the expected usercopy_abort report, and fails.
    lines = ARM64_CONSOLE.read_text().splitlines(keepends=True)
    start = next(i for i, l in enumerate(lines) if "kernel BUG at mm/usercopy.c" in l) - 1
    end = next(i for i, l in enumerate(lines) if "---[ end trace" in l) + 1
    log = tmp_path / ARM64_CONSOLE.name
    log.write_text("".join(lines[:start] + lines[end:]))
    result = arm64_verdict(arm64_dma_golden((CT_WARNING,)), log)
    assert result.verdict == "FAIL"
    assert any(d.startswith("report 1 ") for d in result.diffs), result.diffs


def test_another_report_after_the_expected_one_is_still_unexpected():
    result = arm64_verdict(arm64_dma_golden(("WARNING in some_other_function",)))
    assert result.verdict == "FAIL"


def test_the_suite_gives_follow_on_to_killed_goldens_with_reports_only(tmp_path):
    path = tmp_path / "suites.toml"
    path.write_text(suite_block("a", "arm64", f'follow_on = ["{CT_WARNING}"]'))
    goldens = load_suites(path)["a"].golden()
    assert goldens["USERCOPY_KMALLOC_DMA_TO"].follow_on == (CT_WARNING,)
    for golden in goldens.values():
        if golden.outcome != "killed" or not golden.reports:
            assert golden.follow_on == ()


def test_the_repo_arm64_suite_tolerates_the_ct_kernel_exit_warning_alone():
    assert load_suites(REPO / "suites.toml")["arm64"].follow_on == (CT_WARNING,)
    assert load_suites(REPO / "suites.toml")["i386"].follow_on == ()


@pytest.mark.parametrize("value", ['"WARNING in x"', "[]", "[1]", '["ct_kernel_exit"]'])
def test_bad_follow_on_stops_the_run_naming_the_line(tmp_path, value):
    path = tmp_path / "suites.toml"
    path.write_text(suite_block("x", "lab", f"follow_on = {value}"))
    with pytest.raises(SuiteError, match="follow_on: ") as err:
        load_suites(path)
    assert f"{path}:6:" in str(err.value)
