"""make hunt: workloads written elsewhere, in fallback guests, until a
missing usercopy whitelist shows up (docs/hunt.md).

    usercopy-lab hunt run [--minutes M] [-j N] [--kernel NAME]
        [--workload NAME]... [--guest-seconds S] [--seed N] [--no-calibrate]
    usercopy-lab hunt harvest RUN_DIR       (again, without booting)
    usercopy-lab hunt replay RUN_DIR (--guest ID | --finding ID)...
        [--tries N]

`run` boots the plan's guests N at a time (plan.py), each a full boot
of build/kernel-NAME with slab_common.usercopy_fallback=1 and the hunt
initramfs, running one workload for its seconds (initramfs-src/hunt-run),
keeps every console under RUN/hunt/guests/, then harvests them all:
RUN/hunt/findings.json and findings.md (findings.py, coverage.py).
`replay` boots the recorded guests again, same kernel, initramfs, workload,
seed and length, and says whether each finding came back.

Exit status: 0 done, nothing untriaged and the calibration as expected;
1 an untriaged finding, a calibration that did not come out, or a replay
that did not reproduce; 2 bad input (one line, before any guest boots);
130 interrupted (what finished is harvested).
"""
# (cli/ reads the command line into HuntOptions; each command reads the
# fields it has.)
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class HuntOptions:
    """What `usercopy-lab hunt run|harvest|replay` is asked (cli/ reads the
    command line into it; each command reads the fields it has)."""

    results: Path = REPO / "results"
    classifications: Path = REPO / "expected-oops/hunt/classifications.toml"
    notes: Path = REPO / "expected-oops/hunt/coverage-notes.toml"
    gaps: Path = REPO / "build/gaps/6.1-series/gaps.json"
    # run
    minutes: float = 30.0
    jobs: int = 2
    kernel: str = "hunt"
    build_dir: Path = REPO / "build"
    initramfs: Path = REPO / "build/initramfs-hunt.cpio"
    workloads: Path = REPO / "initramfs-src/hunt-workloads"
    workload: list[str] | None = None
    guest_seconds: int | None = None
    seed: int | None = None
    no_calibrate: bool = False
    accel: str = "auto"
    smoke: bool = False
    # harvest, replay
    run_dir: Path | None = None
    finding: list[str] | None = None
    guest: list[str] | None = None
    tries: int = 3
