"""KTAP and JUnit XML views of a run, for kernel CI systems.

results.json stays the source; these are two more renderings of the same
TriggerResult list, written next to it for every run (results.ktap,
junit.xml) and wherever `--ktap FILE` / `--junit FILE` ask.

KTAP (Documentation/dev-tools/ktap.rst): one nested test per suite, one
test case per trigger.  Before each result line, diagnostic lines give the
verdict, the one-line summary, every diff line of a FAIL, the log path, the
golden file and each parsed report's signature.  Our verdicts map onto
KTAP's result and directive as VERDICT_FORMS says; the tree's
tools/testing/kunit/kunit.py (6.1) honours only the SKIP directive, so it
counts XFAIL as passed and ERROR as failed (KUNIT_STATUS).

JUnit (the Ant/Jenkins/GitLab dialect): one <testsuite> per suite, one
<testcase> per trigger; FAIL -> <failure>, ERROR -> <error>, SKIP and
XFAIL -> <skipped> (type "skip" / "xfail", as pytest writes xfail).
"""
from __future__ import annotations

import datetime
import os
import re
import stat
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from ..inputs import shown, writable_file
from ..judge.verdict import ERROR, FAIL, PASS, SKIP, XFAIL
from ..model import Report, usercopy_line
from ..model import TriggerResult
from ..run.suite import Suite
from .selftests_comparison import write_comparison

KTAP_FILE = "results.ktap"
JUNIT_FILE = "junit.xml"


@dataclass(frozen=True)
class VerdictForm:
    """How one of our verdicts is written in KTAP and in JUnit."""

    ktap_ok: bool
    ktap_directive: str          # "" | "SKIP" | "XFAIL" | "ERROR"
    junit_element: str | None    # None (passed) | "failure" | "error" | "skipped"
    junit_type: str


VERDICT_FORMS: Mapping[str, VerdictForm] = MappingProxyType({
    PASS: VerdictForm(True, "", None, ""),
    FAIL: VerdictForm(False, "", "failure", "FAIL"),
    XFAIL: VerdictForm(True, "XFAIL", "skipped", "xfail"),
    SKIP: VerdictForm(True, "SKIP", "skipped", "skip"),
    ERROR: VerdictForm(False, "ERROR", "error", "ERROR"),
})

# The status kunit.py parse (6.1) gives each of our verdicts' KTAP lines.
KUNIT_STATUS: Mapping[str, str] = MappingProxyType({
    PASS: "PASS", XFAIL: "PASS", SKIP: "SKIP", FAIL: "FAIL", ERROR: "FAIL"})


# Characters XML 1.0 cannot carry (a console may hold any byte).
_XML_BAD = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _one_line(text: str) -> str:
    """One line, printable: what a name, summary or console line may hold
    (a newline, ESC, an undecodable byte from a file name) escaped."""
    return shown(" ".join(str(text).split()), None)


def _xml(text: str) -> str:
    return _XML_BAD.sub("?", text)


def _xml_name(text: str) -> str:
    """A name as an XML attribute value."""
    return _xml(_one_line(text))


def _reason(r: TriggerResult) -> str:
    """Why a trigger was not a plain pass, without repeating the verdict."""
    return _one_line(r.summary.removeprefix(f"{r.verdict}: "))


def _ktap_name(name: str) -> str:
    # A KTAP description cannot contain '#'.
    return _one_line(name).replace("#", "_")


def report_lines(r: Report) -> list[str]:
    """The parsed signature of one report, as diagnostic text lines."""
    if r.kind.is_usercopy:
        what = usercopy_line(r.kind, r.direction, r.object, r.cache, r.offset, r.size)
    else:
        what = f"{r.kind} {r.title}"
    where = ", ".join(x for x in (
        f"at {r.bug_site}" if r.bug_site else "",
        f"rip {r.rip}" if r.rip else "",
        f"guilty {r.guilty_frame}" if r.guilty_frame else "",
        "truncated" if r.truncated else "") if x)
    lines = [f"{what} ({where}) signature {r.signature}, log line {r.line}"]
    if r.frames:
        lines.append("frames: " + " ".join(r.frames))
    return lines


