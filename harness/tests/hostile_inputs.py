"""Hostile inputs, each run as the user would run it, with limits.

    python3 harness/tests/hostile_inputs.py [CASES.toml ...] [--only NAME] [--pythonpath DIR]
                                               [-j JOBS]

Every [[case]] of the tables (harness/tests/hostile_inputs.toml, then
harness/tests/hostile_inputs.d/*.toml; a row per case, so new cases are
rows, not code) runs `python3 -m usercopy_lab
ARGV` (./usercopy-lab ARGV) as a subprocess in a throw-away lab: a folder with a fake build (a
placeholder bzImage and initramfs), the fake QEMU of harness/tests/fake_qemu
first on PATH (nothing boots), the real consoles it replays, and the files
the case asks for.  Each must, within LIMIT_SECONDS of CPU time (its own,
from wait4: a case's cost, whatever the load beside it; a case that waits
instead of working is killed after HANG_SECONDS of wall time) and LIMIT_RSS_MB of
peak RSS (the child's own ru_maxrss, from wait4):

- exit with the case's `rc` (0, 1, 2; 130 for an interrupt);
- print no traceback, and with rc 2 exactly one stderr line, matching the
  case's `stderr` regex when it has one;
- leave none of its `absent` paths (e.g. the results folder: nothing ran),
  print a stdout line matching `stdout` if it has one, and none matching
  `stdout_not` (a forged table row).

The child runs under RLIMIT_AS = LIMIT_AS_MB (util-linux prlimit sets it
and execs the CLI: cases run JOBS at a time, in threads, where a
preexec_fn is not safe), so a case that would grow without bound (as
`--suites-file /dev/zero` did, 14 GB in 60 s) fails fast instead of filling
the machine, and is killed (its process group) at the time limit.  One
line per case, in table order: verdict, exit status, CPU and wall seconds,
peak RSS.
Exit status 0 when every case met every limit, 1 otherwise, 2 on a bad
table.

Case keys: name, argv (list; "{lab}" expands to the lab's run options,
"{tmp}" to its folder, "{repo}" to the repository), rc, stderr, stdout, stdout_not,
absent, env (table), stdin ("/dev/zero"; "endless": a pipe of NULs that
never ends; "endless-text": a pipe of kernel log lines that never ends),
why (where the case comes from), and files: path -> one of
{text = "..."}, {text = "...", times = N, head = "", tail = ""} (text
repeated; append = "repo/relative/path" adds that file after it),
{symlink = "/dev/zero"}, {random = N, seed = S}, {dir = true}, {fifo = true},
{copy = "repo/relative/path"} (with line_ends = "cr": its line ends made
lone "\\r"; with gzip = true: compressed, and cut = F: only the first
fraction F of the compressed bytes kept).  Text, names and arguments may
hold {tmp}, {repo} and {X*N} (the character X, N times).
"""
from __future__ import annotations

import argparse
import gzip
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if __name__ == "__main__":          # run as a program: the lab's harness/ beside it
    sys.path.insert(0, str(REPO / "harness"))
from usercopy_lab.inputs import InputError, load_toml, shown  # noqa: E402
from processes import kill_group  # noqa: E402
CASES = REPO / "harness" / "tests" / "hostile_inputs.toml"
# More tables beside it, one per area (hostile_inputs.d/NAME.toml), read
# after it in name order: one table of rows, several files to edit.
CASES_DIR = REPO / "harness" / "tests" / "hostile_inputs.d"
FAKE_QEMU = REPO / "harness" / "tests" / "fake_qemu"
CONSOLES = REPO / "harness" / "tests" / "testdata" / "console-series" / "default"
LIMIT_SECONDS = 10.0   # of CPU (RLIMIT_CPU, then SIGKILL): the budget of a case
HANG_SECONDS = 300.0   # of wall time: a case that waits is not load, it hangs
LIMIT_RSS_MB = 200
LIMIT_AS_MB = 2048     # address space: python3 with threads maps far more than it uses
CASE_KEYS = {"name", "argv", "rc", "stderr", "stdout", "stdout_not", "absent", "env", "stdin",
             "files", "why"}


