"""corpora.py: which corpus folder the corpus tests read (issue #33)."""
from __future__ import annotations

import pytest

import corpora


def test_the_variable_wins_then_build_then_the_shared_copy(tmp_path, monkeypatch):
    build, shared = tmp_path / "build" / "corpora", tmp_path / "shared" / "corpora"
    monkeypatch.setattr(corpora, "PLACES", (build, shared))
    monkeypatch.delenv("VAR", raising=False)
    assert corpora.find_corpus("mail", "VAR") is None
    (shared / "mail").mkdir(parents=True)
    assert corpora.find_corpus("mail", "VAR") == shared / "mail"
    (build / "mail").mkdir(parents=True)
    assert corpora.find_corpus("mail", "VAR") == build / "mail"
    assert corpora.find_corpus("syzkaller-report", "VAR") is None
    monkeypatch.setenv("VAR", str(tmp_path))
    assert corpora.find_corpus("mail", "VAR") == tmp_path


def test_a_named_folder_that_is_not_there_fails_rather_than_skips(tmp_path, monkeypatch):
    monkeypatch.setenv("VAR", str(tmp_path / "nowhere"))
    with pytest.raises(AssertionError, match="VAR=.*nowhere: not a folder"):
        corpora.find_corpus("mail", "VAR")


def test_the_shared_copy_is_beside_the_project():
    assert corpora.PLACES[1] == corpora.ROOT.parent / "shared" / "corpora"
    assert (corpora.ROOT / "Makefile").is_file()
