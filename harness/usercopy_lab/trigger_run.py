"""One trigger, end to end: fresh guest -> console log -> reports -> verdict."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .console_capture import capture_guest
from .console_markers import ConsoleMarkers, read_markers
from .golden import Golden
from .oops_parser import iter_reports
from .qemu_boot import GuestSpec
from .report_model import Report
from .verdict import ERROR, Verdict, decide, decide_check


@dataclass
class TriggerResult:
    suite: str
    trigger: str
    verdict: str
    summary: str
    seconds: float
    log: str
    golden: str | None
    diffs: list[str] = field(default_factory=list)
    expected_text_seen: bool | None = None
    reports: list[Report] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite, "name": self.trigger, "verdict": self.verdict,
            "summary": self.summary, "seconds": round(self.seconds, 2),
            "log": self.log, "golden": self.golden, "diffs": self.diffs,
            "expected_text_seen": self.expected_text_seen,
            "reports": [r.to_json() for r in self.reports],
        }


@dataclass(frozen=True)
class RunLimits:
    boot_timeout: float = 60.0
    trigger_timeout: float = 60.0


def run_trigger(suite: str, spec: GuestSpec, golden: Golden | None,
                expected_text: str, log_path: Path, limits: RunLimits,
                live: bool = False) -> TriggerResult:
    try:
        cap = capture_guest(spec, log_path, limits.boot_timeout,
                            limits.trigger_timeout, live=live)
    except Exception as exc:  # the log must still be reported, never lost
        return TriggerResult(suite, spec.trigger or spec.helper, ERROR,
                             f"harness error: {exc!r}", 0.0, str(log_path), None)
    if spec.helper:
        return evaluate_check_log(suite, spec.helper, log_path, cap.error, cap.seconds)
    return evaluate_log(suite, spec.trigger, log_path, golden, expected_text,
                        cap.error, cap.seconds)


def evaluate_log(suite: str, trigger: str, log_path: Path, golden: Golden | None,
                 expected_text: str, capture_error: str | None = None,
                 seconds: float = 0.0) -> TriggerResult:
    """Verdict for an already captured console log (also used by tests)."""
    text, markers, reports = _read_console(log_path)
    verdict: Verdict = decide(trigger, capture_error, markers, reports, golden)
    seen = None
    if expected_text:
        # An extended regular expression, case-insensitive: run.sh's grep -E -qi.
        seen = re.search(expected_text, text, re.IGNORECASE) is not None
        if not seen and verdict.verdict == "PASS":
            verdict.verdict = "FAIL"
            verdict.diffs.append(f"tests.txt: expected text {expected_text!r} not on the console")
    return TriggerResult(suite, trigger, verdict.verdict, verdict.summary, seconds,
                         str(log_path), str(golden.path) if golden else None,
                         verdict.diffs, seen, reports)


def evaluate_check_log(suite: str, name: str, log_path: Path,
                       capture_error: str | None = None,
                       seconds: float = 0.0) -> TriggerResult:
    """Verdict for the console of an in-guest check program."""
    _, markers, reports = _read_console(log_path)
    verdict = decide_check(name, capture_error, markers, reports)
    return TriggerResult(suite, name, verdict.verdict, verdict.summary, seconds,
                         str(log_path), None, verdict.diffs, None, reports)


def _read_console(log_path: Path) -> tuple[str, ConsoleMarkers, list[Report]]:
    text = log_path.read_bytes().decode("utf-8", errors="replace")
    lines = text.splitlines()
    return text, read_markers(lines), list(iter_reports(lines, str(log_path)))
