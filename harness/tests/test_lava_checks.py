"""LAVA's own verdict (lava/checks.py's plans, replayed as LAVA runs them)
against `usercopy-lab match` on real consoles.

The consoles are the unedited ones under testdata/ (console-series/: every
suite on the patched lab kernels; rds/: the RDS probes on the seeds kernel
and on the RDS mutant; console/: the stock 6.1.192 kernel of the early
series, whose USERCOPY_VMALLOC has no report).  Every job of every suite is
replayed on every console of the same trigger or check, whichever kernel
or command line produced it: a job on its own suite's console must hold,
on another suite's console (another kernel: nosplit, slab, seeds; another
command line: the fallback) it meets a wrong kernel, and on the mutant
consoles a mutant.  LAVA's verdict must equal the matcher's on each.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from usercopy_lab.judge.golden import Golden, load
from usercopy_lab.lava.checks import (COMPLETE, INCOMPLETE, OPENER, ere_to_python, plan,
                                             verdict)
from usercopy_lab.lava.jobs import Job, suite_jobs
from usercopy_lab.lava.replay import replay
from usercopy_lab.capture.console_capture import TRAILER
from usercopy_lab.capture.qemu_boot import NATIVE
from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import check_golden_name, evaluate_check_log, evaluate_log

REPO = Path(__file__).resolve().parents[2]
TESTDATA = Path(__file__).parent / "testdata"
SUITES = load_suites(REPO / "suites.toml")
CONSOLES = (sorted(TESTDATA.glob("console-series/*/*.log")) + sorted(TESTDATA.glob("rds/*/*/*.log"))
            + sorted(TESTDATA.glob("console/*.log")))


@lru_cache(maxsize=None)
def jobs(suite: str) -> dict[str, Job]:
    return {j.name: j for j in suite_jobs(SUITES[suite])}


def text(path: Path) -> str:
    """The console as LAVA's serial reader would get it.  A snapshot-mode
    capture stops at the END marker, before its line end, and the harness
    appends its trailer line there ("... signal=11# usercopy-lab: capture
    ended: ..."; console_scan._TrailerOwnLine); LAVA never sees that
    trailer, and the marker's line end follows on its serial line."""
    console = path.read_bytes().decode("utf-8", errors="replace")
    return re.sub(rf"(?<!\n)({re.escape(TRAILER)})", r"\n\1", console)


@lru_cache(maxsize=None)
def golden_of(suite: str) -> dict:
    return SUITES[suite].golden()


def match_verdict(job: Job, console: Path) -> str:
    suite = job.suite
    golden = golden_of(suite.name)
    if job.check:
        g = golden.get(job.name) or golden.get(check_golden_name(job.name))
        return evaluate_check_log(suite.name, job.name, console, golden=g).verdict
    expected = next(t.expected_text for t in suite.triggers() if t.name == job.name)
    return evaluate_log(suite.name, job.name, console, golden[job.name],
                        expected if suite.expected_text else "").verdict


def pairs() -> list[tuple[Job, Path]]:
    out = []
    for name, suite in SUITES.items():
        # the suites write_jobs() writes jobs for: not the run.sh ones, not
        # the other arches' nor the modules ones (their guests are not the
        # amd64 qemu with the one shared initramfs).  An i386/arm64 golden's
        # offset-base on these x86-64 consoles is a wrong kernel that LAVA
        # cannot see (lava/patterns.header_line: "a pattern cannot subtract").
        if suite.selftests or suite.arch != NATIVE or suite.modules:
            continue
        for console in CONSOLES:
            if console.stem in jobs(name):
                out.append((jobs(name)[console.stem], console))
    return out


PAIRS = pairs()
# The agreement test in SHARDS parts (every SHARDS-th pair from i): one
# 30 s test held one pytest-xdist worker while the other ran out of work
# (issue #23); together the shards still cover every pair.
SHARDS = 6


@pytest.mark.parametrize("shard", range(SHARDS))
def test_lava_and_match_agree_on_every_job_and_every_console_of_it(shard):
    """... and each shard covers passing and failing verdicts alike (its
    share of > 300 PASS, > 400 FAIL, > 60 XFAIL, so the whole does too)."""
    differ = []
    seen: Counter[str] = Counter()
    for job, console in PAIRS[shard::SHARDS]:
        ours = match_verdict(job, console)
        seen[ours] += 1
        lava = replay(job.plan, text(console), chunk=997).verdict(job.plan)
        if lava.verdict != ours:
            differ.append(f"{job.key} on {console.relative_to(TESTDATA)}: match {ours}, "
                          f"LAVA {lava.verdict} ({lava.summary}; {lava.diffs})")
    assert not differ, "\n".join(differ)
    assert seen["PASS"] > 300 / SHARDS and seen["FAIL"] > 400 / SHARDS \
        and seen["XFAIL"] > 60 / SHARDS, seen


def test_the_shards_cover_every_pair_once():
    assert len(PAIRS) > 800
    indices = range(len(PAIRS))
    assert sorted(i for s in range(SHARDS) for i in indices[s::SHARDS]) == list(indices)


def lava_on(suite: str, name: str, console: Path) -> tuple[str, list[str]]:
    job = jobs(suite)[name]
    v = replay(job.plan, text(console)).verdict(job.plan)
    return v.verdict, [d.split(":")[0].removeprefix("LAVA ") for d in v.diffs]


def test_every_default_job_passes_on_its_own_kernels_console():
    for name, job in jobs("default").items():
        console = TESTDATA / "console-series/default" / f"{name}.log"
        if not console.exists():
            continue            # check-legit-copies: no console kept for default
        v, failed = lava_on("default", name, console)
        assert v in ("PASS", "XFAIL"), (name, failed)


def test_default_jobs_on_the_nosplit_kernel_fail_in_lava():
    """The wrong kernel: nosplit has no user-sized caches, its split
    triggers XFAIL and memdup_user() is back in kmalloc-1k."""
    nosplit = TESTDATA / "console-series/nosplit-kconfig"
    for name in ("USERCOPY_KMALLOC_SPLIT_TO", "USERCOPY_KMALLOC_SPLIT_CG_FROM"):
        v, failed = lava_on("default", name, nosplit / f"{name}.log")
        assert v == "FAIL" and "outcome" in failed and "report-1" in failed, failed
    v, failed = lava_on("default", "USERCOPY_MEMDUP_USER_TO", nosplit / "USERCOPY_MEMDUP_USER_TO.log")
    assert v == "FAIL" and "report-1" in failed, failed


def test_the_rds_mutant_fails_in_lava():
    """make mutation-rds's kernel: rds_tcp_incoming and rds_ib_incoming
    without their regions; the seeds suite's probes expect no report."""
    mutant = TESTDATA / "rds/mutant-rds-no-region/seeds"
    for name in ("rds-tcp-cookie", "rds-ib-cookie"):
        v, failed = lava_on("seeds", name, mutant / f"{name}.log")
        assert v == "FAIL" and "no-other-report" in failed and "outcome" in failed, failed
        v, failed = lava_on("seeds", name, TESTDATA / "rds/fixed/seeds" / f"{name}.log")
        assert v == "PASS", failed


def test_a_report_with_other_fields_fails_its_case():
    # The fallback kernel command line WARNs where the default golden wants a BUG.
    v, failed = lava_on("default", "USERCOPY_SLAB_WHITELIST_TO",
                        TESTDATA / "console-series/fallback/USERCOPY_SLAB_WHITELIST_TO.log")
    assert v == "FAIL" and "report-1" in failed
    # The slab kernel: "SLAB object" where the default golden says SLUB.
    v, failed = lava_on("default", "USERCOPY_SLAB_SIZE_TO",
                        TESTDATA / "console-series/slab/USERCOPY_SLAB_SIZE_TO.log")
    assert v == "FAIL" and failed == ["report-1"]


def test_a_missing_report_fails():
    # Stock 6.1.192: no report for the vmalloc copy (the guard-page gap).
    v, failed = lava_on("default", "USERCOPY_VMALLOC", TESTDATA / "console/USERCOPY_VMALLOC.log")
    assert v == "FAIL" and {"report-1", "outcome"} <= set(failed)


def test_an_unexpected_second_report_fails():
    # The fallback's two-cache trigger WARNs twice; the default golden
    # expects the first report only (a BUG).
    v, failed = lava_on("fallback", "USERCOPY_WHITELIST_TWO_CACHES_TO",
                        TESTDATA / "console-series/fallback/USERCOPY_WHITELIST_TWO_CACHES_TO.log")
    assert v == "PASS", failed
    one = load(REPO / "expected-oops/fallback/USERCOPY_WHITELIST_TWO_CACHES_TO.txt")
    one.reports = one.reports[:1]
    one.lkdtm_expect = [e for e in one.lkdtm_expect if "dentry" not in e and "55" not in e]
    p = plan(one.trigger, one)
    v = replay(p, text(TESTDATA / "console-series/fallback/USERCOPY_WHITELIST_TWO_CACHES_TO.log"))
    assert v.results["no-other-report"] == "fail" and v.verdict(p).verdict == "FAIL"


def crossed(console: str, trigger: str, how: str) -> str:
    """A real console turned into one that answers another request."""
    direct = f"lkdtm: Performing direct entry {trigger}"
    line_start = console.index(direct)
    line_end = console.index("\n", line_start) + 1
    line = console[console.rindex("\n", 0, line_start) + 1:line_end]
    if how == "other-direct":
        return console.replace(direct, "lkdtm: Performing direct entry USERCOPY_STACK_FRAME_TO")
    if how == "two-directs":
        return console[:line_end] + line + console[line_end:]
    if how == "no-direct":
        return console.replace(line, "")
    if how == "other-start-first":
        start = console.index("USERCOPY-LAB-START")
        return (console[:start] + "USERCOPY-LAB-START trigger=USERCOPY_STACK_FRAME_TO\r\n"
                + console[start:])
    if how == "other-end":
        end = console.index(f"USERCOPY-LAB-END trigger={trigger} ")
        return (console[:end] + "USERCOPY-LAB-END trigger=USERCOPY_STACK_FRAME_TO "
                "outcome=killed signal=9\r\n" + console[end:])
    raise ValueError(how)


@pytest.mark.parametrize("how", ["other-direct", "two-directs", "no-direct",
                                 "other-start-first", "other-end"])
def test_a_console_of_another_request_is_incomplete_as_match_says_error(how, tmp_path):
    """verdict.bound_to: START, END and LKDTM's direct entry must name the
    trigger asked for, once; otherwise the console is not its run.  LAVA
    ends the job Incomplete (ERROR), the matcher says ERROR."""
    name = "USERCOPY_SLAB_SIZE_TO"
    console = crossed(text(TESTDATA / f"console-series/default/{name}.log"), name, how)
    assert console != text(TESTDATA / f"console-series/default/{name}.log")
    path = tmp_path / f"{name}.log"
    path.write_text(console)
    job = jobs("default")[name]
    assert match_verdict(job, path) == "ERROR"
    r = replay(job.plan, console)
    assert r.health == INCOMPLETE and r.verdict(job.plan).verdict == "ERROR", r.records
    assert "another request" in r.error or "never performed" in r.error, r.error


def test_a_console_that_ends_early_is_incomplete_not_pass():
    console = text(TESTDATA / "console-series/default/USERCOPY_SLAB_SIZE_TO.log")
    cut = console[:console.index("USERCOPY-LAB-END")]
    job = jobs("default")["USERCOPY_SLAB_SIZE_TO"]
    r = replay(job.plan, cut)
    assert r.health == INCOMPLETE and r.results["no-other-report"] == "fail"
    assert "outcome" not in r.results and r.verdict(job.plan).verdict == "ERROR"


def after_ready(console: str) -> str:
    """What LAVA's test action reads: the console after the boot prompt."""
    return console[console.index("USERCOPY-LAB-READY") + len("USERCOPY-LAB-READY"):]


def test_forbidden_lines_never_keep_a_job_from_its_end_marker():
    """A check program that prints more FAIL lines than there are cases:
    each case they fail consumes one, but outcome waits for END, so LAVA
    keeps the whole console (found on the nosplit kernel: three FAIL lines
    of check-usersized-caches ended the job before END)."""
    console = after_ready(text(TESTDATA / "console-series/default/check-usersized-caches.log"))
    start = console.index("\n", console.index("USERCOPY-LAB-START")) + 1
    fails = "".join(f"usercopy-lab-check: FAIL: cache {i} missing\r\n" for i in range(6))
    job = jobs("default")["check-usersized-caches"]
    r = replay(job.plan, console[:start] + fails + console[start:])
    assert r.health == COMPLETE and r.records[-1].text.startswith("USERCOPY-LAB-END")
    assert r.verdict(job.plan).verdict == "FAIL"


def test_outcome_is_recorded_only_from_a_whole_line():
    """The old monitor took `outcome=kil` for a result when the rest of the
    line had not arrived yet; every step waits for the newline."""
    console = after_ready(text(TESTDATA / "console-series/default/USERCOPY_SLAB_SIZE_TO.log"))
    job = jobs("default")["USERCOPY_SLAB_SIZE_TO"]
    end = console.index("outcome=killed") + len("outcome=kil")
    for sizes in ([100] * (end // 100) + [end % 100, 1, 1, 1, 1],
                  [100] * (end // 100) + [end % 100 + 4, 1]):
        r = replay(job.plan, console, chunk=sizes)
        assert r.results["outcome"] == "pass" and r.verdict(job.plan).verdict == "PASS"
        assert r.records[-1].text.startswith("USERCOPY-LAB-END")
        assert r.records[-1].text.endswith("\n")


@pytest.mark.parametrize("name,console", [
    ("USERCOPY_SLAB_SIZE_TO", "console-series/default/USERCOPY_SLAB_SIZE_TO.log"),
    ("USERCOPY_WHITELIST_CAIF_TO", "console-series/default/USERCOPY_WHITELIST_CAIF_TO.log"),
    ("USERCOPY_KMALLOC_SPLIT_TO", "console-series/nosplit-kconfig/USERCOPY_KMALLOC_SPLIT_TO.log"),
])
def test_no_decision_depends_on_how_the_console_is_cut(name, console):
    """Byte by byte after START (every partial line seen by every pattern)
    LAVA records what it records reading 997 characters at a time."""
    job = jobs("default")[name]
    data = after_ready(text(TESTDATA / console))
    whole = replay(job.plan, data, chunk=997).results
    assert replay(job.plan, data, chunk=1).results == whole


def test_every_pattern_waits_for_the_end_of_its_line():
    """A success consumes through a newline; a failure that looks ahead
    looks at a whole line: no pattern matches a line still arriving."""
    for suite in ("default", "fallback", "seeds"):
        for job in jobs(suite).values():
            for step in job.plan.steps:
                for p in step.successes + tuple(f.message for f in step.failures):
                    compiled = re.compile(p, re.DOTALL)
                    assert p == "(?!)" or "\\n" in p, (job.key, step.name, p)
                    assert compiled.groups >= 0


def test_cases_follow_the_golden_file():
    job = jobs("default")["USERCOPY_SLAB_SIZE_TO"]
    assert job.plan.cases == ("start", "direct", "lkdtm-before-1", "lkdtm-before-2", "report-1",
                              "report-1-bug-site", "report-1-rip", "report-1-frames",
                              "no-other-report", "outcome")
    report = next(s for s in job.plan.steps if s.name == "report-1")
    assert "cache kmalloc-1k, offset 16, size 1024" in report.means
    assert "tests.txt" in report.means     # its line carries tests.txt's text
    two = jobs("fallback")["USERCOPY_WHITELIST_TWO_CACHES_TO"].plan.cases
    assert two.index("lkdtm-expect-1") < two.index("report-2") < two.index("lkdtm-expect-3")
    caif = jobs("lab")["USERCOPY_WHITELIST_CAIF_TO"]     # a kernel without CAIF
    assert caif.plan.all_pass == "XFAIL" and "report-1" not in caif.plan.cases
    legit = jobs("default")["check-legit-copies"].plan.cases
    assert legit == ("start", "check-pass", "no-other-report", "outcome")
    assert "audit-slab-caches" not in jobs("seeds")


def test_fields_lava_cannot_check_are_named():
    kernel = jobs("default")["USERCOPY_KERNEL"].plan
    assert any("offset-base" in u for u in kernel.unexpressed)
    assert jobs("default")["USERCOPY_SLAB_SIZE_TO"].plan.unexpressed == ()


def test_verdict_from_lavas_record():
    p = jobs("default")["USERCOPY_SLAB_SIZE_TO"].plan
    every = {c: "pass" for c in p.cases}
    assert verdict(p, COMPLETE, every).verdict == "PASS"
    assert verdict(p, INCOMPLETE, every).verdict == "ERROR"
    short = dict(every)
    del short["outcome"]
    v = verdict(p, COMPLETE, short)
    assert v.verdict == "ERROR" and "incomplete: outcome" in v.summary
    v = verdict(p, COMPLETE, {**every, "report-1": "fail"})
    assert v.verdict == "FAIL" and v.diffs[0].startswith("LAVA report-1: fail (report 1:")


def test_a_trigger_without_a_golden_file_has_no_lava_job():
    with pytest.raises(ValueError, match="no golden file"):
        plan("USERCOPY_NOTHING", None)
    p = plan("check-anything", None, check=True)
    assert p.cases == ("start", "check-pass", "no-other-report", "outcome")


def test_opener_is_a_report_line_and_not_its_continuation():
    hit = re.compile(OPENER, re.DOTALL)
    for line in ("[    1.0] kernel BUG at mm/usercopy.c:131!\r\n",
                 "[    1.0] usercopy: Kernel memory exposure attempt detected from x (offset 0, size 1)!\n",
                 "[    1.0] WARNING: CPU: 0 PID: 1 at mm/x.c:1 f+0x1/0x2\n",
                 "[    1.0] Oops: 0000 [#1] SMP\n"):
        assert hit.match(line), line
    for line in ("[    1.0] invalid opcode: 0000 [#1]\n", "[    1.0] ODEBUG: object is on stack\n",
                 "[    1.0] lkdtm: attempting bad copy_to_user of too large size\n",
                 "[    1.0] kernel BUG at mm/usercopy.c:131!"):     # no newline yet
        assert not hit.match(line), line


def test_ere_translation():
    assert re.search(ere_to_python("from SL[AU]B object 'x' \\(offset 1"),
                     "from SLAB object 'x' (offset 1")
    assert ere_to_python("a.b") == "a[^\\n]b"
    for unsupported in ("^a", "a{2}", "[[:alpha:]]", "\\1"):
        assert ere_to_python(unsupported) is None
    g = Golden(Path("X.txt"), "X", "returned")
    p = plan("X", g, "a{2}")
    assert any("ERE" in u for u in p.unexpressed) and "tests-txt" not in p.cases
    assert "tests-txt" in plan("X", g, "needle").cases
