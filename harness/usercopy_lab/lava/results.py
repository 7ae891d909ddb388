"""LAVA's own record of our jobs, as the lab's verdicts and results table.

Where LAVA's results come from:

  - a lava-run log (lava-dispatcher on this machine, scripts/lava/run-suite.sh):
    its "results" entries are the test cases of the interactive steps
    (suite 0_golden) and LAVA's own lava/job case, pass when the job
    finished Complete;
  - a lava-server (scripts/lava/farm.sh): its REST API, /api/v0.2/jobs/ID/
    for the job's health and metadata and /api/v0.2/jobs/ID/tests/ for its
    test cases, and /api/v0.2/jobs/ID/logs/ for the log (the console).

Either way checks.verdict() maps health and cases to PASS / FAIL /
XFAIL / SKIP / ERROR, and the table is the one `usercopy-lab run` prints.
`compare` lines the verdicts of several sources up trigger by trigger
(our runner's results.json, LAVA's, `usercopy-lab match` on LAVA's
consoles as JUnit); its exit status is the run's (run-suite.sh and
farm.sh exit with it): 0 every source agrees and no job is FAIL or ERROR,
1 every source agrees and some job is FAIL or ERROR (`usercopy-lab run`'s
1), 3 some job's sources differ (or one lacks it), whatever the verdicts,
2 nothing to compare (a source missing or unreadable, a bad option).
`verdicts` and `fetch` exit 1 when a job is FAIL or ERROR, 2 on bad input.

  usercopy-lab lava verdicts --suite S --logs DIR [--json OUT]
  usercopy-lab lava fetch --server URL --jobs IDS [--token-file F] [--out DIR] [--json OUT]
  usercopy-lab lava compare --suite S [--ours R.json] [--lava L.json] [--match M.xml]
"""
from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import yaml
from tabulate import tabulate

from ..inputs import shown
from ..judge.verdict import FAILING
from ..model import TriggerResult
from ..run.suite import Suite, SuiteError, load_suites, pick
from .checks import COMPLETE, INCOMPLETE, SUITE as CASES_SUITE, verdict
from .jobs import (LOADER, Job, suite_jobs, console_from_lava_log,
                        find_job, log_entries)
from ..output.result_formats import read_junit_verdicts
from ..output.results_report import print_table, write_json

HEALTHS = {"pass": COMPLETE, "fail": INCOMPLETE}


@dataclass
class LavaRecord:
    """What LAVA recorded for one job."""
    health: str                          # Complete / Incomplete / Canceled / ...
    cases: dict[str, str] = field(default_factory=dict)   # our cases -> pass/fail
    error: str = ""
    seconds: float = 0.0
    job_id: str = ""


def record_from_log(text: str) -> LavaRecord:
    """A lava-run log: results entries and the lava/job case."""
    entries = log_entries(text)
    rec = LavaRecord(health="Unknown")
    for e in entries:
        if e.get("lvl") != "results" or not isinstance(e.get("msg"), dict):
            continue
        msg = e["msg"]
        if msg.get("definition") == CASES_SUITE:
            rec.cases[str(msg.get("case"))] = str(msg.get("result"))
        elif msg.get("definition") == "lava" and msg.get("case") == "job":
            rec.health = HEALTHS.get(str(msg.get("result")), "Unknown")
            rec.error = str(msg.get("error_msg") or "")
    stamps = [e["dt"] for e in entries if isinstance(e.get("dt"), str)]
    if len(stamps) >= 2:
        rec.seconds = (_when(stamps[-1]) - _when(stamps[0])).total_seconds()
    return rec


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.rstrip("Z"))


def trigger_result(job: Job, rec: LavaRecord, log: str) -> TriggerResult:
    v = verdict(job.plan, rec.health, rec.cases, rec.error)
    summary = v.summary + (f" (job {rec.job_id})" if rec.job_id else "")
    return TriggerResult(job.suite.name, job.name, v.verdict, summary, rec.seconds, log,
                         None, v.diffs)


def verdicts_from_logs(suite: Suite, logs: Path) -> list[TriggerResult]:
    """LAVA's verdict for every job of suite that has a lava-run log LOGS/NAME.yaml."""
    results = []
    for path in sorted(logs.glob("*.yaml")):
        job = find_job({suite.name: suite}, suite.name, path.stem)
        rec = record_from_log(path.read_text(errors="replace"))
        results.append(trigger_result(job, rec, str(path)))
    if not results:
        raise SuiteError(f"{logs}: no LAVA logs (*.yaml)")
    return results


# ------------------------------------------------------------ lava-server