@dataclass
class Case:
    name: str
    argv: list[str]
    rc: int
    why: str = ""
    stderr: str | None = None
    stdout: str | None = None
    stdout_not: str | None = None
    absent: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    stdin: str | None = None
    files: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Outcome:
    case: Case
    rc: int | None           # None: killed at the time limit
    seconds: float           # wall
    cpu_seconds: float
    rss_mb: float
    problems: list[str]
    stderr: str

    @property
    def ok(self) -> bool:
        return not self.problems


def default_tables() -> list[Path]:
    """hostile_inputs.toml, then every hostile_inputs.d/*.toml in name order."""
    return [CASES, *sorted(CASES_DIR.glob("*.toml"))]


def load_all(paths: list[Path]) -> list[Case]:
    """Every case of the tables, in order; a name used twice is an InputError."""
    cases = [c for path in paths for c in load_cases(path)]
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise InputError(f"case name used twice across the tables: {', '.join(twice)}")
    return cases


def load_cases(path: Path) -> list[Case]:
    _, data = load_toml(path, what="case table")
    cases = []
    for i, row in enumerate(data.get("case", []), 1):
        unknown = set(row) - CASE_KEYS
        if unknown or not {"name", "argv", "rc"} <= set(row):
            raise InputError(f"{path}: case #{i}: needs name, argv, rc; unknown keys: "
                             f"{', '.join(sorted(unknown)) or 'none'}")
        cases.append(Case(**row))
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise InputError(f"{path}: a case name is used twice")
    return cases


# ------------------------------------------------------------------ the lab

def make_lab(root: Path) -> list[str]:
    """A build folder the fake QEMU accepts, its consoles; the run options."""
    for kernel in ("default", "seeds"):   # a fake suites file's kernel; the default suite's
        image = root / f"build/kernel-{kernel}/arch/x86/boot/bzImage"
        image.parent.mkdir(parents=True)
        image.write_text("fake kernel (harness/tests/fake_qemu never reads it)\n")
    (root / "initramfs.cpio").write_text("fake initramfs\n")
    consoles = root / "consoles"
    shutil.copytree(CONSOLES, consoles)
    first = (CONSOLES / "USERCOPY_SLAB_WHITELIST_TO.log").read_bytes()
    (consoles / "boot.log").write_bytes(first[:first.index(b"USERCOPY-LAB-READY")]
                                        + b"USERCOPY-LAB-READY\n")
    return ["--accel", "tcg", "--build-dir", str(root / "build"),
            "--initramfs", str(root / "initramfs.cpio"), "--results", str(root / "results")]


_REPEAT = re.compile(r"\{(.)\*(\d{1,7})\}")


def _expand(text: str, tmp: Path) -> str:
    """{tmp}, {repo}, and {X*N}: the character X N times."""
    text = text.replace("{tmp}", str(tmp)).replace("{repo}", str(REPO))
    return _REPEAT.sub(lambda m: m.group(1) * int(m.group(2)), text)


def write_files(files: dict[str, dict[str, Any]], tmp: Path) -> None:
    for name, spec in files.items():
        path = tmp / _expand(name, tmp)
        path.parent.mkdir(parents=True, exist_ok=True)
        if spec.get("dir"):
            path.mkdir(exist_ok=True)
        elif spec.get("fifo"):
            os.mkfifo(path)
        elif "symlink" in spec:
            path.symlink_to(spec["symlink"])
        elif "random" in spec:
            path.write_bytes(random.Random(spec.get("seed", 0)).randbytes(spec["random"]))
        elif "copy" in spec:
            data = (REPO / spec["copy"]).read_bytes()
            if spec.get("line_ends") == "cr":
                data = data.replace(b"\r", b"").replace(b"\n", b"\r")
            if spec.get("gzip"):
                data = gzip.compress(data, mtime=0)
                data = data[:int(len(data) * spec.get("cut", 1.0))]
            path.write_bytes(data)
        else:
            body = _expand(spec["text"], tmp) * spec.get("times", 1)
            path.write_text(_expand(spec.get("head", ""), tmp) + body
                            + _expand(spec.get("tail", ""), tmp))
            if "append" in spec:
                with open(path, "ab") as f:
                    f.write((REPO / spec["append"]).read_bytes())


