"""The trigger suites as LAVA job definitions, and LAVA's logs back as consoles.

LAVA (Linaro Automated Validation Architecture, Debian: lava-server,
lava-dispatcher, lava-common) is the scheduler kernel test farms and
KernelCI run on.  write_jobs() turns every trigger of a suite into one job
for LAVA's `qemu` device type, the same guest our own runner boots:

  deploy  to: tmpfs, the lab kernel and initramfs as artifacts (URLs) with
          QEMU's -kernel/-append/-initrd as image_arg: the command line is
          qemu_boot.GuestSpec.cmdline(), lab.trigger=NAME and the suite's
          extra arguments included;
  boot    method: qemu, media: tmpfs; the init marker USERCOPY-LAB-READY
          is the boot prompt (no login, no shell: LAVA only watches);
  test    two monitors (no shell in the guest): between the START and END
          markers every oops/BUG/WARNING/LKDTM FAIL line is a test case
          (pattern REPORT_PATTERN, the kernel timestamp as measurement), and
          the END marker's outcome is one (fixupdict OUTCOME_RESULTS).

LAVA sees what happened, not whether it is right: the verdict is still
the golden file's.  console_from_lava_log() turns the log lava-run wrote
back into a serial console, which `usercopy-lab match` reads like one of
its own (scripts/lava/run-suite.sh does that for a whole suite).

  python3 -m usercopy_lab.lava_jobs write --out DIR [--suite S] [--artifacts URL]
  python3 -m usercopy_lab.lava_jobs validate JOB.yaml...   (lava-common's schema)
  python3 -m usercopy_lab.lava_jobs console LAVA-LOG.yaml > TRIGGER.log
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import yaml

from .qemu_boot import NATIVE, GuestSpec
from .result_formats import read_junit_verdicts
from .suite import Suite, SuiteError, load_suites, pick

REPO = Path(__file__).resolve().parents[2]

READY = "USERCOPY-LAB-READY"
# Kernel lines worth a LAVA test case: the report headers the oops parser
# starts a report on, and LKDTM's verdict vocabulary.
REPORT_PATTERN = (
    r"\[\s*(?P<measurement>\d+\.\d+)\] (?P<test_case_id>"
    r"usercopy: Kernel memory (?:exposure|overwrite)|Bad or missing usercopy whitelist"
    r"|kernel BUG at|WARNING: CPU|BUG: \w+|Oops|general protection fault"
    r"|Kernel panic|lkdtm: FAIL|lkdtm: XFAIL)")
# The END marker's outcome: did the trigger run to its end (pass), was it
# unknown to LKDTM (skip), or was there no LKDTM at all (fail)?
OUTCOME_RESULTS: Mapping[str, str] = MappingProxyType({
    "killed": "pass", "returned": "pass", "unknown-trigger": "skip", "no-lkdtm": "fail"})
# What the kernel prints once init rebooted it (panic=-1 and reboot -f alike).
REBOOTED = "reboot: Restarting system"


@dataclass(frozen=True)
class Artifacts:
    """Where LAVA downloads the kernel images and the initramfs from."""

    kernels: str         # "file:///abs/build" or "https://host/builds/N"
    initramfs: str       # URL of initramfs.cpio

    def kernel(self, variant: str) -> str:
        return f"{self.kernels}/kernel-{variant}/arch/x86/boot/bzImage"


def job_context() -> dict[str, Any]:
    """qemu.jinja2 context of every job: no -enable-kvm/-cpu host (TCG; drop
    no_kvm where KVM works), the lab guest's machine, CPU and memory, and
    -no-reboot, which ends the machine when init reboots it."""
    return {"arch": "amd64", "no_kvm": True, "memory": GuestSpec(Path(), Path()).memory_mb,
            "extra_options": ["-machine pc", "-cpu max", "-no-reboot"]}


@dataclass(frozen=True)
class JobTimeouts:
    job_minutes: int = 5
    action_minutes: int = 2


def job_definition(suite: Suite, trigger: str, artifacts: Artifacts,
                   timeouts: JobTimeouts = JobTimeouts()) -> dict[str, Any]:
    spec = GuestSpec(kernel=Path("kernel"), initramfs=Path("initrd"), trigger=trigger,
                     extra_cmdline=suite.cmdline)
    return {
        "device_type": "qemu",
        "job_name": f"usercopy-lab {suite.name} {trigger}",
        "timeouts": {"job": {"minutes": timeouts.job_minutes},
                     "action": {"minutes": timeouts.action_minutes},
                     "connection": {"minutes": timeouts.action_minutes}},
        "priority": "medium",
        "visibility": "public",
        "metadata": {"usercopy-lab.suite": suite.name, "usercopy-lab.trigger": trigger,
                     "usercopy-lab.kernel": suite.kernel},
        "context": job_context(),
        "actions": [
            {"deploy": {
                "to": "tmpfs",
                "timeout": {"minutes": timeouts.action_minutes},
                "images": {
                    "kernel": {"url": artifacts.kernel(suite.kernel),
                               "image_arg": f"-kernel {{kernel}} -append \"{spec.cmdline()}\""},
                    "initrd": {"url": artifacts.initramfs,
                               "image_arg": "-initrd {initrd}"},
                }}},
            {"boot": {
                "method": "qemu",
                "media": "tmpfs",
                "timeout": {"minutes": timeouts.action_minutes},
                "prompts": [READY],
            }},
            {"test": {
                "timeout": {"minutes": timeouts.action_minutes},
                "monitors": [
                    # LAVA's patterns are pexpect regular expressions and a
                    # match consumes its text: the first monitor's end only
                    # looks ahead at the END marker, which the second one's
                    # start then consumes.
                    {"name": "usercopy-lab-reports",
                     "start": f"USERCOPY-LAB-START trigger={re.escape(trigger)}",
                     "end": f"(?=USERCOPY-LAB-END trigger={re.escape(trigger)} )",
                     "pattern": REPORT_PATTERN},
                    {"name": "usercopy-lab-outcome",
                     "start": f"USERCOPY-LAB-END trigger={re.escape(trigger)}",
                     "end": REBOOTED,
                     "pattern": r"(?P<test_case_id>outcome)=(?P<result>[\w-]+)",
                     "fixupdict": dict(OUTCOME_RESULTS)},
                ]}},
        ],
    }


def device_dictionary(context: Mapping[str, Any]) -> dict[str, Any]:
    """What lava-server's qemu.jinja2 device-type template renders for an
    amd64 `qemu` device and a job with this context (no_kvm, memory,
    extra_options) -- lava-run on a worker without a server needs it
    rendered.  On a farm the server renders it from the device dictionary
    `{% extends 'qemu.jinja2' %}` and the job's context instead."""
    options = [] if context.get("no_kvm") else ["-cpu host", "-enable-kvm"]
    options += ["-nographic",
                "-net nic,model=virtio,macaddr=52:54:00:12:34:58 -net user",
                f"-m {context.get('memory', 512)}", "-monitor none"]
    return {
        "device_type": "qemu",
        "available_architectures": ["amd64", "x86_64"],
        "constants": {
            "posix": {"lava_test_sh_cmd": "/bin/sh", "lava_test_results_dir": "/lava-%s",
                      "lava_test_shell_file": "~/.bashrc"},
            "shutdown-message": "The system is going down for reboot NOW",
            "kernel-start-message": "Linux version [0-9]",
            "default-shell-prompt": "lava-test: # ",
            "spawn_maxread": "4092",
            # one try: a guest that fails to boot is a result, not retried
            "failure_retry": 1,
            "boot_retry": 1,
        },
        "parameters": {"pass": None},
        "actions": {
            "deploy": {"connections": {"serial": None, "lxc": None},
                       "methods": {"image": {"parameters": {"guest": {
                           "size": 512, "interface": "ide", "driveid": "lavatest"}}}}},
            "boot": {"connections": {"serial": None},
                     "methods": {"qemu": {"parameters": {
                         "command": "qemu-system-x86_64",
                         "boot_options": {"root": "/dev/sda1", "console": "ttyS0,115200",
                                          "boot_order": "c"},
                         "options": options,
                         "extra": list(context.get("extra_options", [])),
                     }}}},
        },
        "timeouts": {"actions": {"boot-qemu-image": {"minutes": 2},
                                 "boot-image-retry": {"minutes": 2},
                                 "auto-login-action": {"minutes": 2}},
                     "connections": {"auto-login-action": {"minutes": 2}}},
    }


