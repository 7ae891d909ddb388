"""The shared readers and validators of inputs.py, as properties.

Every file the run side reads is bounded (read_bounded), TOML is shape-
checked before tomllib (toml_shape_problem), numbers have ranges, and every
name is printed through shown(): these tests state each rule for any input
hypothesis finds, and that the printed tables and KTAP/JUnit hold one row
per result whatever the names are.  The end-to-end cases, as subprocesses
with time and memory limits, are hostile_inputs.toml (make fuzz-inputs).
"""
from __future__ import annotations

import io
import math
import re
import tomllib
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from usercopy_lab.inputs import (CMDLINE_MAX_LEN, JOBS, NAME_MAX_LEN, TIMEOUT, TOML_MAX_DEPTH,
                                 TOML_MAX_DOTTED, TRIGGER, InputError, cmdline_problem,
                                 load_toml, read_bounded, read_text, shown, toml_shape_problem,
                                 writable_dir, writable_file)
from usercopy_lab.output.result_formats import junit_tree, ktap_text
from usercopy_lab.output.results_report import print_table
from usercopy_lab.model import TriggerResult

FIXTURE = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
CONTROL = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def printable_line(text: str) -> bool:
    return not any(unicodedata.category(ch) in CONTROL for ch in text)


# ------------------------------------------------------------------ shown

@given(st.text())
def test_shown_is_one_printable_line(text):
    out = shown(text, None)
    assert printable_line(out)
    if text.isprintable():
        assert out == text


@given(st.binary(max_size=64))
def test_shown_escapes_the_undecodable_bytes_of_a_file_name(raw):
    name = raw.decode("utf-8", errors="surrogateescape")
    out = shown(name, None)
    assert printable_line(out)
    out.encode("utf-8")          # printable: encodes, no surrogates left


def test_shown_cuts_long_text_saying_how_long():
    assert shown("A" * 100000, 10) == "AAAAAAAAAA... (100000 characters)"


# ------------------------------------------------------------------ names, numbers

@given(st.text(max_size=200))
def test_a_name_is_accepted_only_as_a_short_plain_word(name):
    problem = TRIGGER.problem(name)
    ok = re.fullmatch(r"[A-Z0-9_]+", name) is not None and len(name) <= NAME_MAX_LEN
    assert (problem is None) == ok
    if problem:
        assert printable_line(problem) and len(problem) < 300


@given(st.one_of(st.text(max_size=50), st.integers().map(str),
                 st.floats(allow_nan=True, allow_infinity=True).map(repr)))
def test_jobs_and_timeouts_are_in_range_or_refused(text):
    for rng in (JOBS, TIMEOUT):
        try:
            value = rng.parse(text)
        except ValueError as exc:
            assert printable_line(str(exc))
            continue
        assert math.isfinite(value) and rng.low <= value <= rng.high


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "1e400", "0", "-1", "86401", ""])
def test_timeouts_out_of_range(text):
    with pytest.raises(ValueError, match="a timeout must be seconds from 0.1 to 86400"):
        TIMEOUT.parse(text)


@given(st.text(max_size=CMDLINE_MAX_LEN + 10))
def test_cmdline_is_one_line_of_printable_ascii(text):
    ok = len(text) <= CMDLINE_MAX_LEN and all(" " <= ch <= "~" for ch in text)
    assert (cmdline_problem(text) is None) == ok


# ------------------------------------------------------------------ files

@settings(suppress_health_check=FIXTURE, max_examples=30)
@given(size=st.integers(0, 5000), limit=st.integers(0, 5000))
def test_read_bounded_reads_a_file_up_to_its_limit(tmp_path, size, limit):
    path = tmp_path / "f"
    path.write_bytes(b"x" * size)
    if size <= limit:
        assert read_bounded(path, limit) == b"x" * size
    else:
        with pytest.raises(InputError, match=r"f: more than .*, the most a file may be$"):
            read_bounded(path, limit)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_is_refused_without_reading_it(device):
    with pytest.raises(InputError, match=f"^{device}: is a character device, not a file$"):
        read_bounded(Path(device), 1 << 20)


def test_a_fifo_nobody_writes_to_reads_as_empty(tmp_path):
    import os
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert read_bounded(fifo, 10) == b""


@pytest.mark.parametrize("data,message", [
    (b"a\x00b", ":1: control character 0x00 in a text file"),
    (b"ok\n\x1b[2J", ":2: control character 0x1b in a text file"),
    (b"\xff", ":1: not UTF-8 (byte 0xff)"),
])
def test_read_text_refuses_binary(tmp_path, data, message):
    path = tmp_path / "t.txt"
    path.write_bytes(data)
    with pytest.raises(InputError, match=re.escape(message) + "$"):
        read_text(path)


