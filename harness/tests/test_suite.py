from pathlib import Path

import pytest

from usercopy_lab.suite import SuiteError, load_suites, read_tests_txt

REPO = Path(__file__).resolve().parents[2]


def test_repo_suites_name_existing_golden_dirs_and_trigger_lists():
    suites = load_suites(REPO / "suites.toml")
    assert "default" in suites
    for suite in suites.values():
        assert suite.golden_dir.is_dir(), suite.golden_dir
        names = [t.name for t in suite.triggers() if not t.skip_reason]
        assert names
        missing = [n for n in names if not (suite.golden_dir / f"{n}.txt").exists()]
        assert missing == [], f"suite {suite.name}: no golden file for {missing}"


def test_tests_txt_format(tmp_path):
    path = tmp_path / "tests.txt"
    path.write_text("# comment\nUSERCOPY_KERNEL exposure attempt\n#PANIC Crashes\n\nBUG\n")
    assert [(t.name, t.expected_text, t.skip_reason) for t in read_tests_txt(path)] == [
        ("USERCOPY_KERNEL", "exposure attempt", ""), ("PANIC", "", "Crashes"), ("BUG", "", "")]


def test_bad_tests_txt_line_is_an_error(tmp_path):
    path = tmp_path / "tests.txt"
    path.write_text("usercopy kernel\n")
    with pytest.raises(SuiteError, match="is not 'NAME expected-text'"):
        read_tests_txt(path)


def test_suite_without_golden_key_is_an_error(tmp_path):
    path = tmp_path / "suites.toml"
    path.write_text('[x]\nkernel = "default"\ntriggers = "t.txt"\n')
    with pytest.raises(SuiteError, match="lacks golden"):
        load_suites(path)
