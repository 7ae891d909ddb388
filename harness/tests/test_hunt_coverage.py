"""make hunt's coverage: the kprobe histogram a guest prints, folded
against the caches with a region of the booted kernel, with the pairs a
workload written elsewhere reached counted apart from the lab's fillers.

The histogram lines follow kernel/trace/trace_events_hist.c's
hist_show() output as initramfs-src/hunt-run prefixes them ("cov: "); the
cache table is the seeds audit console
(testdata/console-series/seeds/audit-slab-caches.log).
"""
from __future__ import annotations

from pathlib import Path

from usercopy_lab.hunt.coverage import Coverage, parse_histogram
from usercopy_lab.hunt.plan import FOREIGN, load_workloads
from usercopy_lab.reports.log_reader import split_lines
from usercopy_lab.audit.slab_audit import parse_console

DATA = Path(__file__).resolve().parent / "testdata"
AUDIT = DATA / "console-series" / "seeds" / "audit-slab-caches.log"
WORKLOADS = Path(__file__).resolve().parents[2] / "initramfs-src" / "hunt-workloads"
P = "usercopy-lab-hunt: cov: "


def hist(*entries: tuple[str, int, int], per_task: tuple[str, int, str, int] | None = None):
    lines = ["usercopy-lab-hunt: coverage begin",
             P + "# trigger info: hist:keys=cache,to_user:vals=hitcount,bytes:"
                 "sort=cache,to_user:size=2048 [active]"]
    lines += [P + f"{{ cache: {c:<20}, to_user: {d} }} hitcount: {h}  bytes: {8 * h}"
              for c, d, h in entries]
    lines += [P + "Totals:", P + f"    Hits: {sum(h for _, _, h in entries)}",
              P + f"    Entries: {len(entries)}", P + "    Dropped: 0"]
    if per_task:
        c, d, comm, h = per_task
        lines += [P + "# trigger info: hist:keys=cache,to_user,common_pid.execname:"
                      "vals=hitcount:sort=cache,to_user:size=32768 [active]",
                  P + f"{{ cache: {c}, to_user: {d}, common_pid: {comm}[  81] }} hitcount: {h}",
                  P + "    Dropped: 3"]
    return parse_histogram(lines + ["usercopy-lab-hunt: coverage end"])


def coverage() -> Coverage:
    cov = Coverage()
    cov.add_table(parse_console(split_lines(AUDIT.read_bytes())))
    return cov


def test_a_histogram_is_parsed_with_directions_tasks_and_drops():
    h = hist(("names_cache", 0, 5), ("kmalloc-64", 1, 2), per_task=("names_cache", 0, "ls", 5))
    assert h is not None and h.complete and h.hits == 7 and h.dropped == 0
    assert [(e.cache, e.direction, e.hits, e.bytes) for e in h.entries] == [
        ("names_cache", "overwrite", 5, 40), ("kmalloc-64", "exposure", 2, 16)]
    assert [(e.comm, e.hits) for e in h.tasks] == [("ls", 5)]
    assert h.tasks_dropped == 3


def test_a_guest_cut_short_has_an_incomplete_histogram_and_none_without_one():
    assert parse_histogram(["usercopy-lab-hunt: coverage begin", P + "Totals:"]).complete is False
    assert parse_histogram(["usercopy-lab-hunt: coverage off: no hunt.probe="]) is None


def test_pairs_reached_only_by_the_labs_fillers_are_counted_apart():
    cov = coverage()
    m = len(cov.caches)
    assert m > 10 and "names_cache" in cov.caches      # the seeds kernel's regions
    cov.add_histogram(hist(("names_cache", 0, 5)), "stress-fs", foreign=True)
    cov.add_histogram(hist(("names_cache", 1, 1), ("names_cache", 0, 1)), "lab-probes",
                      foreign=False)
    assert cov.pairs() == (2, 2 * m)
    assert cov.pairs(foreign_only=True) == (1, 2 * m)
    assert cov.both() == ["names_cache"]
    d = cov.to_json([])
    row = next(c for c in d["caches"] if c["name"] == "names_cache")
    assert row["overwrite"]["foreign"] is True and row["exposure"]["foreign"] is False
    assert row["overwrite"]["workloads"] == ["lab-probes", "stress-fs"]
    assert d["pairs"]["foreign_only"] == 1 and d["pairs"]["exercised"] == 2
    assert "of which 1 = " in cov.summary() and "without the lab's fillers" in cov.summary()


