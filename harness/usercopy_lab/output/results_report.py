"""Results table on the terminal and results.json on disk."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from tabulate import tabulate

from ..inputs import shown
from ..judge.verdict import FAILING
from ..model import TriggerResult


def print_table(results: list[TriggerResult], out: TextIO) -> None:
    """The results table.  Every name, summary, diff and path is shown()
    (control characters escaped, one line), so a file or trigger name or a
    console line cannot start a row of its own or move the cursor."""
    rows = [(shown(f"{r.suite}/{r.trigger}"), r.verdict, shown(r.summary, None)[:90],
             f"{r.seconds:.1f}") for r in results]
    # (tabulate 0.8.9 fails on colalign for a table with no row)
    head, rule, *lines = tabulate(rows, headers=("trigger", "verdict", "signature", "seconds"),
                                  tablefmt="simple", disable_numparse=True,
                                  colalign=("left", "left", "left", "right") if rows else None
                                  ).splitlines()
    print(head, file=out)
    print(rule, file=out)
    for line, r in zip(lines, results):
        print(line.rstrip(), file=out)
        for d in r.diffs:
            print(f"    {shown(d, None)}", file=out)
        if r.qemu_retry:
            print(f"    restored again in a new QEMU: {shown(r.qemu_retry, None)}", file=out)
        if r.fallback:
            print(f"    full boot instead of snapshot: {shown(r.fallback, None)}", file=out)
        if r.verdict in FAILING:
            print(f"    log: {shown(r.log, None)}", file=out)
    counts = Counter(r.verdict for r in results)
    print(", ".join(f"{n} {v.lower()}" for v, n in sorted(counts.items())), file=out)
    failed = sum(counts[v] for v in FAILING)
    print(f"triggers: {len(results) - failed} passed, {failed} failed", file=out)
    boots = Counter(r.boot for r in results)
    fell_back = sum(1 for r in results if r.fallback)
    print("boots: " + ", ".join(f"{n} {b}" for b, n in sorted(boots.items()))
          + (f" ({fell_back} fell back from snapshot to full)" if fell_back else ""), file=out)


def write_json(results: list[TriggerResult], path: Path, meta: dict[str, Any]) -> None:
    ResultsJson(path).write(results, meta)


class ResultsJson:
    """results.json, rewritten after every guest so that an interrupted or
    crashed run keeps what it found.  Each result is encoded once and its
    text kept: re-encoding every result after every guest made the
    rewrites quadratic (for the 312 results of `make test`, measured
    2026-12-04: 4.8 s of the harness's CPU, 0.8 s this way, taken from the
    guests on a 2-core machine).  The text is exactly
    json.dumps(meta + {"triggers": [...]}, indent=2)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._encoded: dict[int, tuple[TriggerResult, str]] = {}
        self.written = 0          # results in the file as it is now

    def _entry(self, result: TriggerResult, fresh: bool) -> str:
        cached = self._encoded.get(id(result))
        if fresh or cached is None or cached[0] is not result:
            text = json.dumps(result.to_json(), indent=2).replace("\n", "\n    ")
            cached = self._encoded[id(result)] = (result, "    " + text)
        return cached[1]

    def write(self, results: list[TriggerResult], meta: dict[str, Any],
              fresh: bool = False) -> None:
        """Write results under meta; fresh re-encodes every result (for the
        last write, in case a result changed after it was first written)."""
        head = json.dumps({**meta, "triggers": []}, indent=2)
        assert head.endswith('"triggers": []\n}')
        if results:
            entries = ",\n".join(self._entry(r, fresh) for r in results)
            head = head[:-len("[]\n}")] + "[\n" + entries + "\n  ]\n}"
        tmp = self.path.with_suffix(".tmp")
        try:
            tmp.write_text(head + "\n", encoding="utf-8")
            tmp.replace(self.path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)    # the last whole results.json stays
            raise OSError(exc.errno, exc.strerror, str(self.path)) from exc
        self.written = len(results)