def _argv(case: Case, tmp: Path, lab: list[str]) -> list[str]:
    out: list[str] = []
    for arg in case.argv:
        out += lab if arg == "{lab}" else [_expand(arg, tmp)]
    return out


# ------------------------------------------------------------------ running

_ENDLESS = {"endless": b"\0" * 65536,
            "endless-text": b"[    1.000000] a kernel log line that never ends\n" * 1024}


def _feed_endless(pipe: Any, stop: threading.Event, chunk: bytes) -> None:
    try:
        while not stop.is_set():
            pipe.write(chunk)
    except (BrokenPipeError, OSError, ValueError):
        pass


def run_case(case: Case, pythonpath: Path) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="usercopy-lab-hostile-") as tmp_name:
        tmp = Path(tmp_name)
        lab = make_lab(tmp)
        write_files(case.files, tmp)
        env = dict(os.environ, PYTHONPATH=str(pythonpath),
                   PATH=f"{FAKE_QEMU}{os.pathsep}{os.environ.get('PATH', '')}",
                   FAKE_QEMU_CONSOLES=str(tmp / "consoles"),
                   **{k: _expand(v, tmp) for k, v in case.env.items()})
        out, err = tmp / ".stdout", tmp / ".stderr"
        stop = threading.Event()
        with open(out, "wb") as fout, open(err, "wb") as ferr:
            stdin: Any = subprocess.DEVNULL
            if case.stdin == "/dev/zero":
                stdin = open("/dev/zero", "rb")
            elif case.stdin in _ENDLESS:
                stdin = subprocess.PIPE
            start = time.monotonic()
            proc = subprocess.Popen(
                ["prlimit", f"--as={LIMIT_AS_MB << 20}",
                 f"--cpu={int(LIMIT_SECONDS)}:{int(LIMIT_SECONDS) + 1}", "--", sys.executable, "-m",
                 "usercopy_lab", *_argv(case, tmp, lab)],
                stdin=stdin, stdout=fout, stderr=ferr, env=env, cwd=tmp,
                start_new_session=True)
            if case.stdin in _ENDLESS:
                threading.Thread(target=_feed_endless, args=(proc.stdin, stop,
                                                            _ENDLESS[case.stdin]),
                                 daemon=True).start()
            rc, rss_kb, cpu = _wait(proc.pid, start + HANG_SECONDS)
            seconds = time.monotonic() - start
            stop.set()
            if proc.stdin is not None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            if case.stdin == "/dev/zero":
                stdin.close()
            proc.returncode = rc if rc is not None else -9
        stdout = out.read_bytes().decode("utf-8", errors="replace")
        stderr = err.read_bytes().decode("utf-8", errors="replace")
        problems = judge(case, tmp, rc, cpu, rss_kb / 1024, stdout, stderr)
        return Outcome(case, rc, seconds, cpu, rss_kb / 1024, problems, stderr)


def _wait(pid: int, deadline: float) -> tuple[int | None, int, float]:
    """(exit status, peak RSS in KiB, CPU seconds) of pid; killed (its
    process group) at deadline, then None for its status."""
    killed = False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            rc = os.waitstatus_to_exitcode(status)
            return (None if killed else rc), usage.ru_maxrss, usage.ru_utime + usage.ru_stime
        if not killed and time.monotonic() > deadline:
            # the group, not the tree: the CLI's session, whatever of it
            # was orphaned included
            kill_group(pid)
            killed = True
        time.sleep(0.01)


