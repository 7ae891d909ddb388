"""Check a run's KTAP and JUnit files against its results.json.

The KTAP goes through the kernel tree's own parser
(tools/testing/kunit/kunit.py parse --json) and the JUnit XML through
ElementTree; both must name every trigger of results.json, in its suite,
with the status our verdict maps to (result_formats.KUNIT_STATUS and
VERDICT_FORMS), and kunit.py's summary counts must equal ours.  The run's
index.html must hold one cell per trigger with its verdict, links that
all lead to files, and nothing from a network (page_check).

  usercopy-lab check formats RUN_DIR --kunit TREE/tools/testing/kunit/kunit.py

Exit status: 0 agree, 1 disagree (one line per difference), 2 bad input.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..schemas import RESULTS, first_problem
from .page_check import check_page, key_differences
from .page_model import PageError
from .result_formats import JUNIT_FILE, KTAP_FILE, KUNIT_STATUS, VERDICT_FORMS

# "Testing complete. Ran 27 tests: passed: 25, failed: 1, skipped: 1"
_KUNIT_SUMMARY = re.compile(r"Testing complete\. Ran (\d+) tests?(?:: (.*))?$")


class CheckError(ValueError):
    """Input the check cannot read (missing file, bad JSON or XML)."""


@dataclass(frozen=True)
class Expected:
    suite: str
    name: str
    verdict: str


def load_expected(results_json: Path) -> list[Expected]:
    """Each trigger's verdict, from a results.json its schema holds valid."""
    try:
        data = json.loads(results_json.read_text())
    except (OSError, ValueError) as exc:
        raise CheckError(f"{results_json}: {exc}") from exc
    if problem := first_problem(data, RESULTS):
        raise CheckError(f"{results_json}: not a results.json ({problem})")
    return [Expected(t["suite"], t["name"], t["verdict"]) for t in data["triggers"]]


@dataclass
class KunitResult:
    statuses: dict[tuple[str, str], str]   # (suite, test) -> PASS/FAIL/SKIP/ERROR
    counts: dict[str, int]                 # summary line: passed, failed, ...
    total: int


def run_kunit_parse(kunit_py: Path, ktap: Path) -> KunitResult:
    """kunit.py parse --json on ktap; its per-test statuses and summary."""
    if not kunit_py.is_file():
        raise CheckError(f"{kunit_py}: no such file (the kernel tree's kunit.py)")
    with tempfile.TemporaryDirectory() as tmp:
        out_json = Path(tmp) / "kunit.json"
        proc = subprocess.run(
            [sys.executable, str(kunit_py.resolve()), "parse",
             f"--json={out_json}", str(ktap.resolve())],
            capture_output=True, text=True, check=False)
        if not out_json.is_file():
            raise CheckError(f"kunit.py parse wrote no JSON (exit {proc.returncode}): "
                             f"{proc.stderr.strip()[-300:]}")
        data = json.loads(out_json.read_text())
    statuses = {}
    for group in data.get("sub_groups", []):
        for case in group.get("test_cases", []):
            statuses[(group["name"], case["name"])] = case["status"]
    summary = [m for line in proc.stdout.splitlines()
               if (m := _KUNIT_SUMMARY.search(line))]
    if not summary:
        raise CheckError(f"kunit.py parse printed no summary line: {proc.stdout[-300:]}")
    counts = {k: int(v) for k, v in
              (part.split(": ") for part in (summary[-1].group(2) or "").split(", ") if part)}
    return KunitResult(statuses, counts, int(summary[-1].group(1)))


def check_kunit(expected: list[Expected], kunit: KunitResult) -> list[str]:
    problems = []
    want = {(e.suite, e.name): KUNIT_STATUS[e.verdict] for e in expected}
    for key in sorted(want.keys() | kunit.statuses.keys()):
        got, need = kunit.statuses.get(key), want.get(key)
        if got != need:
            problems.append(f"kunit.py: {key[0]}/{key[1]}: expected {need}, parsed {got}")
    ours = Counter(want.values())
    wanted_counts = {"passed": ours["PASS"], "failed": ours["FAIL"], "skipped": ours["SKIP"]}
    got_counts = {k: kunit.counts.get(k, 0) for k in ("passed", "failed", "skipped",
                                                       "crashed", "errors")}
    for key, n in wanted_counts.items():
        if got_counts[key] != n:
            problems.append(f"kunit.py: {key}: expected {n}, summary says {got_counts[key]}")
    for key in ("crashed", "errors"):
        if got_counts[key]:
            problems.append(f"kunit.py: {key}: {got_counts[key]} (KTAP not well formed)")
    if kunit.total != len(expected):
        problems.append(f"kunit.py: ran {kunit.total} tests, results.json has {len(expected)}")
    return problems


def check_junit(expected: list[Expected], junit: Path) -> list[str]:
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError) as exc:
        raise CheckError(f"{junit}: {exc}") from exc
    problems = []
    if root.tag != "testsuites":
        problems.append(f"junit: root element is <{root.tag}>, not <testsuites>")
    seen: dict[tuple[str, str], str | None] = {}
    for ts in root.iter("testsuite"):
        cases = ts.findall("testcase")
        kinds = Counter(_case_kind(c) for c in cases)
        for attr, kind in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
            if int(ts.get(attr, "-1")) != kinds[kind]:
                problems.append(f"junit: suite {ts.get('name')}: {attr}={ts.get(attr)}, "
                                f"but {kinds[kind]} <{kind}> cases")
        if int(ts.get("tests", "-1")) != len(cases):
            problems.append(f"junit: suite {ts.get('name')}: tests={ts.get('tests')}, "
                            f"but {len(cases)} cases")
        for c in cases:
            seen[(ts.get("name", ""), c.get("name", ""))] = _case_kind(c)
    want = {(e.suite, e.name): VERDICT_FORMS[e.verdict].junit_element for e in expected}
    return problems + key_differences(want, seen, "junit:", lambda k: f"<{k or 'pass'}>")


def _case_kind(case: ET.Element) -> str | None:
    kinds = [k for k in ("failure", "error", "skipped") if case.find(k) is not None]
    return kinds[0] if len(kinds) == 1 else (None if not kinds else "+".join(kinds))


def check_run(run_dir: Path, kunit_py: Path) -> list[str]:
    expected = load_expected(run_dir / "results.json")
    for name in (KTAP_FILE, JUNIT_FILE):
        if not (run_dir / name).is_file():
            raise CheckError(f"{run_dir / name}: missing")
    try:
        page = check_page(run_dir)
    except PageError as exc:
        raise CheckError(str(exc)) from exc
    return (check_kunit(expected, run_kunit_parse(kunit_py, run_dir / KTAP_FILE))
            + check_junit(expected, run_dir / JUNIT_FILE) + page)


def command(run_dir: Path, kunit: Path) -> int:
    """`usercopy-lab check formats`: 0 the formats agree with results.json,
    1 they do not (each difference a line), 2 the check could not be done."""
    try:
        problems = check_run(run_dir, kunit)
    except CheckError as exc:
        print(f"check formats: {exc}", file=sys.stderr)
        return 2
    for p in problems:
        print(f"check formats: {p}")
    n = len(load_expected(run_dir / "results.json"))
    print(f"check formats: {run_dir}: {KTAP_FILE} (kunit.py parse), {JUNIT_FILE} and "
          f"index.html "
          f"{'agree' if not problems else 'DISAGREE'} with results.json ({n} tests)")
    return 1 if problems else 0

