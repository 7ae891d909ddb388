"""A golden file as LAVA test cases: what LAVA itself records pass or fail.

A LAVA job of this lab boots one guest that fires one trigger (or runs one
in-guest check program) and has no shell for LAVA to drive, so the verdict
has to come from the serial console alone.  LAVA 2023.01 offers two
console-only test actions: `monitors`, whose test case names come from the
console text and whose results can only be what the console spells out,
and `interactive` scripts, whose steps have names of their own and record
"pass" when one of their `successes` patterns matches first and "fail"
when one of their `failures` does.  plan() turns a golden file into such
steps, one LAVA test case per thing the golden file expects, in console
order:

  start               the START marker of the trigger
  direct              LKDTM's "Performing direct entry NAME" (triggers that run)
  lkdtm-before-N      the golden's Nth lkdtm-before line, in order, before any report
  report-J            report J's first line: kind, direction, object, cache,
                      offset, size (and tests.txt's expected text when that line
                      carries it)
  report-J-bug-site   the "kernel BUG at" / "WARNING: ... at" line of report J
  report-J-rip        its first RIP line
  report-J-frames     its call trace: the golden's frames in order, and a
                      complete trace (not truncated)
  lkdtm-expect-N      the golden's Nth lkdtm-expect line (an XFAIL: line for
                      outcome xfail); check programs: check-pass (a PASS line)
  tests-txt           tests.txt's expected text, where no line above carries it
  no-other-report     no report after the last expected one, up to the END marker
  outcome             the END marker's outcome (killed / returned / ...)

How LAVA matches (lava_dispatcher/actions/test/interactive.py and pexpect
4.8): each step is one expect() over the console not yet consumed: the
earliest match of its failures and successes wins (at the same position a
failure wins), the text up to the end of the match is consumed, and the
search window is the last 4000 characters.  So every pattern here ends
with the line's newline (a line still arriving never matches: the old
monitor took `outcome=kil` for a result), a step's success consumes the
line that decided it, and the failures that end a step's part of the
console (the next report, the END marker) are zero-width lookaheads,
left for the steps after it.  A line of the step's own kind that says
something else (another usercopy line, another bug site or RIP) fails it
and is consumed, so the steps after it read the rest of the report.
Every step but `outcome` fails on a forbidden LKDTM line (FAIL: unless
the golden expects one, XFAIL: unless its outcome is xfail, its
lkdtm-absent lines; a check program's FAIL: line) seen while it waits, and
consumes it; `outcome` is decided by the END marker alone, so a job always
reads its console up to END.  Where a step ends with a report or END
missing its line, the failure looks ahead from where the step started
and consumes nothing.

A step that no pattern decides (the guest hung) runs into the job's
timeout; init refusing the trigger, a kernel without LKDTM, a guest
that reboots before its END marker and a console that answers another
request (verdict.bound_to: after START, a second START marker, an END
marker or an LKDTM direct entry naming another trigger, a second direct
entry, none although init says the trigger ran) are failures with a
TestError: in all of them LAVA ends the job Incomplete, and so does a
lost connection (QEMU gone).  verdict() turns a job's health and results into the lab's
verdict: Incomplete or a case missing is ERROR, a failed case FAIL, all
passed the golden's own verdict (PASS, XFAIL or SKIP).

What a regular expression over the console cannot say is listed in each
plan's `unexpressed` and in docs/lava.md; `usercopy-lab match` on the
downloaded console stays the exact check.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..judge.golden import ExpectedReport, Golden
from ..judge.selftests import grep_eqi
from ..model import Outcome
from ..protocol import CHECK_PREFIX, NOTE, end_line, start_line
from .patterns import (BOL, DIRECT, END, NEVER, NL, OPENER, REBOOTED, REST, RIP_ANY,
                       SITE_ANY, START, TRACE_OVER, USERCOPY_HEADER, absent, ahead, end_marker,
                       ere_to_python, frames_block, header_line, lkdtm_line, none_before,
                       other_line, rip_line, sample_header, site_line, whole_line)

# The interactive script's name; LAVA names the results' suite
# "<stage>_<name>" (stage 0: the job's first test action).
SCRIPT = "golden"
SUITE = f"0_{SCRIPT}"


@dataclass(frozen=True)
class Failure:
    message: str
    exception: str | None = None     # "TestError": LAVA ends the job Incomplete
    error: str | None = None

    def to_lava(self) -> dict[str, str]:
        out = {"message": self.message}
        if self.exception:
            out["exception"] = self.exception
            out["error"] = self.error or self.exception
        return out


@dataclass(frozen=True)
class Step:
    name: str                        # the LAVA test case
    means: str                       # what the golden file says it stands for
    successes: tuple[str, ...]
    failures: tuple[Failure, ...]

    def to_lava(self) -> dict[str, Any]:
        return {"name": self.name, "command": None, "wait_for_prompt": False,
                "successes": [{"message": m} for m in self.successes],
                "failures": [f.to_lava() for f in self.failures]}


@dataclass(frozen=True)
class Plan:
    """One job's LAVA test cases and what their results mean."""
    name: str                        # trigger or check program
    steps: tuple[Step, ...]
    all_pass: str                    # the verdict when every case passed
    unexpressed: tuple[str, ...] = ()   # golden fields LAVA cannot check, and why

    @property
    def cases(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.steps)

    def interactive(self) -> list[dict[str, Any]]:
        """The job's `test: interactive:` list."""
        return [{"name": SCRIPT, "prompts": [NEVER],
                 "script": [s.to_lava() for s in self.steps]}]


