"""LAVA job definitions, lava-common's schema, and LAVA's log back to a console.

testdata/lava/ holds logs LAVA (lava-dispatcher 2023.01, Debian 12) wrote
for jobs of this lab; its README says how they were made.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from usercopy_lab.cli import main as cli_main
from usercopy_lab.lava.jobs import (LOADER, Artifacts, console_from_lava_log,
                                           device_dictionary, job_context, job_definition,
                                           suite_jobs, validate, write_jobs)
from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import evaluate_log

REPO = Path(__file__).resolve().parents[2]
TESTDATA = Path(__file__).parent / "testdata"
SUITES = load_suites(REPO / "suites.toml")
ART = Artifacts("https://builds.example/42", "https://builds.example/42/initramfs.cpio")


def job(suite: str, name: str, artifacts: Artifacts = ART) -> dict:
    return job_definition(next(j for j in suite_jobs(SUITES[suite]) if j.name == name),
                          artifacts)


def test_one_job_per_trigger_and_check_of_every_trigger_suite(tmp_path):
    paths = write_jobs(list(SUITES.values()), ART, tmp_path)
    # Not the other arches' suites nor the modules ones: the jobs boot an
    # amd64 qemu with the one shared initramfs.
    trigger_suites = [s for s in SUITES.values()
                      if not s.selftests and s.arch == "x86_64" and not s.modules]
    # every check but the whitelist audit, which needs the kernel's DWARF
    assert len(paths) == sum(1 for s in trigger_suites for t in s.triggers()
                             if not t.skip_reason) + sum(
        1 for s in trigger_suites for c in s.checks if c != "audit-slab-caches")
    assert {p.parent.name for p in paths} == {s.name for s in trigger_suites}
    assert (tmp_path / "seeds" / "rds-tcp-cookie.yaml").is_file()
    assert not (tmp_path / "seeds" / "audit-slab-caches.yaml").exists()
    assert (tmp_path / "qemu-device.yaml").is_file()


def test_job_carries_the_guests_kernel_command_line_and_artifacts():
    job = globals()["job"]("fallback", "USERCOPY_SLAB_WHITELIST_TO")
    deploy = job["actions"][0]["deploy"]
    assert deploy["images"]["kernel"]["url"] == \
        "https://builds.example/42/kernel-seeds/arch/x86/boot/bzImage"
    arg = deploy["images"]["kernel"]["image_arg"]
    assert arg.startswith("-kernel {kernel} -append \"console=ttyS0 ")
    assert "lab.trigger=USERCOPY_SLAB_WHITELIST_TO slab_common.usercopy_fallback=1\"" in arg
    assert deploy["images"]["initrd"] == {"url": ART.initramfs, "image_arg": "-initrd {initrd}"}
    assert job["actions"][1]["boot"]["prompts"] == ["USERCOPY-LAB-READY"]
    assert job["device_type"] == "qemu" and job["context"]["arch"] == "amd64"
    slab = globals()["job"]("slab", "USERCOPY_SLAB_SIZE_TO")
    assert "/kernel-slab/" in slab["actions"][0]["deploy"]["images"]["kernel"]["url"]
    probe = globals()["job"]("seeds", "rds-tcp-cookie")
    arg = probe["actions"][0]["deploy"]["images"]["kernel"]["image_arg"]
    assert "lab.helper=rds-tcp-cookie" in arg and "lab.trigger" not in arg
    assert probe["metadata"]["usercopy-lab.check"] == "rds-tcp-cookie"


def test_another_kernel_is_judged_by_the_suites_golden_files():
    mutant = Artifacts(ART.kernels, ART.initramfs, "https://builds.example/42/mutant/bzImage")
    j = job("default", "USERCOPY_KMALLOC_SPLIT_TO", mutant)
    assert j["actions"][0]["deploy"]["images"]["kernel"]["url"] == mutant.kernel_override
    assert j["metadata"]["usercopy-lab.kernel-image"] == mutant.kernel_override
    assert j["actions"][2] == job("default", "USERCOPY_KMALLOC_SPLIT_TO")["actions"][2]


def test_the_test_action_is_the_golden_files_steps():
    test = job("default", "USERCOPY_SLAB_SIZE_TO")["actions"][2]["test"]
    [script] = test["interactive"]
    steps = script["script"]
    assert [s["name"] for s in steps][:5] == ["start", "direct", "lkdtm-before-1",
                                             "lkdtm-before-2", "report-1"]
    assert all(s["command"] is None and s["wait_for_prompt"] is False for s in steps)
    assert steps[0]["successes"] == [{"message": "USERCOPY-LAB-START trigger=USERCOPY_SLAB_SIZE_TO\\r*\\n"}]
    assert any(f.get("exception") == "TestError" for f in steps[0]["failures"])


def test_every_job_passes_lava_commons_schema_and_a_broken_one_does_not(tmp_path):
    pytest.importorskip("lava_common", reason="lava-common not installed (make lava)")
    for path in write_jobs(list(SUITES.values()), ART, tmp_path):
        validate(yaml.load(path.read_text(), Loader=LOADER))
    bad = job("default", "USERCOPY_KERNEL")
    del bad["visibility"]
    with pytest.raises(ValueError, match="visibility"):
        validate(bad)
    bad = job("default", "USERCOPY_KERNEL")
    bad["actions"][2]["test"]["interactive"][0]["script"][1]["name"] = "has spaces"
    with pytest.raises(ValueError, match="interactive"):
        validate(bad)


def test_write_and_validate_commands(tmp_path, capsys):
    pytest.importorskip("lava_common", reason="lava-common not installed (make lava)")
    assert cli_main(["lava", "write", "--out", str(tmp_path), "--suite", "nosplit"]) == 0
    n = len(suite_jobs(SUITES["nosplit"]))
    assert f"{n} of {n} jobs valid" in capsys.readouterr().out
    bad = tmp_path / "nosplit" / "USERCOPY_KMALLOC_SPLIT_TO.yaml"
    bad.write_text(bad.read_text().replace("visibility: public", "visibility: everyone"))
    assert cli_main(["lava", "validate", *map(str, (tmp_path / "nosplit").glob("*.yaml"))]) == 1
    assert "USERCOPY_KMALLOC_SPLIT_TO.yaml: invalid" in capsys.readouterr().err


def test_device_dictionary_follows_the_job_context():
    device = device_dictionary(job_context())
    qemu = device["actions"]["boot"]["methods"]["qemu"]["parameters"]
    assert qemu["command"] == "qemu-system-x86_64"
    assert "-enable-kvm" not in qemu["options"] and "-m 256" in qemu["options"]
    assert qemu["extra"] == ["-machine pc", "-cpu max", "-no-reboot"]
    assert "-enable-kvm" in device_dictionary({"memory": 256})["actions"]["boot"][
        "methods"]["qemu"]["parameters"]["options"]


# ------------------------------------------------------- LAVA's log back

def test_lava_log_back_to_a_console_that_matches_its_golden_file(tmp_path):
    # a server's log ("- {...}" lines), fetched through the REST API
    server = (TESTDATA / "lava" / "lab--check-legit-copies.lava.yaml").read_text()
    assert "USERCOPY-LAB-END trigger=check-legit-copies outcome=returned status=0" \
        in console_from_lava_log(server)
    assert '"lvl"' not in console_from_lava_log(server)
    # lava-run's own log ("{...}" lines on its stderr)
    text = (TESTDATA / "lava" / "lab--USERCOPY_SLAB_SIZE_TO.lava.yaml").read_text()
    console = console_from_lava_log(text)
    assert "USERCOPY-LAB-END trigger=USERCOPY_SLAB_SIZE_TO outcome=killed signal=11" in console
    assert '"lvl"' not in console and "Job finished correctly" not in console
    assert "kernel BUG at mm/usercopy.c:132!" in console
    log = tmp_path / "USERCOPY_SLAB_SIZE_TO.log"
    log.write_text(console)
    golden = SUITES["lab"].golden()["USERCOPY_SLAB_SIZE_TO"]
    result = evaluate_log("lab", "USERCOPY_SLAB_SIZE_TO", log, golden, "")
    assert result.verdict == "PASS", result.diffs


def test_server_style_log_lines_are_read_too():
    text = ('- {"dt": "2026-12-03T19:15:55", "lvl": "target", "msg": "USERCOPY-LAB-READY"}\n'
            '- {"dt": "2026-12-03T19:15:55", "lvl": "info", "msg": "ok"}\n')
    assert console_from_lava_log(text) == "USERCOPY-LAB-READY\n"


def test_a_log_that_is_not_lava_is_an_error():
    with pytest.raises(ValueError, match="line 1"):
        console_from_lava_log('{"lvl": "target", "msg": [unclosed\n')
