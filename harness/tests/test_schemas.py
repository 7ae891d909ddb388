"""The JSON Schemas of results.json and suites.toml (usercopy_lab/schemas/):
what the lab writes and ships holds to them, and what breaks them is
named in one line."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from usercopy_lab.capture.qemu_boot import ARCHES
from usercopy_lab.inputs import load_toml
from usercopy_lab.model import BootMode, Direction, Fault, ReportKind, Verdict
from usercopy_lab.run.suite import SUITE_KEYS, ModuleSet
from usercopy_lab.schemas import RESULTS, SUITES, first_problem, problems, schema

from test_run_loop import cli, lab, use_series  # noqa: F401  (fixture)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SHIPPED = sorted(HERE.joinpath("testdata").rglob("results.json"))


@pytest.mark.parametrize("name", [RESULTS, SUITES])
def test_each_schema_is_a_valid_draft_2020_12_schema(name):
    jsonschema.Draft202012Validator.check_schema(schema(name))


def test_there_are_results_files_to_check():
    assert len(SHIPPED) >= 5


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(HERE)))
def test_every_results_json_in_testdata_is_valid(path):
    assert problems(json.loads(path.read_text()), RESULTS) == []


def test_a_results_json_the_lab_writes_now_is_valid(lab):  # noqa: F811
    """A run through the CLI (fake QEMU): a PASS, a FAIL and an ERROR with
    their reports, written as `usercopy-lab run` writes it."""
    use_series(lab, "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_STACK_FRAME_TO")
    (lab / "consoles" / "USERCOPY_KERNEL.log").write_text("no marker at all\n")
    _, data = cli(lab, "--suite", "default", "--trigger", "USERCOPY_SLAB_WHITELIST_TO",
                  "--trigger", "USERCOPY_STACK_FRAME_TO", "--trigger", "USERCOPY_KERNEL",
                  "--boot", "full")
    assert len(data["triggers"]) == 3 and any(t["reports"] for t in data["triggers"])
    assert problems(data, RESULTS) == []


def test_the_schemas_enums_are_the_models():
    """The schemas list what the code accepts: a verdict, an arch, a
    module set added to the code and not to the schema fails here."""
    trigger = schema(RESULTS)["$defs"]["trigger"]["properties"]
    assert trigger["verdict"]["enum"] == [v.value for v in Verdict]
    assert trigger["fault"]["enum"] == [f.value for f in Fault] + [None]
    assert trigger["boot"]["enum"] == [b.value for b in BootMode]
    report = schema(RESULTS)["$defs"]["report"]["properties"]
    assert report["kind"]["enum"] == [k.value for k in ReportKind]
    assert report["direction"]["enum"] == [d.value for d in Direction] + [None]
    suite = schema(SUITES)["$defs"]["suite"]
    assert suite["properties"]["arch"]["enum"] == list(ARCHES)
    assert suite["properties"]["modules"]["enum"] == [m.value for m in ModuleSet]
    assert list(suite["properties"]) == list(SUITE_KEYS)


def test_the_repositorys_suites_toml_is_valid():
    _, data = load_toml(REPO / "suites.toml")
    assert problems(data, SUITES) == []


@pytest.mark.parametrize("data, line", [
    ([], "must be an object, got []"),
    ({}, "lacks triggers"),
    ({"triggers": [{"suite": "s", "name": "T"}]}, "triggers[0]: lacks verdict"),
    ({"triggers": [{"suite": "s", "name": "T", "verdict": "MAYBE"}]},
     'triggers[0].verdict: must be "PASS" or "FAIL" or "XFAIL" or "SKIP" or "ERROR", '
     "got 'MAYBE'"),
    ({"triggers": [{"suite": "s", "name": "T", "verdict": "PASS", "seconds": "1"}]},
     "triggers[0].seconds: must be of type number, got '1'"),
    ({"triggers": [{"suite": "s", "name": "T", "verdict": "PASS",
                    "reports": [{"file": "f", "line": 1, "kind": "bug", "offset": "0"}]}]},
     "triggers[0].reports[0].offset: must be of type integer or null, got '0'"),
])
def test_a_results_json_problem_is_one_line_naming_its_key_path(data, line):
    assert first_problem(data, RESULTS) == line


def test_a_value_in_a_problem_is_escaped_and_cut():
    """A name that would clear the screen, and is long: escaped, cut."""
    data = {"triggers": [{"suite": "s", "name": "T\x1b[2J" + "x" * 1000, "verdict": "PASS"}]}
    line = first_problem(data, RESULTS)
    assert line is not None and line.isprintable() and len(line) < 200
    assert line.startswith("triggers[0].name: 'T\\x1b[2Jxxx")
    assert "characters) does not match ^[A-Za-z0-9_]" in line


@pytest.mark.parametrize("extra, message", [
    ('only = [1]\n', "suites.toml:5: suite [s] only: must be a list of names, got [1]"),
    ('on_demand = "yes"\n', "suites.toml:5: suite [s] on_demand: must be true or false, "
                            "got 'yes'"),
    ('selftests = 1\n', 'suites.toml:5: suite [s] selftests: must be "tree" or "lab", got 1'),
])
def test_a_suites_toml_problem_is_one_line_with_its_line(tmp_path, extra, message):
    from usercopy_lab.run.suite import SuiteError, load_suites
    path = tmp_path / "suites.toml"
    path.write_text('[s]\nkernel = "default"\ngolden = "g"\ntriggers = "t.txt"\n' + extra)
    with pytest.raises(SuiteError) as exc:
        load_suites(path)
    assert str(exc.value) == f"{tmp_path}/{message}"


def test_a_suite_lacking_keys_names_them_all_in_the_schemas_order(tmp_path):
    from usercopy_lab.run.suite import SuiteError, load_suites
    path = tmp_path / "suites.toml"
    path.write_text('[s]\nkernel = "default"\n')
    with pytest.raises(SuiteError) as exc:
        load_suites(path)
    assert str(exc.value) == f"{path}:1: suite [s] lacks golden, triggers"
