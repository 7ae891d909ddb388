"""What changed since the run before: one row per trigger whose verdict or
signature moved, in the words a kernel developer asks them in."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..judge.verdict import FAILING
from ..model import TriggerResult
from .page_model import RunResults


class DiffKind(Enum):
    """Why a row is in the diff, worst first (the order of the table)."""

    NEW_FAILURE = "new FAIL/ERROR"
    FIXED = "fixed"
    CHANGED_VERDICT = "changed verdict"
    CHANGED_SIGNATURE = "changed signature"
    FIRST = "first run"
    GONE = "not run now"


@dataclass(frozen=True)
class DiffRow:
    kind: DiffKind
    suite: str
    trigger: str
    before: TriggerResult | None
    now: TriggerResult | None


def signature(r: TriggerResult) -> tuple[str, tuple[str, ...]]:
    """What "the same outcome" means: the one-line summary the table
    prints and the parsed reports' signature hashes."""
    return r.summary, tuple(rep.signature for rep in r.reports)


def classify(before: TriggerResult | None, now: TriggerResult | None) -> DiffKind | None:
    """The row one trigger makes, None when nothing changed."""
    if before is None:
        return DiffKind.FIRST
    if now is None:
        return DiffKind.GONE
    failing_now, failing_before = now.verdict in FAILING, before.verdict in FAILING
    if failing_now and (not failing_before or now.verdict != before.verdict):
        return DiffKind.NEW_FAILURE
    if failing_before and not failing_now:
        return DiffKind.FIXED
    if now.verdict != before.verdict:
        return DiffKind.CHANGED_VERDICT
    if signature(now) != signature(before):
        return DiffKind.CHANGED_SIGNATURE
    return None


def diff_runs(now: RunResults, before: RunResults) -> list[DiffRow]:
    """Every changed trigger, worst kind first, then in the run's order."""
    old, new = before.by_key(), now.by_key()
    keys = list(new) + [k for k in old if k not in new]
    rows = []
    for key in keys:
        kind = classify(old.get(key), new.get(key))
        if kind is not None:
            rows.append(DiffRow(kind, key[0], key[1], old.get(key), new.get(key)))
    order = list(DiffKind)
    return sorted(rows, key=lambda row: order.index(row.kind))
