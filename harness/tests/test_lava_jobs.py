"""LAVA job definitions, lava-common's schema, and LAVA's log back to a console.

testdata/lava/ holds the log lava-run (lava-dispatcher 2023.01, Debian 12)
wrote for one job of this lab; its README says how it was made.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from usercopy_lab.lava_jobs import (OUTCOME_RESULTS, REPORT_PATTERN, Artifacts,
                                    console_from_lava_log, device_dictionary, job_context,
                                    job_definition, main, validate, write_jobs)
from usercopy_lab.suite import load_suites
from usercopy_lab.trigger_run import evaluate_log

REPO = Path(__file__).resolve().parents[2]
TESTDATA = Path(__file__).parent / "testdata"
SUITES = load_suites(REPO / "suites.toml")
ART = Artifacts("https://builds.example/42", "https://builds.example/42/initramfs.cpio")


def test_one_job_per_trigger_of_every_trigger_suite(tmp_path):
    paths = write_jobs(list(SUITES.values()), ART, tmp_path)
    # Not the other arches' suites nor the modules ones: the jobs boot an
    # amd64 qemu with the one shared initramfs.
    trigger_suites = [s for s in SUITES.values()
                      if not s.selftests and s.arch == "x86_64" and not s.modules]
    assert len(paths) == sum(1 for s in trigger_suites for t in s.triggers()
                             if not t.skip_reason)
    assert {p.parent.name for p in paths} == {s.name for s in trigger_suites}
    assert (tmp_path / "qemu-device.yaml").is_file()


def test_job_carries_the_guests_kernel_command_line_and_artifacts():
    job = job_definition(SUITES["fallback"], "USERCOPY_SLAB_WHITELIST_TO", ART)
    deploy = job["actions"][0]["deploy"]
    assert deploy["images"]["kernel"]["url"] == \
        "https://builds.example/42/kernel-default/arch/x86/boot/bzImage"
    arg = deploy["images"]["kernel"]["image_arg"]
    assert arg.startswith("-kernel {kernel} -append \"console=ttyS0 ")
    assert "lab.trigger=USERCOPY_SLAB_WHITELIST_TO slab_common.usercopy_fallback=1\"" in arg
    assert deploy["images"]["initrd"] == {"url": ART.initramfs, "image_arg": "-initrd {initrd}"}
    assert job["actions"][1]["boot"]["prompts"] == ["USERCOPY-LAB-READY"]
    assert job["device_type"] == "qemu" and job["context"]["arch"] == "amd64"
    slab = job_definition(SUITES["slab"], "USERCOPY_SLAB_SIZE_TO", ART)
    assert "/kernel-slab/" in slab["actions"][0]["deploy"]["images"]["kernel"]["url"]


def test_every_job_passes_lava_commons_schema_and_a_broken_one_does_not(tmp_path):
    pytest.importorskip("lava_common", reason="lava-common not installed (make lava)")
    for path in write_jobs(list(SUITES.values()), ART, tmp_path):
        validate(yaml.safe_load(path.read_text()))
    job = job_definition(SUITES["default"], "USERCOPY_KERNEL", ART)
    del job["visibility"]
    with pytest.raises(ValueError, match="visibility"):
        validate(job)
    job = job_definition(SUITES["default"], "USERCOPY_KERNEL", ART)
    job["actions"][2]["test"]["monitors"][0]["name"] = "has spaces"
    with pytest.raises(ValueError, match="monitors"):
        validate(job)


def test_write_and_validate_commands(tmp_path, capsys):
    pytest.importorskip("lava_common", reason="lava-common not installed (make lava)")
    assert main(["write", "--out", str(tmp_path), "--suite", "nosplit"]) == 0
    n = len(SUITES["nosplit"].triggers())
    assert f"{n} of {n} jobs valid" in capsys.readouterr().out
    bad = tmp_path / "nosplit" / "USERCOPY_KMALLOC_SPLIT_TO.yaml"
    bad.write_text(bad.read_text().replace("visibility: public", "visibility: everyone"))
    assert main(["validate", *map(str, (tmp_path / "nosplit").glob("*.yaml"))]) == 1
    assert "USERCOPY_KMALLOC_SPLIT_TO.yaml: invalid" in capsys.readouterr().err


def test_device_dictionary_follows_the_job_context():
    device = device_dictionary(job_context())
    qemu = device["actions"]["boot"]["methods"]["qemu"]["parameters"]
    assert qemu["command"] == "qemu-system-x86_64"
    assert "-enable-kvm" not in qemu["options"] and "-m 256" in qemu["options"]
    assert qemu["extra"] == ["-machine pc", "-cpu max", "-no-reboot"]
    assert "-enable-kvm" in device_dictionary({"memory": 256})["actions"]["boot"][
        "methods"]["qemu"]["parameters"]["options"]


# ------------------------------------------------------- monitor patterns

def _monitor_events(console: str, monitors: list[dict]) -> list[tuple[str, str]]:
    """What LAVA's monitor loop records, replayed with Python's re (pexpect
    compiles string patterns with re): per monitor, search start, then the
    earliest of end/pattern until end; a match consumes its text."""
    events, pos = [], 0
    for mon in monitors:
        start = re.compile(mon["start"]).search(console, pos)
        assert start, f"start {mon['start']!r} not found"
        pos = start.end()
        end_re, pat_re = re.compile(mon["end"]), re.compile(mon["pattern"])
        while True:
            e, p = end_re.search(console, pos), pat_re.search(console, pos)
            assert e, f"end {mon['end']!r} not found"
            if p and p.start() < e.start():
                g = p.groupdict()
                result = mon.get("fixupdict", {}).get(g.get("result"), g.get("result"))
                events.append((g["test_case_id"], result or f"t={g.get('measurement')}"))
                pos = p.end()
            else:
                pos = e.end()
                break
    return events


def test_monitors_record_reports_and_outcome_of_a_real_console():
    console = (TESTDATA / "console-series/default/USERCOPY_SLAB_SIZE_TO.log").read_text()
    job = job_definition(SUITES["default"], "USERCOPY_SLAB_SIZE_TO", ART)
    events = _monitor_events(console, job["actions"][2]["test"]["monitors"])
    assert [e[0] for e in events] == ["usercopy: Kernel memory exposure", "kernel BUG at",
                                      "outcome"]
    assert events[-1] == ("outcome", "pass")


def test_monitors_on_a_console_without_a_report():
    # Stock 6.1.192: the vmalloc guard-page gap (patches/0001), no report.
    console = (TESTDATA / "console/USERCOPY_VMALLOC.log").read_text()
    job = job_definition(SUITES["default"], "USERCOPY_VMALLOC", ART)
    assert _monitor_events(console, job["actions"][2]["test"]["monitors"]) == [
        ("outcome", OUTCOME_RESULTS["returned"])]


def test_report_pattern_names_lkdtm_fail_lines():
    line = "[    1.234567] lkdtm: FAIL: survived bad copy"
    m = re.search(REPORT_PATTERN, line)
    assert m and m.group("test_case_id") == "lkdtm: FAIL" and m.group("measurement") == "1.234567"


# ------------------------------------------------------- LAVA's log back

def test_lava_log_back_to_a_console_that_matches_its_golden_file(tmp_path):
    text = (TESTDATA / "lava" / "USERCOPY_SLAB_SIZE_TO.lava.yaml").read_text()
    console = console_from_lava_log(text)
    assert "USERCOPY-LAB-END trigger=USERCOPY_SLAB_SIZE_TO outcome=killed signal=11" in console
    assert '"lvl"' not in console and "Job finished correctly" not in console
    log = tmp_path / "USERCOPY_SLAB_SIZE_TO.log"
    log.write_text(console)
    golden = SUITES["default"].golden()["USERCOPY_SLAB_SIZE_TO"]
    result = evaluate_log("default", "USERCOPY_SLAB_SIZE_TO", log, golden, "")
    assert result.verdict == "PASS", result.diffs


def test_server_style_log_lines_are_read_too():
    text = ('- {"dt": "2026-12-03T19:15:55", "lvl": "target", "msg": "USERCOPY-LAB-READY"}\n'
            '- {"dt": "2026-12-03T19:15:55", "lvl": "info", "msg": "ok"}\n')
    assert console_from_lava_log(text) == "USERCOPY-LAB-READY\n"


def test_a_log_that_is_not_lava_is_an_error():
    with pytest.raises(ValueError, match="line 1"):
        console_from_lava_log('{"lvl": "target", "msg": [unclosed\n')
