"""usercopy-lab triage end to end (command line -> run), output and exit codes."""
import json
import re
from pathlib import Path

import pytest

from usercopy_lab.cli import main as cli_main
from usercopy_lab.triage import command as triage

DATA = Path(__file__).parent / "testdata"
TRIAGE = DATA / "triage"
CONSOLE = DATA / "console"
GOLDEN = Path(__file__).resolve().parents[2] / "expected-oops"


def cli(capsys, *argv):
    rc = cli_main(["triage", *map(str, argv)])
    out, err = capsys.readouterr()
    return rc, out, err


def test_table_one_row_per_signature(capsys):
    rc, out, err = cli(capsys, TRIAGE / "journalctl_slub_kmalloc.log", TRIAGE / "rds_seed011_syslog.log")
    assert rc == 0 and "Traceback" not in err
    rows = [l for l in out.splitlines() if l.startswith("    ")]
    assert len(rows) == 2
    assert rows[0].split()[:2] == ["2", "usercopy_abort"]
    assert "journalctl_slub_kmalloc.log:2" in rows[0]
    assert "usercopy: exposure in put_cmsg" in rows[1] and "[truncated]" in rows[1]
    assert "3 report(s), 2 distinct signature(s)" in out


def test_json_one_object_per_report(capsys):
    rc, out, _ = cli(capsys, "--json", TRIAGE / "rds_seed011_quoted.log", TRIAGE / "journalctl_slub_kmalloc.log")
    objs = [json.loads(l) for l in out.splitlines()]
    assert rc == 0 and len(objs) == 3
    keys = {"file", "line", "kind", "direction", "direction_source", "object", "cache", "offset", "size",
            "guilty_frame", "frames", "kernel", "truncated", "title", "signature"}
    assert all(keys <= o.keys() for o in objs)
    rds = objs[0]
    assert (rds["kind"], rds["direction"], rds["direction_source"], rds["guilty_frame"]) == (
        "usercopy_warn", "exposure", "inferred", "put_cmsg")
    assert objs[1]["size"] == 80 and objs[2]["size"] == 96
    assert objs[1]["direction_source"] == objs[2]["direction_source"] == "printed"


def test_baseline_from_logs_new_still_gone(capsys):
    rc, out, err = cli(capsys, "--baseline", CONSOLE / "USERCOPY_KERNEL.log",
                       TRIAGE / "two_reports_first_cut.log")
    assert rc == 1
    status = {l.split("  ")[0].strip(): l for l in out.splitlines() if "usercopy:" in l}
    assert "kernel text" in status["still present"]
    assert "1 new" not in err and "2 new, 1 still present, 0 gone" in err


def test_baseline_results_json_no_new_exit_0(tmp_path, capsys):
    rc, out, _ = cli(capsys, "--json", CONSOLE)
    reports = [json.loads(l) for l in out.splitlines()]
    results = {"triggers": [{"name": "ALL", "reports": reports}]}
    (tmp_path / "results.json").write_text(json.dumps(results))
    rc, out, err = cli(capsys, "--baseline", tmp_path / "results.json", CONSOLE / "BUG.log")
    assert rc == 0
    assert "gone" in out and "still present" in out and "0 new" in err
    (tmp_path / "list.json").write_text(json.dumps(reports[:1]))
    rc, out, err = cli(capsys, "--baseline", tmp_path / "list.json", CONSOLE / "PANIC.log")
    assert rc == 1 and out.startswith("STATUS")


def test_golden_names_matching_report(capsys):
    if not (GOLDEN / "default").is_dir():
        pytest.skip("no expected-oops/lab")
    rc, out, _ = cli(capsys, "--golden", GOLDEN, CONSOLE / "USERCOPY_SLAB_WHITELIST_TO.log",
                     CONSOLE / "BUG.log")
    lines = out.splitlines()
    assert any("golden: default/USERCOPY_SLAB_WHITELIST_TO" in l for l in lines)
    assert not any("golden" in l for l in lines if "lkdtm_BUG" in l)


