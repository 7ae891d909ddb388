"""Bad input files and names are refused with one line naming file:line.

Every case writes the smallest bad file it is about into tmp_path; the
good counterparts are the repository's own suites.toml, tests.txt and
expected-oops/ (test_suite.py, test_golden_match.py).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from usercopy_lab.judge.golden import GoldenError, load, load_dir
from usercopy_lab.inputs import TRIGGER
from usercopy_lab.run.suite import SUITE_KEYS, Suite, SuiteError, load_suites, read_tests_txt

GOOD_GOLDEN = "trigger: T\noutcome: killed\nreport: bug\nrip: f\n"


def golden_file(tmp_path: Path, text: str | bytes, name: str = "T.txt") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def assert_refused(read, error: type[Exception], path: Path, line: int, message: str):
    """read(path) raises error whose message starts with path:line and says message."""
    with pytest.raises(error) as exc:
        read(path)
    assert str(exc.value).startswith(f"{path}:{line}: ")
    assert message in str(exc.value)


def test_good_golden_loads(tmp_path):
    assert load(golden_file(tmp_path, GOOD_GOLDEN)).reports[0].fields == {"rip": "f"}


@pytest.mark.parametrize("text,where,message", [
    (GOOD_GOLDEN + "rip: g\n", 5, "'rip' repeated (first on line 4)"),
    ("trigger: T\noutcome: killed\noutcome: returned\nreport: none\n", 3,
     "'outcome' repeated (first on line 2)"),
    (GOOD_GOLDEN + "cahce: kmalloc-64\n", 5, "unknown key 'cahce'"),
    (GOOD_GOLDEN + "direction: sideways\n", 5, "direction must be one of"),
    (GOOD_GOLDEN + "offset: 4\noffset-base: 0xffffffff81000000\n", 6,
     "either 'offset' or 'offset-base'"),
    ("trigger: T\noutcome: killed\ncache: x\n", 3, "'cache' before any 'report:' line"),
])
def test_bad_golden_line_is_named(tmp_path, text, where, message):
    assert_refused(load, GoldenError, golden_file(tmp_path, text), where, message)


def test_report_keys_may_repeat_in_the_next_report_block(tmp_path):
    text = GOOD_GOLDEN + "report: warning\nrip: g\n"
    assert [r.fields["rip"] for r in load(golden_file(tmp_path, text)).reports] == ["f", "g"]


def test_golden_not_utf8_names_the_line(tmp_path):
    path = golden_file(tmp_path, b"trigger: T\n# caf\xe9\noutcome: killed\n")
    with pytest.raises(GoldenError, match=rf"^{path}:2: not UTF-8 \(byte 0xe9\)$"):
        load(path)


def test_golden_directory_is_refused(tmp_path):
    (tmp_path / "T.txt").mkdir()
    with pytest.raises(GoldenError, match="T.txt: is a directory, not a file$"):
        load_dir(tmp_path)


@pytest.mark.parametrize("name", ["lower.txt", "A B.txt", "A-B.txt", "..txt"])
def test_golden_file_name_must_be_a_trigger_name(tmp_path, name):
    golden_file(tmp_path, GOOD_GOLDEN, name)
    with pytest.raises(GoldenError, match=r"a golden file is named TRIGGER.txt: "
                       r"trigger name .* must match \[A-Z0-9_\]\+"):
        load_dir(tmp_path)


@pytest.mark.parametrize("name", ["X rdinit=/bin/sh", "../x", "X/../../Y", "", "a",
                                  "X*", "X\nY", "X,Y", "X.Y", "Ä"])
def test_hostile_trigger_names_are_refused(name):
    assert TRIGGER.problem(name)


def test_trigger_name_may_start_with_a_digit():
    assert TRIGGER.problem("2BIG") is None


# ---------------------------------------------------------------- suites.toml

def suites_file(tmp_path: Path, text: str) -> Path:
    (tmp_path / "t.txt").write_text("A\n")
    path = tmp_path / "suites.toml"
    path.write_text(text)
    return path


BASE = '[s]\nkernel = "default"\ngolden = "g"\ntriggers = "t.txt"\n'


def test_every_key_has_a_suite_field():
    fields = set(Suite.__dataclass_fields__)
    assert {k.field for k in SUITE_KEYS.values()} <= fields


@pytest.mark.parametrize("extra,line,message", [
    ('expected-text = false\n', 5, "suite [s]: unknown key 'expected-text' (known: kernel,"),
    ('only = "A"\n', 5, "suite [s] only: must be a list of names"),
    ('only = ["A", "../x"]\n', 5, "trigger name '../x' must match [A-Z0-9_]+"),
    ('only = ["A", "A"]\n', 5, "names a trigger name twice"),
    ('expected_text = "no"\n', 5, "must be true or false"),
    ('cmdline = 3\n', 5, "must be a one-line string"),
    ('checks = ["no-such-check"]\n', 5, "no check program initramfs-src/no-such-check.c"),
    ('golden = []\n', 3, "must be a path or a non-empty list of paths"),
])
def test_bad_suite_key_is_named_with_its_line(tmp_path, extra, line, message):
    text = BASE + extra
    if extra.startswith("golden"):  # replaces the good one, on line 3
        text = BASE.replace('golden = "g"\n', extra)
    assert_refused(load_suites, SuiteError, suites_file(tmp_path, text), line, message)


def test_bad_kernel_name_is_refused(tmp_path):
    path = suites_file(tmp_path, BASE.replace('"default"', '"../x"'))
    with pytest.raises(SuiteError, match=r"suites.toml:2: suite \[s\] kernel: kernel variant"):
        load_suites(path)


def test_non_table_entry_is_refused(tmp_path):
    path = suites_file(tmp_path, 'kernel = "default"\n' + BASE)
    with pytest.raises(SuiteError, match=r"suites.toml:1: 'kernel' is not a \[suite\] table$"):
        load_suites(path)


def test_bad_suite_name_is_refused(tmp_path):
    path = suites_file(tmp_path, BASE.replace("[s]", '["a b"]'))
    with pytest.raises(SuiteError, match="suite name 'a b' must match"):
        load_suites(path)


def test_suites_toml_syntax_error_is_one_line(tmp_path):
    path = suites_file(tmp_path, BASE + "only = [\n")
    with pytest.raises(SuiteError) as exc:
        load_suites(path)
    assert str(exc.value).startswith(f"{path}: ") and "\n" not in str(exc.value)


def test_checks_name_existing_programs(tmp_path):
    (tmp_path / "initramfs-src").mkdir()
    (tmp_path / "initramfs-src" / "check-x.c").write_text("")
    path = suites_file(tmp_path, BASE + 'checks = ["check-x"]\n')
    assert load_suites(path)["s"].checks == ("check-x",)


# ---------------------------------------------------------------- tests.txt

def test_missing_triggers_file_is_named(tmp_path):
    with pytest.raises(SuiteError, match=r"nope.txt: No such file or directory$"):
        read_tests_txt(tmp_path / "nope.txt")


@pytest.mark.parametrize("text,line,message", [
    ("A\n../x text\n", 2, "trigger name '../x' must match"),
    ("A\nA again\n", 2, "A is listed twice (first on line 1)"),
    ("A\n#b reason\n", 2, "trigger name 'b' must match"),
])
def test_bad_tests_txt_line_is_named(tmp_path, text, line, message):
    path = tmp_path / "t.txt"
    path.write_text(text)
    assert_refused(read_tests_txt, SuiteError, path, line, message)


def test_tests_txt_kernel_parameter_lookalike_is_expected_text_only(tmp_path):
    # "X rdinit=/bin/sh" in tests.txt is trigger X whose console must show
    # the text "rdinit=/bin/sh"; only the name ever reaches the guest.
    path = tmp_path / "t.txt"
    path.write_text("X rdinit=/bin/sh\n")
    [t] = read_tests_txt(path)
    assert (t.name, t.expected_text) == ("X", "rdinit=/bin/sh")
