"""match and triage never boot: they must run without python3-pexpect
(issue #9); only `run` needs it, and says so in one line."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1]
TESTDATA = HARNESS / "tests" / "testdata"
# Make `import pexpect` fail as it does where the package is not installed.
NO_PEXPECT = ("import sys; sys.modules['pexpect'] = None; "
              "from usercopy_lab.cli import main; sys.exit(main(sys.argv[1:]))")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", NO_PEXPECT, *args], cwd=HARNESS,
                          capture_output=True, text=True, timeout=120)


def test_pexpect_is_really_blocked():
    done = subprocess.run([sys.executable, "-c", "import sys; sys.modules['pexpect'] = None; "
                           "import pexpect"], capture_output=True, text=True)
    assert done.returncode == 1 and "import of pexpect halted" in done.stderr


def test_match_runs_without_pexpect():
    log = TESTDATA / "console-series" / "default" / "USERCOPY_SLAB_WHITELIST_TO.log"
    done = cli("match", "--suite", "default", str(log))
    assert done.returncode == 0, done.stderr
    assert "PASS" in done.stdout


def test_triage_runs_without_pexpect():
    done = cli("triage", str(TESTDATA / "triage" / "legacy_4_8_usercopy.log"))
    assert done.returncode == 0, done.stderr
    assert "usercopy_legacy" in done.stdout


def test_run_without_pexpect_says_what_is_missing(tmp_path):
    done = cli("run", "--accel", "tcg", "--results", str(tmp_path))
    assert "Traceback" not in done.stderr
    assert done.returncode == 2
    if shutil.which("qemu-system-x86_64"):
        assert done.stderr.strip() == ("usercopy-lab: python3-pexpect is needed to boot "
                                       "guests (make deps)")


def _without(module: str, *args: str) -> subprocess.CompletedProcess:
    block = (f"import runpy, sys; sys.modules[{module!r}] = None; "
             "runpy.run_module('usercopy_lab', run_name='__main__', alter_sys=True)")
    return subprocess.run([sys.executable, "-c", block, *args], cwd=HARNESS,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("module, package", [("tabulate", "python3-tabulate"),
                                             ("jsonschema", "python3-jsonschema"),
                                             ("jinja2", "python3-jinja2")])
def test_a_missing_package_every_command_loads_is_one_line(module, package):
    """Every command loads these (make deps installs them): without one,
    even triage is one line and exit 2, not a traceback."""
    done = _without(module, "triage", str(TESTDATA / "triage" / "legacy_4_8_usercopy.log"))
    assert (done.returncode, done.stderr) == (2, f"usercopy-lab: {package} is needed "
                                                 "(make deps)\n")