def test_caches_by_foreign_workloads_and_pairs_without_a_path_are_figures_apart():
    from usercopy_lab.hunt.coverage import ReachNote
    cov = coverage()
    m = len(cov.caches)
    cov.add_histogram(hist(("names_cache", 0, 5)), "stress-fs", foreign=True)
    cov.add_histogram(hist(("mm_struct", 1, 2)), "lab-probes", foreign=False)
    assert cov.exercised() == ["mm_struct", "names_cache"]
    assert cov.exercised(foreign_only=True) == ["names_cache"]
    notes = [ReachNote("dentry", "overwrite", "never written from user space", False),
             ReachNote("mm_struct", "exposure", "wrongly argued unreachable", False)]
    d = cov.to_json(notes)
    assert d["exercised_any_foreign"] == ["names_cache"]
    # dentry overwrite leaves the denominator; an exercised pair never does
    assert d["pairs_with_a_path"]["total"] == 2 * m - 1
    assert d["pairs_with_a_path"]["pathless"] == ["dentry overwrite"]
    assert d["pairs_with_a_path"]["notes_contradicted"] == ["mm_struct exposure"]
    assert d["pairs"]["total"] == 2 * m                 # the target's figure is unchanged
    assert "(0 in both directions; 1 by workloads written elsewhere)" in cov.summary()


def test_a_cache_without_a_region_is_listed_apart_and_not_counted():
    cov = coverage()
    cov.add_histogram(hist(("no-such-cache", 1, 3)), "trinity", foreign=True)
    assert cov.pairs()[0] == 0
    assert cov.other == {"no-such-cache": {"exposure": 3}}


def test_only_the_labs_own_families_are_fillers():
    families = {w.family for w in load_workloads(WORKLOADS).values()}
    assert "lab-probes" in families and "lab-probes" not in FOREIGN
    assert {"trinity", "stress-ng", "selftests"} <= set(FOREIGN)
    for w in load_workloads(WORKLOADS).values():
        assert w.foreign == (w.family in ("trinity", "stress-ng", "selftests"))


def _harvest(calibration, guests_without=(), histograms=1):
    from usercopy_lab.hunt.harvest import Harvest
    from usercopy_lab.hunt.findings import Findings
    cov = coverage()
    for _ in range(histograms):
        cov.add_histogram(hist(("names_cache", 0, 5)), "stress-fs", foreign=True)
    cov.guests_without += list(guests_without)
    guests = [{"id": "g000-calibrate", "ended": True, "alias_table": True},
              {"id": "g001-stress-fs", "ended": True, "alias_table": True}]
    return Harvest(Findings(), cov, calibration, guests)


GOOD = {"ran": True, "ok": True, "warning_harvested": True, "probe_hits": 2}


def test_the_smoke_passes_only_when_the_probe_fired_and_the_warning_was_harvested(capsys):
    from usercopy_lab.hunt.runner import _smoke_verdict
    assert _smoke_verdict(_harvest(GOOD)) == 0
    # A calibration guest without a histogram is "ok" for make hunt, not for the smoke.
    assert _smoke_verdict(_harvest({**GOOD, "probe_hits": None})) == 1
    assert _smoke_verdict(_harvest({**GOOD, "ok": False, "warning_harvested": False})) == 1
    assert _smoke_verdict(_harvest(GOOD, histograms=0)) == 1
    assert _smoke_verdict(_harvest(GOOD, guests_without=["g001: coverage off"])) == 1
    assert "kprobe counted no calibration copy" in capsys.readouterr().err


def test_compiled_offsets_are_used_only_when_not_older_than_vmlinux(tmp_path):
    import os
    from usercopy_lab.hunt.coverage import ProbeOffsets, compiled_offsets, probe_offsets
    vmlinux = tmp_path / "vmlinux"
    vmlinux.write_bytes(b"\x7fELF not a real one")
    txt = tmp_path / "probe-offsets.txt"
    txt.write_text("slab_cache=24\nname=88\n")
    os.utime(vmlinux, ns=(1_000_000_000, 1_000_000_000))
    os.utime(txt, ns=(2_000_000_000, 2_000_000_000))
    assert compiled_offsets(vmlinux) == ProbeOffsets(24, 88)
    assert probe_offsets(vmlinux).cmdline == "hunt.probe=24,88"
    # relinked after the offsets were made: stale, not used
    os.utime(vmlinux, ns=(3_000_000_000, 3_000_000_000))
    assert compiled_offsets(vmlinux) is None
    txt.write_text("garbage\n")
    assert compiled_offsets(vmlinux) is None
