"""The facts of a run for its page: how it ran (results.json's meta) and,
per suite, the kernel it booted with that kernel's config fragments
(suites.toml and the Makefile's variant rule), the command line the guest
saw, and its verdicts and guest seconds."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..inputs import InputError
from ..model import Verdict
from ..run.suite import Suite, load_suites
from .page_console import read_lines
from .page_model import RunResults

_FRAGMENTS = re.compile(r"^FRAGMENTS_([\w-]+)\s*:?=\s*(.*)$", re.M)
_CMDLINE = re.compile(r"Kernel command line: (.*)$")
CMDLINE_SEARCH = 200        # console lines read for the command line


@dataclass(frozen=True)
class SuiteFacts:
    name: str
    kernel: str                     # "" when suites.toml no longer has the suite
    fragments: list[str]            # lab.config, then the variant's fragments
    cmdline_extra: str              # suites.toml's cmdline
    cmdline_seen: str               # what the first guest's console says it booted with
    golden_dirs: list[str]
    counts: dict[Verdict, int]
    guest_seconds: float


@dataclass(frozen=True)
class RunFacts:
    rows: list[tuple[str, str]]     # label, value: the run as a whole
    suites: list[SuiteFacts]


def kernel_fragments(kernel: str, repo: Path) -> list[str]:
    """lab.config and the fragments the Makefile merges for kernel variant
    NAME: its FRAGMENTS_NAME, else kernel-config/variant-NAME.config."""
    try:
        makefile = (repo / "Makefile").read_text()
    except OSError:
        makefile = ""
    special = {m[1]: m[2].split() for m in _FRAGMENTS.finditer(makefile)}
    own = f"kernel-config/variant-{kernel}.config"
    extra = special.get(kernel) or ([own] if (repo / own).is_file() else [])
    return ["kernel-config/lab.config", *extra]


def seen_cmdline(run: RunResults, suite: str) -> str:
    for r in run.results:
        if r.suite != suite:
            continue
        lines = read_lines(run.console(r)) or []
        for line in lines[:CMDLINE_SEARCH]:
            if m := _CMDLINE.search(line):
                return m[1].strip()
        return ""
    return ""


def _suites(repo: Path) -> dict[str, Suite]:
    try:
        return load_suites(repo / "suites.toml")
    except (InputError, OSError):
        return {}


def run_facts(run: RunResults, repo: Path) -> RunFacts:
    meta = run.meta
    counts = Counter(r.verdict for r in run.results)
    rows = [("run", run.run_id),
            ("suites", ", ".join(run.suites)),
            ("guests", f"{len(run.results)}: " + ", ".join(
                f"{counts[v]} {v}" for v in Verdict if counts[v])),
            ("boot", str(meta.get("boot", "?")) + (
                ", QEMU kept per worker" if meta.get("reuse_qemu") else "")),
            ("accelerator", f"{meta.get('accel', '?')} ({meta.get('accel_reason', '')})"),
            ("guests at once", str(meta.get("jobs", "?"))),
            ("wall time", f"{meta['wall_seconds']:.1f} s" if isinstance(
                meta.get("wall_seconds"), (int, float)) else "?"),
            ("guest seconds", f"{sum(r.seconds for r in run.results):.1f} s in all")]
    if not meta.get("complete", True):
        rows.append(("complete", "no: " + ("interrupted" if meta.get("interrupted")
                                             else "the run did not finish")))
    if meta.get("not_run"):
        rows.append(("not run", ", ".join(map(str, meta["not_run"]))))
    known = _suites(repo)
    facts = []
    for name in run.suites:
        mine = [r for r in run.results if r.suite == name]
        suite = known.get(name)
        facts.append(SuiteFacts(
            name, suite.kernel if suite else "",
            kernel_fragments(suite.kernel, repo) if suite else [],
            suite.cmdline if suite else "", seen_cmdline(run, name),
            [str(d.relative_to(repo)) if d.is_relative_to(repo) else str(d)
             for d in suite.golden_dirs] if suite else [],
            dict(Counter(r.verdict for r in mine)), sum(r.seconds for r in mine)))
    return RunFacts(rows, facts)