@dataclass
class _Builder:
    name: str
    forbidden: list[str]             # regexes of forbidden lines (consumed on sight)
    steps: list[Step] = field(default_factory=list)
    unexpressed: list[str] = field(default_factory=list)
    carrier: tuple[str | None, str | None] = (None, None)   # (step key, tests.txt text)
    crossed: list[str] = field(default_factory=list)   # lines of another request

    def giving_up(self) -> list[Failure]:
        """Failures of every step that end the job Incomplete: the guest
        giving up, and a line that binds the console to another request
        (verdict.bound_to: never a verdict of this trigger)."""
        name = re.escape(self.name)
        out = [Failure(end_line(name, Outcome.NO_LKDTM) + NL, "TestError",
                       "the guest kernel has no LKDTM debugfs interface"),
               Failure(whole_line(re.escape(REBOOTED)), "TestError",
                       f"the guest rebooted before {END}")]
        if self.crossed:
            out.append(Failure(whole_line(f"(?:{'|'.join(self.crossed)})"), "TestError",
                               f"the console answers another request than {self.name}"))
        return out

    def add(self, name: str, means: str, success: str, *failures: str,
            carries: str = "", forbidden: bool = True) -> None:
        """A step; at one position a failure listed first wins: the guest
        giving up, then the step's own failures, then (unless forbidden is
        False) the forbidden lines."""
        if carries and carries == self.carrier[0]:
            means += f"; carries tests.txt's {self.carrier[1]!r}"
        tail = [Failure(whole_line(f"(?:{'|'.join(self.forbidden)})"))] \
            if forbidden and self.forbidden else []
        self.steps.append(Step(name, means, (success,), tuple(self.giving_up())
                               + tuple(Failure(f) for f in failures) + tuple(tail)))


def _announces(text: str, exp: ExpectedReport) -> bool:
    """An LKDTM line announcing this report's copy: the window in its
    cache, or the bad copy at its offset and size."""
    f = exp.fields
    if m := re.search(r"expecting window offset \d+ size \d+ in '([^']+)'", text):
        return m.group(1) == f.get("cache")
    if m := re.search(r"attempting bad copy_(?:to|from)_user at offset (\d+) size (\d+)", text):
        return (m.group(1), m.group(2)) == (f.get("offset"), f.get("size"))
    return False


def plan(name: str, golden: Golden | None, expected_text: str | None = None,
         check: bool = False) -> Plan:
    """The steps of the job of trigger name (check=True: of check program
    name), judged by golden; expected_text: tests.txt's column when the
    suite checks it (an ERE, matched case-insensitively after START).  A
    check program without a golden file (verdict.decide_check): no report,
    a PASS line, no FAIL line, exit status 0."""
    if golden is None:
        if not check:
            raise ValueError(f"{name}: no golden file, so nothing for LAVA to check")
        return _plan(name, Golden(Path(name), name, Outcome.RETURNED), None, check, lkdtm=False)
    return _plan(name, golden, expected_text, check, lkdtm=True)


