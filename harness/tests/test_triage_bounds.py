"""Issue #33, the triage and match side: each adversarial finding replayed.

1. rotated logs under a directory (kern.log.1, dmesg.0) are read, and
   every entry not read is named, also under --baseline;
2. a FIFO given by name is refused at once, a device read without waiting;
3. match refuses a console over --max-input, without reading it;
4. on a live pipe, a --json record leaves as soon as its report has ended;
5. a baseline's JSON is bounded in bytes and in values, and running out of
   memory is exit 2, one line;
6. a refused .gz gives neither a row nor a record.

No test sleeps or times anything: each waits on an event (select on a
pipe) under a generous bound that only turns a hang into a failure, and
bounds work (bytes read, memory), not seconds.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

import pytest

from test_triage import cli  # the triage CLI in this process, its output
from usercopy_lab import cli as lab_cli
from usercopy_lab.triage import command as triage, inputs as triage_inputs
from usercopy_lab.triage.baseline import (BASELINE_JSON_LIMIT, BASELINE_JSON_VALUES,
                                               load_baseline)
from usercopy_lab.triage.inputs import TriageError, is_log_name

HARNESS = Path(__file__).resolve().parents[1]
DATA = HARNESS / "tests" / "testdata"
CONSOLES = DATA / "console-series" / "default"
GOLDEN = HARNESS.parent / "expected-oops" / "lab"
KERNEL = CONSOLES / "USERCOPY_KERNEL.log"          # its report: lines 159-209
SIZE_TO = CONSOLES / "USERCOPY_SLAB_SIZE_TO.log"
SIZE_FROM = CONSOLES / "USERCOPY_SLAB_SIZE_FROM.log"
WHITELIST = CONSOLES / "USERCOPY_SLAB_WHITELIST_TO.log"
HANG = 120      # seconds that only turn a hang into a failure


def lab(*argv, user: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own (one that might wait forever)."""
    return subprocess.run([*(user or []), sys.executable, "-m", "usercopy_lab",
                           *map(str, argv)], capture_output=True, text=True, timeout=HANG,
                          cwd=HARNESS, env=dict(os.environ, PYTHONPATH=str(HARNESS)))


def bytes_read() -> int:
    """Bytes this process has read with read() and the like, so far."""
    text = Path("/proc/self/io").read_text()
    return int(text.split("rchar:")[1].split()[0])


# ------------------------------------------------------------ 1. what a log is

@pytest.mark.parametrize("name", [
    "kern.log", "kern.log.1", "dmesg", "dmesg.0", "syslog.2.gz", "kern.log.1.gz",
    "messages-20240101", "messages-20240101.xz", "Xorg.0.log.old", "console.2024-01-01",
    "serial.txt", "TRIGGER.log", "guest-7.console", "boot.LOG.3.BZ2"])
def test_rotated_and_compressed_logs_are_logs(name):
    assert is_log_name(name)


@pytest.mark.parametrize("name", [
    "notes.md", "results.json", "results.json.1", "logs.tar.gz", "vmlinux.o",
    ".kern.log", ".1", "README", "README.log", "picture.png.2"])
def test_other_names_are_not(name):
    assert not is_log_name(name)


def _log_dir(root: Path) -> Path:
    """kern.log.1, dmesg.0 and syslog.2.gz (three signatures), and beside
    them what is not read: a note, a hidden log, a FIFO, a socket, a broken
    link and a second name of kern.log.1 (each would add a row if read)."""
    logs = root / "logs"
    logs.mkdir()
    shutil.copy(KERNEL, logs / "kern.log.1")
    shutil.copy(SIZE_TO, logs / "dmesg.0")
    (logs / "syslog.2.gz").write_bytes(gzip.compress(SIZE_FROM.read_bytes()))
    shutil.copy(WHITELIST, logs / "notes.md")
    shutil.copy(WHITELIST, logs / ".hidden.log")
    os.mkfifo(logs / "fifo.log")
    (logs / "dangling.log").symlink_to(root / "nowhere.log")
    os.link(logs / "kern.log.1", logs / "zz.log")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(logs / "sock.log"))
    return logs


