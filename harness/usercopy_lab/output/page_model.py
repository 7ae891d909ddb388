"""A finished run as the results page reads it: results.json back into the
model's TriggerResult and Report, the run's meta, and the runs beside it.

The page is made from results.json alone (and the files it names), so it
can be made again later, for a run copied elsewhere, or for a fixture:
`usercopy-lab page run RUN_DIR`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..inputs import InputError, shown
from ..model import BootMode, Fault, Report, TriggerResult, Verdict
from ..schemas import RESULTS, first_problem

RESULTS_JSON = "results.json"
_REPORT_FIELDS = {f.name for f in fields(Report)} - {"lines", "frame_addresses"}
_RUN_ID = re.compile(r"^(\d{8})-(\d{6})-(\d+)(?:\.(\d+))?$")


class PageError(InputError):
    """A run the page cannot be made from: one line for the user (exit 2)."""


def run_order(run_id: str) -> tuple[int, ...] | None:
    """Sort key of a run id (run_dir.open_run_dir: time, pid, counter),
    None for a folder that is not a run."""
    m = _RUN_ID.match(run_id)
    return tuple(int(g or 0) for g in m.groups()) if m else None


def report_from_json(data: dict[str, Any]) -> Report:
    """One report of results.json back (Report.to_json); a kind or direction
    the model does not have is a ValueError."""
    return Report(**{k: v for k, v in data.items() if k in _REPORT_FIELDS})


def result_from_json(data: dict[str, Any]) -> TriggerResult:
    """One entry of results.json's "triggers" (TriggerResult.to_json) back,
    one that results.schema.json holds valid: its suite and trigger names,
    which become file names of the page, are names ("../x" is not)."""
    return TriggerResult(
        suite=data["suite"], trigger=data["name"], verdict=Verdict(data["verdict"]),
        summary=data.get("summary", ""), seconds=float(data.get("seconds") or 0.0),
        log=data.get("log", ""), golden=data.get("golden"), diffs=list(data.get("diffs") or []),
        expected_text_seen=data.get("expected_text_seen"),
        reports=[report_from_json(r) for r in data.get("reports") or []],
        fault=Fault(data["fault"]) if data.get("fault") else None,
        boot=BootMode(data.get("boot") or BootMode.FULL),
        fallback=data.get("boot_fallback"), reused_qemu=bool(data.get("reused_qemu")),
        qemu_retry=data.get("qemu_retry"))


@dataclass(frozen=True)
class RunResults:
    """One run's results.json, read back."""

    path: Path                     # the run's folder
    run_id: str
    meta: dict[str, Any]           # everything of results.json but "triggers"
    results: list[TriggerResult]

    @property
    def suites(self) -> list[str]:
        listed = self.meta.get("suites")
        if isinstance(listed, list) and listed:
            return [str(s) for s in listed]
        return list(dict.fromkeys(r.suite for r in self.results))

    def by_key(self) -> dict[tuple[str, str], TriggerResult]:
        return {(r.suite, r.trigger): r for r in self.results}

    def console(self, r: TriggerResult) -> Path:
        """The trigger's console: results.json names it from where the run
        was started ("results/RUN/SUITE/T.log"), so it is found in this
        run's folder wherever that is now; an absolute path elsewhere (match
        of kept logs) as it is."""
        parts = Path(r.log).parts
        if self.run_id in parts:
            return self.path.joinpath(*parts[parts.index(self.run_id) + 1:])
        if Path(r.log).is_absolute():
            return Path(r.log)
        return self.path / r.suite / f"{r.trigger}.log"


def load_run(folder: Path) -> RunResults:
    """RUN_DIR/results.json, or PageError naming what is wrong with it."""
    path = folder / RESULTS_JSON
    if not path.is_file():
        raise PageError(f"{shown(path, None)}: no such file (not a run's folder?)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PageError(f"{shown(path, None)}: {shown(exc, None)}") from None
    except ValueError as exc:
        raise PageError(f"{shown(path, None)}: not a results.json ({type(exc).__name__}: "
                        f"{shown(exc, None)})") from None
    if problem := first_problem(data, RESULTS):
        raise PageError(f"{shown(path, None)}: not a results.json ({shown(problem, None)})")
    try:
        results = [result_from_json(t) for t in data["triggers"]]
    except ValueError as exc:       # a word the model lacks that the schema let by
        raise PageError(f"{shown(path, None)}: not a results.json ({shown(exc, None)})") from None
    meta = {k: v for k, v in data.items() if k != "triggers"}
    run_id = str(meta.get("run_id") or folder.resolve().name)
    return RunResults(folder, run_id, meta, results)


def previous_run(run: RunResults) -> RunResults | None:
    """The newest run before this one, beside it in the same results
    folder, that ran the same suites and finished; None when there is none."""
    here = run_order(run.run_id)
    if here is None:
        return None
    candidates = []
    for folder in run.path.resolve().parent.iterdir():
        order = run_order(folder.name)
        if order is not None and order < here and (folder / RESULTS_JSON).is_file():
            candidates.append((order, folder))
    for _, folder in sorted(candidates, reverse=True):
        try:
            other = load_run(folder)
        except PageError:
            continue
        if set(other.suites) == set(run.suites) and other.meta.get("complete", True):
            return other
    return None


def baseline_run(arg: str, results_root: Path) -> RunResults:
    """--baseline: a run's folder, its results.json, or a run id in the
    results folder; PageError when it names none of those."""
    for path in (Path(arg), results_root / arg):
        if path.is_file() and path.name == RESULTS_JSON:
            path = path.parent
        if (path / RESULTS_JSON).is_file():
            return load_run(path)
    raise PageError(f"--baseline {shown(arg, None)}: not a run (want a run folder, its "
                    f"results.json, or a run id in {shown(results_root, None)})")
