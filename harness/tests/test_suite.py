from pathlib import Path

import pytest

from usercopy_lab.run.suite import SuiteError, load_suites, read_tests_txt

REPO = Path(__file__).resolve().parents[2]


def test_repo_suites_name_existing_golden_dirs_and_trigger_lists():
    suites = load_suites(REPO / "suites.toml")
    assert "default" in suites
    for suite in suites.values():
        assert all(d.is_dir() for d in suite.golden_dirs), suite.golden_dirs
        names = [t.name for t in suite.triggers() if not t.skip_reason]
        if suite.only == ():
            assert names == [] and suite.checks, suite.name    # checks only
        else:
            assert names, suite.name
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


def test_allocator_names_the_slab_object_of_inherited_golden_files():
    suites = load_suites(REPO / "suites.toml")
    slab, default = suites["slab"].golden(), suites["default"].golden()
    inherited = slab["USERCOPY_SLAB_SIZE_TO"]           # expected-oops/lab
    assert inherited.path == default["USERCOPY_SLAB_SIZE_TO"].path
    assert inherited.reports[0].fields["object"] == "SLAB object"
    assert default["USERCOPY_SLAB_SIZE_TO"].reports[0].fields["object"] == "SLUB object"
    assert slab["USERCOPY_KERNEL"].reports[0].fields["object"] == "kernel text"


def test_a_slab_console_fails_the_slub_golden_file():
    # Without `allocator`, the SLAB kernel's report is not the default file's.
    from usercopy_lab.run.trigger_run import evaluate_log
    log = (Path(__file__).parent / "testdata" / "console-series" / "slab"
           / "USERCOPY_SLAB_SIZE_TO.log")
    golden = load_suites(REPO / "suites.toml")["default"].golden()["USERCOPY_SLAB_SIZE_TO"]
    result = evaluate_log("slab", "USERCOPY_SLAB_SIZE_TO", log, golden, "")
    assert result.verdict == "FAIL"
    assert any("object" in d and "SLAB object" in d for d in result.diffs), result.diffs


def test_allocator_must_be_slub_or_slab(tmp_path):
    (tmp_path / "g").mkdir()
    (tmp_path / "suites.toml").write_text(
        '[x]\nkernel = "default"\ngolden = "g"\ntriggers = "t.txt"\nallocator = "SLOB"\n')
    with pytest.raises(SuiteError, match='allocator: must be "SLUB" or "SLAB"'):
        load_suites(tmp_path / "suites.toml")


def test_only_must_name_listed_triggers(tmp_path):
    (tmp_path / "t.txt").write_text("A\n")
    (tmp_path / "suites.toml").write_text(
        '[v]\nkernel = "default"\ngolden = "g"\ntriggers = "t.txt"\nonly = ["Z"]\n')
    with pytest.raises(SuiteError, match="'only' names Z"):
        load_suites(tmp_path / "suites.toml")["v"].triggers()


def test_empty_only_means_no_trigger_and_needs_checks(tmp_path):
    (tmp_path / "t.txt").write_text("A\nB\n")
    (tmp_path / "initramfs-src").mkdir()
    (tmp_path / "initramfs-src" / "c.c").write_text("")
    base = '[v]\nkernel = "default"\ngolden = "g"\ntriggers = "t.txt"\n'
    (tmp_path / "suites.toml").write_text(base + 'only = []\nchecks = ["c"]\n')
    assert load_suites(tmp_path / "suites.toml")["v"].triggers() == []
    (tmp_path / "suites.toml").write_text(base)           # no only: every trigger
    assert [t.name for t in load_suites(tmp_path / "suites.toml")["v"].triggers()] == ["A", "B"]
    (tmp_path / "suites.toml").write_text(base + "only = []\n")
    with pytest.raises(SuiteError, match=r"suites.toml:1: suite \[v\] runs nothing"):
        load_suites(tmp_path / "suites.toml")


def test_match_uses_the_suites_inherited_golden_files(capsys):
    """fallback has no USERCOPY_KERNEL.txt of its own: `match --suite`
    finds default's, `match --golden expected-oops/fallback` alone does not."""
    from usercopy_lab.cli import main
    log = str(Path(__file__).parent / "testdata/console-series/fallback/USERCOPY_KERNEL.log")
    assert not (REPO / "expected-oops/fallback/USERCOPY_KERNEL.txt").exists()
    assert main(["match", "--suite", "fallback", log]) == 0
    assert "fallback/USERCOPY_KERNEL" in capsys.readouterr().out
    assert main(["match", "--golden", str(REPO / "expected-oops/fallback"), log]) == 1
    assert main(["match", "--golden", str(REPO / "expected-oops/fallback"),
                 "--golden", str(REPO / "expected-oops/lab"), log]) == 0
    assert main(["match", "--suite", "no-such-suite", log]) == 2
    assert "no suite no-such-suite" in capsys.readouterr().err


def test_pick_names_unknown_suites():
    from usercopy_lab.run.suite import pick
    suites = load_suites(REPO / "suites.toml")
    assert [s.name for s in pick(suites, ["slab", "default"])] == ["slab", "default"]
    with pytest.raises(SuiteError, match="no suite x, y"):
        pick(suites, ["default", "x", "y"])