def diagnostics(r: TriggerResult) -> list[str]:
    """Diagnostic lines of one trigger: verdict, diffs, log, signatures."""
    lines = [f"{_one_line(r.trigger)}: {r.verdict} in {r.seconds:.1f}s: "
             f"{_one_line(r.summary)}"]
    lines += [f"diff: {_one_line(d)}" for d in r.diffs]
    lines.append(f"log: {_one_line(r.log)}")
    if r.golden:
        lines.append(f"golden: {_one_line(r.golden)}")
    for i, rep in enumerate(r.reports, 1):
        lines += [f"report {i}: {_one_line(x)}" for x in report_lines(rep)]
    return lines


def _by_suite(results: Iterable[TriggerResult]) -> dict[str, list[TriggerResult]]:
    suites: dict[str, list[TriggerResult]] = {}
    for r in results:
        suites.setdefault(r.suite, []).append(r)
    return suites


def _result_line(num: int, name: str, verdict: str, reason: str) -> str:
    form = VERDICT_FORMS[verdict]
    line = f"{'ok' if form.ktap_ok else 'not ok'} {num} {_ktap_name(name)}"
    if form.ktap_directive:
        line += f" # {form.ktap_directive}"
        if reason:
            line += f" {_one_line(reason)}"
    return line


def _suite_verdict(results: list[TriggerResult]) -> str:
    verdicts = {r.verdict for r in results}
    if verdicts & {FAIL, ERROR}:
        return FAIL
    if verdicts and verdicts <= {SKIP}:
        return SKIP
    return PASS


