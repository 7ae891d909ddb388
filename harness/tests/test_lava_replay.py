"""lava/replay.py against the real thing: pexpect, and lava-run's own logs.

1. The same steps through pexpect 4.8 set up as LAVA's ShellCommand does it
   (encoding utf-8, searchwindowsize 4000, maxread 4092), reading the
   console from a process that writes it a few lines at a time through a
   pty, as QEMU's serial console reaches the dispatcher: each step one
   expect() on the script's prompts, its failures and its successes.
2. testdata/lava/: logs lava-run (lava-dispatcher 2023.01) wrote for jobs
   of this lab (its README says which): LAVA's recorded cases are what
   replay() gives on the console in the same log, and LAVA's verdict is
   `usercopy-lab match`'s on that console.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest

from usercopy_lab.lava.jobs import console_from_lava_log, find_job, suite_jobs
from usercopy_lab.lava.checks import NEVER
from usercopy_lab.lava.replay import MAXREAD, WINDOW, replay
from usercopy_lab.lava.results import record_from_log, trigger_result
from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import check_golden_name, evaluate_check_log, evaluate_log

REPO = Path(__file__).resolve().parents[2]
TESTDATA = Path(__file__).parent / "testdata"
SUITES = load_suites(REPO / "suites.toml")

# The console three lines a write, each write read by pexpect on its own
# before the next is written: the writer waits for a byte on the ack FIFO
# before each next write, and the reader sends one each time the lines it
# has read reach the end of a write (every write but the last ends with
# its third newline).  (It slept 0.02 s between writes: under load pexpect
# read several at once, and a step decided on another cut of the console
# than replay's model, 1 of 2 full unit-test runs beside two busy loops.)
WRITER = ("import sys\n"
          "data = open(sys.argv[1], 'rb').read()\n"
          "ack = open(sys.argv[2], 'rb', buffering=0)\n"
          "lines = data.split(b'\\n')\n"
          "for i in range(0, len(lines), 3):\n"
          "    if i and not ack.read(1):\n"
          "        break\n"
          "    sys.stdout.buffer.write(b'\\n'.join(lines[i:i + 3]) + (b'\\n' if i + 3 < len(lines) else b''))\n"
          "    sys.stdout.flush()\n")


def through_pexpect(steps, console: Path, tmp_path: Path) -> dict[str, str]:
    text = console.read_bytes()
    after = text[text.index(b"USERCOPY-LAB-READY") + len(b"USERCOPY-LAB-READY"):]
    feed = tmp_path / "console.txt"
    feed.write_bytes(after)
    fifo = tmp_path / "ack"
    os.mkfifo(fifo)
    ack = os.open(fifo, os.O_RDWR)           # does not wait for the writer to open it
    child = pexpect.spawn(sys.executable, ["-c", WRITER, str(feed), str(fifo)], encoding="utf-8",
                          codec_errors="replace", searchwindowsize=WINDOW, maxread=MAXREAD,
                          timeout=120)
    read = child.read_nonblocking
    newlines = acked = 0

    def read_then_ack(size: int = 1, timeout: float | None = -1) -> str:
        nonlocal newlines, acked
        data = read(size, timeout)
        newlines += data.count("\n")
        while newlines >= 3 * (acked + 1):
            os.write(ack, b".")
            acked += 1
        return data

    child.read_nonblocking = read_then_ack   # type: ignore[method-assign]
    results = {}
    try:
        for step in steps:
            failures = [f.message for f in step.failures]
            patterns = [NEVER] + failures + list(step.successes)
            try:
                i = child.expect(patterns)
            except pexpect.EOF:
                results[step.name] = "fail"
                break
            results[step.name] = "pass" if i > len(failures) else "fail"
            if 1 <= i <= len(failures) and step.failures[i - 1].exception:
                break
    finally:
        child.close(force=True)
        os.close(ack)
    return results


@pytest.mark.parametrize("suite,name,console", [
    ("default", "USERCOPY_SLAB_SIZE_TO", "console-series/default/USERCOPY_SLAB_SIZE_TO.log"),
    ("default", "USERCOPY_KMALLOC_SPLIT_TO", "console-series/nosplit-kconfig/USERCOPY_KMALLOC_SPLIT_TO.log"),
    ("fallback", "USERCOPY_WHITELIST_TWO_CACHES_TO",
     "console-series/fallback/USERCOPY_WHITELIST_TWO_CACHES_TO.log"),
    ("seeds", "rds-tcp-cookie", "rds/mutant-rds-no-region/seeds/rds-tcp-cookie.log"),
])
def test_replay_records_what_pexpect_records(suite, name, console, tmp_path):
    job = next(j for j in suite_jobs(SUITES[suite]) if j.name == name)
    path = TESTDATA / console
    ours = replay(job.plan, path.read_bytes().decode("utf-8", errors="replace")).results
    assert through_pexpect(job.plan.steps, path, tmp_path) == ours


LOGS = sorted((TESTDATA / "lava").glob("*--*.lava.yaml"))


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_lavas_own_record_is_the_replay_and_the_match(log, tmp_path):
    """The suite and job of a log come from its file name:
    SUITE--NAME[--WHAT].lava.yaml (WHAT: the kernel, when not the suite's)."""
    suite, name = log.name.removesuffix(".lava.yaml").split("--")[:2]
    job = find_job(SUITES, suite, name)
    text = log.read_text()
    rec = record_from_log(text)
    console = console_from_lava_log(text)
    assert rec.cases == replay(job.plan, console).results
    path = tmp_path / f"{name}.log"
    path.write_text(console)
    golden = SUITES[suite].golden()
    if job.check:
        match = evaluate_check_log(suite, name, path, golden=golden.get(check_golden_name(name)))
    else:
        trig = next(t for t in SUITES[suite].triggers() if t.name == name)
        match = evaluate_log(suite, name, path, golden[name],
                             trig.expected_text if SUITES[suite].expected_text else "")
    assert trigger_result(job, rec, str(log)).verdict == match.verdict
