"""Where the corpus tests find the triage corpora (issue #33).

NAME is syzkaller-report or mail.  The environment variable the test
names wins when it is set (a folder that is not there fails the test);
else the first of these that holds NAME:

  build/corpora/NAME            what `make corpora` fetched into this tree
  ../shared/corpora/NAME        the lab's offline copy beside the project
                                (its README.md): /work/shared next to
                                /work/main, or next to CI's clean clone

With a corpus found, its test runs: it never skips.  With none, it skips
and says where it looked.
"""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLACES = (ROOT / "build" / "corpora", ROOT.parent / "shared" / "corpora")


def find_corpus(name: str, variable: str) -> Path | None:
    given = os.environ.get(variable)
    if given:
        assert Path(given).is_dir(), f"{variable}={given}: not a folder"
        return Path(given)
    for place in PLACES:
        if (place / name).is_dir():
            return place / name
    return None


def not_found(name: str, variable: str) -> str:
    """The one line a skipped corpus test says."""
    return (f"{name} corpus not found: set {variable}, run `make corpora` "
            f"({PLACES[0] / name}) or put the lab's copy in {PLACES[1] / name}")
