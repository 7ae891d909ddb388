"""Every Python module the unit tests need comes from a Debian package that
`make unit-test` installs (the Makefile's UNIT_DEPS, through
scripts/install-deps.sh), so that no test skips for want of one (issue #33).

Every `import`, `from ... import` (function-local ones too) and
`pytest.importorskip("...")` of harness/tests, harness/usercopy_lab, and
the scripts/ and bench/ programs the tests run is read from the source; a
module that is neither the standard library's nor the lab's own must be in
DEBIAN below, and its package in UNIT_DEPS.  A new dependency fails here
until both say where it comes from.
"""
from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HARNESS = REPO / "harness"

# module -> the Debian package that installs it
DEBIAN = {
    "_pytest": "python3-pytest",
    "pytest": "python3-pytest",
    "xdist": "python3-pytest-xdist",
    "hypothesis": "python3-hypothesis",
    "pexpect": "python3-pexpect",
    "yaml": "python3-yaml",
    "elftools": "python3-pyelftools",
    "lava_common": "lava-common",
    "voluptuous": "python3-voluptuous",
    "junitparser": "python3-junitparser",
    "jinja2": "python3-jinja2",
    "matplotlib": "python3-matplotlib",
    "tabulate": "python3-tabulate",
    "psutil": "python3-psutil",
    "jsonschema": "python3-jsonschema",
}


def python_files() -> list[Path]:
    files = [*HARNESS.joinpath("tests").rglob("*.py"), *HARNESS.joinpath("usercopy_lab").rglob("*.py"),
             *REPO.joinpath("bench").rglob("*.py")]
    for folder in (REPO / "scripts", HARNESS / "tests" / "fake_qemu"):
        for path in folder.rglob("*"):
            if path.is_file() and (path.suffix == ".py" or path.read_bytes()[:40].startswith(
                    (b"#!/usr/bin/python3", b"#!/usr/bin/env python3"))):
                files.append(path)
    return sorted(set(files))


def own_modules() -> set[str]:
    """The lab's own top-level names: its package, the test modules and
    conftest (imported by name from each other), bench's modules."""
    names = {"usercopy_lab"}
    for folder in (HARNESS / "tests", REPO / "bench"):
        names |= {p.stem for p in folder.glob("*.py")}
    return names


def imported(path: Path) -> set[str]:
    """Top-level names of every module path imports, importorskip included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "importorskip" and node.args
              and isinstance(node.args[0], ast.Constant)):
            found.add(str(node.args[0].value).split(".")[0])
    return found


def unit_deps(makefile: str) -> list[str]:
    """The words of the Makefile's UNIT_DEPS (continuation lines joined)."""
    text = makefile.replace("\\\n", " ")
    found = re.search(r"^UNIT_DEPS\s*:?=(.*)$", text, re.M)
    assert found, "no UNIT_DEPS in the Makefile"
    return found.group(1).split()


def third_party() -> dict[str, list[str]]:
    """module -> the files that import it, for every module that is not
    the standard library's or the lab's."""
    own = own_modules()
    users: dict[str, list[str]] = {}
    for path in python_files():
        for name in imported(path) - own:
            if name not in sys.stdlib_module_names:
                users.setdefault(name, []).append(str(path.relative_to(REPO)))
    return users


def test_every_imported_module_comes_from_a_package_unit_test_installs():
    deps = unit_deps((REPO / "Makefile").read_text())
    users = third_party()
    unknown = {m: f for m, f in users.items() if m not in DEBIAN}
    assert not unknown, ("imported, from no package listed here: add each to DEBIAN "
                         f"and its package to UNIT_DEPS: {unknown}")
    missing = {DEBIAN[m]: f for m, f in users.items() if DEBIAN[m] not in deps}
    assert not missing, f"not in the Makefile's UNIT_DEPS: {missing}"
    # the table has no stale rows either
    assert set(DEBIAN) - {"_pytest", "xdist"} <= set(users), set(DEBIAN) - set(users)


def test_unit_test_options_have_their_plugins():
    """`pytest -n` is pytest-xdist's option."""
    makefile = (REPO / "Makefile").read_text()
    recipe = re.search(r"^unit-test:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe, "no unit-test recipe"
    if re.search(r"pytest .*-n ", recipe.group(1)):
        assert "python3-pytest-xdist" in unit_deps(makefile)


def test_the_import_reader_sees_every_kind_of_import(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import a.b, c\nfrom d.e import f\nfrom . import g\n"
                      "def h():\n    import i\n    pytest.importorskip('j.k', reason='x')\n")
    assert imported(source) == {"a", "c", "d", "i", "j"}
    assert unit_deps("X := 1\nUNIT_DEPS := p q \\\n\tr\nunit-test:\n") == ["p", "q", "r"]


def test_the_table_names_the_package_that_installs_each_module():
    """Checked against dpkg for each module installed from a Debian package
    here (a module that is not installed, or not from a package, is for
    the first test to catch on the machine that runs make unit-test)."""
    if not shutil.which("dpkg-query"):
        pytest.skip("no dpkg-query: not a Debian machine, the package names cannot be checked")
    origins = {}
    for module in DEBIAN:
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.origin and spec.origin.startswith("/usr/lib/python3/"):
            origins[spec.origin] = module
    assert origins, "no module of the table is installed from a Debian package here"
    owners = subprocess.run(["dpkg-query", "-S", *origins], capture_output=True, text=True,
                            check=False)
    assert owners.returncode == 0, owners.stderr
    got = {}
    for line in owners.stdout.splitlines():
        package, _, path = line.partition(": ")
        got[origins[path]] = package.split(":")[0]          # "name:arch"
    assert got == {m: DEBIAN[m] for m in origins.values()}
