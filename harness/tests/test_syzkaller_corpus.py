"""Agreement with syzkaller's own report corpus (not in this repository).

Point USERCOPY_LAB_SYZKALLER_CORPUS at google/syzkaller's
pkg/report/testdata/linux/report (a clone of syzkaller) and this runs
scripts/syzkaller-corpus.py over it: syzkaller-compatible titles must equal
TITLE or an ALT for >= 90 % of the crash cases and for every usercopy
case, no crash-free case may give a report, and the truncated flag must
agree with CORRUPTED for >= 90 %.  `make syzkaller-corpus
SYZKALLER_CORPUS=dir` runs the script with its report.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "syzkaller-corpus.py"
CORPUS = os.environ.get("USERCOPY_LAB_SYZKALLER_CORPUS")


@pytest.mark.skipif(not CORPUS, reason="USERCOPY_LAB_SYZKALLER_CORPUS is not set (point it at "
                    "syzkaller's pkg/report/testdata/linux/report to run this)")
def test_agreement_with_syzkaller_corpus():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--json", CORPUS],
                          capture_output=True, text=True, timeout=1800, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    n = json.loads(proc.stdout.splitlines()[0])
    assert n["crash_cases"] > 500 and n["crash_free_cases"] > 20, n
    assert n["title_match"] >= 0.9 * n["crash_cases"], n
    assert n["usercopy_match"] == n["usercopy_cases"] > 0, n
    assert n["crash_free_without_report"] == n["crash_free_cases"], n
    assert n["truncated_agrees_with_corrupted"] >= 0.9 * n["crash_cases"], n
    assert proc.returncode == 0


def test_script_refuses_a_missing_corpus(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "nowhere")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "not a directory" in proc.stderr


def test_script_reads_the_corpus_shape(tmp_path):
    """Header lines, blank line, log; '#' comments; CORRUPTED; a crash-free
    file without TITLE.  Made-up files in syzkaller's shape, not its data."""
    lab = Path(__file__).parent / "testdata" / "console" / "USERCOPY_SLAB_SIZE_TO.log"
    (tmp_path / "1").write_bytes(b"TITLE: BUG: bad usercopy in direct_entry\nTYPE: BUG\n\n"
                                 + lab.read_bytes())
    (tmp_path / "2").write_bytes(b"TITLE: WARNING in corrupted\nCORRUPTED: Y\n\n"
                                 b"[ 1.0] WARNING: CPU: 0 PID: 1 at a/b.c:1 f+0x1/0x2\n")
    (tmp_path / "3").write_bytes(b"# nothing here\n\n[ 1.0] WARNING: /etc/ssh/moduli does not "
                                 b"exist, using fixed modulus\n")
    proc = subprocess.run([sys.executable, str(SCRIPT), "--json", str(tmp_path)],
                          capture_output=True, text=True, check=False)
    n = json.loads(proc.stdout)
    assert n == {"crash_cases": 2, "title_match": 2, "usercopy_cases": 1, "usercopy_match": 1,
                 "crash_free_cases": 1, "crash_free_without_report": 1,
                 "truncated_agrees_with_corrupted": 2}, n
    assert proc.returncode == 0
