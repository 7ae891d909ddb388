"""The typed core (issue #37): the closed vocabularies are enums end to end.

A report's kind and direction, LKDTM's outcome, a harness fault, how a
guest booted and the guest's protocol phase are enum members wherever the
package holds them, and every question asked of them is asked with a member
or a predicate.  A string word compared by hand (`kind == "kasan"`,
`outcome in ("killed", "returned")`, `kind.startswith("usercopy")`) is how
a vocabulary drifts: a typo compares False for ever.  Only model.py and
protocol.py, which define the words, may spell them.
"""
from __future__ import annotations

import ast
from pathlib import Path

from usercopy_lab.model import BootMode, Direction, Fault, Outcome, Report, ReportKind, TriggerResult
from usercopy_lab.protocol import Phase

PACKAGE = Path(__file__).resolve().parents[1] / "usercopy_lab"
# The modules that define the vocabularies.
DEFINERS = {"model.py", "protocol.py"}
WORDS = {m.value for enum in (ReportKind, Direction, Outcome, Fault, BootMode, Phase) for m in enum}
# Prefixes of a word a startswith() must not test (the usercopy kinds' family).
PREFIXES = {"usercopy", "usercopy_"}


def _strings(node: ast.AST) -> list[str]:
    """String constants of a comparison operand: itself or the members of
    a tuple, list or set display."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for elt in node.elts for s in _strings(elt)]
    return []


def word_comparisons(source: str) -> list[tuple[int, str]]:
    """(line, word) of every comparison in source against a vocabulary's
    word: any comparison operator with a string constant (or a display of
    them) on a side, a dict keyed by such a word (a lookup table), and
    str.startswith() of a usercopy kind prefix."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for left, right in zip(operands, operands[1:]):     # any operator: ==, in, <=
                for word in _strings(left) + _strings(right):
                    if word in WORDS:
                        found.append((node.lineno, word))
        elif isinstance(node, ast.Dict):
            # a table keyed by words ({"xfail": ...}.get(outcome)): most of
            # its keys are words, unlike a JSON record with one such key
            words = [w for key in node.keys if key is not None
                     for w in _strings(key) if w in WORDS]
            if len(words) >= 2 and 2 * len(words) > len(node.keys):
                found += [(node.lineno, word) for word in words]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "startswith":
            for arg in node.args:
                for word in _strings(arg):
                    if word in PREFIXES or word in WORDS:
                        found.append((node.lineno, word))
    return found


def test_no_module_compares_with_a_vocabulary_word():
    wrong = [f"{path.relative_to(PACKAGE)}:{line}: {word!r}"
             for path in sorted(PACKAGE.rglob("*.py")) if path.name not in DEFINERS
             for line, word in word_comparisons(path.read_text())]
    assert wrong == []


def test_the_check_catches_each_form():
    """The walk sees every form it forbids (so an empty list above means something)."""
    source = "\n".join([
        'a = kind == "kasan"',
        'b = "returned" != outcome',
        'c = outcome in ("killed", "returned")',
        'd = kind.startswith("usercopy")',
        'e = boot not in {"snapshot"}',
        'f = fault == "guest-hang"',
        'g = phase == "ended"',
        'h = kind == ReportKind.KASAN',          # a member: fine
        'i = name == "kasan_test"',              # not a word: fine
        'j = kinds <= {"usercopy_abort"}',
        'k = {"xfail": "XFAIL", "unknown-trigger": "SKIP"}.get(outcome)',
        'l = {"ended": 1, "workload_exit": 2, "seconds": 3}',   # a record: fine
    ])
    assert [w for _line, w in word_comparisons(source)] == [
        "kasan", "returned", "killed", "returned", "usercopy", "snapshot", "guest-hang", "ended",
        "usercopy_abort", "xfail", "unknown-trigger"]


def test_the_records_hold_members():
    """Report and TriggerResult are typed with the enums, not str."""
    hints = {**Report.__annotations__, **TriggerResult.__annotations__}
    assert hints["kind"] == "ReportKind"
    assert hints["direction"] == "Direction | None"
    assert hints["fault"] == "Fault | None"
    assert hints["boot"] == "BootMode"


def test_predicates():
    assert {k for k in ReportKind if k.is_usercopy} == {
        ReportKind.USERCOPY_ABORT, ReportKind.USERCOPY_WARN, ReportKind.USERCOPY_LEGACY}
    assert {o for o in Outcome if o.ran_trigger} == {Outcome.KILLED, Outcome.RETURNED}
    assert Outcome.NO_LKDTM == "no-lkdtm"
    assert Outcome("no-lkdtm") is Outcome.NO_LKDTM


def test_words_stay_strings():
    """A member is its word on disk: str(), format(), repr() and JSON."""
    import json
    assert json.dumps({"k": ReportKind.KASAN, "f": Fault.GUEST_HANG, "b": BootMode.FULL}) \
        == '{"k": "kasan", "f": "guest-hang", "b": "full"}'
    assert f"{Direction.EXPOSURE}" == "exposure" and repr(Outcome.KILLED) == "'killed'"
    assert f"{BootMode.SNAPSHOT}" == "snapshot" and f"{Fault.CONSOLE_CUT}" == "console-cut"
