"""Coverage of the hunt: which caches with a usercopy region saw a checked copy.

Measured in the guest (initramfs-src/hunt-run): a kprobe event on
__check_heap_object() (mm/slub.c) -- the function every non-constant-size
copy between user space and a slab object goes through, whatever the
outcome -- fetches the cache name (slab->slab_cache->name), the direction
(to_user) and the size, and a histogram trigger counts them per cache,
direction and task name inside the kernel.  The probe only reads; its
histogram map is allocated when the trigger is set, so the probe path
allocates nothing and copies nothing, and the check decides exactly as
without it (the calibration workload shows a fallback WARNING still
printed with the probe armed, docs/hunt.md).

This module
- finds the two offsets the probe needs: compiled against the build by
  scripts/probe-offsets.sh (a kernel without DEBUG_INFO, the hunt kernel),
  else from the kernel's own DWARF (probe_offsets; cached beside vmlinux,
  as the whitelist audit does);
- parses the histogram a guest printed (parse_histogram);
- folds the guests' histograms into one table against the caches with a
  region of the booted kernel (the audit table every hunt guest prints) and
  names the caches and directions never exercised, with what would reach
  them (Coverage, from expected-oops/hunt/coverage-notes.toml).
"""
from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..audit.dwarf_layout import DwarfError, Layouts
from ..audit.slab_audit import SlabTable
from ..model import Direction
from ..protocol import HUNT_PREFIX

PROBE_CACHE = "hunt-probe.json"
COMPILED_OFFSETS = "probe-offsets.txt"     # scripts/probe-offsets.sh
# Where the kernel defines what the probe dereferences: struct slab is
# mm/slab.h's, struct kmem_cache is include/linux/slub_def.h's; mm/slub.c
# (which defines __check_heap_object) is compiled with both.
PROBE_SOURCE = "mm/slub.c"
DIRECTIONS = (Direction.EXPOSURE, Direction.OVERWRITE)   # the probe's to_user 1, 0

COV_PREFIX = HUNT_PREFIX + "cov: "
_ENTRY = re.compile(r"\{ (?P<keys>.*) \} hitcount:\s*(?P<hits>\d+)(?P<vals>.*)$")
_KEY = re.compile(r"(\w+):\s*(.*?)\s*$")
_TOTAL = re.compile(r"^\s*(Hits|Entries|Dropped):\s*(\d+)")


class CoverageError(ValueError):
    """Offsets that cannot be read from the kernel, or a notes file that
    cannot be used: one line for the user."""


# ------------------------------------------------------------ probe offsets
@dataclass(frozen=True)
class ProbeOffsets:
    slab_cache: int     # offsetof(struct slab, slab_cache)
    name: int           # offsetof(struct kmem_cache, name)

    @property
    def cmdline(self) -> str:
        return f"hunt.probe={self.slab_cache},{self.name}"


def compiled_offsets(vmlinux: Path) -> ProbeOffsets | None:
    """The offsets scripts/probe-offsets.sh compiled against this build
    (asm-offsets style, no DWARF needed): KBUILD_DIR/probe-offsets.txt, used
    only when it is not older than vmlinux; None otherwise."""
    txt = vmlinux.parent / COMPILED_OFFSETS
    try:
        if txt.stat().st_mtime_ns < vmlinux.stat().st_mtime_ns:
            return None
        vals = dict(line.split("=", 1) for line in txt.read_text().split())
        return ProbeOffsets(int(vals["slab_cache"]), int(vals["name"]))
    except (OSError, ValueError, KeyError):
        return None


