"""The hunt's findings: every usercopy report of every guest, deduplicated
and classified; the other oopses apart.

A usercopy report (the fallback's WARNING, a usercopy BUG, or the
fallback's one-line repeat) is keyed by

    (cache, direction, offset, size, guilty frame)

where the cache is resolved through the guest's alias table (the audit
table hunt-run prints, slab_audit.SlabTable): a cache without a region may
have been merged by SLUB into another one, and the report then names the
oldest cache of the group; the key holds every name of the group, so the
same copy is one finding whatever the group's reported name, and the
classification can name the cache the code really allocated from.

Classes (Class): missing whitelist, region too narrow, not a whitelist
problem (with the reason), untriaged.  A class comes from
expected-oops/hunt/classifications.toml (a person's judgement, with the
reasoning, the fix and the probe) or from a rule that follows from the
fallback itself (a usercopy BUG under the fallback left the object; LKDTM's
own bad copies).  Anything else stays untriaged, with what the report
suggests, and `make hunt` says so.
"""
from __future__ import annotations

import fnmatch
import hashlib
import tomllib
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from ..audit.slab_audit import SlabTable
from ..model import Report, ReportKind


class Class(str, Enum):
    MISSING = "missing whitelist"
    NARROW = "region too narrow"
    NOT_WHITELIST = "not a whitelist problem"
    UNTRIAGED = "untriaged"


class FindingsError(ValueError):
    """A classifications file that cannot be used: one line for the user."""


@dataclass(frozen=True)
class Occurrence:
    guest: str          # guest id in the run
    log: str
    line: int
    workload: str
    seed: int
    kind: str           # usercopy_warn / usercopy_abort / repeat


@dataclass(frozen=True)
class Key:
    group: tuple[str, ...]      # every cache name of the merged cache
    direction: str
    offset: int | None
    size: int | None
    frame: str | None           # None: a repeat line (no trace)

    @property
    def id(self) -> str:
        text = "|".join(["+".join(self.group), self.direction, str(self.offset),
                         str(self.size), str(self.frame)])
        return "U-" + hashlib.sha1(text.encode()).hexdigest()[:8]


@dataclass(frozen=True)
class Rule:
    """One entry of classifications.toml."""

    klass: Class
    why: str
    cache: str = "*"
    direction: str = "*"
    frame: str = "*"
    offset: int | None = None
    size: int | None = None
    fix: str = ""
    probe: str = ""
    regression: str = ""
    source: str = ""

    def matches(self, key: Key) -> bool:
        return (any(fnmatch.fnmatchcase(n, self.cache) for n in key.group)
                and fnmatch.fnmatchcase(key.direction, self.direction)
                and fnmatch.fnmatchcase(key.frame or "", self.frame)
                and self.offset in (None, key.offset) and self.size in (None, key.size))


def load_rules(path: Path) -> list[Rule]:
    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise FindingsError(f"{path}: {exc}") from None
    rules = []
    for i, item in enumerate(data.get("finding", []), 1):
        where = f"{path}: finding {i}"
        try:
            klass = Class(item["class"])
        except (KeyError, ValueError):
            raise FindingsError(f"{where}: class must be one of "
                                f"{', '.join(c.value for c in Class if c is not Class.UNTRIAGED)}")
        if klass is Class.UNTRIAGED:
            raise FindingsError(f"{where}: 'untriaged' is what is left, not a class to give")
        known = {"class", "why", "cache", "direction", "frame", "offset", "size", "fix",
                 "probe", "regression"}
        if unknown := sorted(set(item) - known):
            raise FindingsError(f"{where}: unknown key(s) {', '.join(unknown)}")
        if not str(item.get("why", "")).strip():
            raise FindingsError(f"{where}: every class needs its reasoning ('why')")
        rules.append(Rule(klass, str(item["why"]).strip(), str(item.get("cache", "*")),
                          str(item.get("direction", "*")), str(item.get("frame", "*")),
                          item.get("offset"), item.get("size"), str(item.get("fix", "")),
                          str(item.get("probe", "")), str(item.get("regression", "")),
                          f"{path.name}#{i}"))
    return rules


@dataclass
class Finding:
    key: Key
    reported_cache: str
    object: str
    region: str                 # the cache's region in the alias table
    occurrences: list[Occurrence] = field(default_factory=list)
    title: str = ""
    frames: list[str] = field(default_factory=list)
    klass: Class = Class.UNTRIAGED
    why: str = ""
    rule: str = ""
    fix: str = ""
    probe: str = ""
    regression: str = ""
    suggestion: str = ""

    @property
    def first(self) -> Occurrence:
        return self.occurrences[0]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.key.id, "class": self.klass.value, "why": self.why,
            "rule": self.rule, "suggestion": self.suggestion,
            "cache": self.reported_cache, "cache_group": list(self.key.group),
            "object": self.object, "region": self.region,
            "direction": self.key.direction, "offset": self.key.offset,
            "size": self.key.size, "guilty_frame": self.key.frame,
            "title": self.title, "frames": self.frames,
            "count": len(self.occurrences),
            "first": {"log": self.first.log, "line": self.first.line,
                      "guest": self.first.guest, "workload": self.first.workload,
                      "seed": self.first.seed},
            "guests": sorted({o.guest for o in self.occurrences}),
            "fix": self.fix, "probe": self.probe, "regression": self.regression,
        }


