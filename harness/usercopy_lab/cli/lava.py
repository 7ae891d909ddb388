"""usercopy-lab lava: the suites as LAVA jobs, LAVA's checks replayed, and
LAVA's verdicts fetched and compared with the lab's (docs/lava.md)."""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from .common import REPO, described

# The LAVA modules (yaml, lava-common) load when a lava command runs.


def add_commands(sub: Any) -> None:
    p = described(sub, "lava", __doc__, "LAVA jobs, their checks and verdicts")
    what = p.add_subparsers(dest="lava_command", required=True, metavar="COMMAND")

    def suites_file(q: Any) -> None:
        q.add_argument("--suites-file", type=Path, default=REPO / "suites.toml")

    w = what.add_parser("write", help="write one job per trigger and check, validate each")
    w.add_argument("--out", type=Path, required=True)
    w.add_argument("--suite", action="append", help="suite (repeatable; default: all)")
    suites_file(w)
    w.add_argument("--kernels", default=f"file://{(REPO / 'build').resolve()}",
                   help="URL of the build folder holding kernel-NAME/arch/x86/boot/bzImage")
    w.add_argument("--kernel", default="",
                   help="URL of one kernel image for every job instead (another variant, "
                        "a mutant): the jobs still judge by the suite's golden files")
    w.add_argument("--initramfs", default=f"file://{(REPO / 'build/initramfs.cpio').resolve()}",
                   help="URL of the initramfs")
    w.add_argument("--no-validate", action="store_true")
    w.set_defaults(func=lambda a: _call(
        "jobs", "write_command", a.suites_file, a.suite,
        _artifacts(a.kernels.rstrip("/"), a.initramfs, a.kernel), a.out, not a.no_validate))

    v = what.add_parser("validate", help="validate job files with lava-common's schema")
    v.add_argument("jobs", type=Path, nargs="+")
    v.set_defaults(func=lambda a: _call("jobs", "validate_command", a.jobs))

    c = what.add_parser("console", help="the serial console of a LAVA job log")
    c.add_argument("log", type=Path)
    c.set_defaults(func=lambda a: _call("jobs", "console_command", a.log))

    r = what.add_parser("replay", help="what LAVA records for a job, replayed on a console")
    r.add_argument("--suite", required=True)
    suites_file(r)
    r.add_argument("name", help="trigger or check program")
    r.add_argument("console", type=Path)
    r.add_argument("--chunk", type=int, default=256, help="characters per read")
    r.set_defaults(func=lambda a: _call("jobs", "replay_command", a.suites_file, a.suite,
                                        a.name, a.console, a.chunk))

    vd = what.add_parser("verdicts", help="LAVA's verdicts from lava-run logs")
    vd.add_argument("--suite", required=True)
    suites_file(vd)
    vd.add_argument("--logs", type=Path, required=True, help="folder of NAME.yaml lava-run logs")
    vd.add_argument("--json", type=Path, help="write them as a results.json")
    vd.set_defaults(func=lambda a: _call("results", "verdicts_command", a.suites_file,
                                         a.suite, a.logs, a.json))

    f = what.add_parser("fetch", help="wait for jobs on a lava-server, their verdicts")
    suites_file(f)
    f.add_argument("--server", required=True, help="http://HOST:PORT of lava-server")
    f.add_argument("--jobs", type=Path, required=True, help="file of job ids, one a line")
    secret = f.add_mutually_exclusive_group()
    secret.add_argument("--token", default="", help="a private instance's API token "
                        "(on the command line: every user's ps shows it)")
    secret.add_argument("--token-file", type=Path,
                        help="a file holding the token (what scripts/lava/farm.sh passes)")
    f.add_argument("--out", type=Path, help="keep each job's log and console here")
    f.add_argument("--json", type=Path, help="write the verdicts as a results.json")
    f.add_argument("--timeout", type=float, default=3600.0)
    f.set_defaults(func=lambda a: _call("results", "fetch_command", a.suites_file, a.server,
                                        a.jobs, a.token, a.token_file, a.out, a.json,
                                        a.timeout))

    cp = what.add_parser("compare", help="verdicts of several sources, trigger by trigger")
    cp.add_argument("--suite", required=True)
    suites_file(cp)
    cp.add_argument("--ours", type=Path, help="results.json of usercopy-lab run")
    cp.add_argument("--lava", type=Path, help="results.json of LAVA's verdicts")
    cp.add_argument("--match", type=Path, help="JUnit of usercopy-lab match on LAVA's consoles")
    cp.set_defaults(func=lambda a: _call("results", "compare_command", a.suites_file,
                                         a.suite, {"ours": a.ours, "LAVA": a.lava,
                                                   "match": a.match}))


def _call(module: str, name: str, *args: Any) -> int:
    """lava/MODULE's NAME(*ARGS) under that module's error handling."""
    from ..lava import jobs, results
    wing = {"jobs": jobs, "results": results}[module]
    return wing.command(partial(getattr(wing, name), *args))


def _artifacts(kernels: str, initramfs: str, kernel: str) -> Any:
    from ..lava.jobs import Artifacts
    return Artifacts(kernels, initramfs, kernel)
