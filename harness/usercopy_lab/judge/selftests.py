"""The upstream LKDTM selftest runner in the guest, and how it compares.

A suite with `selftests = "tree"` or `"lab"` (suites.toml) boots one fresh
guest per trigger, as tools/testing/selftests/lkdtm/run.sh expects (it
fires one test and reads the dmesg lines that test added).  The guest's
init (initramfs-src/init, selftests block) runs
/selftests/lkdtm/DIR/NAME.sh -- the tree's run.sh, copied into the
initramfs at build time (scripts/initramfs-selftests.sh) -- in a folder
holding either the tree's tests.txt (DIR=tree) or lkdtm-tests/tests.txt
(DIR=lab).  init prints run.sh's own lines prefixed "run.sh: " (not the
dmesg lines it echoes: the kernel already printed those on the console)
and ends with run.sh's exit status in the END marker: 0 ok, 1 fail,
4 skip (kselftest's KSFT_SKIP).  A trigger that tests.txt does not list
gets no NAME.sh (the upstream Makefile installs none, kselftest never runs
it): init reports it as a skip without running anything.

run.sh's check is `grep -E -qi "$expect"` over the new dmesg lines, where
expect is the tests.txt text ("call trace:" when there is none); a golden
file pins much more (report kind, cache, offset, size, bug site, frames,
LKDTM lines, outcome).  output/selftests_comparison.py puts both side by
side for every trigger and says why they differ when they do.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..model import Fault, Outcome, TriggerResult
from ..protocol import START
from ..reports import program_lines, read_markers
from .golden import Golden
from .verdict import ERROR, FAIL, PASS, SKIP, Asked, bound_to

KINDS = ("tree", "lab")          # which tests.txt run.sh reads in the guest
DEFAULT_EXPECT = "call trace:"   # run.sh's expectation when tests.txt has no text
KSFT_SKIP = 4
RUNSH_PREFIX = "run.sh: "

# run.sh's last line: "NAME: saw 'EXPECT': ok" | "NAME: missing 'EXPECT': [FAIL]"
_RUNSH_RESULT = re.compile(r"^(\S+): (saw|missing) '(.*)': (ok|\[FAIL\]|\[SKIP\])$")


def upstream_expect(text: str) -> tuple[str, int]:
    """run.sh's (pattern, repeat) for a tests.txt expected-text column."""
    if not text:
        return DEFAULT_EXPECT, 1
    if text.startswith("repeat:"):
        count, _, rest = text.partition(" ")
        return rest, int(count.split(":", 1)[1])
    return text, 1


def grep_eqi(pattern: str, text: str) -> bool:
    """`grep -E -qi PATTERN` over text, by the host's grep (POSIX ERE, as
    run.sh's grep in the guest; Python's re differs on corner cases)."""
    proc = subprocess.run(["grep", "-E", "-qi", "-e", pattern], input=text.encode(),
                          capture_output=True, check=False)
    if proc.returncode > 1:
        raise ValueError(f"grep -E rejects {pattern!r}: {proc.stderr.decode().strip()}")
    return proc.returncode == 0


def lines_after_start(console: str) -> str:
    """The console from the START marker on: what the test added."""
    pos = console.find(START)
    return console[pos:] if pos >= 0 else ""


@dataclass
class RunShOutput:
    lines: list[str] = field(default_factory=list)   # run.sh's own lines
    verdict_line: str = ""
    expect: str | None = None                        # the pattern it looked for

    @classmethod
    def parse(cls, console_lines: list[str]) -> "RunShOutput":
        out = cls()
        for line in program_lines(console_lines):
            if line.startswith(RUNSH_PREFIX):
                text = line[len(RUNSH_PREFIX):]
                out.lines.append(text)
                if m := _RUNSH_RESULT.match(text):
                    out.verdict_line, out.expect = text, m.group(3)
        if not out.verdict_line and out.lines:
            out.verdict_line = out.lines[-1]
        return out


def evaluate_selftest_log(suite: str, trigger: str, log_path: Path, golden: Golden | None,
                          capture_error: str | None = None,
                          seconds: float = 0.0) -> TriggerResult:
    """Verdict of one run.sh guest: run.sh's own exit status."""
    lines = log_path.read_bytes().decode("utf-8", errors="replace").splitlines()
    markers = read_markers(lines)
    runsh = RunShOutput.parse(lines)
    said = runsh.verdict_line or "run.sh printed nothing"
    golden_path = str(golden.path) if golden else None

    def result(verdict: str, summary: str, diffs: list[str] | None = None,
               fault: Fault | None = None) -> TriggerResult:
        return TriggerResult(suite, trigger, verdict,
                             f"{fault.value}: {summary}" if fault else summary, seconds,
                             str(log_path), golden_path, diffs or [],
                             fault=fault)

    if markers.started is None:
        return result(ERROR, capture_error or "guest never reached run.sh")
    if problem := bound_to(trigger, markers, Asked.SELFTEST):
        return result(ERROR, problem, fault=Fault.WRONG_TRIGGER)
    if markers.ended is None:
        return result(ERROR, f"{capture_error or 'no end marker'}; run.sh: {said}")
    if markers.outcome is not Outcome.RETURNED:
        return result(ERROR, f"run.sh did not return ({markers.outcome} "
                             f"signal={markers.signal}); {said}")
    if markers.status == 0:
        return result(PASS, said)
    if markers.status == KSFT_SKIP:
        return result(SKIP, said)
    if markers.status == 1:
        return result(FAIL, said, [f"run.sh: {said}"])
    return result(ERROR, f"run.sh exited {markers.status}; {said}")