def judge(case: Case, tmp: Path, rc: int | None, cpu: float, rss_mb: float,
          stdout: str, stderr: str) -> list[str]:
    problems = []
    if rc is None:
        problems.append(f"killed after {HANG_SECONDS:.0f}s of wall time (it waited)")
    elif rc == -signal.SIGXCPU or (rc == -signal.SIGKILL and cpu >= LIMIT_SECONDS):
        problems.append(f"killed after {LIMIT_SECONDS:.0f}s of CPU")
    elif rc != case.rc:
        problems.append(f"exit {rc}, expected {case.rc}")
    if rss_mb > LIMIT_RSS_MB:
        problems.append(f"peak RSS {rss_mb:.0f} MB > {LIMIT_RSS_MB} MB")
    if "Traceback" in stderr or "MemoryError" in stderr:
        problems.append("traceback: " + shown(stderr.strip().splitlines()[-1], 160))
    elif case.rc == 2 and rc == 2 and stderr.count("\n") != 1:
        problems.append(f"{stderr.count(chr(10))} stderr lines, expected one")
    if case.stderr and rc is not None and not re.search(case.stderr, stderr):
        problems.append(f"stderr does not match {case.stderr!r}: {shown(stderr.strip(), 200)}")
    if case.stdout and not re.search(case.stdout, stdout, re.M):
        problems.append(f"stdout does not match {case.stdout!r}")
    if case.stdout_not and (m := re.search(case.stdout_not, stdout, re.M)):
        problems.append(f"stdout has {shown(m.group(), 80)!r}")
    for path in case.absent:
        if (tmp / _expand(path, tmp)).exists():
            problems.append(f"{path} exists")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="usercopy-lab hostile-inputs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", type=Path, nargs="*",
                        help="case tables (default: hostile_inputs.toml and hostile_inputs.d/)")
    parser.add_argument("--only", action="append", help="only this case (repeatable)")
    parser.add_argument("--pythonpath", type=Path, default=REPO / "harness",
                        help="the harness to test (another checkout's harness/, "
                        "to measure it before a change)")
    parser.add_argument("-j", "--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        help="cases at once (default: the number of cores)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        print(f"hostile-inputs: --jobs {args.jobs}: must be at least 1", file=sys.stderr)
        return 2
    if shutil.which("prlimit") is None:
        print("hostile-inputs: prlimit not found (apt-get install util-linux)", file=sys.stderr)
        return 2
    try:
        cases = load_all(args.cases or default_tables())
    except InputError as exc:
        print(f"hostile-inputs: {exc}", file=sys.stderr)
        return 2
    if args.only:
        cases = [c for c in cases if c.name in args.only]
    # Not tabulate: each row is printed as its case ends (the run takes
    # minutes), and tabulate lays out a table only once it has every row.
    width = max((len(c.name) for c in cases), default=4)
    print(f"{'case':<{width}}  verdict  exit  CPU s  wall s  peak RSS MB  "
          f"(limits: {LIMIT_SECONDS:.0f} s of CPU, {LIMIT_RSS_MB} MB)", flush=True)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = pool.map(lambda c: run_case(c, args.pythonpath), cases)
        failed = sum(not _show(o, width) for o in outcomes)
    print(f"hostile-inputs: {len(cases) - failed} of {len(cases)} cases within every limit")
    return 1 if failed else 0


def _show(o: Outcome, width: int) -> bool:
    """Print o's line; whether it met every limit."""
    rc = "kill" if o.rc is None else str(o.rc)
    print(f"{o.case.name:<{width}}  {'ok' if o.ok else 'FAILED':<7}  {rc:>4}  "
          f"{o.cpu_seconds:5.2f}  {o.seconds:6.2f}  {o.rss_mb:11.0f}  "
          f"{'; '.join(o.problems)}", flush=True)
    if o.ok and os.environ.get("HOSTILE_SHOW_STDERR"):
        print(f"    {shown(o.stderr.strip(), 200)}")
    return o.ok


if __name__ == "__main__":
    sys.exit(main())
