"""The hunt's workloads and the plan of its guests.

A workload is a script of initramfs-src/hunt-workloads/ (it goes into the
hunt initramfs as /hunt/workloads/NAME); its header says what it is:

    # hunt-workload: NAME
    # family: trinity | stress-ng | selftests | lab-probes | calibration
    # seconds: 300            (one guest's default length)
    # what: free text, may continue on "#   " lines

and it is called as `NAME SEED SECONDS`.  A plan is the list of guests of
one hunt: workloads in turn (round robin, catalogue order), each guest with
its own seed drawn from the run's seed, so that one number (recorded in
plan.json) gives back every guest's workload and seed.
"""
from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass
from pathlib import Path

FAMILIES = ("trinity", "stress-ng", "selftests", "lab-probes", "calibration")
# Workloads written elsewhere (the point of the hunt); "lab-probes" are this
# lab's own coverage fillers, counted apart (coverage.Coverage).
FOREIGN = ("trinity", "stress-ng", "selftests")
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
# Seconds a guest takes beyond its workload: boot, the audit table, the
# histogram, power off (measured on the seeds kernel under TCG: 15-25 s).
GUEST_OVERHEAD = 25
# The shortest guest worth booting at the end of a plan.
MIN_GUEST = 30


class PlanError(ValueError):
    """A workload script or a request that cannot be planned: one line."""


@dataclass(frozen=True)
class Workload:
    name: str
    family: str
    seconds: int
    what: str
    path: str

    @property
    def counts_for_coverage(self) -> bool:
        return self.family != "calibration"

    @property
    def foreign(self) -> bool:
        """Written elsewhere (trinity, stress-ng, the tree's selftests),
        not one of this lab's fillers."""
        return self.family in FOREIGN


def read_workload(path: Path) -> Workload:
    fields: dict[str, str] = {}
    last = None
    for line in path.read_text(errors="replace").splitlines()[1:]:
        if not line.startswith("#"):
            break
        if m := re.match(r"#\s+(hunt-workload|family|seconds|what):\s*(.*)$", line):
            last = m.group(1)
            fields[last] = m.group(2).strip()
        elif last == "what" and line.startswith("#   "):
            fields["what"] += " " + line[1:].strip()
        else:
            last = None
    where = f"{path}"
    if fields.get("hunt-workload") != path.name:
        raise PlanError(f"{where}: header line '# hunt-workload: {path.name}' missing")
    if fields.get("family") not in FAMILIES:
        raise PlanError(f"{where}: family must be one of {', '.join(FAMILIES)}")
    try:
        seconds = int(fields.get("seconds", ""))
    except ValueError:
        raise PlanError(f"{where}: '# seconds: N' missing") from None
    return Workload(path.name, fields["family"], seconds, fields.get("what", ""), str(path))


def load_workloads(folder: Path) -> dict[str, Workload]:
    if not folder.is_dir():
        raise PlanError(f"{folder}: no workload folder")
    out = {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and NAME.match(path.name):
            out[path.name] = read_workload(path)
    if not out:
        raise PlanError(f"{folder}: no workload scripts")
    return out


@dataclass(frozen=True)
class GuestPlan:
    id: str             # g001-trinity: order and workload
    workload: str
    family: str
    seed: int
    seconds: int

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def plan_guests(workloads: dict[str, Workload], minutes: float, jobs: int, run_seed: int,
                only: list[str] | None = None, guest_seconds: int | None = None,
                calibrate: bool = True) -> list[GuestPlan]:
    """Guests for MINUTES of wall time with JOBS guests at once: the
    calibration guest first (when asked and known), then the workloads in
    turn until the guest-seconds are used (at least one guest of each
    chosen workload when the time allows none)."""
    if minutes <= 0 or jobs < 1:
        raise PlanError("the hunt needs minutes > 0 and at least one guest at a time")
    names = only or [n for n, w in workloads.items() if w.family != "calibration"]
    for n in names:
        if n not in workloads:
            raise PlanError(f"unknown workload {n!r} (have: {', '.join(workloads)})")
    if not names:
        raise PlanError("no workload to run")
    rng = random.Random(run_seed)
    guests: list[GuestPlan] = []

    def add(w: Workload, seconds: int) -> None:
        guests.append(GuestPlan(f"g{len(guests) + 1:03d}-{w.name}", w.name, w.family,
                                rng.randrange(1, 2**31), seconds))

    budget = int(minutes * 60 * jobs)
    if calibrate and "calibration" not in {workloads[n].family for n in names}:
        for w in (w for w in workloads.values() if w.family == "calibration"):
            add(w, w.seconds)
            budget -= w.seconds + GUEST_OVERHEAD
    # Every workload once before any repeats: when their own lengths do not
    # fit the budget, the first round is shortened in proportion (each
    # guest at least MIN_GUEST), so that a short hunt still runs every
    # workload instead of the catalogue's first few at full length.
    own = {n: guest_seconds or workloads[n].seconds for n in names}
    first = sum(own.values()) + GUEST_OVERHEAD * len(names)
    if first > budget:
        room = max(0, budget - GUEST_OVERHEAD * len(names))
        scale = room / sum(own.values())
        own = {n: max(MIN_GUEST, int(s * scale)) for n, s in own.items()}
    # Every chosen workload once (always when a list was given or the
    # round was shortened), then in turn while a guest of at least
    # MIN_GUEST seconds still fits.
    least = len(names) if only or first > budget else 1
    i = 0
    while True:
        w = workloads[names[i % len(names)]]
        seconds = own[w.name] if i < len(names) else (guest_seconds or w.seconds)
        left = budget - GUEST_OVERHEAD
        if i >= least:
            if left < min(seconds, MIN_GUEST):
                break
            seconds = min(seconds, left)
        add(w, seconds)
        budget -= seconds + GUEST_OVERHEAD
        i += 1
    return guests