def _plan(name: str, golden: Golden, expected_text: str | None, check: bool,
          lkdtm: bool) -> Plan:
    forbidden = []
    if lkdtm:
        forbidden += [absent(a) for a in dict.fromkeys(golden.lkdtm_absent)]
        if not any(e.startswith("FAIL:") for e in golden.lkdtm_expect):
            forbidden.append(absent("FAIL:"))
        if golden.outcome is not Outcome.XFAIL:
            forbidden.append(absent("XFAIL:"))
    if check:
        forbidden.append(re.escape(CHECK_PREFIX + "FAIL:"))
    b = _Builder(name, forbidden)
    _start(b)
    _direct_step(b, golden.outcome, check)
    expect = list(golden.lkdtm_expect)
    if golden.outcome is Outcome.XFAIL and not any(e.startswith("XFAIL:") for e in expect):
        expect.append("XFAIL:")
    before_report = {j: [e for e in expect if _announces(e, r)]
                     for j, r in enumerate(golden.reports)}
    placed = {e for found in before_report.values() for e in found}
    tail = [e for e in expect if e not in placed]
    carrier = _carrier(golden, expected_text)
    b.carrier = (carrier, expected_text)
    for i, text in enumerate(golden.lkdtm_before, 1):
        b.add(f"lkdtm-before-{i}", f"lkdtm-before: {text}", whole_line(lkdtm_line(text)),
              none_before(lkdtm_line(text), name), carries=f"lkdtm-before:{text}")
    n_expect = 0
    for j, exp in enumerate(golden.reports):
        for text in before_report[j]:
            n_expect += 1
            _expect_step(b, n_expect, text, name)
        _report_steps(b, j + 1, exp, name)
    for text in tail:
        n_expect += 1
        _expect_step(b, n_expect, text, name)
    if check and golden.outcome is Outcome.RETURNED:
        b.add("check-pass", f"a '{CHECK_PREFIX}PASS:' line",
              whole_line(re.escape(CHECK_PREFIX + "PASS:")),
              none_before(re.escape(CHECK_PREFIX + "PASS:"), name))
    if expected_text and carrier is None and golden.outcome.ran_trigger:
        ere = ere_to_python(expected_text)
        if ere is None:
            b.unexpressed.append(f"tests.txt: {expected_text!r} uses ERE syntax the "
                                 "translation does not take")
        else:
            b.add("tests-txt", f"tests.txt: {expected_text}", whole_line(f"(?i:{ere})"),
                  end_marker(name))
    b.add("no-other-report", "no report after the expected ones", end_marker(name),
          f"(?={OPENER})")
    _outcome_step(b, golden.outcome, name, check)
    all_pass = {Outcome.XFAIL: "XFAIL",
                Outcome.UNKNOWN_TRIGGER: "SKIP"}.get(golden.outcome, "PASS")
    return Plan(name, tuple(b.steps), all_pass, tuple(b.unexpressed))


def _start(b: _Builder) -> None:
    name = re.escape(b.name)
    refused = Failure(whole_line(re.escape(NOTE) + "(?:refusing|no lab\\.trigger)"), "TestError",
                      "init did not run the trigger")
    mine = start_line(name) + NL
    other = Failure(other_line(ahead(f"{START} trigger="), mine), "TestError",
                    f"a START marker of another request than {b.name}")
    b.steps.append(Step("start", start_line(b.name), (mine,),
                        (refused, other) + tuple(b.giving_up())))
    # From here on (verdict.bound_to): a second START marker, an END marker
    # naming another trigger, LKDTM performing another trigger.
    b.crossed += [f"{START} trigger=", f"{END} trigger=(?!{name} )",
                  f"{DIRECT}(?!{name}{NL})"]


def _direct_step(b: _Builder, outcome: Outcome, check: bool) -> None:
    """LKDTM's "Performing direct entry NAME", once (verdict.bound_to):
    where init writes the name to DIRECT, before anything the trigger
    prints; a check program writes nothing there."""
    if check:
        b.crossed.append(DIRECT)
        return
    if not (outcome.ran_trigger or outcome is Outcome.XFAIL):
        # unknown-trigger: a kernel that has it (an outcome the golden does
        # not expect) writes the line once; the outcome case fails then.
        b.unexpressed.append("unknown-trigger: LKDTM performing the trigger twice")
        return
    name = re.escape(b.name)
    mine = whole_line(f"{DIRECT}{name}")
    ran_words = "|".join(o for o in Outcome if o.ran_trigger)      # killed|returned
    ran = end_marker(b.name) + f"(?={REST}outcome=(?:{ran_words}) )"
    # LKDTM silent although init says the trigger ran: not this trigger's
    # run; END with another outcome: no entry is due, the outcome case fails.
    missing = Failure(f"\\A(?=(?:(?!{REST}{DIRECT})[^\\n]*\\n)*?{ran})", "TestError",
                      f"init ran {b.name}, LKDTM never performed it")
    b.steps.append(Step("direct", f"lkdtm: Performing direct entry {b.name}, once", (mine,),
                        tuple(b.giving_up()) + (missing,)
                        + (Failure(f"\\A(?=(?:(?!{REST}{DIRECT})[^\\n]*\\n)*?"
                                   f"{end_marker(b.name)})"),)))
    b.crossed.append(DIRECT)


def _expect_step(b: _Builder, n: int, text: str, name: str) -> None:
    b.add(f"lkdtm-expect-{n}", f"lkdtm-expect: {text}", whole_line(lkdtm_line(text)),
          none_before(lkdtm_line(text), name), carries=f"lkdtm-expect:{text}")