def probe_offsets(vmlinux: Path, cache_dir: Path | None = None) -> ProbeOffsets:
    """The probe's offsets: compiled against the build (compiled_offsets)
    when scripts/probe-offsets.sh ran after the last link, else from
    vmlinux's DWARF (CoverageError if it has none), cached in
    CACHE_DIR/hunt-probe.json per vmlinux size and mtime."""
    if not vmlinux.is_file():
        raise CoverageError(f"{vmlinux} not found: coverage needs the kernel's vmlinux")
    compiled = compiled_offsets(vmlinux)
    if compiled is not None:
        return compiled
    st = vmlinux.stat()
    stamp = f"{st.st_size}:{st.st_mtime_ns}"
    cache = (cache_dir or vmlinux.parent) / PROBE_CACHE
    try:
        data = json.loads(cache.read_text())
        if data.get("stamp") == stamp:
            return ProbeOffsets(int(data["slab_cache"]), int(data["name"]))
    except (OSError, ValueError, KeyError):
        pass
    try:
        with Layouts(vmlinux) as layouts:
            offsets = ProbeOffsets(layouts.offsetof(PROBE_SOURCE, "slab", "slab_cache"),
                                   layouts.offsetof(PROBE_SOURCE, "kmem_cache", "name"))
    except DwarfError as exc:
        raise CoverageError(f"coverage probe: {exc} (without DEBUG_INFO: make the offsets"
                            " with scripts/probe-offsets.sh KBUILD_DIR)") from None
    try:
        cache.write_text(json.dumps({"stamp": stamp, "vmlinux": str(vmlinux),
                                     "slab_cache": offsets.slab_cache,
                                     "name": offsets.name}) + "\n")
    except OSError:
        pass        # only a cache
    return offsets


# --------------------------------------------------------------- histogram
@dataclass(frozen=True)
class HistEntry:
    cache: str
    direction: Direction    # the probe's to_user: 1 exposure, 0 overwrite
    comm: str
    hits: int
    bytes: int


@dataclass
class Histogram:
    entries: list[HistEntry] = field(default_factory=list)   # per cache and direction
    tasks: list[HistEntry] = field(default_factory=list)     # per cache, direction, task
    hits: int | None = None
    dropped: int | None = None          # of the per-cache histogram: must be 0
    tasks_dropped: int | None = None    # of the per-task one: attribution only
    complete: bool = False      # the "coverage end" line was seen


def parse_histogram(lines: list[str]) -> Histogram | None:
    """The histograms between "coverage begin" and "coverage end" of one
    guest's console lines (log_lines.program_lines() applied), None when
    the guest printed none.  The kernel prints each trigger's histogram
    after a "# trigger info: hist:keys=..." line; the one keyed by
    common_pid.execname only says which task made the copies."""
    hist: Histogram | None = None
    per_task = False
    for line in lines:
        if line.endswith(HUNT_PREFIX + "coverage begin"):
            hist = Histogram()
            continue
        if hist is None:
            continue
        if line.endswith(HUNT_PREFIX + "coverage end"):
            hist.complete = True
            break
        pos = line.find(COV_PREFIX)
        if pos < 0:
            continue
        body = line[pos + len(COV_PREFIX):]
        if body.startswith("# trigger info:"):
            per_task = "common_pid" in body
            continue
        if m := _TOTAL.match(body):
            value = int(m.group(2))
            if m.group(1) == "Hits" and not per_task:
                hist.hits = value
            elif m.group(1) == "Dropped":
                if per_task:
                    hist.tasks_dropped = value
                else:
                    hist.dropped = value
            continue
        m = _ENTRY.search(body)
        if not m:
            continue
        keys = dict(k.groups() for part in m.group("keys").split(", ")
                    if (k := _KEY.match(part)))
        vals = re.search(r"bytes:\s*(\d+)", m.group("vals"))
        try:
            direction = DIRECTIONS[0] if int(keys["to_user"]) else DIRECTIONS[1]
            entry = HistEntry(keys["cache"], direction,
                              keys.get("common_pid", "").split("[")[0].strip(),
                              int(m.group("hits")), int(vals.group(1)) if vals else 0)
        except (KeyError, ValueError):
            continue
        (hist.tasks if "common_pid" in keys else hist.entries).append(entry)
    return hist


# ------------------------------------------------------------------- notes
@dataclass(frozen=True)
class ReachNote:
    pattern: str                  # fnmatch pattern of cache names
    direction: str                # a Direction's word, or "both" (a note's own word)
    text: str                     # what would reach it / why nothing does
    reachable: bool = True        # False: no path in this kernel (argued in text)


