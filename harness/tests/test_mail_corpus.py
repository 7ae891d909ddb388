"""The mail corpus: syzbot's report mails from public list archives.

The corpus is testdata/mail-corpus/index.tsv (3777 messages: commit ids of
public-inbox git mirrors, expected titles); the mails themselves are built
by `scripts/mail-corpus.py build` into USERCOPY_LAB_MAIL_CORPUS, else
build/corpora/mail (`make corpora`, where the network allows), else the
lab's offline copy ../shared/corpora/mail (corpora.py); found, the tests
run, never skip.  Counts are
exact: a rule that changes a title changes them, and every message whose
title differs is listed with its reason in known-misses.tsv (titles of
mails older than a syzkaller rule change are read through renames.tsv).
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
SCRIPT = ROOT / "scripts" / "mail-corpus.py"
DATA = Path(__file__).parent / "testdata" / "mail-corpus"
VARIABLE = "USERCOPY_LAB_MAIL_CORPUS"
# split -> (messages, titles right, of them by a listed rename)
EXPECTED = {"dev": (2553, 2488, 79), "heldout": (1224, 1193, 18)}


def corpus() -> Path | None:
    return find_corpus("mail", VARIABLE)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, timeout=1800, check=False)


@pytest.mark.parametrize("split", sorted(EXPECTED))
def test_mail_corpus_titles(split):
    path = corpus()
    if path is None:
        why = not_found("mail", VARIABLE)
        warnings.warn(why)
        pytest.skip(why)
    proc = run("score", "--json", "--split", split, "--show", "50", str(path))
    got = json.loads(proc.stdout.splitlines()[0])
    assert (got["absent"], got["unexpected"], got["fixed"]) == (0, 0, 0), proc.stdout
    assert (got["messages"], got["titles_right"], got["right_after_rename"]) == EXPECTED[split]
    assert proc.returncode == 0


def test_index_and_lists_are_consistent():
    rows = [line.split("\t") for line in (DATA / "index.tsv").read_text().splitlines()
            if line and not line.startswith("#")]
    assert all(len(r) == 7 for r in rows)
    ids = [r[3] for r in rows]
    assert len(ids) == len(set(ids)) == sum(n for n, _, _ in EXPECTED.values())
    assert {r[0] for r in rows} == set(EXPECTED)
    listed = set(ids)
    for name in ("known-misses.tsv", "renames.tsv"):
        for line in (DATA / name).read_text().splitlines():
            if line and not line.startswith("#"):
                mid, _, reason = line.split("\t")
                assert mid in listed and reason.strip(), line
    misses = sum(1 for line in (DATA / "known-misses.tsv").read_text().splitlines()
                 if line and not line.startswith("#"))
    assert misses == sum(n - r for n, r, _ in EXPECTED.values())


def test_expected_title_rules():
    spec = {"Re: [syzbot] [io-uring?] KASAN: x in y (3)": "KASAN: x in y",
            "(subset) [syzbot] [input?] [usb?] UBSAN: s in t": "UBSAN: s in t",
            "回复: WARNING in f/usb_submit_urb": "WARNING in f/usb_submit_urb",
            "Re: Re: KASAN: use-after-free Read in f (2)": "KASAN: use-after-free Read in f",
            "[syzbot] upstream boot error: WARNING in f": "WARNING in f",
            "[syzbot] [fs?] WARNING in\n f": "WARNING in f"}
    code = ("import importlib.util,sys,json;"
            f"s=importlib.util.spec_from_file_location('mc',{str(SCRIPT)!r});"
            "m=importlib.util.module_from_spec(s);sys.modules['mc']=m;s.loader.exec_module(m);"
            "print(json.dumps([m.expected_title(t) for t in json.loads(sys.stdin.read())]))")
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(list(spec)),
                          capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout) == list(spec.values())


def test_score_refuses_a_missing_corpus(tmp_path):
    proc = run("score", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "not a directory" in proc.stderr
