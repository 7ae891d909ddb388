"""Agreement with syzkaller's own report corpus (not in this repository).

google/syzkaller's pkg/report/testdata/linux/report is looked for in
USERCOPY_LAB_SYZKALLER_CORPUS, else in build/corpora/syzkaller-report
(`make corpora` fetches it, where the network allows), else in the lab's
offline copy ../shared/corpora/syzkaller-report (corpora.py); found, the
test runs, never skips.  scripts/
syzkaller-corpus.py runs over it and the numbers must be exactly these:
712 crash cases with 710 titles equal to TITLE or an ALT, every usercopy
case and every crash-free case right, the truncated flag equal to
CORRUPTED for 709; each file that differs is listed, with its reason, in
testdata/syzkaller-corpus/known-misses.tsv.  A new syzkaller corpus
(more files) changes the counts: update them here with the new list.
"""
from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from corpora import find_corpus, not_found

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "syzkaller-corpus.py"
MISSES = Path(__file__).parent / "testdata" / "syzkaller-corpus" / "known-misses.tsv"
VARIABLE = "USERCOPY_LAB_SYZKALLER_CORPUS"
EXPECTED = {"crash_cases": 712, "title_match": 710, "usercopy_cases": 4, "usercopy_match": 4,
            "crash_free_cases": 35, "crash_free_without_report": 35,
            "truncated_agrees_with_corrupted": 709}


def corpus() -> Path | None:
    return find_corpus("syzkaller-report", VARIABLE)


def known_misses() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"title": [], "usercopy": [], "crash-free": [], "corrupted": []}
    for line in MISSES.read_text().splitlines():
        if line and not line.startswith("#"):
            category, name, reason = line.split("\t")
            assert reason.strip(), f"{name}: a known miss needs its reason"
            out[category].append(name)
    return out


def test_agreement_with_syzkaller_corpus():
    path = corpus()
    if path is None:
        why = not_found("syzkaller-report", VARIABLE)
        warnings.warn(why)
        pytest.skip(why)
    proc = subprocess.run([sys.executable, str(SCRIPT), "--json", "--misses", str(path)],
                          capture_output=True, text=True, timeout=1800, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    got = json.loads(proc.stdout.splitlines()[0])
    misses = got.pop("misses")
    assert got == EXPECTED
    assert misses == known_misses()


def test_known_misses_have_reasons():
    assert sum(map(len, known_misses().values())) == 5


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