def _report_steps(b: _Builder, j: int, exp: ExpectedReport, name: str) -> None:
    f = exp.fields
    head, loose = header_line(exp)
    b.unexpressed += [f"report {j} {x}" for x in loose]
    keys = [k for k in ("direction", "object", "cache", "offset", "offset-base", "size")
            if k in f]
    means = f"report {j}: {exp.kind}" + "".join(f", {k} {f[k]}" for k in keys)
    b.add(f"report-{j}", means, whole_line(head), other_line(f"(?={OPENER})", head),
          end_marker(name), carries=f"report-{j}")
    # The rest of the report: until its trace is over, a new usercopy line
    # would be another report.
    other = ahead(USERCOPY_HEADER)
    over = ahead(r"(?:Call Trace:|---\[ end trace)")
    if "bug-site" in f:
        site = site_line(f["bug-site"])
        b.add(f"report-{j}-bug-site", f"report {j}: bug-site {f['bug-site']}", whole_line(site),
              other_line(ahead(SITE_ANY), site), over, other, end_marker(name))
    if "rip" in f:
        rip = rip_line(f["rip"])
        b.add(f"report-{j}-rip", f"report {j}: rip {f['rip']}", whole_line(rip),
              other_line(ahead(RIP_ANY), rip), over, other, end_marker(name))
    block = frames_block(exp.frames)
    complete = f"{REST}Call Trace:{NL}(?:{REST}\\n)*?{REST}(?:{TRACE_OVER}|---\\[ end trace){REST}\\n"
    b.add(f"report-{j}-frames",
          f"report {j}: frames {' '.join(exp.frames)}, trace complete" if exp.frames
          else f"report {j}: a complete call trace",
          block, f"{BOL}(?={complete})(?!{block})", ahead(r"---\[ end trace"), other,
          end_marker(name))


def _outcome_step(b: _Builder, outcome: Outcome, name: str, check: bool) -> None:
    end = f"{END} trigger={re.escape(name)} outcome="
    status = r"0" if check else r"\d+"
    want = {
        Outcome.KILLED: r"killed signal=\d+",
        Outcome.RETURNED: f"returned status={status}",
        Outcome.XFAIL: r"(?:killed signal|returned status)=\d+",
        Outcome.UNKNOWN_TRIGGER: "unknown-trigger",
    }[outcome]
    means = f"outcome {outcome}" + (" (status 0)" if check and outcome is Outcome.RETURNED else "")
    success = f"{end}{want}{NL}"
    # Only the END marker decides it: the job reads the console up to END
    # whatever came before (a forbidden line failed an earlier case).
    b.add("outcome", means, success, ahead(end) + f"(?!{REST}{success})", forbidden=False)


def _carrier(golden: Golden, expected_text: str | None) -> str | None:
    """Which expected line carries tests.txt's text, so that its step checks
    it too: "lkdtm-before:TEXT", "report-1" or "lkdtm-expect:TEXT" (the
    ERE, case-insensitive, found in that line as the golden spells it)."""
    if not expected_text or not golden.outcome.ran_trigger:
        return None
    candidates = [(f"lkdtm-before:{t}", f"lkdtm: {t}") for t in golden.lkdtm_before]
    if golden.reports and (sample := sample_header(golden.reports[0])) is not None:
        candidates.append(("report-1", sample))
    candidates += [(f"lkdtm-expect:{t}", f"lkdtm: {t}") for t in golden.lkdtm_expect]
    ere = ere_to_python(expected_text)
    for key, text in candidates:
        if ere is not None:
            found = re.search(ere, text, re.IGNORECASE) is not None
        else:
            found = grep_eqi(expected_text, text)
        if found:
            return key
    return None


# ------------------------------------------------------------ verdicts

COMPLETE, INCOMPLETE, CANCELED = "Complete", "Incomplete", "Canceled"


@dataclass
class LavaVerdict:
    verdict: str                     # PASS / FAIL / XFAIL / SKIP / ERROR
    summary: str
    diffs: list[str] = field(default_factory=list)


def verdict(p: Plan, health: str, results: Mapping[str, str],
            error: str = "") -> LavaVerdict:
    """The lab's verdict from LAVA's own record of a job: its health and
    the results of its test cases (case name -> pass/fail)."""
    means = {s.name: s.means for s in p.steps}
    failed = [c for c in p.cases if results.get(c) == "fail"]
    passed = [c for c in p.cases if results.get(c) == "pass"]
    missing = [c for c in p.cases if c not in results]
    summary = f"LAVA {health}: {len(passed)} pass, {len(failed)} fail" + (
        f", {len(missing)} not recorded" if missing else "")
    diffs = [f"LAVA {c}: fail ({means[c]})" for c in failed]
    if health != COMPLETE:
        return LavaVerdict("ERROR", summary + (f"; {error}" if error else ""), diffs)
    if missing:
        return LavaVerdict("ERROR", summary + "; incomplete: " + ", ".join(missing),
                           diffs)
    if failed:
        return LavaVerdict("FAIL", summary, diffs)
    return LavaVerdict(p.all_pass, summary)


