"""usercopy-lab: the lab's one command line.

    usercopy-lab run|match|suite-kernel|shell|soak   boot suites, match consoles
    usercopy-lab triage                              the parser on logs from anywhere
    usercopy-lab audit values                        the whitelist audit's layout terms
    usercopy-lab gaps                                the static gap finder
    usercopy-lab hunt run|harvest|replay             the hunt
    usercopy-lab lava write|validate|console|replay|verdicts|fetch|compare
    usercopy-lab page run|bench|hunt                 the HTML pages
    usercopy-lab check page|formats                  a run's files against results.json

Every argument parser of the lab is in this package; the wings take typed
options.  Exit status: 0 every trigger passed (PASS, XFAIL or SKIP), 1 a
trigger FAILed or was an ERROR (or, for the other commands, what the
command checks did not hold), 2 the command could not be done (bad input:
an option, suites.toml, a trigger list or a golden file; a missing kernel,
initramfs or QEMU; a results folder that cannot be written), with one line
on stderr naming the file:line or the missing thing.
"""
from __future__ import annotations

import argparse
import sys

from ..inputs import InputError, shown
from . import lava, products, run
from .common import Parser


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="usercopy-lab", description=__doc__,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run.add_commands(sub, main)
    products.add_commands(sub)
    lava.add_commands(sub)
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "passes_on", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    try:
        return args.func(args)
    except InputError as exc:
        print(f"usercopy-lab: {shown(exc, None)}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"usercopy-lab: {shown(where, None)}{shown(exc.strerror or exc, None)}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:    # before any guest ran (the run loop has its own)
        print("usercopy-lab: interrupted", file=sys.stderr)
        return 130
