"""tests.txt's expected-text column means what upstream run.sh means.

run.sh (tools/testing/selftests/lkdtm) matches it with `grep -E -qi`: an
extended regular expression, case-insensitive.  The consoles are real ones
(testdata/console: SLUB, stock 6.1.192; console-series/slab: SLAB).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from usercopy_lab.run.suite import read_tests_txt
from usercopy_lab.run.trigger_run import evaluate_log

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "testdata"
SLUB_LOG = DATA / "console" / "USERCOPY_SLAB_WHITELIST_TO.log"
SLAB_LOG = DATA / "console-series" / "slab" / "USERCOPY_SLAB_WHITELIST_TO.log"
TESTS_TXT = {t.name: t.expected_text for t in read_tests_txt(REPO / "lkdtm-tests" / "tests.txt")}


def seen(log: Path, text: str) -> bool | None:
    return evaluate_log("any", "USERCOPY_SLAB_WHITELIST_TO", log, None, text).expected_text_seen


@pytest.mark.parametrize("log", [SLUB_LOG, SLAB_LOG], ids=["SLUB", "SLAB"])
def test_tests_txt_line_matches_both_allocators(log):
    assert seen(log, TESTS_TXT["USERCOPY_SLAB_WHITELIST_TO"]) is True


def test_case_insensitive_and_escaped_parentheses():
    assert seen(SLUB_LOG, r"EXPOSURE attempt detected from slub object 'lkdtm-usercopy' "
                          r"\(offset 255, size 64\)") is True


def test_other_allocator_or_cache_is_not_seen():
    assert seen(SLUB_LOG, "from SLAB object 'lkdtm-usercopy'") is False
    assert seen(SLAB_LOG, "from SL[AU]B object 'kmalloc-1k'") is False