def test_writable_checks_try_the_folder(tmp_path):
    (tmp_path / "file").write_text("")
    assert writable_file(tmp_path / "new" / "x.xml") is None      # made now
    assert (tmp_path / "new").is_dir() and list((tmp_path / "new").iterdir()) == []
    assert writable_file(tmp_path).endswith("is a directory, not a file")
    assert writable_file(tmp_path / "file" / "x").endswith("/file is not a directory")
    assert writable_dir(tmp_path / "file").endswith("/file is not a directory")
    assert writable_dir(Path("/proc/usercopy-lab")).startswith("cannot make /proc/usercopy-lab")


# ------------------------------------------------------------------ TOML shape

@given(st.integers(1, 3 * TOML_MAX_DEPTH))
def test_nesting_is_refused_exactly_beyond_the_limit(depth):
    text = "a = " + "[" * depth + "]" * depth + "\n"
    problem = toml_shape_problem(text)
    assert (problem is None) == (depth <= TOML_MAX_DEPTH)
    if problem is None:
        tomllib.loads(text)


@given(st.integers(1, 3 * TOML_MAX_DOTTED), st.booleans(), st.booleans())
def test_dotted_names_are_refused_exactly_beyond_the_limit(parts, header, quoted):
    key = ".".join(f'"k{i}"' if quoted else f"k{i}" for i in range(parts))
    text = f"[{key}]\nx = 1\n" if header else f"{key} = 1\n"
    problem = toml_shape_problem(text)
    assert (problem is None) == (parts <= TOML_MAX_DOTTED)
    if problem is None:
        tomllib.loads(text)


_INSIDE = st.text(alphabet="[]{}.#'\"\\ab \t", max_size=400)


@given(_INSIDE)
def test_brackets_and_dots_inside_strings_and_comments_do_not_count(inner):
    basic = inner.replace("\\", "\\\\").replace('"', '\\"')
    literal = inner.replace("'", "")
    text = (f'a = "{basic}"\nb = \'{literal}\'\n# {inner}\n'
            f'c = """{basic}"""\nd = \'\'\'{literal}\'\'\'\n')
    assert toml_shape_problem(text) is None
    tomllib.loads(text)


@settings(max_examples=200)
@given(st.text(alphabet="[]{}.=,#'\"\\ab1\n\t ", max_size=2000))
def test_whatever_the_shape_check_lets_through_tomllib_ends_without_recursion(text):
    if toml_shape_problem(text) is None:
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            pass


def test_load_toml_names_file_and_line(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text("[a]\nx = 1\ny = " + "[" * 40 + "\n")
    with pytest.raises(InputError, match=rf"^{path}:3: nested deeper than 32 levels$"):
        load_toml(path)
    path.write_text("[a]\nx = \n")
    with pytest.raises(InputError, match=rf"^{path}: .*\(at line 2, column 5\)$"):
        load_toml(path)


# ------------------------------------------------------------------ printing results

NAMES = st.text(min_size=1, max_size=60)


def result(name: str, summary: str, diff: str) -> TriggerResult:
    return TriggerResult("default", name, "FAIL", summary, 1.0, f"/r/{name}.log", None, [diff])


@settings(max_examples=60)
@given(names=st.lists(NAMES, min_size=1, max_size=4), summary=st.text(), diff=st.text())
def test_the_results_table_has_one_row_per_result_whatever_the_names(names, summary, diff):
    results = [result(n, summary, diff) for n in names]
    out = io.StringIO()
    print_table(results, out)
    lines = out.getvalue().splitlines()
    # head, rule, per result: its row, its diff, its log; counts, totals, boots
    assert len(lines) == 2 + 3 * len(results) + 3
    assert all(printable_line(line) for line in lines)


@settings(max_examples=60)
@given(names=st.lists(NAMES, min_size=1, max_size=4, unique=True), summary=st.text(),
       diff=st.text())
def test_ktap_and_junit_stay_whole_whatever_the_names(names, summary, diff):
    results = [result(n, summary, diff) for n in names]
    ktap = ktap_text(results, {"run_id": "x"})
    assert all(printable_line(line) for line in ktap.splitlines())
    assert len([l for l in ktap.splitlines() if l.startswith("  not ok ")]) == len(names)
    data = io.BytesIO()
    junit_tree(results, {"run_id": "x"}).write(data, encoding="utf-8", xml_declaration=True)
    cases = ET.fromstring(data.getvalue()).findall(".//testcase")
    assert len(cases) == len(names)
