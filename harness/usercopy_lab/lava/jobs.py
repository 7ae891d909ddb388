"""The trigger suites as LAVA job definitions, and LAVA's logs back as consoles.

LAVA (Linaro Automated Validation Architecture, Debian: lava-server,
lava-dispatcher, lava-common) is the scheduler kernel test farms and
KernelCI run on.  write_jobs() turns every trigger of a suite, and every
in-guest check program but the whitelist audit, into one job for LAVA's
`qemu` device type, the same guest our own runner boots:

  deploy  to: tmpfs, the lab kernel and initramfs as artifacts (URLs) with
          QEMU's -kernel/-append/-initrd as image_arg: the command line is
          qemu_boot.GuestSpec.cmdline(), lab.trigger=NAME (lab.helper=NAME)
          and the suite's extra arguments included;
  boot    method: qemu, media: tmpfs; the protocol's READY marker
          is the boot prompt (no login, no shell: LAVA only watches);
  test    interactive, one step per thing the golden file expects
          (checks.plan): LAVA itself records each as pass or fail, so
          a farm's own results say whether the kernel did what the golden
          file says.

The job's metadata names suite, trigger (or check) and kernel, so results
fetched later map back to a plan (results.py).  console_from_lava_log()
turns a LAVA job log back into a serial console that `usercopy-lab match`
reads like one of its own: the exact check.

  usercopy-lab lava write --out DIR [--suite S] [--kernels URL] [--kernel URL]
  usercopy-lab lava validate JOB.yaml...   (lava-common's schema)
  usercopy-lab lava console LAVA-LOG.yaml > TRIGGER.log
  usercopy-lab lava replay --suite S NAME CONSOLE.log   (what LAVA records)
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml
from tabulate import tabulate

from ..capture.qemu_boot import NATIVE, GuestSpec
from ..judge.golden import Golden
from ..protocol import READY
from ..audit.slab_audit import PROGRAM as AUDIT_PROGRAM
from ..run.suite import Suite, SuiteError, load_suites, pick
from ..run.trigger_run import check_golden_name
from .checks import Plan, plan
from .replay import replay

REPO = Path(__file__).resolve().parents[3]

# libyaml's dumper and loader where python3-yaml has them (a job is ~20 KB)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Artifacts:
    """Where LAVA downloads the kernel images and the initramfs from."""

    kernels: str         # "file:///abs/build" or "https://host/builds/N"
    initramfs: str       # URL of initramfs.cpio
    kernel_override: str = ""   # one kernel image for every job (a mutant)

    def kernel(self, variant: str) -> str:
        return self.kernel_override or f"{self.kernels}/kernel-{variant}/arch/x86/boot/bzImage"


@dataclass(frozen=True)
class Job:
    """One LAVA job: a trigger, or an in-guest check program, of a suite."""

    suite: Suite
    name: str
    check: bool
    plan: Plan

    @property
    def key(self) -> str:
        return f"{self.suite.name}/{self.name}"


def suite_jobs(suite: Suite) -> list[Job]:
    """Every job of a suite: its triggers (tests.txt's expected text when
    the suite checks it), then its check programs.  The whitelist audit
    needs the kernel's DWARF, which a farm does not have: no job."""
    golden = suite.golden()
    jobs = []
    for t in suite.triggers():
        if t.skip_reason:
            continue
        g = golden.get(t.name)
        if g is None:
            raise SuiteError(f"suite [{suite.name}]: no golden file for {t.name}, "
                             "so nothing for LAVA to check")
        jobs.append(Job(suite, t.name, False,
                        plan(t.name, g, t.expected_text if suite.expected_text else None)))
    for name in suite.checks:
        if name == AUDIT_PROGRAM:
            continue
        g: Golden | None = golden.get(name) or golden.get(check_golden_name(name))
        jobs.append(Job(suite, name, True, plan(name, g, check=True)))
    return jobs


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