NOT_READ = [".hidden.log (hidden)", "dangling.log (a broken symbolic link)",
            "fifo.log (not a regular file: a FIFO (named pipe))", "notes.md (not a log by its name)",
            "sock.log (not a regular file: a socket)", "zz.log (already read as kern.log.1)"]


def test_rotated_logs_are_read_and_every_entry_not_read_is_named(tmp_path, capsys):
    logs = _log_dir(tmp_path)
    rc, out, err = cli(capsys, logs)
    assert rc == 0 and "3 report(s), 3 distinct signature(s)" in out, (out, err)
    for name in ("kern.log.1:159", "dmesg.0:156", "syslog.2.gz:157"):
        assert f"{logs}/{name}" in out
    assert "lkdtm-usercopy" not in out          # the whitelist console was not read
    [line] = err.splitlines()                   # one line names them all
    assert line == f"triage: {logs}: not read: " + ", ".join(NOT_READ)


def test_a_baseline_directory_reads_rotated_logs_and_names_the_rest(tmp_path, capsys):
    logs = _log_dir(tmp_path)
    rc, out, err = cli(capsys, "--baseline", logs, KERNEL)
    # kern.log.1 holds KERNEL's report: still present, nothing new (it was
    # "new", exit 1, while kern.log.1 was skipped)
    assert rc == 0 and out.splitlines()[1].startswith("still present"), (out, err)
    assert err.splitlines() == [f"triage: baseline {logs}: not read: " + ", ".join(NOT_READ),
                                "triage: baseline: 0 new, 1 still present, 2 gone"]


@pytest.mark.parametrize("baseline", [False, True], ids=["logs", "baseline"])
def test_unreadable_entries_are_named(baseline):
    """As nobody (root reads everything): a folder that lists but cannot be
    entered (its files were skipped without a word), one that cannot be
    listed, a file that cannot be read."""
    user: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv (util-linux) is needed to drop root")
        user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    root = Path(tempfile.mkdtemp(prefix="usercopy-lab-unreadable-"))
    try:
        root.chmod(0o755)
        for sub, mode in (("lists", 0o644), ("enters", 0o311)):
            (root / sub).mkdir()
            shutil.copy(KERNEL, root / sub / "a.log")
            (root / sub).chmod(mode)
        shutil.copy(SIZE_TO, root / "ok.log")
        shutil.copy(KERNEL, root / "secret.log")
        (root / "secret.log").chmod(0o600)
        (root / "ok.log").chmod(0o644)
        argv = ["--baseline", root, SIZE_TO] if baseline else [root]
        proc = lab("triage", *argv, user=user)
        said = "baseline " if baseline else ""
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.splitlines()[:2] == [
            f"triage: {said}{root}: not read: enters (Permission denied), "
            "lists/a.log (Permission denied)",
            f"triage: {root}/secret.log: Permission denied; skipped"]
    finally:
        for sub in ("lists", "enters"):
            (root / sub).chmod(0o755)
        shutil.rmtree(root)


# ------------------------------------------------------------ 2. never wait

def test_a_fifo_given_by_name_is_refused_not_waited_on(tmp_path):
    """Nobody writes to it: open() waited forever, as a log and as a baseline."""
    fifo = tmp_path / "kern.log"
    os.mkfifo(fifo)
    for argv in (["triage", fifo], ["triage", "--json", fifo]):
        proc = lab(*argv)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr == (f"triage: {fifo}: is a FIFO (named pipe), not read: its writer "
                               "may never come or never write (pipe it to standard input "
                               "instead); skipped\n")
    proc = lab("triage", "--baseline", fifo, KERNEL)
    assert (proc.returncode, proc.stderr) == (
        2, f"triage: baseline {fifo}: is a FIFO (named pipe), not a file\n")


