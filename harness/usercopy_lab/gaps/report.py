"""gaps.json and gaps.md: per cache, the sites inside its region, the
candidates (checked sites outside it), the sites whose offset is not static,
and the regions no site uses, with the recall over caches with a region."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .model import CacheResult, Match, Site
from .triage import Triage

def _site_json(m: Match) -> dict:
    s: Site = m.site
    return {"file": s.file, "line": s.line, "function": s.function, "callee": s.callee,
            "direction": s.direction.value, "pointer": s.pointer, "size": s.size,
            "member": m.path, "how": m.how, "key": f"{m.cache}:{s.function}:{m.path or '-'}"}


@dataclass
class Recall:
    found: list[str]
    missed: dict[str, str]        # cache -> why (triage.toml's [recall] or "no site found")
    unused: list[str]             # of MISSED: no checked copy of the region exists (triage)

    @property
    def n(self) -> int:
        return len(self.found)

    @property
    def m(self) -> int:
        return len(self.found) + len(self.missed)

    @property
    def m_used(self) -> int:
        """Caches with a region that some checked copy uses."""
        return self.m - len(self.unused)


def candidates(results: dict[str, CacheResult]) -> list[Match]:
    out = []
    for r in results.values():
        out.extend(r.outside)
    return sorted(out, key=lambda m: (m.cache, m.site.file, m.site.line))


def recall(results: dict[str, CacheResult], triage: Triage) -> Recall:
    found, missed = [], {}
    for r in sorted(results.values(), key=lambda r: r.cache.name):
        if not r.cache.has_region:
            continue
        if r.inside:
            found.append(r.cache.name)
        else:
            missed[r.cache.name] = triage.recall_why(r.cache.name) or "no site found (not explained yet)"
    return Recall(found, missed, [c for c in missed if triage.unused(c)])


def to_json(scan, triage: Triage, tree_label: str) -> dict:
    rec = recall(scan.results, triage)
    caches = []
    for r in sorted(scan.results.values(), key=lambda r: (r.cache.name, r.cache.file)):
        if not (r.cache.has_region or r.outside):
            continue
        caches.append({
            "name": r.cache.name, "struct": r.cache.struct, "file": r.cache.file,
            "line": r.cache.line, "region": str(r.cache.region), "region_source": r.cache.region.text,
            "inside": [_site_json(m) for m in r.inside],
            "candidates": [dict(_site_json(m), status=triage.status(_site_json(m)["key"]).label)
                           for m in r.outside],
            "unsure": [_site_json(m) for m in r.unsure],
            "constant_size_sites": r.unchecked,
            "region_unused": r.cache.has_region and not r.inside,
        })
    return {
        "tree": tree_label,
        "caches_total": len(scan.caches),
        "caches_with_region": rec.m,
        "recall": {"n": rec.n, "m": rec.m, "found": rec.found, "missed": rec.missed,
                   "unused": rec.unused, "m_used": rec.m_used},
        "sites": len(scan.sites), "checked_sites": sum(1 for s in scan.sites if s.checked),
        "regions_without_cache": [{"name": c.name, "file": c.file, "region": str(c.region)}
                                  for c in scan.unregistered],
        "seconds": {k: round(v, 1) for k, v in scan.seconds.items()},
        "cpu_seconds": round(scan.cpu_seconds, 1),
        "caches": caches,
    }


def to_markdown(data: dict) -> str:
    r = data["recall"]
    lines = [f"# Gap finder: {data['tree']}", "",
             f"recall {r['n']} of {r['m']} caches with a region "
             f"({100.0 * r['n'] / max(r['m'], 1):.1f} %): a checked copy site inside the region found; "
             f"{r['n']} of {r['m_used']} ({100.0 * r['n'] / max(r['m_used'], 1):.1f} %) with the "
             f"{r['m'] - r['m_used']} regions no checked copy uses set apart (triage: unused).",
             "", f"{data['caches_total']} caches, {data['sites']} copy sites, "
             f"{data['checked_sites']} of them checked (size not a compile-time constant); "
             f"finder took {sum(data['seconds'].values()):.0f} s ({', '.join(f'{k} {v:.0f} s' for k, v in data['seconds'].items())}), "
             f"{data.get('cpu_seconds', 0):.0f} s of CPU.",
             "", "## Candidates (checked copies outside the cache's region)", ""]
    cands = [(c, s) for c in data["caches"] for s in c["candidates"]]
    if not cands:
        lines.append("none")
    else:
        lines.append("| cache | region | site | member | status |")
        lines.append("|---|---|---|---|---|")
        for c, s in cands:
            lines.append(f"| {c['name']} | {c['region']} | {s['file']}:{s['line']} {s['function']}() "
                         f"{s['callee']}({s['pointer']}) | {s['member'] or '(start)'} | {s['status']} |")
    lines += ["", "## Regions no checked site was found in", ""]
    for name, why in r["missed"].items():
        lines.append(f"- {name}{' (unused)' if name in r['unused'] else ''}: {why}")
    if data["regions_without_cache"]:
        lines += ["", "## Regions no cache carries", ""]
        for c in data["regions_without_cache"]:
            lines.append(f"- {c['name']} ({c['file']}): {c['region']} -- no proto_register(.., 1): no cache")
    lines += ["", "## Caches with a region", "",
              "| cache | region | inside | candidates | unsure | constant-size |", "|---|---|---|---|---|---|"]
    for c in data["caches"]:
        if c["region"] == "none":
            continue
        lines.append(f"| {c['name']} | {c['region']} | {len(c['inside'])} | {len(c['candidates'])} | "
                     f"{len(c['unsure'])} | {c['constant_size_sites']} |")
    return "\n".join(lines) + "\n"


def write(data: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "gaps.json").write_text(json.dumps(data, indent=1) + "\n")
    (out / "gaps.md").write_text(to_markdown(data))