class Server:
    """lava-server's REST API (v0.2), read anonymously: our jobs are public."""

    def __init__(self, url: str, token: str = ""):
        self.url, self.token = url.rstrip("/"), token

    def get(self, path: str) -> bytes:
        req = urllib.request.Request(f"{self.url}/api/v0.2/{path}")
        if self.token:
            req.add_header("Authorization", f"Token {self.token}")
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.read()

    def job(self, job_id: str) -> dict[str, Any]:
        return json.loads(self.get(f"jobs/{job_id}/"))

    def tests(self, job_id: str) -> list[dict[str, Any]]:
        """Every test case of the job, all pages."""
        out, page = [], f"jobs/{job_id}/tests/?limit=100"
        while page:
            data = json.loads(self.get(page))
            out += data.get("results", [])
            nxt = data.get("next")
            page = nxt.split("/api/v0.2/", 1)[1] if nxt else ""
        return out

    def suites(self, job_id: str) -> dict[int, str]:
        data = json.loads(self.get(f"jobs/{job_id}/suites/?limit=100"))
        return {s["id"]: s["name"] for s in data.get("results", [])}


FINISHED = "Finished"


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def wait_for(server: Server, ids: list[str], timeout: float, poll: float = 10.0,
             progress=_progress) -> dict[str, dict[str, Any]]:
    """Each job's record once every one is Finished (or the timeout passed)."""
    deadline = time.monotonic() + timeout
    jobs: dict[str, dict[str, Any]] = {}
    while True:
        jobs = {i: server.job(i) for i in ids}
        done = sum(1 for j in jobs.values() if j.get("state") == FINISHED)
        progress(f"lava: {done} of {len(ids)} jobs finished "
                 f"({', '.join(sorted({str(j.get('state')) for j in jobs.values()}))})")
        if done == len(ids) or time.monotonic() > deadline:
            return jobs
        time.sleep(poll)


def record_from_server(server: Server, job_id: str, job: dict[str, Any]) -> LavaRecord:
    suites = server.suites(job_id)
    cases = {t["name"]: t["result"] for t in server.tests(job_id)
             if suites.get(t.get("suite")) == CASES_SUITE}
    seconds = 0.0
    if job.get("start_time") and job.get("end_time"):
        seconds = (_when(job["end_time"].replace("+00:00", ""))
                   - _when(job["start_time"].replace("+00:00", ""))).total_seconds()
    health = str(job.get("health"))
    if job.get("state") != FINISHED:
        health = f"{job.get('state')} (not finished)"
    return LavaRecord(health, cases, str(job.get("failure_comment") or ""), seconds, job_id)


def fetch(server: Server, ids: list[str], suites: dict[str, Suite], out: Path | None,
          timeout: float) -> list[TriggerResult]:
    """Wait for the jobs, then LAVA's verdict for each from the REST API;
    with out, each job's log (OUT/logs/ID.yaml) and console
    (OUT/consoles/SUITE/NAME.log) are kept."""
    jobs = wait_for(server, ids, timeout)
    results = []
    for job_id in ids:
        definition = yaml.load(jobs[job_id].get("definition") or "{}", Loader=LOADER)
        meta = _flat(definition.get("metadata") if isinstance(definition, dict) else None)
        name = meta.get("usercopy-lab.trigger") or meta.get("usercopy-lab.check")
        if not name or "usercopy-lab.suite" not in meta:
            raise SuiteError(f"LAVA job {job_id} is not one of ours (metadata {meta})")
        job = find_job(suites, meta["usercopy-lab.suite"], name)
        log = ""
        if out is not None:
            text = server.get(f"jobs/{job_id}/logs/").decode("utf-8", errors="replace")
            logs = out / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            (logs / f"{job_id}.yaml").write_text(text)
            console = out / "consoles" / job.suite.name / f"{job.name}.log"
            console.parent.mkdir(parents=True, exist_ok=True)
            console.write_text(console_from_lava_log(text))
            log = str(console)
        results.append(trigger_result(job, record_from_server(server, job_id, jobs[job_id]),
                                      log))
    return results


def _flat(meta: Any) -> dict[str, str]:
    """A job definition's metadata: a mapping (or a list of one-item ones)."""
    if isinstance(meta, dict):
        return {str(k): str(v) for k, v in meta.items()}
    out: dict[str, str] = {}
    for item in meta or []:
        out.update(_flat(item))
    return out


# ------------------------------------------------------------ comparison