def test_a_fifo_among_logs_is_named_and_the_logs_read(tmp_path):
    fifo = tmp_path / "live.log"
    os.mkfifo(fifo)
    proc = lab("triage", fifo, KERNEL)
    assert proc.returncode == 0 and "1 report(s)" in proc.stdout
    assert proc.stderr.count("\n") == 1 and "is a FIFO" in proc.stderr


def test_a_terminal_is_read_without_waiting():
    """A device is read for what it has now: a terminal nobody types on
    gave a read that never returned."""
    try:
        master, slave = os.openpty()
    except OSError as exc:
        pytest.skip(f"no pseudo-terminal: {exc}")
    try:
        import tty
        tty.setraw(slave)           # no echo, no line editing: the bytes as written
        path = os.ttyname(slave)
        proc = lab("triage", path)
        assert (proc.returncode, proc.stderr) == (
            0, f"triage: {path}: nothing to read now (a device that would wait for input)\n")
        report = (DATA / "triage" / "legacy_4_8_usercopy.log").read_bytes()
        assert len(report) < 4000                   # the terminal's buffer holds it
        os.write(master, report)
        proc = lab("triage", path)
        assert proc.returncode == 0 and "sysctl_getname" in proc.stdout
        assert proc.stderr == (f"triage: {path}: a device: its {len(report)} byte(s) of now "
                               "were read; a read would wait for more, so reading ended there\n")
    finally:
        os.close(master)
        os.close(slave)


# ------------------------------------------------------------ 3. match's bound

def test_match_refuses_a_console_over_its_limit_without_reading_it(tmp_path, capsys):
    """A 4 GiB sparse console (2 GB took 242 s): refused by its size."""
    big = tmp_path / "USERCOPY_KERNEL.log"
    with open(big, "wb") as f:
        f.truncate(4 << 30)
    before = bytes_read()
    rc = lab_cli.main(["match", "--golden", str(GOLDEN), str(big)])
    read = bytes_read() - before
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert err == (f"usercopy-lab: {big}: more than 128 MiB, the most a console log may be "
                   "(--max-input MIB)\n")
    assert read < 1 << 20, read


def test_match_max_input_moves_the_limit_and_bounds_an_expansion(tmp_path, capsys):
    console = b"x\n" * (600 << 10) + KERNEL.read_bytes()       # 1.2 MB
    log = tmp_path / "plain" / "USERCOPY_KERNEL.log"
    packed = tmp_path / "packed" / "USERCOPY_KERNEL.log"
    log.parent.mkdir()
    packed.parent.mkdir()
    log.write_bytes(console)
    packed.write_bytes(gzip.compress(console))
    for path, what in ((log, "console log"), (packed, "console log (expanded)")):
        rc = lab_cli.main(["match", "--golden", str(GOLDEN), "--max-input", "1", str(path)])
        out, err = capsys.readouterr()
        assert (rc, out) == (2, "")
        assert err == f"usercopy-lab: {path}: more than 1 MiB, the most a {what} may be " \
                      "(--max-input MIB)\n"
        rc = lab_cli.main(["match", "--golden", str(GOLDEN), "--max-input", "2", str(path)])
        out, err = capsys.readouterr()
        assert rc == 0 and re.search(r"^lab/USERCOPY_KERNEL +PASS", out, re.M), out


# ------------------------------------------------------------ 4. a live pipe

def _record(fd: int, buf: bytearray) -> dict:
    """The next --json record: waits (select) for its line, at most HANG s."""
    while b"\n" not in buf:
        ready, _, _ = select.select([fd], [], [], HANG)
        assert ready, f"no record {HANG} s after its report ended"
        chunk = os.read(fd, 1 << 16)
        assert chunk, "standard output closed before the record"
        buf += chunk
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    return json.loads(line)


def _lines(path: Path) -> list[bytes]:
    """path's lines with their "\\n" (QEMU's "\\r\\r\\n" is one line end,
    which bytes.splitlines() would count as two)."""
    return [line + b"\n" for line in path.read_bytes().split(b"\n")[:-1]]