def load_notes(path: Path) -> list[ReachNote]:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CoverageError(f"{path}: {exc}") from None
    notes = []
    for i, item in enumerate(data.get("note", [])):
        try:
            direction = item.get("direction", "both")
            if direction not in (*DIRECTIONS, "both"):
                raise ValueError(f"direction {direction!r}")
            notes.append(ReachNote(str(item["cache"]), direction, str(item["reach"]).strip(),
                                   bool(item.get("reachable", True))))
        except (KeyError, ValueError, AttributeError) as exc:
            raise CoverageError(f"{path}: note {i + 1}: {exc}") from None
    return notes


def note_for(notes: list[ReachNote], cache: str, direction: str) -> ReachNote | None:
    for note in notes:
        if fnmatch.fnmatchcase(cache, note.pattern) and note.direction in (direction, "both"):
            return note
    return None


# ---------------------------------------------------------------- coverage
@dataclass
class DirectionSeen:
    hits: int = 0
    bytes: int = 0
    comms: dict[str, int] = field(default_factory=dict)
    workloads: set[str] = field(default_factory=set)
    foreign: bool = False       # seen in a workload written elsewhere


@dataclass
class CacheCoverage:
    name: str
    useroffset: int
    usersize: int
    object_size: int
    seen: dict[str, DirectionSeen] = field(default_factory=dict)

    @property
    def whole_object(self) -> bool:
        return self.useroffset == 0 and self.usersize >= self.object_size