def write_jobs(suites: list[Suite], artifacts: Artifacts, out: Path) -> list[Path]:
    """One job per trigger: OUT/<suite>/<TRIGGER>.yaml."""
    written = []
    for suite in suites:
        if suite.selftests:
            continue    # run.sh suites need the runner's own verdicts, not LAVA's
        if suite.arch != NATIVE or suite.modules:
            continue    # the jobs boot an amd64 qemu with the one shared initramfs
        for t in suite.triggers():
            if t.skip_reason:
                continue
            path = out / suite.name / f"{t.name}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {suite.name}/{t.name}: written by `make lava` "
                            f"(harness/usercopy_lab/lava_jobs.py)\n"
                            + yaml.safe_dump(job_definition(suite, t.name, artifacts),
                                             sort_keys=False, width=1000))
            written.append(path)
    if written:
        device = device_dictionary(job_context())
        (out / "qemu-device.yaml").write_text(
            "# The rendered qemu device dictionary lava-run reads on this machine\n"
            "# (harness/usercopy_lab/lava_jobs.py device_dictionary()).\n"
            + yaml.safe_dump(device, sort_keys=False, width=1000))
    return written


class LavaUnavailable(RuntimeError):
    pass


def validate(job: Mapping[str, Any]) -> None:
    """lava-common's own schema check (strict, as lava-server submits)."""
    try:
        from lava_common.schemas import validate as lava_validate
        from voluptuous import Invalid
    except ImportError as exc:
        raise LavaUnavailable(f"lava-common is not installed ({exc}): "
                              "apt-get install lava-common") from None
    try:
        lava_validate(dict(job), strict=True)
    except Invalid as exc:
        raise ValueError(f"{exc.msg} at {'/'.join(str(p) for p in exc.path)}") from None


