"""The guest<->harness protocol lives in protocol.py alone, and the guest
speaks exactly it.

The harness side: no module of the package but protocol.py spells a
marker ("USERCOPY-LAB-"), so a marker renamed in one place cannot be left
behind in another.  The guest side: every marker initramfs-src/init echoes
is one protocol.py defines, every START and END line it echoes reads back
through protocol.read_start/read_end with an Outcome the model has, the C
check programs print protocol.CHECK_PREFIX, and every marker protocol.py
defines is printed by the guest or listed as harness-only.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from usercopy_lab import protocol
from usercopy_lab.model import Outcome

PACKAGE = Path(__file__).resolve().parents[1] / "usercopy_lab"
GUEST = Path(__file__).resolve().parents[2] / "initramfs-src"
INIT = GUEST / "init"
# An echo of a marker or a note in a shell script: the text in quotes.
_ECHO = re.compile(r"""\becho\s+"((?:USERCOPY-LAB)[^"]*)\"""")
# The marker word a line starts with: USERCOPY-LAB-WORD, or the note prefix.
_MARKER = re.compile(r"USERCOPY-LAB(?:-[A-Z]+|: )")
# Shell expansions init puts in a marker line, and a value each may take.
_EXPANSIONS = ((re.compile(r"\$\(\(status - 128\)\)"), "9"), (re.compile(r"\$\{?status\}?"), "0"),
               (re.compile(r"\$\{?\w+\}?"), "NAME"))
_C_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_DEFINE_PREFIX = re.compile(r'#define\s+PREFIX\s+"([^"]*)"')


def test_only_protocol_spells_a_marker():
    """Code, comments and docstrings alike (they say "the protocol's
    markers" instead), templates too."""
    wrong = [f"{path.relative_to(PACKAGE)}:{num}" for path in sorted(PACKAGE.rglob("*"))
             if path.is_file() and path.suffix in (".py", ".j2")
             and path != PACKAGE / "protocol.py"
             for num, line in enumerate(path.read_text().splitlines(), 1)
             if protocol.PREFIX in line]
    assert wrong == []


def _init_echoes() -> list[tuple[int, str]]:
    return [(num, m.group(1)) for num, line in enumerate(INIT.read_text().splitlines(), 1)
            if not line.lstrip().startswith("#") for m in _ECHO.finditer(line)]


def _expanded(text: str) -> str:
    for pattern, value in _EXPANSIONS:
        text = pattern.sub(value, text)
    return text


def markers_printed(echoes: list[tuple[int, str]]) -> set[str]:
    """The markers (and the note prefix) a guest's echo lines print."""
    return {m.group(0) if (m := _MARKER.match(text)) else text for _num, text in echoes}


def test_init_prints_only_the_protocols_markers():
    echoes = _init_echoes()
    assert len(echoes) >= 10           # the parse found init's markers at all
    assert markers_printed(echoes) <= set(protocol.MARKERS) | {protocol.NOTE}


def test_every_marker_is_printed_or_harness_only():
    printed = markers_printed(_init_echoes())
    assert set(protocol.MARKERS) - printed == set(protocol.HARNESS_ONLY)
    assert protocol.NOTE in printed
    assert not set(protocol.HARNESS_ONLY) & printed


def test_init_start_and_end_lines_read_back():
    """Every START/END line init echoes is one protocol reads, whole: its
    trigger, an Outcome the model has, and signal/status where it says one."""
    seen_outcomes = set()
    for num, text in _init_echoes():
        line = _expanded(text)
        if text.startswith(protocol.START + " "):
            assert protocol.read_start(line) == "NAME", f"init:{num}: {text}"
            assert protocol.start_line("NAME") == line, f"init:{num}: {text}"
        elif text.startswith(protocol.END + " "):
            end = protocol.read_end(line)
            assert end is not None and end.trigger == "NAME" and end.outcome is not None, \
                f"init:{num}: {text}"
            assert protocol.end_line("NAME", end.outcome, end.signal, end.status) == line, \
                f"init:{num}: {text}"
            seen_outcomes.add(end.outcome)
    # the outcomes init can report: all but XFAIL, which only LKDTM says
    assert seen_outcomes == set(Outcome) - {Outcome.XFAIL}


def test_init_documents_its_markers():
    """init's header comment lists each marker it prints."""
    header = "\n".join(line for line in INIT.read_text().splitlines()[:30] if line.startswith("#"))
    for marker in (protocol.READY, protocol.WAITING, protocol.START, protocol.END):
        assert marker in header


def test_check_programs_print_the_check_prefix():
    defines = {path.name: m.group(1) for path in sorted(GUEST.glob("*.[ch]"))
               for m in _DEFINE_PREFIX.finditer(path.read_text())}
    assert defines["lab-check.h"] == protocol.CHECK_PREFIX
    users = [p.name for p in sorted(GUEST.glob("*.c")) if '#include "lab-check.h"' in p.read_text()]
    assert len(users) >= 5
    # a program with a PREFIX of its own prints other lines (bench, hunt), never checks
    assert all(v == protocol.CHECK_PREFIX or not v.startswith("usercopy-lab-check")
               for v in defines.values())


def test_no_c_program_prints_a_marker():
    """The markers are init's: a C program printing one would forge a phase."""
    wrong = [f"{p.name}: {s}" for p in sorted(GUEST.glob("*.[ch]"))
             for s in _C_STRING.findall(p.read_text()) if "USERCOPY-LAB" in s]
    assert wrong == []


@pytest.mark.parametrize("text, want", [
    ("USERCOPY-LAB-END trigger=X outcome=killed signal=9",
     protocol.EndMarker("X", Outcome.KILLED, signal=9)),
    ("junk USERCOPY-LAB-END trigger=X outcome=returned status=1",
     protocol.EndMarker("X", Outcome.RETURNED, status=1)),
    ("USERCOPY-LAB-END trigger=X outcome=no-lkdtm", protocol.EndMarker("X", Outcome.NO_LKDTM)),
    ("USERCOPY-LAB-END trigger=X outcome=bogus", protocol.EndMarker("X", None)),
    ("USERCOPY-LAB-START trigger=X", None),
])
def test_read_end(text, want):
    assert protocol.read_end(text) == want


def test_phase_patterns_match_the_markers():
    for phase in protocol.Phase:
        assert re.match(phase.pattern, phase.marker + " trigger=X\r\n")
    assert protocol.Phase.STARTED.pattern == protocol.START_LINE
    assert protocol.Phase.ENDED.pattern == protocol.END_LINE


def test_phases_come_in_order():
    Phase = protocol.Phase
    assert Phase.ENDED.reached(Phase.STARTED) and Phase.STARTED.reached(Phase.STARTED)
    assert not Phase.WAITING.reached(Phase.STARTED) and Phase.WAITING.reached(Phase.READY)


def test_an_end_word_outside_the_protocol_is_shown_as_printed():
    """A guest that prints an outcome the protocol lacks: no Outcome, but
    the messages name the word it printed, not "no end marker"."""
    from usercopy_lab.judge.verdict import seen_summary
    from usercopy_lab.reports import read_markers
    markers = read_markers([protocol.start_line("X"),
                            f"{protocol.END} trigger=X outcome=weird status=3"])
    assert (markers.outcome, markers.outcome_said) == (None, "weird")
    assert seen_summary([], markers) == "no report, weird"
    assert seen_summary([], read_markers([protocol.start_line("X")])) == "no report, no end marker"


@pytest.mark.parametrize("prefix", [protocol.NOTE, protocol.CHECK_PREFIX, protocol.HUNT_PREFIX,
                                    protocol.SLAB_PREFIX])
def test_only_protocol_spells_a_program_prefix(prefix):
    """The line prefixes of the guest's programs, as the markers: spelled
    in protocol.py alone."""
    wrong = [f"{path.relative_to(PACKAGE)}:{num}" for path in sorted(PACKAGE.rglob("*.py"))
             if path != PACKAGE / "protocol.py"
             for num, line in enumerate(path.read_text().splitlines(), 1)
             if prefix.strip() in line]
    assert wrong == []


def test_the_hunt_and_the_slab_audit_print_the_protocols_prefixes():
    hunt = (GUEST / "hunt-run").read_text()
    assert re.search(r'^P="([^"]*)"$', hunt, re.M).group(1) == protocol.HUNT_PREFIX.rstrip()
    assert re.search(r'echo "\$P coverage begin"', hunt) and re.search(r'echo "\$P coverage end"',
                                                                        hunt)
    audit = (GUEST / "audit-slab-caches.c").read_text()
    assert re.search(r'#define ROW "([^"]*)"', audit).group(1) == protocol.SLAB_PREFIX