def job_definition(job: Job, artifacts: Artifacts,
                   timeouts: JobTimeouts = JobTimeouts()) -> dict[str, Any]:
    suite = job.suite
    spec = GuestSpec(kernel=Path("kernel"), initramfs=Path("initrd"),
                     trigger="" if job.check else job.name,
                     helper=job.name if job.check else "", extra_cmdline=suite.cmdline)
    return {
        "device_type": "qemu",
        "job_name": f"usercopy-lab {suite.name} {job.name}",
        "timeouts": {"job": {"minutes": timeouts.job_minutes},
                     "action": {"minutes": timeouts.action_minutes},
                     "connection": {"minutes": timeouts.action_minutes}},
        "priority": "medium",
        "visibility": "public",
        "metadata": {"usercopy-lab.suite": suite.name,
                     f"usercopy-lab.{'check' if job.check else 'trigger'}": job.name,
                     "usercopy-lab.kernel": suite.kernel,
                     "usercopy-lab.kernel-image": artifacts.kernel(suite.kernel)},
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
                "interactive": job.plan.interactive(),
            }},
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
    """One job per trigger and check: OUT/<suite>/<NAME>.yaml."""
    written = []
    for suite in suites:
        if suite.selftests:
            continue    # run.sh suites need the runner's own verdicts, not LAVA's
        if suite.arch != NATIVE or suite.modules:
            continue    # the jobs boot an amd64 qemu with the one shared initramfs
        for job in suite_jobs(suite):
            path = out / suite.name / f"{job.name}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {job.key}: written by `make lava` "
                            f"(harness/usercopy_lab/lava/jobs.py)\n"
                            + yaml.dump(job_definition(job, artifacts), Dumper=DUMPER,
                                        sort_keys=False, width=1000))
            written.append(path)
    if written:
        device = device_dictionary(job_context())
        (out / "qemu-device.yaml").write_text(
            "# The rendered qemu device dictionary lava-run reads on this machine\n"
            "# (harness/usercopy_lab/lava/jobs.py device_dictionary()).\n"
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


def log_entries(text: str) -> list[dict[str, Any]]:
    """The entries of a LAVA job log: lava-run writes one JSON mapping per
    line ("{...}"), the server's log view one YAML list item ("- {...}")."""
    out = []
    for num, line in enumerate(text.splitlines(), 1):
        line = line.removeprefix("- ")
        if not line.startswith("{"):
            continue
        try:
            entry = yaml.safe_load(line)
        except yaml.YAMLError as exc:
            raise ValueError(f"line {num}: not a LAVA log entry ({exc})") from None
        if isinstance(entry, dict):
            out.append(entry)
    return out


def console_from_lava_log(text: str) -> str:
    """The serial console inside a LAVA job log: every "target" message,
    one per line, in order."""
    out = []
    for entry in log_entries(text):
        if entry.get("lvl") == "target":
            msg = entry.get("msg")
            out.append(msg if isinstance(msg, str) else str(msg))
    return "".join(m + "\n" for m in out)


def find_job(suites: Mapping[str, Suite], suite: str, name: str) -> Job:
    """The job of NAME (trigger or check program) in suite."""
    [s] = pick(dict(suites), [suite])
    for job in suite_jobs(s):
        if job.name == name:
            return job
    raise SuiteError(f"suite [{suite}] has no LAVA job {name}")


def command(action: Callable[[], int]) -> int:
    """Run one `usercopy-lab lava` job command: its status, or 2 with one
    line on stderr when its input cannot be used."""
    try:
        return action()
    except (SuiteError, OSError, ValueError, KeyError, LavaUnavailable) as exc:
        print(f"lava: {exc}", file=sys.stderr)
        return 2


def write_command(suites_file: Path, names: list[str] | None, artifacts: Artifacts,
                  out: Path, validate_them: bool = True) -> int:
    """`lava write`: one job per trigger and check of the suites NAMES (all:
    None) under OUT, each validated unless asked not to."""
    suites = load_suites(suites_file)
    chosen = pick(suites, names or list(suites))
    paths = write_jobs(chosen, artifacts, out)
    print(f"lava: wrote {len(paths)} job definitions under {out}")
    return _validate_files(paths) if validate_them else 0


def validate_command(paths: list[Path]) -> int:
    """`lava validate`: each job file against lava-common's schema."""
    return _validate_files(paths)


def console_command(log: Path) -> int:
    """`lava console`: the serial console of a LAVA job log on stdout."""
    sys.stdout.write(console_from_lava_log(log.read_text(errors="replace")))
    return 0


def replay_command(suites_file: Path, suite: str, name: str, console: Path, chunk: int) -> int:
    """`lava replay`: what LAVA records for job NAME of SUITE, replayed on CONSOLE."""
    return _replay(find_job(load_suites(suites_file), suite, name), console, chunk)


def _replay(job: Job, console: Path, chunk: int) -> int:
    rec = replay(job.plan, console.read_bytes().decode("utf-8", errors="replace"), chunk)
    means = {s.name: s.means for s in job.plan.steps}
    rows = [(r.result, r.case, means[r.case]) for r in rec.records]
    lines = tabulate(rows, tablefmt="plain", disable_numparse=True).splitlines() if rows else []
    for line, r in zip(lines, rec.records):
        print(line.rstrip())
        if r.result != "pass":
            print(f"      matched: {r.text.strip()[:160] or '(a lookahead: ' + r.pattern[:80] + ')'}")
    v = rec.verdict(job.plan)
    print(f"{job.key}: {v.verdict} ({v.summary})")
    for note in job.plan.unexpressed:
        print(f"  not checked by LAVA: {note}")
    return 0 if v.verdict in ("PASS", "XFAIL", "SKIP") else 1


def _validate_files(paths: list[Path]) -> int:
    bad = 0
    for path in paths:
        try:
            validate(yaml.load(path.read_text(), Loader=LOADER))
        except ValueError as exc:
            print(f"lava: {path}: invalid: {exc}", file=sys.stderr)
            bad += 1
    print(f"lava: {len(paths) - bad} of {len(paths)} jobs valid (lava-common schema)")
    return 1 if bad else 0