@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["block-buffered", "unbuffered"])
def test_a_json_record_leaves_when_its_report_has_ended(unbuffered):
    """One report, then the line that ends it, into a pipe that stays
    open: the record comes before anything more is written (it came when
    1 MiB more had, or at the end).  The line that ends a report is one
    that cannot be its own: "Segmentation fault" and the harness's END
    marker may be a trace's tail, "reboot: Restarting system" is not."""
    first = _lines(KERNEL)
    second = _lines(SIZE_TO)                # its report: lines 156-207
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    proc = subprocess.Popen([sys.executable, "-m", "usercopy_lab", "triage", "--json", "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=HARNESS,
                            env=dict(env, PYTHONPATH=str(HARNESS)))
    assert proc.stdin is not None and proc.stdout is not None
    buf = bytearray()
    try:
        proc.stdin.write(b"".join(first[:212]))        # the report, up to "reboot: ..."
        proc.stdin.flush()
        rec = _record(proc.stdout.fileno(), buf)
        assert (rec["file"], rec["line"], rec["end_line"]) == ("<stdin>", 159, 209)
        proc.stdin.write(b"".join(first[212:] + second[:210]))
        proc.stdin.flush()
        rec = _record(proc.stdout.fileno(), buf)
        assert (rec["line"], rec["end_line"]) == (len(first) + 156, len(first) + 207)
        assert rec["cache"] == "kmalloc-1k"
        out, err = proc.communicate(timeout=HANG)      # closes standard input: the end
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, bytes(buf) + out, err) == (0, b"", b"")


# ------------------------------------------------------------ 5. the baseline's bounds

def test_a_baseline_over_its_size_is_refused_having_read_no_more(tmp_path):
    """63 MB of "{}" lines took 1.7 GB (3.1 GB here) and 52 s; under a
    1 GiB address-space limit a MemoryError traceback, exit 1."""
    old = tmp_path / "old.json"
    with open(old, "w") as f:
        for _ in range(63):
            f.write("{}\n" * 333_333)
    before = bytes_read()
    with pytest.raises(TriageError, match=r"old.json: more than 8 MiB of JSON, the most a "
                       r"baseline may be \(a results.json of every suite is about 0.5 MB\)$"):
        load_baseline(old, io.StringIO())
    assert bytes_read() - before < BASELINE_JSON_LIMIT + (1 << 20)


