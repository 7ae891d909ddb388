"""What `usercopy-lab hunt run|harvest|replay` is asked: the options and
their defaults (cli/ reads the command line into HuntOptions)."""
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