def test_golden_offset_base_uses_lkdtm_address_from_the_log(tmp_path, capsys):
    """USERCOPY_KERNEL's golden pins the offset relative to the address
    LKDTM printed; triage must check it, not skip it or always fail it."""
    if not (GOLDEN / "default").is_dir():
        pytest.skip("no expected-oops/lab")
    log = DATA / "console-series" / "default" / "USERCOPY_KERNEL.log"
    rc, out, _ = cli(capsys, "--golden", GOLDEN / "default", log)
    assert rc == 0 and "[golden: USERCOPY_KERNEL]" in out
    text = log.read_text()
    moved = tmp_path / "moved.log"       # LKDTM says another address
    addr = re.search(r"kernel text: (ffff[0-9a-f]+)", text).group(1)
    moved.write_text(text.replace(f"kernel text: {addr}",
                                  f"kernel text: {int(addr, 16) + 0x10:x}"))
    dropped = tmp_path / "dropped.log"   # no LKDTM address at all
    dropped.write_text("".join(l for l in text.splitlines(True) if "kernel text: ffff" not in l))
    assert moved.read_text() != text and dropped.read_text() != text
    for other in (moved, dropped):
        rc, out, _ = cli(capsys, "--golden", GOLDEN / "default", other)
        assert rc == 0 and "kernel text" in out and "golden:" not in out


def test_negative_corpus_prints_nothing_found(capsys):
    rc, out, err = cli(capsys, TRIAGE / "negative")
    assert rc == 0 and "no kernel reports found" in out and err == ""


@pytest.mark.parametrize("arg,message", [
    ("garbage/binary.bin", "binary data, not a text log"),
    ("garbage/empty.log", "empty file"),
    ("no-such.log", "no such file or directory"),
])
def test_garbage_gives_message_not_traceback(capsys, arg, message):
    rc, out, err = cli(capsys, TRIAGE / arg)
    assert message in err and "Traceback" not in err
    assert rc in (0, 2)


def test_directory_without_logs(tmp_path, capsys):
    (tmp_path / "notes.json").write_text("{}")
    rc, out, err = cli(capsys, tmp_path)
    # one line: the directory, the rule, and what it held instead
    assert rc == 2 and err.count("\n") == 1, err
    assert "directory has no log files" in err and "not read: notes.json (not a log by its name)" in err


def test_one_huge_line(tmp_path, capsys):
    p = tmp_path / "huge.log"
    with open(p, "wb") as f:
        block = b"A" * (1 << 20)
        for _ in range(200):
            f.write(block)
    rc, out, err = cli(capsys, p)
    assert rc == 0 and "no kernel reports found" in out
    assert "1 line(s) longer than 64 KiB (first: line 1)" in err


def test_bad_baseline_is_a_message(tmp_path, capsys):
    bad = tmp_path / "results.json"
    bad.write_text("{not json")
    rc, out, err = cli(capsys, "--baseline", bad, CONSOLE / "BUG.log")
    assert rc == 2 and "not readable JSON" in err


def test_vmlinux_without_debug_info_degrades(tmp_path, capsys):
    fake = tmp_path / "vmlinux"
    fake.write_bytes(b"not an elf")
    rc, out, err = cli(capsys, "--vmlinux", fake, CONSOLE / "BUG.log")
    assert rc == 0 and "--vmlinux" in err and "lkdtm_BUG" in out


NORETURN_PROG = """#include <stdlib.h>

__attribute__((noreturn, noinline)) void die_now(int x)
{
	exit(x);
}

__attribute__((noinline)) int check(int x)
{
	if (x > 3)
		return x + 1;
	die_now(x);
}

int main(int argc, char **argv)
{
	(void)argv;
	return check(argc);
}
"""


