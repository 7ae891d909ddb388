"""A verdict is bound to the request it answers (verdict.bound_to).

The consoles are the real ones of testdata/console-series/ (captured from
the merged series, see its README), each tampered the way a crossed or
stale reply, or an edited log, would look: the trigger's name changed in
its USERCOPY-LAB-START/END markers, in LKDTM's "Performing direct entry"
line or everywhere, a marker or the LKDTM line removed, another trigger's
START..END block before it.  None of them may pass (PASS, XFAIL or SKIP);
each untampered console still passes (test_suite_consoles.py).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from usercopy_lab.run.suite import load_suites
from usercopy_lab.run.trigger_run import evaluate_check_log, evaluate_log
from usercopy_lab.model import TriggerResult
from usercopy_lab.judge.verdict import FAILING

REPO = Path(__file__).resolve().parents[2]
CONSOLES = Path(__file__).parent / "testdata" / "console-series"
SUITES = load_suites(REPO / "suites.toml")
# (suite, name, is_check): every captured console of a trigger or check
CASES = sorted((suite.name, log.stem, log.stem in suite.checks)
               for suite in SUITES.values() if (CONSOLES / suite.name).is_dir()
               for log in (CONSOLES / suite.name).glob("*.log"))
DEFAULT = [c for c in CASES if c[0] == "default"]


def judge(suite: str, name: str, is_check: bool, text: str, tmp: Path) -> TriggerResult:
    """The verdict of text as the console of the request for `name`."""
    log = tmp / f"{name}.log"
    log.write_text(text)
    golden = SUITES[suite].golden()
    if is_check:
        from usercopy_lab.run.trigger_run import check_golden_name
        return evaluate_check_log(suite, name, log, golden=golden.get(check_golden_name(name)))
    expected = {t.name: t.expected_text for t in SUITES[suite].triggers()} \
        if SUITES[suite].expected_text else {}
    return evaluate_log(suite, name, log, golden.get(name), expected.get(name, ""))


def console(suite: str, name: str) -> str:
    return (CONSOLES / suite / f"{name}.log").read_text()


# -------------------------------------------------------------- tampering

def rename_markers(text: str, name: str, other: str) -> str:
    return re.sub(rf"(USERCOPY-LAB-(?:START|END) trigger=){re.escape(name)}(?=\s)",
                  lambda m: m.group(1) + other, text)


def rename_lkdtm(text: str, name: str, other: str) -> str:
    return re.sub(rf"(Performing direct entry ){re.escape(name)}(?=\s)",
                  lambda m: m.group(1) + other, text)


def rename_everywhere(text: str, name: str, other: str) -> str:
    return text.replace(name, other)


def drop(pattern: str):
    def tamper(text: str, name: str, _other: str) -> str:
        return "".join(line for line in text.splitlines(True)
                       if not re.search(pattern.format(name=re.escape(name)), line))
    return tamper


def stale_block_first(text: str, name: str, other: str) -> str:
    """An earlier request's reply (START..END of `other`) before this one's."""
    block = f"USERCOPY-LAB-START trigger={other}\nUSERCOPY-LAB-END trigger={other} " \
            "outcome=returned status=0\n"
    at = text.index("USERCOPY-LAB-START")
    return text[:at] + block + text[at:]


def repeated_reply(text: str, name: str, _other: str) -> str:
    """This request's START..END printed twice (a stale copy of the reply)."""
    start = text.index("USERCOPY-LAB-START")
    end = text.index("\n", text.index("USERCOPY-LAB-END")) + 1
    return text[:end] + text[start:end] + text[end:]


TAMPERS = {
    "markers": rename_markers,
    "lkdtm-line": rename_lkdtm,
    "everywhere": rename_everywhere,
    "no-start": drop(r"USERCOPY-LAB-START trigger={name}\s"),
    "no-end": drop(r"USERCOPY-LAB-END trigger={name}\s"),
    "no-lkdtm-line": drop(r"Performing direct entry {name}\s"),
    "stale-block-first": stale_block_first,
    "repeated-reply": repeated_reply,
}


def applies(tamper: str, text: str, name: str) -> bool:
    """Whether tampering changes this console (a check has no LKDTM line,
    an unknown trigger none either)."""
    return TAMPERS[tamper](text, name, "OTHER_TRIGGER") != text


# -------------------------------------------------------------- tests

