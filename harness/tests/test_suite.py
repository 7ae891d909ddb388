from pathlib import Path

import pytest

from usercopy_lab.suite import SuiteError, load_suites, read_tests_txt

REPO = Path(__file__).resolve().parents[2]


def test_repo_suites_name_existing_golden_dirs_and_trigger_lists():
    suites = load_suites(REPO / "suites.toml")
    assert "default" in suites
    for suite in suites.values():
        assert all(d.is_dir() for d in suite.golden_dirs), suite.golden_dirs
        names = [t.name for t in suite.triggers() if not t.skip_reason]
        assert names
        golden = suite.golden()
        missing = [n for n in names if n not in golden]
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


def test_variant_golden_folder_overrides_the_default_one(tmp_path):
    for folder, outcome in (("default", "killed"), ("variant", "returned")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "A.txt").write_text(f"trigger: A\noutcome: {outcome}\nreport: none\n")
    (tmp_path / "default" / "B.txt").write_text("trigger: B\noutcome: killed\nreport: none\n")
    (tmp_path / "t.txt").write_text("A\nB\nC\n")
    (tmp_path / "suites.toml").write_text(
        '[v]\nkernel = "default"\ngolden = ["variant", "default"]\n'
        'triggers = "t.txt"\nonly = ["A", "B"]\n')
    suite = load_suites(tmp_path / "suites.toml")["v"]
    golden = suite.golden()
    assert (golden["A"].outcome, golden["B"].outcome) == ("returned", "killed")
    assert [t.name for t in suite.triggers()] == ["A", "B"]


def test_only_must_name_listed_triggers(tmp_path):
    (tmp_path / "t.txt").write_text("A\n")
    (tmp_path / "suites.toml").write_text(
        '[v]\nkernel = "default"\ngolden = "g"\ntriggers = "t.txt"\nonly = ["Z"]\n')
    with pytest.raises(SuiteError, match="'only' names Z"):
        load_suites(tmp_path / "suites.toml")["v"].triggers()