@dataclass
class OtherOops:
    signature: str
    title: str
    kind: str
    occurrences: list[Occurrence] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        first = self.occurrences[0]
        return {"title": self.title, "kind": self.kind, "signature": self.signature,
                "count": len(self.occurrences),
                "first": {"log": first.log, "line": first.line, "guest": first.guest,
                          "workload": first.workload, "seed": first.seed},
                "guests": sorted({o.guest for o in self.occurrences})}


def _region(table: SlabTable | None, cache: str) -> str:
    found = table.lookup(cache) if table else None
    if found is None:
        return "unknown (no alias table)"
    if not found.usersize:
        return f"no region (object_size {found.object_size})"
    return (f"useroffset {found.useroffset} usersize {found.usersize} "
            f"(object_size {found.object_size})")


def _group(table: SlabTable | None, cache: str) -> tuple[str, ...]:
    names = table.merged_names(cache) if table else ()
    return tuple(names) if names else (cache,)


@dataclass
class Findings:
    rules: list[Rule] = field(default_factory=list)
    findings: dict[Key, Finding] = field(default_factory=dict)
    others: dict[str, OtherOops] = field(default_factory=dict)

    def add_report(self, rep: Report, table: SlabTable | None, guest: str,
                   workload: str, seed: int) -> None:
        occ = Occurrence(guest, rep.file, rep.line, workload, seed, rep.kind)
        if not rep.kind.is_usercopy or rep.direction is None:
            other = self.others.setdefault(rep.signature or rep.title,
                                           OtherOops(rep.signature, rep.title or rep.kind,
                                                     rep.kind))
            other.occurrences.append(occ)
            return
        cache = rep.cache or rep.object or "?"
        key = Key(_group(table, cache), rep.direction, rep.offset, rep.size, rep.guilty_frame)
        finding = self.findings.get(key)
        if finding is None:
            finding = self.findings[key] = Finding(
                key, cache, rep.object or "", _region(table, cache) if rep.cache else
                (rep.object or ""), title=rep.title, frames=list(rep.frames))
        finding.occurrences.append(occ)

    def add_repeat(self, direction: str, obj: str, cache: str, offset: int, size: int,
                   table: SlabTable | None, occ: Occurrence) -> None:
        """A fallback repeat line: counted with the finding of the same
        cache, direction, offset and size if there is one (the same copy,
        its trace printed once), else a finding of its own without a frame."""
        group = _group(table, cache)
        for key, finding in self.findings.items():
            if (key.group, key.direction, key.offset, key.size) == (group, direction,
                                                                    offset, size):
                finding.occurrences.append(occ)
                return
        key = Key(group, direction, offset, size, None)
        finding = self.findings.get(key)
        if finding is None:
            finding = self.findings[key] = Finding(
                key, cache, obj, _region(table, cache),
                title=f"usercopy: {direction} of '{cache}' (repeat line, no trace)")
        finding.occurrences.append(occ)

    def classify(self) -> None:
        for f in self.findings.values():
            rule = next((r for r in self.rules if r.matches(f.key)), None)
            if rule is not None:
                f.klass, f.why, f.rule = rule.klass, rule.why, rule.source
                f.fix, f.probe, f.regression = rule.fix, rule.probe, rule.regression
                continue
            auto = _automatic(f)
            if auto is not None:
                f.klass, f.why = auto
                f.rule = "automatic"
            else:
                f.klass, f.why, f.rule = Class.UNTRIAGED, "", ""
                f.suggestion = _suggest(f)

    def ordered(self) -> list[Finding]:
        rank = {Class.UNTRIAGED: 0, Class.MISSING: 1, Class.NARROW: 2, Class.NOT_WHITELIST: 3}
        return sorted(self.findings.values(),
                      key=lambda f: (rank[f.klass], -len(f.occurrences), f.key.id))

    def untriaged(self) -> list[Finding]:
        return [f for f in self.findings.values() if f.klass is Class.UNTRIAGED]


def _automatic(f: Finding) -> tuple[Class, str] | None:
    """Classes that follow from the fallback's semantics, not from a judgement."""
    if any(fr.startswith("lkdtm_") or fr.startswith("do_usercopy_") for fr in f.frames):
        return (Class.NOT_WHITELIST, "LKDTM's own deliberate bad copy (a test trigger fired "
                "through provoke-crash/DIRECT), not a kernel path")
    kinds = {o.kind for o in f.occurrences}
    if kinds <= {ReportKind.USERCOPY_ABORT, ReportKind.USERCOPY_LEGACY}:
        if "SLUB object" in f.object or "SLAB object" in f.object:
            return (Class.NOT_WHITELIST, "a usercopy BUG although the fallback was on: the "
                    "copy left the object (the fallback WARNs only inside [0, object_size)), "
                    "an out-of-bounds copy that no region could allow")
        return (Class.NOT_WHITELIST, f"a usercopy BUG on {f.object or 'non-slab memory'}: "
                "not a slab cache, so no whitelist applies")
    return None


def _suggest(f: Finding) -> str:
    if f.region.startswith("no region"):
        return ("the cache has no region: a missing whitelist if this copy is meant "
                "(read the guilty frame), else a bug in the caller")
    if f.region.startswith("useroffset"):
        return ("the copy is inside the object but outside the cache's region: "
                "a region too narrow if the field is meant to be copied")
    return "no alias table for this guest: resolve the cache by hand"