def test_a_baseline_of_too_many_values_is_refused_before_parsing(tmp_path):
    old = tmp_path / "old.json"
    old.write_text("{}\n" * (BASELINE_JSON_LIMIT // 3 - 1))       # under 8 MiB
    tracemalloc.start()
    try:
        with pytest.raises(TriageError, match=rf"JSON of up to {BASELINE_JSON_LIMIT // 3} "
                           rf"values, more than {BASELINE_JSON_VALUES}, the most"):
            load_baseline(old, io.StringIO())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * BASELINE_JSON_LIMIT, peak     # the bytes, never their objects


def _largest_baseline(path: Path) -> int:
    """The costliest JSON both bounds let through: distinct reports (one
    kept per signature), as many as the values allow."""
    n = BASELINE_JSON_VALUES // 3 - 1               # "{" and two "," per line
    with open(path, "w") as f:
        for i in range(n):
            f.write('{"kind":"bug","title":"t","guilty_frame":"f%d"}\n' % i)
    assert path.stat().st_size < BASELINE_JSON_LIMIT
    return n


def test_the_largest_baseline_allowed_takes_bounded_memory(tmp_path):
    """Its peak RSS (the child's own, from wait4), whole: 121 MB measured,
    the hostile-input table's limit is 200 MB."""
    old = tmp_path / "old.json"
    n = _largest_baseline(old)
    err = tmp_path / "stderr"
    with open(tmp_path / "stdout", "wb") as fout, open(err, "wb") as ferr:
        proc = subprocess.Popen([sys.executable, "-m", "usercopy_lab", "triage",
                                 "--baseline", str(old), str(KERNEL)], stdout=fout, stderr=ferr,
                                cwd=HARNESS, env=dict(os.environ, PYTHONPATH=str(HARNESS)))
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 1, err.read_text()         # KERNEL's report is new
    assert err.read_text().splitlines() == [f"triage: baseline: 1 new, 0 still present, "
                                            f"{n} gone"]
    assert usage.ru_maxrss < 200 << 10, usage.ru_maxrss      # KiB


def test_out_of_memory_is_exit_2_and_one_line(tmp_path):
    """A real MemoryError: the child sets its own address-space limit to
    what it uses after its imports plus 32 MiB, then reads the largest
    baseline allowed (it needs more)."""
    old = tmp_path / "old.json"
    _largest_baseline(old)
    child = ("import re, resource, sys\n"
             "from usercopy_lab.cli import main\n"
             "vm = int(re.search(r'VmSize:\\s+(\\d+) kB', open('/proc/self/status').read())"
             ".group(1)) << 10\n"
             "resource.setrlimit(resource.RLIMIT_AS, (vm + (32 << 20),) * 2)\n"
             "sys.exit(main(sys.argv[1:]))\n")
    proc = subprocess.run([sys.executable, "-c", child, "triage", "--baseline", str(old),
                           str(KERNEL)], capture_output=True, text=True, timeout=HANG,
                          cwd=HARNESS, env=dict(os.environ, PYTHONPATH=str(HARNESS)))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("triage: out of memory (") and proc.stderr.count("\n") == 1


def test_memory_error_anywhere_in_triage_is_exit_2(monkeypatch, capsys):
    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError
    for where in ("find_logs", "scan"):
        with monkeypatch.context() as m:
            m.setattr(triage, where, no_memory)
            rc, out, err = cli(capsys, "--json", KERNEL)
        assert rc == 2 and out == "" and err.startswith("triage: out of memory (")
        assert err.count("\n") == 1


# ------------------------------------------------------------ 6. refused means not printed

def test_a_refused_gz_gives_neither_a_row_nor_a_record(tmp_path, capsys):
    """Its report comes before the expansion passes the limit: the table
    dropped it only when nothing else was read, --json printed it."""
    bomb = tmp_path / "kern.log.gz"
    bomb.write_bytes(gzip.compress(KERNEL.read_bytes() + b"\n" * (3 << 20)))
    said = (f"triage: {bomb}: gzip data expands to more than 2 MiB (a decompression "
            "bomb?); not read; skipped\n")
    rc, out, err = cli(capsys, "--max-decompressed", "2", bomb, SIZE_TO)
    assert (rc, err) == (0, said)
    assert "1 report(s), 1 distinct" in out and "kernel text" not in out
    rc, out, err = cli(capsys, "--json", "--max-decompressed", "2", bomb, SIZE_TO)
    assert (rc, err) == (0, said)
    assert [json.loads(line)["file"] for line in out.splitlines()] == [str(SIZE_TO)]
    rc, out, err = cli(capsys, "--json", "--max-decompressed", "2", bomb)
    assert (rc, out, err) == (2, "", said)


def test_held_reports_come_whole_and_in_order_past_memory(tmp_path, capsys, monkeypatch):
    """A compressed log's reports wait in a spool until it is accepted;
    past HOLD_IN_MEMORY they wait in a temporary file: the records are the
    plain log's, in its order."""
    plain = tmp_path / "all.log"
    plain.write_bytes(b"".join(p.read_bytes() for p in sorted(CONSOLES.glob("*.log"))) * 3)
    packed = tmp_path / "all.log.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    monkeypatch.setattr(triage_inputs, "HOLD_IN_MEMORY", 4096)
    _, want, _ = cli(capsys, "--json", plain)
    rc, got, err = cli(capsys, "--json", packed)
    assert rc == 0 and err == ""
    assert got == want.replace(json.dumps(str(plain)), json.dumps(str(packed)))
    assert len(got.splitlines()) > 40