def test_every_console_has_its_markers_and_lkdtm_line():
    """What binding relies on, on every real console: one START and one END
    naming the request, and for every trigger that ran, one LKDTM line."""
    assert len(CASES) > 200
    for suite, name, is_check in CASES:
        text = console(suite, name)
        assert text.count(f"USERCOPY-LAB-START trigger={name}\n") == 1, (suite, name)
        assert len(re.findall(rf"USERCOPY-LAB-END trigger={name} ", text)) == 1, (suite, name)
        fired = "outcome=unknown-trigger" not in text and not is_check
        assert text.count(f"Performing direct entry {name}\n") == fired, (suite, name)


@pytest.mark.parametrize("suite,name,is_check", DEFAULT)
def test_a_console_renamed_to_another_trigger_is_an_error_naming_both(
        suite, name, is_check, tmp_path):
    """The whole console claims the suite's next trigger (markers, LKDTM
    line, every mention): judged as the request it came back for, ERROR."""
    names = [n for _, n, _ in DEFAULT]
    other = names[(names.index(name) + 1) % len(names)]
    result = judge(suite, name, is_check, rename_everywhere(console(suite, name), name, other),
                   tmp_path)
    assert (result.verdict, result.fault) == ("ERROR", "wrong-trigger"), result.summary
    assert f"asked for {name}, " in result.summary and other in result.summary


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_each_tamper_of_a_passing_console_is_an_error(tamper, tmp_path):
    text = console("default", "USERCOPY_SLAB_WHITELIST_TO")
    assert judge("default", "USERCOPY_SLAB_WHITELIST_TO", False, text, tmp_path).verdict \
        == "PASS"
    tampered = TAMPERS[tamper](text, "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_SLAB_WHITELIST_FROM")
    result = judge("default", "USERCOPY_SLAB_WHITELIST_TO", False, tampered, tmp_path)
    assert result.verdict == "ERROR", (tamper, result.summary, result.diffs)


def test_lkdtm_line_naming_another_trigger_is_named(tmp_path):
    text = rename_lkdtm(console("default", "USERCOPY_KERNEL"), "USERCOPY_KERNEL",
                        "USERCOPY_VMALLOC")
    result = judge("default", "USERCOPY_KERNEL", False, text, tmp_path)
    assert result.summary == ("wrong-trigger: asked for trigger USERCOPY_KERNEL, LKDTM "
                              "performed USERCOPY_VMALLOC")


def test_a_check_console_with_a_trigger_fired_is_an_error(tmp_path):
    text = console("default", "check-usersized-caches")
    at = text.index("USERCOPY-LAB-END")
    text = text[:at] + "[    9.000000] lkdtm: Performing direct entry BUG\n" + text[at:]
    result = judge("default", "check-usersized-caches", True, text, tmp_path)
    assert (result.verdict, result.fault) == ("ERROR", "wrong-trigger")
    assert result.summary.endswith("asked for check check-usersized-caches, LKDTM performed BUG")


def test_an_unknown_trigger_answered_for_another_is_not_a_skip(tmp_path):
    """An unknown trigger is SKIP; the same console answering the request for
    a known trigger is not (binding comes before the outcome)."""
    text = console("default", "USERCOPY_KERNEL")
    start = text.index("USERCOPY-LAB-START")
    text = text[:start] + ("USERCOPY-LAB-START trigger=NO_SUCH\n"
                           "USERCOPY-LAB-END trigger=NO_SUCH outcome=unknown-trigger\n")
    result = judge("default", "USERCOPY_KERNEL", False, text, tmp_path)
    assert (result.verdict, result.fault) == ("ERROR", "wrong-trigger")


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), tamper=st.sampled_from(sorted(TAMPERS)),
       other=st.from_regex(r"[A-Za-z0-9_-]{1,40}", fullmatch=True))
def test_no_tampered_console_passes(case, tamper, other, tmp_path_factory):
    """Property: any real console, any tamper, any other name: never PASS,
    XFAIL or SKIP."""
    suite, name, is_check = case
    text = console(suite, name)
    if other == name or not applies(tamper, text, name):
        return
    tampered = TAMPERS[tamper](text, name, other)
    result = judge(suite, name, is_check, tampered, tmp_path_factory.mktemp("t"))
    assert result.verdict in FAILING, (tamper, other, result.verdict, result.summary)
