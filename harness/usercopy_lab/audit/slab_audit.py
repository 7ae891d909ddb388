"""The in-guest whitelist audit: the guest's slab table, judged on the host.

initramfs-src/audit-slab-caches.c prints every cache of /sys/kernel/slab
(object_size, slab size, useroffset, usersize, aliases), every alias
symlink and every name /proc/slabinfo shows.  This module parses that
table (SlabTable), judges it against the audit golden file and the
offsetof/sizeof values of its build (whitelist_spec), and writes both
into the run's results:

  <suite>/slab-audit.json   the table, the merged-name groups and one
                            judged row per golden entry / region cache
  <suite>/slab-audit.txt    the same rows as a text table

A row FAILs, naming the cache, when a region differs from what the source
declares, a cache the golden lists is missing, merged or has a region it
should not have, a cache that should not exist does, a seed's removed
field still resolves, a cache with a region is not listed in the golden,
or a name is merged into a cache that has a region (SLUB never merges
those, see slab_unmergeable()).

SlabTable is also the alias table for triage: SlabTable.load(path) on a
results slab-audit.json, then merged_names("ip6-frags") lists every cache
name SLUB folded into the cache a report calls 'ip6-frags'.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tabulate import tabulate

from ..protocol import SLAB_PREFIX
from ..reports import program_lines
from .whitelist_spec import AuditSpec, CacheRule, DwarfTable, State

PROGRAM = "audit-slab-caches"
ROW_PREFIX = SLAB_PREFIX
_CACHE_RE = re.compile(r"cache (\S+) object_size=(-?\d+) size=(-?\d+) "
                       r"useroffset=(-?\d+) usersize=(-?\d+) aliases=(-?\d+)$")
_ALIAS_RE = re.compile(r"alias (\S+) -> (\S+)$")
_NAMED_RE = re.compile(r"named (\S+) object_size=(-?\d+)$")
_END_RE = re.compile(r"end caches=(\d+) aliases=(\d+) named=(\d+)$")


class AuditError(ValueError):
    """A console whose table is missing or incomplete."""


@dataclass(frozen=True)
class SlabCache:
    sysfs: str                  # directory name in /sys/kernel/slab
    object_size: int
    size: int                   # slab_size: object plus metadata and padding
    useroffset: int
    usersize: int
    aliases: int                # the cache's own count (kmem_cache refcount - 1)
    names: tuple[str, ...] = ()  # symlinks to it, sorted
    reported: str = ""          # kmem_cache->name, as /proc/slabinfo and reports say


@dataclass
class SlabTable:
    caches: dict[str, SlabCache] = field(default_factory=dict)   # by sysfs name
    links: dict[str, str] = field(default_factory=dict)          # alias -> sysfs name

    def lookup(self, name: str) -> SlabCache | None:
        """The cache NAME resolves to: a real cache, an alias, or the name
        a usercopy report gives (kmem_cache->name)."""
        if name in self.caches:
            return self.caches[name]
        if name in self.links:
            return self.caches.get(self.links[name])
        return next((c for c in self.caches.values() if c.reported == name), None)

    def merged_names(self, name: str) -> tuple[str, ...]:
        """Every cache name that shares the cache NAME stands for: the
        caches SLUB merged into it (empty if NAME is unknown)."""
        cache = self.lookup(name)
        if cache is None:
            return ()
        names = set(cache.names) | ({cache.sysfs} if not cache.sysfs.startswith(":") else set())
        if cache.reported:
            names.add(cache.reported)
        return tuple(sorted(names))

    def groups(self) -> dict[str, list[str]]:
        """Reported name (or sysfs id) -> every name merged into that cache,
        for the caches that stand for more than one name."""
        groups = {c.reported or c.sysfs: list(self.merged_names(c.sysfs))
                  for c in self.caches.values()}
        return {name: names for name, names in groups.items() if len(names) > 1}

    def to_json(self) -> dict:
        return {"caches": [asdict(c) for c in sorted(self.caches.values(),
                                                      key=lambda c: c.sysfs)],
                "links": dict(sorted(self.links.items())),
                "merged": self.groups()}

    @classmethod
    def from_json(cls, data: dict) -> SlabTable:
        table = cls()
        for c in data["caches"]:
            c = dict(c, names=tuple(c.get("names", ())))
            table.caches[c["sysfs"]] = SlabCache(**c)
        table.links = dict(data.get("links", {}))
        return table

    @classmethod
    def load(cls, path: Path) -> SlabTable:
        """The table of a results slab-audit.json (or its "table" part)."""
        data = json.loads(Path(path).read_text())
        return cls.from_json(data.get("table", data))


def parse_console(lines: list[str]) -> SlabTable:
    """The table audit-slab-caches printed; AuditError if it is cut off."""
    table = SlabTable()
    named: dict[str, int] = {}
    end = None
    for raw in program_lines(lines):
        pos = raw.find(ROW_PREFIX)
        if pos < 0:
            continue
        row = raw[pos + len(ROW_PREFIX):].rstrip("\r\n ")
        if m := _CACHE_RE.match(row):
            name, *nums = m.groups()
            table.caches[name] = SlabCache(name, *map(int, nums))
        elif m := _ALIAS_RE.match(row):
            table.links[m.group(1)] = m.group(2)
        elif m := _NAMED_RE.match(row):
            named[m.group(1)] = int(m.group(2))
        elif m := _END_RE.match(row):
            end = tuple(map(int, m.groups()))
        else:
            raise AuditError(f"unreadable audit line: {row!r}")
    if end is None:
        raise AuditError("the audit table has no end line (cut off?)")
    seen = (len(table.caches), len(table.links), len(named))
    if seen != end:
        raise AuditError(f"the audit table lists {seen[0]} caches, {seen[1]} aliases, "
                         f"{seen[2]} slabinfo names; the guest counted {end[0]}, "
                         f"{end[1]}, {end[2]} (lines lost on the console?)")
    by_target: dict[str, list[str]] = {}
    for alias, target in table.links.items():
        if target not in table.caches:
            raise AuditError(f"alias {alias} points to {target}, which is not listed")
        by_target.setdefault(target, []).append(alias)
    for sysfs, cache in list(table.caches.items()):
        names = tuple(sorted(by_target.get(sysfs, ())))
        candidates = [n for n in (sysfs, *names) if n in named]
        table.caches[sysfs] = SlabCache(cache.sysfs, cache.object_size, cache.size,
                                        cache.useroffset, cache.usersize, cache.aliases,
                                        names, candidates[0] if candidates else "")
    return table


@dataclass
class AuditRow:
    name: str
    seed: str
    state: str                        # what the golden expects
    expected: str                     # e.g. "useroffset 1064 usersize 256"
    seen: str
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _region(useroffset: int, usersize: int) -> str:
    return f"useroffset {useroffset} usersize {usersize}" if usersize else "no region"


def _evaluate(rule: CacheRule, dwarf: DwarfTable, object_size: int | None,
              problems: list[str]) -> tuple[int | None, int | None, int | None]:
    values = dwarf.values.get(rule.name, {})
    out: list[int | None] = []
    for expr in (rule.useroffset, rule.usersize, rule.object_size):
        if expr is None:
            out.append(None)
            continue
        try:
            out.append(expr.evaluate(values, object_size))
        except ValueError as exc:
            problems.append(f"cannot compute {expr.text!r}: {exc}")
            out.append(None)
    for expr in rule.gone:
        present = [str(t) for t in expr.terms() if isinstance(values.get(str(t)), int)]
        if present:
            problems.append(f"{', '.join(present)} still resolves in this build")
    return out[0], out[1], out[2]


def _judge_rule(name: str, rule: CacheRule, table: SlabTable,
                dwarf: DwarfTable) -> AuditRow:
    cache = table.caches.get(name)
    alias_of = table.links.get(name)
    problems: list[str] = []
    if rule.state is State.ABSENT:
        off, size, _ = _evaluate(rule, dwarf, None, problems)
        declared = f"declared {_region(off, size)}" if off is not None and size else "no cache"
        seen = "absent"
        if cache is not None or alias_of is not None:
            seen = f"present ({'alias of ' + alias_of if alias_of else 'own cache'})"
            problems.append(f"{name} exists, the golden says it must not")
        return AuditRow(name, rule.seed, "absent", declared, seen, problems)
    if cache is None:
        if alias_of is not None:
            real = table.caches.get(alias_of)
            problems.append(f"{name} is merged into {alias_of}"
                            f"{' (' + real.reported + ')' if real and real.reported else ''}")
            seen = f"alias of {alias_of}"
        else:
            problems.append(f"{name} missing from /sys/kernel/slab")
            seen = "absent"
        off, size, _ = _evaluate(rule, dwarf, None, [])
        expected = _region(off, size) if off is not None and size is not None else rule.state.value
        return AuditRow(name, rule.seed, rule.state.value, expected, seen, problems)

    seen = _region(cache.useroffset, cache.usersize) + f", object_size {cache.object_size}"
    if cache.names:
        seen += f", aliases {' '.join(cache.names)}"
    off, size, osize = _evaluate(rule, dwarf, cache.object_size, problems)
    if rule.state is State.NONE:
        expected = "no region"
        if cache.usersize:
            problems.append(f"{name} has a region ({_region(cache.useroffset, cache.usersize)}), "
                            f"the golden says none")
    else:
        expected = _region(off or 0, size or 0) if off is not None and size is not None else "?"
        if off is not None and size is not None and \
                (cache.useroffset, cache.usersize) != (off, size):
            problems.append(f"{name}: region {_region(cache.useroffset, cache.usersize)}, "
                            f"the source declares {_region(off, size)}")
        if cache.usersize and cache.names:
            problems.append(f"{name} has a region but {' '.join(cache.names)} "
                            f"{'is' if len(cache.names) == 1 else 'are'} merged into it")
    if osize is not None:
        expected += f", object_size {osize}"
        if osize != cache.object_size:
            problems.append(f"{name}: object_size {cache.object_size}, the source says {osize}")
    return AuditRow(name, rule.seed, rule.state.value, expected, seen, problems)


def judge(table: SlabTable, spec: AuditSpec, dwarf: DwarfTable) -> list[AuditRow]:
    """One row per exact golden entry, per cache a pattern covers, and per
    cache with a region the golden does not list."""
    rows: list[AuditRow] = []
    for rule in spec.rules:
        if rule.is_pattern:
            names = [n for n in sorted(table.caches) if spec.rule_for(n) is rule]
            if not names:
                rows.append(AuditRow(rule.name, rule.seed, rule.state.value,
                                     "at least one cache", "none",
                                     [f"no cache matches {rule.name}"]))
            rows += [_judge_rule(n, rule, table, dwarf) for n in names]
        else:
            rows.append(_judge_rule(rule.name, rule, table, dwarf))
    for name, cache in sorted(table.caches.items()):
        if cache.usersize and spec.rule_for(name) is None and \
                spec.rule_for(cache.reported) is None:
            rows.append(AuditRow(name, "", "unlisted", "not in the golden",
                                 _region(cache.useroffset, cache.usersize),
                                 [f"{name} has a region ({_region(cache.useroffset, cache.usersize)})"
                                  f" that {spec.path.name} does not list"]))
    for alias, target in sorted(table.links.items()):
        real = table.caches[target]
        if real.usersize and spec.rule_for(target) is None:
            rows.append(AuditRow(alias, "", "alias", "never merged into a region cache",
                                 f"alias of {target}",
                                 [f"{alias} is merged into {target}, which has a region"]))
    return rows


def format_rows(rows: list[AuditRow]) -> str:
    """The rows as a text table; each problem on a line of its own, under
    the row's EXPECTED | SEEN."""
    head, *table = tabulate(
        [(r.name, r.seed, "ok" if r.ok else "FAIL", f"{r.expected} | {r.seen}") for r in rows],
        headers=("CACHE", "SEED", "VERDICT", "EXPECTED | SEEN"), tablefmt="plain",
        disable_numparse=True).splitlines()
    indent = " " * head.index("EXPECTED")
    lines = [head.rstrip()]
    for line, r in zip(table, rows):
        lines.append(line.rstrip())
        lines += [f"{indent}^ {p}" for p in r.problems]
    return "\n".join(lines) + "\n"


def write_results(out_dir: Path, table: SlabTable, rows: list[AuditRow],
                  dwarf: DwarfTable, spec: AuditSpec) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "slab-audit.json"
    data = {"golden": str(spec.path), "vmlinux": dwarf.vmlinux,
            "dwarf": dwarf.values, "rows": [asdict(r) | {"ok": r.ok} for r in rows],
            "table": table.to_json()}
    path.write_text(json.dumps(data, indent=1) + "\n")
    (out_dir / "slab-audit.txt").write_text(format_rows(rows))
    return path


def audit_console(lines: list[str], spec: AuditSpec, dwarf: DwarfTable,
                  out_dir: Path | None) -> list[str]:
    """The diffs of one audit console (empty: PASS); writes the results
    files into OUT_DIR when given."""
    try:
        table = parse_console(lines)
    except AuditError as exc:
        return [f"audit: {exc}"]
    rows = judge(table, spec, dwarf)
    if out_dir is not None:
        write_results(out_dir, table, rows, dwarf, spec)
    return [f"audit: {p}" for r in rows for p in r.problems]