def test_symbolizer_names_the_call_line_of_a_noreturn_call(tmp_path):
    """check()'s frame is the return address of its call to die_now(), the
    function's last instruction (as __check_heap_object's call to
    usercopy_abort is): resolving the return address itself falls past the
    function; the call line is prog.c:12."""
    import re
    import shutil
    import subprocess
    from usercopy_lab.model import FrameAddress
    from usercopy_lab.reports.symbolize import Symbolizer
    if not (shutil.which("gcc") and shutil.which("objdump")):
        pytest.skip("gcc/objdump not installed")
    src = tmp_path / "prog.c"
    src.write_text(NORETURN_PROG)
    exe = tmp_path / "prog"
    subprocess.run(["gcc", "-g", "-O2", "-o", str(exe), str(src)], check=True)
    dis = subprocess.run(["objdump", "-d", str(exe)], capture_output=True, text=True,
                         check=True).stdout
    body = dis.split("<check>:\n", 1)[1].split("\n\n", 1)[0]
    start = int(re.search(r"^([0-9a-f]+) <check>:", dis, re.M).group(1), 16)
    call = re.search(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\tcall.*<die_now>", body, re.M)
    assert call, body
    ret = int(call.group(1), 16) + len(call.group(2).split())
    sym = Symbolizer(exe)
    sym.check()
    [where] = sym.resolve([FrameAddress("check", ret - start)])
    assert where.startswith("check ") and where.endswith("prog.c:12"), where


def test_symbolizer_resolves_with_debug_info(tmp_path):
    import shutil
    import subprocess
    from usercopy_lab.reports.oops_parser import iter_reports
    from usercopy_lab.reports.symbolize import Symbolizer
    if not shutil.which("gcc"):
        pytest.skip("gcc not installed")
    src = tmp_path / "prog.c"
    src.write_text("int helper(int x)\n{\n\treturn x * 3;\n}\n\nint main(void)\n{\n\treturn helper(2);\n}\n")
    exe = tmp_path / "prog"
    subprocess.run(["gcc", "-g", "-O0", "-o", str(exe), str(src)], check=True)
    [rep] = iter_reports([
        "kernel BUG at mm/usercopy.c:99!", "invalid opcode: 0000 [#1] SMP",
        "Call Trace:", " <TASK>", " helper+0x4/0x20", " ? main+0x1/0x30",
        " main.cold+0x0/0x30 (unreliable)", " main+0x0/0x30",
        " rds_recvmsg+0x43d/0x620 [rds]", " </TASK>"])
    frames = rep.frame_addresses
    assert rep.frames == ["helper", "main", "rds_recvmsg"]
    assert [(f.symbol, f.offset, f.module) for f in frames] == [
        ("helper", 4, None), ("main", 0, None), ("rds_recvmsg", 0x43d, "rds")]
    sym = Symbolizer(exe)
    sym.check()
    out = sym.resolve(frames)
    assert out[0].startswith("helper ") and "prog.c:" in out[0]
    assert out[1].startswith("main ") and "prog.c:7" in out[1]
    assert "module rds" in out[2]


# -- hostile and unusual input (issue #13 item 3) ------------------------------
def test_dash_reads_standard_input(monkeypatch, capsys):
    import gzip
    import io
    import sys
    data = (TRIAGE / "usercopy_warn_4_19_full.log").read_bytes()
    for blob in (data, gzip.compress(data)):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(blob)))
        rc, out, err = cli(capsys, "-")
        assert rc == 0 and err == "", err
        assert "<stdin>:2" in out and "sctp_getsockopt" in out


def test_decompression_bomb_is_a_message(tmp_path, capsys):
    import gzip
    bomb = tmp_path / "dmesg.log.gz"
    bomb.write_bytes(gzip.compress(b"x" * (3 << 20)))
    rc, out, err = cli(capsys, "--max-decompressed", "2", bomb)
    assert rc == 2 and "Traceback" not in err
    assert f"triage: {bomb}: gzip data expands to more than 2 MiB (a decompression bomb?)" in err
    rc, out, err = cli(capsys, "--max-decompressed", "4", bomb)   # under the limit: read
    assert rc == 0 and "no kernel reports found" in out
    with pytest.raises(SystemExit):
        cli(capsys, "--max-decompressed", "0", bomb)