def read_verdicts(path: Path, suite: str) -> dict[str, str]:
    """name -> verdict of suite from a results.json (ours, or LAVA's) or a
    JUnit file (`usercopy-lab match --junit`)."""
    if path.suffix == ".xml":
        return {n: v for (s, n), v in read_junit_verdicts(path).items() if s == suite}
    data = json.loads(path.read_text())
    return {t["name"]: t["verdict"] for t in data["triggers"] if t["suite"] == suite}


# The exit status of compare, and so of scripts/lava/run-suite.sh and
# farm.sh: `usercopy-lab run`'s (docs/results.md), plus DIFFERENT.
PASSED = 0       # every source has every job, one verdict each, none FAIL or ERROR
FAILED = 1       # every source agrees, and some job is FAIL or ERROR
UNUSABLE = 2     # no comparison: a source missing or unreadable, a bad option
DIFFERENT = 3    # a job whose sources disagree, or that a source lacks


def compare(sources: dict[str, Path], suite: Suite, out=print) -> int:
    """Trigger by trigger, then the exit status: DIFFERENT when a job's
    sources disagree (or one lacks it), whatever the verdicts; else FAILED
    when a job is FAIL or ERROR; else PASSED.  Our runner's checks without a
    LAVA job (the whitelist audit) are left out."""
    names = [j.name for j in suite_jobs(suite)]
    verdicts = {label: read_verdicts(path, suite.name) for label, path in sources.items()}
    differ = 0
    agreed: Counter[str] = Counter()
    rows = []
    for name in names:
        seen = [v.get(name, "-") for v in verdicts.values()]
        same = len(set(seen)) == 1 and "-" not in seen
        differ += not same
        if same:
            agreed[seen[0]] += 1
        rows.append(["same" if same else "DIFFERENT", f"{suite.name}/{name}", *seen])
    # one column per source, "-" where it has no verdict for the job
    for line in tabulate(rows, headers=["", "job", *verdicts], tablefmt="plain",
                         disable_numparse=True).splitlines():
        out(line.rstrip())
    out(f"lava: {len(names) - differ} same, {differ} different ("
        + ", ".join(f"{label}: {path}" for label, path in sources.items()) + ")")
    failing = sum(agreed[v] for v in FAILING)
    status = DIFFERENT if differ else FAILED if failing else PASSED
    out(f"lava: exit {status}: "
        + (", ".join(f"{n} {v}" for v, n in sorted(agreed.items())) or "no job")
        + f" where all agree; {differ} different, {failing} FAIL or ERROR")
    return status


def command(action: Callable[[], int]) -> int:
    """Run one `usercopy-lab lava` verdicts command: its status (PASSED,
    FAILED, DIFFERENT), or UNUSABLE with one line on stderr when its input
    cannot be used."""
    try:
        return action()
    except (SuiteError, OSError, ValueError, KeyError, TypeError, ET.ParseError,
            urllib.error.URLError, json.JSONDecodeError, yaml.YAMLError) as exc:
        print(f"lava: {shown(str(exc), None)}", file=sys.stderr)
        return UNUSABLE


def verdicts_command(suites_file: Path, suite: str, logs: Path, json_path: Path | None) -> int:
    """`lava verdicts`: LAVA's verdicts from the lava-run logs in LOGS."""
    [chosen] = pick(load_suites(suites_file), [suite])
    return _show(verdicts_from_logs(chosen, logs), json_path,
                 {"source": f"lava-run logs in {logs}"})


def fetch_command(suites_file: Path, server: str, jobs: Path, token: str,
                  token_file: Path | None, out: Path | None, json_path: Path | None,
                  timeout: float) -> int:
    """`lava fetch`: wait for the jobs listed in JOBS on SERVER, their verdicts."""
    ids = [i.strip() for i in jobs.read_text().split() if i.strip()]
    if not ids or not all(i.isdigit() for i in ids):
        raise ValueError(f"{jobs}: want LAVA job ids, one a line")
    if token_file is not None:
        token = token_file.read_text().strip()
    results = fetch(Server(server, token), ids, load_suites(suites_file), out, timeout)
    return _show(results, json_path, {"source": f"lava-server {server}"})


def compare_command(suites_file: Path, suite: str, sources: dict[str, Path | None]) -> int:
    """`lava compare`: the verdicts of two or three SOURCES (label: file), trigger by trigger."""
    [chosen] = pick(load_suites(suites_file), [suite])
    given = {label: path for label, path in sources.items() if path}
    if len(given) < 2:
        raise ValueError("compare needs two of --ours, --lava, --match")
    return compare(given, chosen)


def _show(results: list[TriggerResult], path: Path | None, meta: dict[str, Any]) -> int:
    print_table(results, sys.stdout)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(results, path, meta)
    return FAILED if any(r.verdict in FAILING for r in results) else PASSED

