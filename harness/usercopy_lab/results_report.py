"""Results table on the terminal and results.json on disk."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from .trigger_run import TriggerResult
from .verdict import FAILING


def print_table(results: list[TriggerResult], out: TextIO) -> None:
    rows = [(f"{r.suite}/{r.trigger}", r.verdict, r.summary, f"{r.seconds:.1f}")
            for r in results]
    head = ("trigger", "verdict", "signature", "seconds")
    widths = [max(len(x[i]) for x in rows + [head]) for i in range(3)]
    widths[2] = min(widths[2], 90)
    fmt = f"{{:<{widths[0]}}}  {{:<{widths[1]}}}  {{:<{widths[2]}}}  {{:>7}}"
    print(fmt.format(*head), file=out)
    print(fmt.format(*("-" * w for w in widths), "-" * 7), file=out)
    for row, r in zip(rows, results):
        print(fmt.format(row[0], row[1], row[2][:widths[2]], row[3]), file=out)
        for d in r.diffs:
            print(f"    {d}", file=out)
        if r.fallback:
            print(f"    full boot instead of snapshot: {r.fallback}", file=out)
        if r.verdict in FAILING:
            print(f"    log: {r.log}", file=out)
    counts = Counter(r.verdict for r in results)
    print(", ".join(f"{n} {v.lower()}" for v, n in sorted(counts.items())), file=out)
    failed = sum(counts[v] for v in FAILING)
    print(f"triggers: {len(results) - failed} passed, {failed} failed", file=out)
    boots = Counter(r.boot for r in results)
    fell_back = sum(1 for r in results if r.fallback)
    print("boots: " + ", ".join(f"{n} {b}" for b, n in sorted(boots.items()))
          + (f" ({fell_back} fell back from snapshot to full)" if fell_back else ""), file=out)


def write_json(results: list[TriggerResult], path: Path, meta: dict[str, Any]) -> None:
    data = dict(meta)
    data["triggers"] = [r.to_json() for r in results]
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)