def ktap_text(results: list[TriggerResult], meta: Mapping[str, Any]) -> str:
    suites = _by_suite(results)
    out = ["KTAP version 1", f"1..{len(suites)}"]
    out += [f"# usercopy-lab {k}: {_one_line(str(v))}" for k, v in meta.items()]
    for snum, (suite, rows) in enumerate(suites.items(), 1):
        ind = "  "
        out += [f"{ind}KTAP version 1", f"{ind}# Subtest: {_ktap_name(suite)}",
                f"{ind}1..{len(rows)}"]
        for num, r in enumerate(rows, 1):
            out += [f"{ind}# {d}" for d in diagnostics(r)]
            reason = _reason(r) if r.verdict != PASS else ""
            out.append(ind + _result_line(num, r.trigger, r.verdict, reason))
        counts = Counter(r.verdict for r in rows)
        out.append(f"# {_one_line(suite)}: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
        out.append(_result_line(snum, suite, _suite_verdict(rows), "every trigger skipped"))
    return "\n".join(out) + "\n"


def junit_tree(results: list[TriggerResult], meta: Mapping[str, Any]) -> ET.ElementTree:
    stamp = datetime.datetime.now().isoformat(timespec="seconds")
    top = ET.Element("testsuites", name="usercopy-lab")
    total: Counter[str] = Counter()
    for suite, rows in _by_suite(results).items():
        counts = Counter(VERDICT_FORMS[r.verdict].junit_element for r in rows)
        total.update(counts)
        ts = ET.SubElement(top, "testsuite", name=_xml_name(suite), tests=str(len(rows)),
                           failures=str(counts["failure"]), errors=str(counts["error"]),
                           skipped=str(counts["skipped"]),
                           time=f"{sum(r.seconds for r in rows):.2f}", timestamp=stamp)
        props = ET.SubElement(ts, "properties")
        for key, value in meta.items():
            ET.SubElement(props, "property", name=_xml_name(key), value=_xml_name(value))
        for r in rows:
            case = ET.SubElement(ts, "testcase", name=_xml_name(r.trigger),
                                 classname=_xml_name(f"usercopy-lab.{suite}"),
                                 time=f"{r.seconds:.2f}")
            form = VERDICT_FORMS[r.verdict]
            if form.junit_element:
                el = ET.SubElement(case, form.junit_element, type=form.junit_type,
                                   message=_xml(f"{r.verdict}: {_reason(r)}"))
                if r.diffs:
                    el.text = _xml("\n".join(_one_line(d) for d in r.diffs))
            ET.SubElement(case, "system-out").text = _xml("\n".join(diagnostics(r)) + "\n")
    top.set("tests", str(len(results)))
    top.set("failures", str(total["failure"]))
    top.set("errors", str(total["error"]))
    top.set("skipped", str(total["skipped"]))
    tree = ET.ElementTree(top)
    ET.indent(tree)
    return tree


def read_junit_verdicts(path: Path) -> dict[tuple[str, str], str]:
    """(suite, trigger) -> our verdict, read back from a junit.xml we wrote."""
    forms = {(f.junit_element, f.junit_type): v for v, f in VERDICT_FORMS.items()}
    verdicts = {}
    for ts in ET.parse(path).getroot().iter("testsuite"):
        for case in ts.iter("testcase"):
            el = next((e for e in case if e.tag in ("failure", "error", "skipped")), None)
            key = (el.tag, el.get("type", "")) if el is not None else (None, "")
            verdicts[(ts.get("name", ""), case.get("name", ""))] = forms.get(key, "?")
    return verdicts


# What an existing file must begin with (after white space) for a run to
# replace it with a new file of that format: an earlier run's output.
OUTPUT_HEADS: Mapping[str, tuple[bytes, ...]] = MappingProxyType({
    "KTAP": (b"KTAP version", b"TAP version"),
    "JUnit": (b"<?xml", b"<testsuites", b"<testsuite"),
})


def output_problem(path: Path, form: str) -> str | None:
    """None when path may take a `form` (OUTPUT_HEADS) output: a new name
    in a folder that can be written, an empty file, or a regular file
    holding one already; else one line saying why not.  Never a device,
    FIFO, socket or symbolic link (the output is renamed over its path, so
    that would replace them: /dev/null, /proc/self/fd/1), nor a file that
    holds anything else (a console log named after a forgotten option
    value), which stays as it is."""
    name = shown(path, None)
    try:
        st = os.lstat(path)
    except FileNotFoundError:    # a new name
        return writable_file(path)
    except OSError as exc:       # e.g. under a file: writable_file says so
        return writable_file(path) or f"{name}: {shown(exc.strerror or exc, None)}"
    if stat.S_ISLNK(st.st_mode):
        return f"{name}: is a symbolic link; name the file itself, or a new file"
    if stat.S_ISDIR(st.st_mode):
        return f"{name}: is a directory, not a file"
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
        return f"{name}: is {kind}, not a regular file"
    try:
        with open(path, "rb") as f:
            head = f.read(256).lstrip()
    except OSError as exc:
        return f"{name}: {shown(exc.strerror or exc, None)}"
    if head and not head.startswith(OUTPUT_HEADS[form]):
        return f"{name}: exists and is not a {form} file; refusing to replace it"
    return writable_file(path)


def _replace(path: Path, write) -> None:
    """Write path through path.tmp, renamed over it when whole; the .tmp
    never stays behind (the CLI checks the paths before the first boot,
    cli.check_outputs, so this fails only if they changed since)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        write(tmp)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_ktap(results: list[TriggerResult], path: Path, meta: Mapping[str, Any]) -> None:
    text = ktap_text(results, meta)
    _replace(path, lambda p: p.write_text(text, encoding="utf-8"))


def write_junit(results: list[TriggerResult], path: Path, meta: Mapping[str, Any]) -> None:
    tree = junit_tree(results, meta)
    _replace(path, lambda p: tree.write(p, encoding="utf-8", xml_declaration=True))


def write_formats(results: list[TriggerResult], meta: Mapping[str, Any],
                  out_dir: Path | None = None, ktap: Path | None = None,
                  junit: Path | None = None) -> None:
    """KTAP and JUnit into out_dir (a run's folder), and to the paths asked for."""
    for path in [out_dir / KTAP_FILE if out_dir else None, ktap]:
        if path:
            write_ktap(results, path, meta)
    for path in [out_dir / JUNIT_FILE if out_dir else None, junit]:
        if path:
            write_junit(results, path, meta)


def write_run_files(results: list[TriggerResult], meta: Mapping[str, Any], out_dir: Path,
                    suites: Mapping[str, Suite], ktap: Path | None = None,
                    junit: Path | None = None) -> None:
    """Everything a run writes beside results.json: KTAP, JUnit and, when
    the run had a selftests suite, the run.sh comparison table."""
    write_formats(results, meta, out_dir, ktap, junit)
    write_comparison(results, dict(suites), out_dir)
