"""Decide one trigger's verdict from its console, reports and golden file."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from ..inputs import shown
from ..model import Fault, Outcome, Report, Verdict, usercopy_line
from ..reports import ConsoleMarkers
from ..audit.dwarf_layout import DwarfError
from .golden import Golden, match_expected
from ..audit.slab_audit import audit_console
from ..audit.whitelist_spec import VALUES_CACHE, SpecError, load_or_compute, load_spec

PASS, FAIL, XFAIL, SKIP, ERROR = Verdict
FAILING = (FAIL, ERROR)


@dataclass
class Decision:
    """A verdict with what it rests on."""

    verdict: Verdict
    summary: str                      # one line: what was seen
    diffs: list[str] = field(default_factory=list)   # expected-vs-seen lines
    fault: Fault | None = None        # an ERROR's fault when the verdict knows it


class Asked(str, Enum):
    """What a request asked the guest for, and so what LKDTM must say."""

    TRIGGER = "trigger"    # init writes NAME to DIRECT once, when it ran (killed/returned)
    SELFTEST = "selftest"  # run.sh writes NAME to DIRECT once, unless it skips (status 4)
    CHECK = "check"        # a check program: nothing is written to DIRECT


def bound_to(requested: str, markers: ConsoleMarkers, asked: Asked) -> str | None:
    """None if the console answers the request for `requested`, else one
    line naming both: every START and END marker of the protocol must name
    it, once each, and LKDTM's "Performing direct entry NAME" lines must
    name it too, as often as `asked` says.

    A console that names another trigger is a crossed or stale reply (a
    tampered log, a request answered for another one, output of an earlier
    request in a kept QEMU): never a verdict of the trigger asked for."""
    name = shown(requested)
    others = [n for n in dict.fromkeys(markers.starts + markers.ends) if n != requested]
    if others:
        return (f"asked for {name}, the console's START/END markers name "
                f"{', '.join(shown(n) for n in others)}")
    if len(markers.starts) > 1 or len(markers.ends) > 1:
        return (f"asked for {name} once, the console has {len(markers.starts)} START and "
                f"{len(markers.ends)} END markers for it")
    fired = [n for n in markers.direct if n != requested or asked is Asked.CHECK]
    if fired:
        return (f"asked for {asked.value} {name}, LKDTM performed "
                f"{', '.join(shown(n) for n in dict.fromkeys(fired))}")
    count = len(markers.direct)
    ended = markers.ended is not None
    must_fire = (asked is Asked.TRIGGER and ended and markers.outcome is not None
                 and markers.outcome.ran_trigger) \
        or (asked is Asked.SELFTEST and ended and markers.outcome is Outcome.RETURNED
            and markers.status in (0, 1))   # run.sh's exit after its write to DIRECT
    if count > 1 or (must_fire and count == 0):
        return (f"asked for {name}, LKDTM said 'Performing direct entry {name}' "
                f"{count} times (once expected)")
    return None


def seen_summary(reports: list[Report], markers: ConsoleMarkers) -> str:
    if not reports:
        return f"no report, {markers.outcome_said or 'no end marker'}"
    parts = []
    for r in reports:
        if r.kind.is_usercopy:
            parts.append(usercopy_line(r.kind, r.direction, r.object, r.cache,
                                       r.offset, r.size))
        else:
            parts.append(r.title or r.kind)
    return "; ".join(parts)


def decide(trigger: str, capture_error: str | None, markers: ConsoleMarkers,
           reports: list[Report], golden: Golden | None) -> Decision:
    summary = seen_summary(reports, markers)
    if markers.started is None:
        return Decision(ERROR, capture_error or "guest never reached the trigger")
    if problem := bound_to(trigger, markers, Asked.TRIGGER):
        return Decision(ERROR, problem, fault=Fault.WRONG_TRIGGER)
    if markers.outcome is Outcome.UNKNOWN_TRIGGER:
        if golden is None or golden.outcome is Outcome.UNKNOWN_TRIGGER:
            return Decision(SKIP, f"{trigger} is not listed by provoke-crash/DIRECT")
        return Decision(FAIL, f"{trigger} is not listed by provoke-crash/DIRECT",
                       [f"outcome: expected {golden.outcome}, saw unknown-trigger"])
    if markers.outcome is Outcome.NO_LKDTM:
        return Decision(ERROR, "the guest kernel has no LKDTM debugfs interface")
    if markers.ended is None:
        return Decision(ERROR, f"{capture_error or 'no end marker'}; saw: {summary}")
    if golden is None:
        return Decision(FAIL, summary, [f"golden: no golden file for {trigger}"])

    diffs = _compare(golden, markers, reports)
    if markers.lkdtm_xfail:
        if golden.outcome is Outcome.XFAIL and not diffs:
            return Decision(XFAIL, markers.lkdtm_xfail[0])
        if golden.outcome is not Outcome.XFAIL:
            diffs.insert(0, f"outcome: expected {golden.outcome}, saw LKDTM "
                            f"{markers.lkdtm_xfail[0]!r}")
    return Decision(FAIL if diffs else PASS, summary, diffs)


def _compare(golden: Golden, markers: ConsoleMarkers,
             reports: list[Report]) -> list[str]:
    diffs: list[str] = []
    outcome = Outcome.XFAIL if markers.lkdtm_xfail else markers.outcome
    if outcome != golden.outcome:
        detail = f" (signal {markers.signal})" if markers.signal else \
            f" (status {markers.status})" if markers.status is not None else ""
        said = outcome if outcome is not None else markers.outcome_said
        diffs.append(f"outcome: expected {golden.outcome}, saw {said}{detail}")

    for i in range(max(len(golden.reports), len(reports))):
        if i >= len(reports):
            diffs.append(f"report {i + 1}: expected {golden.reports[i].one_line()}, saw none")
        elif i >= len(golden.reports):
            r = reports[i]
            if golden.reports and _follow_on(r, golden.follow_on):
                continue
            diffs.append(f"report {i + 1}: unexpected {r.title or r.kind} "
                         f"(line {r.line})")
        else:
            found = match_expected(golden.reports[i], reports[i])
            diffs += [f"report {i + 1} {d}" for d in found]

    diffs += _compare_lkdtm(golden, markers, reports[0].line if reports else None)
    diffs += _cross_check(markers, reports)
    return diffs


def _follow_on(r: Report, titles: tuple[str, ...]) -> bool:
    """Whether r is one of the tolerated follow-on reports: its title is
    one of titles, or r's header is the console's last line, cut where the
    capture ended at the END marker (Report.header_cut), and what it printed
    of the function is the start of one of them ("WARNING in ct_kerne" of
    "WARNING in ct_kernel_exit").  Never a header cut before its function."""
    if r.title in titles:
        return True
    if not r.header_cut or " in " not in r.title:
        return False
    func = r.title.split(" in ", 1)[1]
    return bool(func) and any(t.startswith(r.title) for t in titles)


def _compare_lkdtm(golden: Golden, markers: ConsoleMarkers,
                   first_report: int | None) -> list[str]:
    """lkdtm-before lines in order and above the first report (first_report:
    its console line; None: no report, then the order alone is checked)."""
    diffs = []
    pos = 0
    before = len(markers.lkdtm) if first_report is None else \
        sum(1 for n in markers.lkdtm_line if n < first_report)
    for want in golden.lkdtm_before:
        hit = next((i for i in range(pos, before) if want in markers.lkdtm[i]), None)
        if hit is None:
            late = next((markers.lkdtm_line[i] for i in range(pos, len(markers.lkdtm))
                         if want in markers.lkdtm[i]), None)
            where = f"only at line {late}, after the report at line {first_report}" \
                if late is not None and first_report is not None else "not seen"
            diffs.append(f"lkdtm-before: expected {want!r} (in order, before the "
                         f"first report), {where}")
        else:
            pos = hit + 1
    for want in golden.lkdtm_expect:
        if not any(want in m for m in markers.lkdtm):
            diffs.append(f"lkdtm-expect: expected {want!r}, not seen")
    absent = list(golden.lkdtm_absent)
    if not any(e.startswith("FAIL:") for e in golden.lkdtm_expect):
        absent.append("FAIL:")
    for bad in dict.fromkeys(absent):
        for m in markers.lkdtm:
            if m.startswith(bad) or (not bad.endswith(":") and bad in m):
                diffs.append(f"lkdtm-absent: LKDTM said {m!r}")
    return diffs


def _cross_check(markers: ConsoleMarkers, reports: list[Report]) -> list[str]:
    """The oops must describe the copy the trigger announced it would make."""
    usercopy = [r for r in reports if r.kind.is_usercopy]
    if not usercopy:
        return []
    r = usercopy[0]
    diffs = []
    if markers.window and r.cache != markers.window.cache:
        diffs.append(f"cross-check cache: trigger expected window in "
                     f"{markers.window.cache!r}, oops names {r.cache!r}")
    if markers.bad_copy and (r.offset, r.size) != markers.bad_copy:
        diffs.append(f"cross-check offset/size: trigger copied offset "
                     f"{markers.bad_copy[0]} size {markers.bad_copy[1]}, oops says "
                     f"offset {r.offset} size {r.size}")
    return diffs


def decide_check(name: str, capture_error: str | None, markers: ConsoleMarkers,
                 reports: list[Report], golden: Golden | None = None) -> Decision:
    """Verdict of an in-guest check program (lab.helper=NAME).

    PASS needs: the program ran and printed no FAIL line, and
    - without a golden file: it exited 0, printed at least one PASS line,
      and the kernel printed no report meanwhile;
    - with one (expected-oops/<suite>/<NAME in trigger form>.txt, see
      trigger_run.check_golden_name; e.g. a probe that a mutant
      kernel must oops): its outcome, reports and lkdtm lines match the
      golden file as for a trigger; an outcome "returned" still needs exit
      status 0 and a PASS line.
    """
    if markers.started is None:
        return Decision(ERROR, capture_error or "guest never started the check")
    if problem := bound_to(name, markers, Asked.CHECK):
        return Decision(ERROR, problem, fault=Fault.WRONG_TRIGGER)
    if markers.ended is None:
        return Decision(ERROR, capture_error or "no end marker")
    passed = [c for c in markers.checks if c.startswith("PASS:")]
    failed = [c for c in markers.checks if c.startswith("FAIL:")]
    diffs = [f"check: {c}" for c in failed]
    if golden is None:
        diffs += [f"report: unexpected {r.title or r.kind} (line {r.line})" for r in reports]
        if markers.outcome is not Outcome.RETURNED or markers.status != 0:
            diffs.append(f"outcome: expected returned status=0, saw {markers.outcome} "
                         f"signal={markers.signal} status={markers.status}")
    else:
        diffs += _compare(golden, markers, reports)   # outcome, reports, lkdtm lines
        if golden.outcome is Outcome.RETURNED and markers.status not in (None, 0):
            diffs.append(f"status: expected 0, saw {markers.status}")
    if (golden is None or golden.outcome is Outcome.RETURNED) and not passed:
        diffs.append("check: no PASS line printed")
    summary = f"{len(passed)} checks passed, {len(failed)} failed"
    if golden is not None:
        summary += f"; {seen_summary(reports, markers)}"
    return Decision(FAIL if diffs else PASS, summary, diffs)


def decide_audit(check: Decision, lines: list[str], spec_path: Path, vmlinux: Path,
                 out_dir: Path) -> Decision:
    """The whitelist audit: the check's verdict plus one diff per problem
    the golden file and the kernel build's offsetof/sizeof values find in
    the guest's slab table
    (slab_audit); the table is written into OUT_DIR."""
    try:
        spec = load_spec(spec_path)
        dwarf = load_or_compute(spec, vmlinux, vmlinux.parent / VALUES_CACHE)
    except (SpecError, DwarfError) as exc:
        return Decision(ERROR, f"audit: {exc}", check.diffs)
    diffs = check.diffs + audit_console(lines, spec, dwarf, out_dir)
    summary = f"{check.summary}; audit: {len(diffs) - len(check.diffs)} problem(s)"
    return Decision(FAIL if diffs else PASS, summary, diffs)
