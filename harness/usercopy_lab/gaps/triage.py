"""The reviewed status of every candidate and why a region has no site:
expected-oops/gaps/triage.toml.

  [[candidate]]              one per candidate (or a pattern of them)
  key     = "CACHE:FUNCTION:MEMBER"   as gaps.json's "key"; fnmatch '*' allowed
  status  = "confirmed" | "dismissed"
  reason  = "..."            why (dismissed), what it is (confirmed)
  proof   = "..."            confirmed: the guest proof (probe, golden file, log)

  [[recall]]                 a cache with a region and no checked site found
  cache   = "NAME"
  why     = "..."
  kind    = "missed"         a checked copy exists and the finder misses it (default)
          | "unused"         no checked copy of the region exists in the tree: a
                             region no site uses (attack surface), not a miss
"""
from __future__ import annotations

import enum
import fnmatch
from dataclasses import dataclass
from pathlib import Path

from ..inputs import InputError, load_toml
from .model import GapsError


class Status(enum.Enum):
    CONFIRMED = "confirmed"
    DISMISSED = "dismissed"
    UNTRIAGED = "untriaged"


@dataclass(frozen=True)
class Entry:
    key: str
    status: Status
    reason: str
    proof: str = ""

    @property
    def label(self) -> str:
        if self.status is Status.UNTRIAGED:
            return "untriaged"
        return f"{self.status.value}: {self.reason}"


UNTRIAGED = Entry("", Status.UNTRIAGED, "")


@dataclass(frozen=True)
class Triage:
    entries: tuple[Entry, ...] = ()
    recall: tuple[tuple[str, str, str], ...] = ()    # (cache, why, kind)

    def status(self, key: str) -> Entry:
        for e in self.entries:
            if e.key == key:
                return e
        for e in self.entries:
            if fnmatch.fnmatchcase(key, e.key):
                return e
        return UNTRIAGED

    def recall_why(self, cache: str) -> str:
        return next((why for name, why, _k in self.recall if name == cache), "")

    def unused(self, cache: str) -> bool:
        """CACHE's region has no checked copy in the tree (kind = "unused")."""
        return any(name == cache and kind == "unused" for name, _w, kind in self.recall)


def load(path: Path | None) -> Triage:
    if path is None or not Path(path).exists():
        return Triage()
    try:
        _, data = load_toml(Path(path), GapsError, what="gap triage file")
    except InputError as exc:
        raise GapsError(str(exc)) from None
    entries = []
    for i, t in enumerate(data.get("candidate", []), 1):
        where = f"{path}: [[candidate]] #{i}"
        if not isinstance(t, dict) or not isinstance(t.get("key"), str):
            raise GapsError(f"{where}: no key (a string)")
        unknown = set(t) - {"key", "status", "reason", "proof"}
        if unknown:
            raise GapsError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        try:
            status = Status(t.get("status", ""))
        except ValueError:
            raise GapsError(f"{where}: status must be confirmed or dismissed") from None
        if status is Status.UNTRIAGED or not str(t.get("reason", "")).strip():
            raise GapsError(f"{where}: a status of confirmed or dismissed, with a reason")
        if status is Status.CONFIRMED and not str(t.get("proof", "")).strip():
            raise GapsError(f"{where}: confirmed needs its guest proof")
        entries.append(Entry(t["key"], status, " ".join(str(t["reason"]).split()),
                             " ".join(str(t.get("proof", "")).split())))
    recall = []
    for i, t in enumerate(data.get("recall", []), 1):
        if not isinstance(t, dict) or not isinstance(t.get("cache"), str) or \
                not isinstance(t.get("why"), str):
            raise GapsError(f"{path}: [[recall]] #{i}: needs cache and why (strings)")
        kind = t.get("kind", "missed")
        if kind not in ("missed", "unused") or set(t) - {"cache", "why", "kind"}:
            raise GapsError(f"{path}: [[recall]] #{i}: kind is missed or unused; keys cache, why, kind")
        recall.append((t["cache"], " ".join(t["why"].split()), kind))
    return Triage(tuple(entries), tuple(recall))