def console_from_lava_log(text: str) -> str:
    """The serial console inside a LAVA job log: every "target" message,
    one per line, in order (LAVA logs one JSON/YAML mapping per line)."""
    out = []
    for num, line in enumerate(text.splitlines(), 1):
        # lava-run writes "{...}" lines to stderr, the server "- {...}".
        line = line.removeprefix("- ")
        if not line.startswith("{"):
            continue
        try:
            entry = yaml.safe_load(line)
        except yaml.YAMLError as exc:
            raise ValueError(f"line {num}: not a LAVA log entry ({exc})") from None
        if isinstance(entry, dict) and entry.get("lvl") == "target":
            msg = entry.get("msg")
            out.append(msg if isinstance(msg, str) else str(msg))
    return "".join(m + "\n" for m in out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lava_jobs", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="write one job per trigger and validate each")
    w.add_argument("--out", type=Path, required=True)
    w.add_argument("--suite", action="append", help="suite (repeatable; default: all)")
    w.add_argument("--suites-file", type=Path, default=REPO / "suites.toml")
    w.add_argument("--kernels", default=f"file://{(REPO / 'build').resolve()}",
                   help="URL of the build folder holding kernel-NAME/arch/x86/boot/bzImage")
    w.add_argument("--initramfs", default=f"file://{(REPO / 'build/initramfs.cpio').resolve()}",
                   help="URL of the initramfs")
    w.add_argument("--no-validate", action="store_true")
    v = sub.add_parser("validate", help="validate job files with lava-common's schema")
    v.add_argument("jobs", type=Path, nargs="+")
    c = sub.add_parser("console", help="the serial console of a lava-run log")
    c.add_argument("log", type=Path)
    m = sub.add_parser("compare", help="our runner's verdicts against `match` on LAVA's logs")
    m.add_argument("ours", type=Path, help="results.json of our runner")
    m.add_argument("theirs", type=Path, help="junit.xml of `usercopy-lab match` on LAVA's logs")
    m.add_argument("--suite", required=True)
    m.add_argument("--suites-file", type=Path, default=REPO / "suites.toml")
    args = parser.parse_args(argv)
    try:
        if args.command == "write":
            suites = load_suites(args.suites_file)
            chosen = pick(suites, args.suite or list(suites))
            paths = write_jobs(chosen, Artifacts(args.kernels.rstrip("/"), args.initramfs),
                               args.out)
            print(f"lava: wrote {len(paths)} job definitions under {args.out}")
            return 0 if args.no_validate else _validate_files(paths)
        if args.command == "validate":
            return _validate_files(args.jobs)
        if args.command == "compare":
            [suite] = pick(load_suites(args.suites_file), [args.suite])
            return _compare(args.ours, args.theirs, suite)
        sys.stdout.write(console_from_lava_log(args.log.read_text(errors="replace")))
        return 0
    except (SuiteError, OSError, ValueError, KeyError, ET.ParseError) as exc:
        print(f"lava: {exc}", file=sys.stderr)
        return 2
    except LavaUnavailable as exc:
        print(f"lava: {exc}", file=sys.stderr)
        return 2


def _compare(ours_json: Path, theirs_junit: Path, suite: Suite) -> int:
    """Trigger by trigger; the suite's in-guest checks are no LAVA jobs."""
    ours = {t["name"]: t["verdict"] for t in json.loads(ours_json.read_text())["triggers"]
            if t["suite"] == suite.name and t["name"] not in suite.checks}
    theirs = {name: v for (s, name), v in read_junit_verdicts(theirs_junit).items()
              if s == suite.name}
    differ = 0
    for name in sorted(ours.keys() | theirs.keys()):
        a, b = ours.get(name, "-"), theirs.get(name, "-")
        differ += a != b
        print(f"{'same' if a == b else 'DIFFERENT':9}  {suite.name}/{name}: ours {a}, LAVA {b}")
    print(f"lava: {len(ours.keys() | theirs.keys()) - differ} same, {differ} different "
          f"(ours: {ours_json}, LAVA via match: {theirs_junit})")
    return 1 if differ or not ours else 0


def _validate_files(paths: list[Path]) -> int:
    bad = 0
    for path in paths:
        try:
            validate(yaml.safe_load(path.read_text()))
        except ValueError as exc:
            print(f"lava: {path}: invalid: {exc}", file=sys.stderr)
            bad += 1
    print(f"lava: {len(paths) - bad} of {len(paths)} jobs valid (lava-common schema)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
