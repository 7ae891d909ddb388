#!/usr/bin/python3
"""Agreement of usercopy-lab's parser with syzkaller's report corpus.

    scripts/syzkaller-corpus.py [--show N] [--json] CORPUS_DIR

CORPUS_DIR is google/syzkaller's pkg/report/testdata/linux/report (not part
of this repository; clone syzkaller and point at it).  Each file there is
header lines (TITLE:, ALT:, CORRUPTED:, TYPE:, FRAME:, ...; '#' comments),
a blank line, then the raw kernel log (optionally followed by a blank line,
"REPORT:" and the expected report text, which is not used here).

For every file the log goes through the same reader and parser as
`usercopy-lab triage`; its first report (the one syzkaller describes) is
compared with the header:

  crash cases (a TITLE):   syz_title equals TITLE or one of the ALT titles
                           (goal >= 90 %); every usercopy case (TITLE has
                           "usercopy") must match; the truncated flag equals
                           CORRUPTED (goal >= 90 %)
  crash-free cases:        no report at all (goal: every one)

Prints the numbers and, with --show N, up to N mismatches per category.
Exit status: 0 every goal met, 1 a goal missed, 2 CORPUS_DIR unusable.
"""
from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "harness"))

from usercopy_lab.reports import LogFormatError, iter_stream  # noqa: E402
from usercopy_lab.model import Report  # noqa: E402

TITLE_GOAL = 0.90
CORRUPTED_GOAL = 0.90


@dataclass
class Case:
    """One corpus file: its expectations and its log."""
    name: str
    title: str = ""
    alt: list[str] = field(default_factory=list)
    corrupted: bool = False
    log: bytes = b""


def read_case(path: Path) -> Case:
    data = path.read_bytes().replace(b"\r", b"")  # as syzkaller's own test does
    case = Case(path.name)
    head, sep, rest = data.partition(b"\n\n")
    if not sep and not head.startswith((b"TITLE", b"#")):
        head, rest = b"", data
    for raw in head.decode("utf-8", "replace").split("\n"):
        key, _, value = raw.partition(": ")
        if key == "TITLE":
            case.title = value
        elif key == "ALT":
            case.alt.append(value)
        elif key == "CORRUPTED":
            case.corrupted = value.strip() == "Y"
    log, _, _ = rest.partition(b"\n\nREPORT:\n")
    case.log = log
    return case


def primary(reports: list[Report]) -> Report | None:
    """The first report, the one syzkaller describes."""
    return reports[0] if reports else None


def reports_of(case: Case) -> list[Report]:
    """The reports triage finds in the log (binary data without one: none)."""
    try:
        return list(iter_stream(io.BytesIO(case.log), case.name))
    except LogFormatError:
        return []


@dataclass
class Tally:
    crash: int = 0
    title_ok: int = 0
    usercopy: int = 0
    usercopy_ok: int = 0
    clean: int = 0
    clean_ok: int = 0
    corrupted_ok: int = 0
    misses: dict[str, list[str]] = field(default_factory=lambda: {
        "title": [], "usercopy": [], "crash-free": [], "corrupted": []})

    def add(self, case: Case, rep: Report | None, count: int) -> None:
        if not case.title:
            self.clean += 1
            if count == 0:
                self.clean_ok += 1
            else:
                self.misses["crash-free"].append(
                    f"{case.name}: {count} report(s), first: {rep.syz_title if rep else '?'!r}")
            return
        self.crash += 1
        got = rep.syz_title if rep else None
        ok = got is not None and (got == case.title or got in case.alt)
        self.title_ok += ok
        if not ok:
            self.misses["title"].append(f"{case.name}: want {case.title!r}, got {got!r}")
        if "usercopy" in case.title:
            self.usercopy += 1
            self.usercopy_ok += ok
            if not ok:
                self.misses["usercopy"].append(f"{case.name}: want {case.title!r}, got {got!r}")
        truncated = rep.truncated if rep else None
        if truncated == case.corrupted:
            self.corrupted_ok += 1
        else:
            self.misses["corrupted"].append(
                f"{case.name}: CORRUPTED {'Y' if case.corrupted else 'N'}, truncated {truncated} "
                f"({got!r})")

    def numbers(self) -> dict[str, object]:
        return {
            "crash_cases": self.crash, "title_match": self.title_ok,
            "usercopy_cases": self.usercopy, "usercopy_match": self.usercopy_ok,
            "crash_free_cases": self.clean, "crash_free_without_report": self.clean_ok,
            "truncated_agrees_with_corrupted": self.corrupted_ok,
        }

    def miss_names(self) -> dict[str, list[str]]:
        """category -> corpus file names of the misses"""
        return {k: [line.split(":", 1)[0] for line in v] for k, v in self.misses.items()}

    def goals_met(self) -> bool:
        return (self.title_ok >= TITLE_GOAL * self.crash
                and self.usercopy_ok == self.usercopy
                and self.clean_ok == self.clean
                and self.corrupted_ok >= CORRUPTED_GOAL * self.crash)


def cases(folder: Path) -> Iterator[Case]:
    for path in sorted(folder.iterdir(), key=lambda p: (len(p.name), p.name)):
        if path.is_file() and not path.name.startswith("."):
            yield read_case(path)


def pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100.0 * a / b:.1f} %)" if b else f"{a}/0"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path, metavar="CORPUS_DIR")
    ap.add_argument("--show", type=int, default=0, metavar="N",
                    help="print up to N mismatches per category")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    ap.add_argument("--misses", action="store_true",
                    help="with --json: also the names of the misses, per category")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"syzkaller-corpus: {args.corpus}: not a directory "
              "(want syzkaller's pkg/report/testdata/linux/report)", file=sys.stderr)
        return 2
    tally = Tally()
    for case in cases(args.corpus):
        reps = reports_of(case)
        tally.add(case, primary(reps), len(reps))
    if tally.crash + tally.clean == 0:
        print(f"syzkaller-corpus: {args.corpus}: no corpus files", file=sys.stderr)
        return 2
    if args.json:
        out = tally.numbers()
        if args.misses:
            out["misses"] = tally.miss_names()
        print(json.dumps(out))
    else:
        print(f"crash cases:      syz_title == TITLE or ALT  {pct(tally.title_ok, tally.crash)}"
              f"  (goal >= {TITLE_GOAL:.0%})")
        print(f"usercopy cases:   syz_title == TITLE or ALT  {pct(tally.usercopy_ok, tally.usercopy)}"
              "  (goal: all)")
        print(f"crash-free cases: no report                  {pct(tally.clean_ok, tally.clean)}"
              "  (goal: all)")
        print(f"crash cases:      truncated == CORRUPTED     {pct(tally.corrupted_ok, tally.crash)}"
              f"  (goal >= {CORRUPTED_GOAL:.0%})")
    for what, lines in tally.misses.items():
        for line in lines[:args.show]:
            print(f"mismatch {what}: {line}")
    met = tally.goals_met()
    if not args.json:
        print("syzkaller-corpus: every goal met" if met else "syzkaller-corpus: goal missed")
    return 0 if met else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