@dataclass
class Coverage:
    """The caches with a region of the booted kernel and what each guest's
    histogram counted in them."""

    caches: dict[str, CacheCoverage] = field(default_factory=dict)
    other: dict[str, dict[str, int]] = field(default_factory=dict)   # no region: hits
    guests: int = 0                 # guests whose histogram was read
    guests_without: list[str] = field(default_factory=list)   # id: why not
    dropped: int = 0

    def add_table(self, table: SlabTable) -> None:
        for cache in table.caches.values():
            if cache.usersize <= 0:
                continue
            name = cache.reported or cache.sysfs
            self.caches.setdefault(name, CacheCoverage(name, cache.useroffset, cache.usersize,
                                                       cache.object_size))

    def add_histogram(self, hist: Histogram, workload: str, foreign: bool) -> None:
        """One guest's histogram; FOREIGN: its workload was written
        elsewhere (hunt/plan.py FOREIGN), not one of this lab's fillers."""
        self.guests += 1
        self.dropped += hist.dropped or 0
        for e in hist.entries:
            cache = self.caches.get(e.cache)
            if cache is None:
                per = self.other.setdefault(e.cache, {})
                per[e.direction] = per.get(e.direction, 0) + e.hits
                continue
            seen = cache.seen.setdefault(e.direction, DirectionSeen())
            seen.hits += e.hits
            seen.bytes += e.bytes
            seen.workloads.add(workload)
            seen.foreign = seen.foreign or foreign
        for e in hist.tasks:
            cache = self.caches.get(e.cache)
            if cache is not None and e.direction in cache.seen:
                comms = cache.seen[e.direction].comms
                comms[e.comm] = comms.get(e.comm, 0) + e.hits

    # -- numbers ----------------------------------------------------------
    def exercised(self, direction: str | None = None, foreign_only: bool = False) -> list[str]:
        """Caches with a copy seen in DIRECTION (None: in either);
        FOREIGN_ONLY: seen in a workload written elsewhere."""
        dirs = DIRECTIONS if direction is None else (direction,)
        return sorted(n for n, c in self.caches.items()
                      if any(d in c.seen and (c.seen[d].foreign or not foreign_only)
                             for d in dirs))

    def both(self) -> list[str]:
        return sorted(n for n, c in self.caches.items() if all(d in c.seen for d in DIRECTIONS))

    def pairs(self, foreign_only: bool = False) -> tuple[int, int]:
        """(exercised, all) (cache, direction) pairs; FOREIGN_ONLY: those a
        workload written elsewhere exercised (without this lab's fillers)."""
        seen = sum(1 for c in self.caches.values() for s in c.seen.values()
                   if s.foreign or not foreign_only)
        return seen, 2 * len(self.caches)

    def pathless(self, notes: list[ReachNote]) -> list[tuple[str, str]]:
        """The unexercised (cache, direction) pairs whose note says that no
        path of the kernel makes such a checked copy (reachable = false)."""
        out = []
        for name, c in sorted(self.caches.items()):
            for d in DIRECTIONS:
                note = note_for(notes, name, d)
                if d not in c.seen and note is not None and not note.reachable:
                    out.append((name, d))
        return out

    def contradicted(self, notes: list[ReachNote]) -> list[tuple[str, str]]:
        """Exercised pairs whose note says no path reaches them: the note
        is wrong and must be corrected."""
        return [(name, d) for name, c in sorted(self.caches.items()) for d in c.seen
                if (note := note_for(notes, name, d)) is not None and not note.reachable]

    def summary(self) -> str:
        n_pairs, m_pairs = self.pairs()
        f_pairs, _ = self.pairs(foreign_only=True)
        m = len(self.caches)
        return (f"exercised {len(self.exercised())} of {m} caches with a region "
                f"({len(self.both())} in both directions; "
                f"{len(self.exercised(foreign_only=True))} by workloads written elsewhere); "
                f"{n_pairs} of {m_pairs} "
                f"(cache, direction) pairs = {pct(n_pairs, m_pairs)}, of which "
                f"{f_pairs} = {pct(f_pairs, m_pairs)} by workloads written elsewhere "
                f"alone (without the lab's fillers)")

    def to_json(self, notes: list[ReachNote]) -> dict[str, Any]:
        n_pairs, m_pairs = self.pairs()
        f_pairs, _ = self.pairs(foreign_only=True)
        caches = []
        unexercised = []
        for name in sorted(self.caches):
            c = self.caches[name]
            row: dict[str, Any] = {"name": name, "useroffset": c.useroffset,
                                   "usersize": c.usersize, "object_size": c.object_size,
                                   "whole_object": c.whole_object}
            for d in DIRECTIONS:
                s = c.seen.get(d)
                if s is None:
                    note = note_for(notes, name, d)
                    row[d] = None
                    unexercised.append({"cache": name, "direction": d,
                                        "reach": note.text if note else None,
                                        "reachable": note.reachable if note else None})
                else:
                    top = sorted(s.comms.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
                    row[d] = {"hits": s.hits, "bytes": s.bytes,
                              "workloads": sorted(s.workloads), "foreign": s.foreign,
                              "tasks": [f"{comm} x{hits}" for comm, hits in top]}
            caches.append(row)
        return {
            "measured": self.guests > 0,
            "summary": self.summary() if self.guests else "not measured",
            "guests_measured": self.guests,
            "guests_without_coverage": self.guests_without,
            "dropped_events": self.dropped,
            "caches_with_region": len(self.caches),
            "exercised_any": self.exercised(),
            "exercised_any_foreign": self.exercised(foreign_only=True),
            "exercised_exposure": self.exercised(DIRECTIONS[0]),
            "exercised_overwrite": self.exercised(DIRECTIONS[1]),
            "exercised_both": self.both(),
            "pairs": {"exercised": n_pairs, "total": m_pairs,
                      "percent": round(100.0 * n_pairs / m_pairs, 1) if m_pairs else 0.0,
                      "foreign_only": f_pairs,
                      "foreign_only_percent": (round(100.0 * f_pairs / m_pairs, 1)
                                               if m_pairs else 0.0)},
            # The same figure against the pairs some path of the kernel can
            # reach: the denominator less the unexercised pairs a note
            # argues unreachable (reachable = false).  Secondary: the
            # target is measured on "pairs" above.
            "pairs_with_a_path": {
                "exercised": n_pairs, "total": m_pairs - len(self.pathless(notes)),
                "percent": (round(100.0 * n_pairs / (m_pairs - len(self.pathless(notes))), 1)
                            if m_pairs - len(self.pathless(notes)) else 0.0),
                "pathless": [f"{c} {d}" for c, d in self.pathless(notes)],
                "notes_contradicted": [f"{c} {d}" for c, d in self.contradicted(notes)]},
            "caches": caches,
            "unexercised": unexercised,
            "caches_without_region_copied": {k: v for k, v in sorted(self.other.items())},
        }


def pct(n: int, m: int) -> str:
    return f"{100.0 * n / m:.1f} %" if m else "0.0 %"