def test_directory_symlink_loop_is_read_once(tmp_path, capsys):
    logs = tmp_path / "logs"
    (logs / "sub").mkdir(parents=True)
    (logs / "sub" / "a.log").write_bytes((TRIAGE / "usercopy_warn_4_19_full.log").read_bytes())
    (logs / "sub" / "loop").symlink_to(logs, target_is_directory=True)
    (logs / "again.log").symlink_to(logs / "sub" / "a.log")
    (logs / "dangling.log").symlink_to(tmp_path / "nowhere.log")
    rc, out, err = cli(capsys, logs)
    assert rc == 0 and "1 report(s), 1 distinct signature(s)" in out
    assert "symbolic link loop" in err and "Traceback" not in err


def test_pathological_lines_take_bounded_time(tmp_path, capsys):
    """1 MiB lines built against the header and suppression patterns
    ("WARNING: .* uses", "WARNING: .* at SRC FUNC"): every pattern sees at
    most a window of a line, so this is quick (seconds at most; without
    the windows the suppression alone took 0.25 s per 64 KiB piece, the
    title patterns more).  The guard is against a hang only, and counts this
    process's CPU time (ITIMER_PROF), not the wall clock: at nice 19 beside
    a kernel build the test takes longer, not more CPU (27 s of wall beside
    two busy loops; the alarm it had rang after 120 s of wall)."""
    import signal
    mib = 1 << 20
    p = tmp_path / "hostile.log"
    with open(p, "wb") as f:
        f.write(b"[ 1.0] WARNING: " + b"warning: x " * (mib // 11) + b"\n")
        f.write(b"[ 1.1] WARNING: CPU: 0 PID: 1" + b" at a.b" * (mib // 7) + b"\n")
        f.write((b"[ 1.2] WARNING: " * 40 + b"EXT4-fs (sda): warning: x " * 40 + b"\n") * 2000)
        f.write(b"[ 1.3] " + b"Linux version " * (mib // 14) + b"\n")
    before = signal.signal(signal.SIGPROF,
                           lambda *_: pytest.fail("triage spent 120 s of CPU on a hostile line"))
    signal.setitimer(signal.ITIMER_PROF, 120)
    try:
        rc, out, err = cli(capsys, "--json", p)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, before)
    assert rc == 0 and "Traceback" not in err
    assert "longer than 64 KiB" in err


def test_syz_titles_in_the_table(capsys):
    rc, out, _ = cli(capsys, "--syz-titles", CONSOLE / "USERCOPY_SLAB_SIZE_TO.log",
                     TRIAGE / "usercopy_warn_4_19_full.log")
    assert rc == 0
    assert "BUG: bad usercopy in direct_entry" in out
    assert "WARNING: bad usercopy in sctp_getsockopt" in out


def test_oops_flood_is_one_row_and_cascade_says_secondary(tmp_path, capsys):
    def log_of(fixture: str) -> Path:
        body = (DATA / "reports" / fixture).read_bytes().split(b"\n\n", 1)[1]
        path = tmp_path / (fixture + ".log")
        path.write_bytes(body)
        return path

    rc, out, _ = cli(capsys, log_of("oops-flood-same-warning.txt"))
    rows = [l for l in out.splitlines() if "WARNING in blorp_dequeue" in l]
    assert rc == 0 and len(rows) == 1 and rows[0].split()[0] == "4"
    assert "4 report(s), 1 distinct signature(s)" in out
    rc, out, _ = cli(capsys, log_of("cascade-oops-then-secondary-reports.txt"))
    lines = out.splitlines()
    oops = next(l for l in lines if "in zyxx_next" in l)
    usercopy = next(l for l in lines if "usercopy:" in l)
    warning = next(l for l in lines if "WARNING in zyxx_teardown" in l)
    assert "[secondary]" not in oops and "[secondary]" in usercopy
    # the WARNING came twice, after the oops and after a reboot: one row,
    # and not all of its reports are secondary
    assert warning.split()[0] == "2" and "[secondary]" not in warning
