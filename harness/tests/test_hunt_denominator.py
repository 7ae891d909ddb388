"""make hunt's coverage against the gap finder's denominator
(hunt/denominator.py, runner.finder_figure).

Fixtures (testdata/hunt-denominator/, each with where it came from in its
header): gaps-excerpt.json, thirteen caches of make gaps' output for the
lab's tree (6.1 + series, 2026-12-06); compiled-seeds-excerpt.txt, the
files of those caches' sites that the seeds kernel compiled
(hunt/compiled.py on build/kernel-seeds, 2026-12-06).  The booted caches
are the seeds audit console's (testdata/console-series/seeds/
audit-slab-caches.log), the histogram made as test_hunt_coverage.py makes
it (kernel/trace/trace_events_hist.c's format).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from usercopy_lab.hunt.compiled import CompiledSources
from usercopy_lab.cli import main as cli_main
from usercopy_lab.hunt import runner
from usercopy_lab.hunt.coverage import Coverage, ReachNote, parse_histogram
from usercopy_lab.hunt.denominator import (DenominatorError, Figure, Left, build,
                                           load_finder)
from usercopy_lab.hunt.harvest import finder_markdown
from usercopy_lab.audit.slab_audit import parse_console
from usercopy_lab.reports.log_reader import split_lines

DATA = Path(__file__).resolve().parent / "testdata"
GAPS = DATA / "hunt-denominator" / "gaps-excerpt.json"
COMPILED = DATA / "hunt-denominator" / "compiled-seeds-excerpt.txt"
AUDIT = DATA / "console-series" / "seeds" / "audit-slab-caches.log"
P = "usercopy-lab-hunt: cov: "


def coverage(*entries: tuple[str, int, int], foreign: bool = True) -> Coverage:
    cov = Coverage()
    cov.add_table(parse_console(split_lines(AUDIT.read_bytes())))
    lines = ["usercopy-lab-hunt: coverage begin",
             P + "# trigger info: hist:keys=cache,to_user:vals=hitcount,bytes [active]"]
    lines += [P + f"{{ cache: {c:<20}, to_user: {d} }} hitcount: {h}  bytes: {8 * h}"
              for c, d, h in entries]
    lines += [P + "    Dropped: 0", "usercopy-lab-hunt: coverage end"]
    cov.add_histogram(parse_histogram(lines), "stress-net", foreign)
    return cov


def denominator(cov: Coverage):
    return build(load_finder(GAPS), CompiledSources.from_text(COMPILED.read_text()),
                 list(cov.caches))


def pair(d, cache: str, direction: str):
    [p] = [p for p in d.pairs if (p.cache, p.direction) == (cache, direction)]
    return p


def test_a_family_takes_its_sizes_and_not_another_familys():
    finder = load_finder(GAPS)
    assert finder.cache_for("kmalloc-64").name == "kmalloc-*"
    assert finder.cache_for("kmalloc-cg-64").name == "kmalloc-cg-*"
    assert finder.cache_for("usersized-kmalloc-cg-8k").name == "usersized-kmalloc-cg-*"
    assert finder.cache_for("msg_msg-1k").name == "msg_msg-*"
    assert finder.cache_for("names_cache").name == "names_cache"
    assert finder.cache_for("kmalloc-cg-x") is None and finder.cache_for("dentry") is None


def test_a_pair_is_in_m_only_with_a_site_compiled_into_the_kernel():
    d = denominator(coverage())
    # fs/xattr.c is compiled: kmalloc-* exposure; its one overwrite site
    # (fs/binfmt_misc.c) is not, so that pair is out, with the site named
    assert pair(d, "kmalloc-64", "exposure").in_m
    out = pair(d, "kmalloc-64", "overwrite")
    assert out.left is Left.NOT_COMPILED and "fs/binfmt_misc.c:351" in out.why
    # every dma-kmalloc site is an s390/ARM/sound driver the seeds kernel lacks
    assert pair(d, "dma-kmalloc-8", "exposure").left is Left.NOT_COMPILED
    # no site in the tree: the finder's own reason comes along
    rcl = pair(d, "kmalloc-rcl-64", "exposure")
    assert rcl.left is Left.NO_SITE and "__GFP_RECLAIMABLE" in rcl.why
    # the booted kernel has caches the excerpt does not name
    assert pair(d, "dentry", "exposure").left is Left.NO_FINDER_CACHE
    # names_cache: overwrite (getname) in, exposure (no site) out
    assert pair(d, "names_cache", "overwrite").in_m
    assert pair(d, "names_cache", "exposure").left is Left.NO_SITE


def test_dismissed_candidates_do_not_count_unsure_sites_do():
    d = denominator(coverage())
    # task_struct: the KVM emulator's and sched_setaffinity's candidates are
    # dismissed; the regset/xstate overwrites are inside and compiled
    ts = pair(d, "task_struct", "overwrite")
    assert ts.in_m and {s.file for s in ts.sites} == {"arch/x86/kernel/fpu/regset.c",
                                                       "arch/x86/kernel/fpu/xstate.c"}
    assert all(s.function not in ("get_user_cpu_mask", "read_interrupt_descriptor")
               for p in d.pairs for s in p.sites)
    assert pair(d, "task_struct", "exposure").left is Left.NO_SITE
    # lkdtm-usercopy has unsure sites only (a region of a module parameter)
    assert pair(d, "lkdtm-usercopy", "exposure").in_m


def test_a_derived_copy_counts_only_when_the_copy_it_ends_in_is_compiled():
    finder = load_finder(GAPS)
    [site] = [s for s in finder.cache_for("orangefs_inode_cache").sites]
    assert site.function == "vfs_readlink" and site.derived_from == "fs/namei.c"
    text = COMPILED.read_text()
    assert site.compiled_in(CompiledSources.from_text(text))
    without = CompiledSources.from_text(text.replace("fs/namei.c\n", ""))
    assert not site.compiled_in(without)


def test_n_of_m_counts_pairs_of_m_only_and_lists_what_is_left_and_outside():
    cov = coverage(("kmalloc-64", 1, 3), ("names_cache", 0, 2), ("names_cache", 1, 1),
                   ("msg_msg-64", 0, 1), ("msg_msg-64", 1, 1), ("kmalloc-cg-64", 1, 4))
    fig = Figure(denominator(cov), cov)
    n, m = fig.pairs()
    in_m = fig.denominator.in_m()
    assert m == len(in_m) and n == 4       # kmalloc-64 exp, names_cache ovw, msg_msg-64 x2
    cn, cm = fig.caches()
    assert cn == 3 and cm == len({p.cache for p in in_m})
    outside = {(p.cache, p.direction) for p in fig.outside()}
    # seen but not in M: the finder misses these copies (or has them only in
    # files the seeds kernel does not build)
    assert outside == {("names_cache", "exposure"), ("kmalloc-cg-64", "exposure")}
    left = {(p.cache, p.direction) for p in fig.left()}
    assert ("kmalloc-64", "exposure") not in left and ("kmalloc-8", "exposure") in left
    assert f"exercised {cn} of {cm} caches ({100 * cn / cm:.1f} %) and {n} of {m} " \
        "(cache, direction) pairs" in fig.summary()
    assert "(the 80% target, on pairs: not met;" in fig.summary()


def test_the_figure_in_findings_json_and_md():
    cov = coverage(("kmalloc-64", 1, 3))
    notes = [ReachNote("msg_msg-8k", "both", "never\n allocated", False)]
    j = Figure(denominator(cov), cov).to_json(notes)
    assert j["measured"] and j["pairs"]["exercised"] == 1 and j["target_percent"] == 80
    assert not j["meets_target"]
    [msg8k] = [p for p in j["left"] if p["cache"] == "msg_msg-8k" and
               p["direction"] == "exposure"]
    assert msg8k["note"] == "never allocated"
    assert msg8k["sites"] == ["ipc/msgutil.c:176 store_msg() copy_to_user"]
    assert {p["why"] for p in j["not_in_m"]} == {e.value for e in Left}
    md = "\n".join(finder_markdown(json.loads(json.dumps(j))))
    assert j["summary"] in md and "- msg_msg-8k exposure: sites ipc/msgutil.c:176" in md
    assert "no cache of this name in the finder's output" in md


def test_the_runner_says_why_when_it_cannot_measure(tmp_path):
    cov = coverage(("kmalloc-64", 1, 3))
    meta = {"setup": {"kernel": str(tmp_path / "kernel-hunt/arch/x86/boot/bzImage")}}
    (tmp_path / "hunt").mkdir()
    got = runner.finder_figure(tmp_path, meta, tmp_path / "none.json", cov, [])
    assert got == {"measured": False,
                   "summary": f"not measured: {tmp_path}/none.json not found (make gaps "
                              "writes it)"}
    got = runner.finder_figure(tmp_path, meta, GAPS, cov, [])
    assert not got["measured"] and "vmlinux.a not found" in got["summary"]
    # the list the run kept is used first
    (tmp_path / "hunt" / runner.COMPILED).write_text(COMPILED.read_text())
    got = runner.finder_figure(tmp_path, meta, GAPS, cov, [])
    assert got["measured"] and got["kbuild_dir"] == "build/kernel-seeds"
    assert runner.finder_figure(tmp_path, meta, GAPS, Coverage(), [])["summary"] == \
        "not measured: no guest's coverage was measured"


@pytest.mark.parametrize("text, problem", [
    ("{", "not JSON"),
    ('{"caches": [{"name": "x"}]}', "not a gaps.json of make gaps (KeyError: 'file')"),
    ('{"caches": [{"name": "x", "file": "f", "region": "r", "inside": [{"file": "a", '
     '"line": 1, "function": "f", "callee": "c", "direction": "up"}]}]}',
     "KeyError: 'up'"),
])
def test_a_bad_gaps_json_is_one_line(tmp_path, text, problem):
    bad = tmp_path / "gaps.json"
    bad.write_text(text)
    with pytest.raises(DenominatorError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        load_finder(bad)


def test_a_bad_gaps_json_stops_a_hunt_before_any_guest_boots(tmp_path, capsys):
    bad = tmp_path / "gaps.json"
    bad.write_text("[]")
    assert cli_main(["hunt", "run", "--gaps", str(bad), "--results", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"hunt: {bad}: not a gaps.json of make gaps (no list of caches)"]
    assert not (tmp_path / "r").exists()
