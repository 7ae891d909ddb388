"""log_reader: one reader, the file's own line numbers, bounded input."""
import bz2
import gzip
import io
import lzma
from pathlib import Path

import pytest

from usercopy_lab.reports.console_markers import read_markers
from usercopy_lab.reports.log_reader import (MAX_LINE, LogFormatError, ScanStats,
                                             candidate_lines, open_log, split_lines)
from usercopy_lab.reports.oops_parser import iter_file, iter_stream
from usercopy_lab.run.trigger_run import evaluate_log

CONSOLE = Path(__file__).parent / "testdata" / "console"


def grep_n(path: Path, needle: bytes) -> list[int]:
    """1-based lines holding needle, as grep -n says."""
    return [n for n, line in enumerate(path.read_bytes().split(b"\n"), 1) if needle in line]


def test_qemu_line_ends_count_once():
    data = b"a\r\r\nb\r\nc\n\x0cd\x1ce\n"
    assert split_lines(data) == ["a", "b", "c", "\x0cd\x1ce"]
    assert split_lines(b"x\ny") == ["x", "y"] and split_lines(b"") == []


def test_run_match_and_triage_give_the_files_line_numbers():
    """A captured console ends its lines with QEMU's "\\r\\r\\n"; the usercopy
    message is line 115 of the file for run (evaluate_log, which match
    uses too) and for triage alike."""
    log = CONSOLE / "USERCOPY_SLAB_SIZE_TO.log"
    assert b"\r\r\n" in log.read_bytes()
    [want] = grep_n(log, b"usercopy: Kernel memory exposure")
    result = evaluate_log("default", "USERCOPY_SLAB_SIZE_TO", log, None, "")
    [rep] = result.reports
    [tri] = list(iter_file(log))
    assert rep.line == tri.line == want == 115
    # the report ends with the register dump repeated after its end marker
    assert rep.end_line == tri.end_line == grep_n(log, b"PKRU: 55555554")[-1] == 164


def test_markers_read_from_the_same_lines():
    lines = split_lines((CONSOLE / "USERCOPY_SLAB_SIZE_TO.log").read_bytes())
    markers = read_markers(lines)
    assert markers.started == "USERCOPY_SLAB_SIZE_TO" and markers.outcome == "killed"


@pytest.mark.parametrize("pack", [gzip.compress, lzma.compress, bz2.compress])
def test_compressed_logs_are_read(tmp_path, pack):
    p = tmp_path / "console.log.x"
    p.write_bytes(pack((CONSOLE / "BUG.log").read_bytes()))
    [rep] = list(iter_file(p))
    assert rep.rip == "lkdtm_BUG"


def test_decompression_bomb_is_refused(tmp_path):
    p = tmp_path / "bomb.log.gz"
    p.write_bytes(gzip.compress(b"a\n" * (2 << 20)))   # 4 MiB of text, ~4 KiB packed (zeros would be refused as binary first)
    assert p.stat().st_size < 10_000
    with pytest.raises(LogFormatError, match="expands to more than 1 MiB"):
        list(iter_file(p, max_decompressed=1 << 20))
    with open_log(p, 8 << 20) as f:                   # under the limit: read
        assert len(f.read(16 << 20)) == 4 << 20


def test_binary_junk_does_not_hide_a_report():
    """NUL runs and random bytes before a report (on its own lines and
    glued in front of its first line) neither make the file 'binary' nor
    lose the report."""
    junk = bytes(range(256)) * 300 + b"\0" * 5000
    body = (CONSOLE / "BUG.log").read_bytes()
    start = body.index(b"[    0.")
    data = junk + b"\n" + junk + body[start:]
    [rep] = list(iter_stream(io.BytesIO(data), "junk"))
    assert rep.rip == "lkdtm_BUG" and not rep.truncated
    with pytest.raises(LogFormatError, match="binary data"):
        list(iter_stream(io.BytesIO(junk * 3), "only-junk"))


def test_header_after_a_huge_line_piece_is_found():
    """A line of 3 MiB with the report header at its end: read in 64 KiB
    pieces, the header is still found (and the line counted once)."""
    head = b"[   12.000000] usercopy: Kernel memory exposure attempt detected from SLUB object 'k' (offset 1, size 2)!"
    data = b"x" * (3 << 20) + head + b"\n" + b"[   12.000001] kernel BUG at mm/usercopy.c:101!\n"
    stats = ScanStats()
    [rep] = list(iter_stream(io.BytesIO(data), "huge", stats))
    assert (rep.kind, rep.cache, rep.line) == ("usercopy_abort", "k", 1)
    assert (stats.long_lines, stats.first_long_line, stats.lines) == (1, 1, 2)


def test_candidate_lines_skip_trigger_free_text():
    data = b"".join(b"line %d nothing here\n" % i for i in range(1000)) + b"xx BUG: yy\n"
    stats = ScanStats()
    got = list(candidate_lines(io.BytesIO(data), (b"BUG",), lambda: False, stats, 4096))
    assert got == [(1001, b"xx BUG: yy")] and stats.lines == 1001
    assert MAX_LINE == 64 * 1024
