"""A hunt's harvest: every guest's console read again (reports, findings,
coverage, calibration), and what it writes: hunt.json, hunt.md and the
triage table of the guests' consoles."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import Direction, ReportKind
from ..triage import command as triage
from .console import GuestConsole, read_guest
from .coverage import Coverage, ReachNote
from .findings import Class, Findings, Occurrence, load_rules
from .plan import FOREIGN


CALIBRATION = {"cache": "lkdtm-usercopy", "direction": Direction.EXPOSURE}


# ------------------------------------------------------------------ harvest
@dataclass
class Harvest:
    findings: Findings
    coverage: Coverage
    calibration: dict[str, Any]
    guests: list[dict[str, Any]]


def harvest(root: Path, runs: list[dict[str, Any]], rules_path: Path) -> Harvest:
    """Every guest console of a hunt through the parser: findings,
    coverage, calibration.  RUNS are guests.json's rows."""
    findings = Findings(load_rules(rules_path))
    coverage = Coverage()
    calibration: dict[str, Any] = {"ran": False}
    rows = []
    for row in runs:
        log = root / row["log"]
        if not log.is_file():
            rows.append({**row, "problem": "console missing"})
            continue
        console = read_guest(log)
        workload, seed = row["workload"], int(row["seed"])
        if console.table is not None:
            coverage.add_table(console.table)
        for rep in console.reports:
            findings.add_report(rep, console.table, row["id"], workload, seed)
        for r in console.repeats:
            findings.add_repeat(r.direction, r.object, r.cache, r.offset, r.size, console.table,
                                Occurrence(row["id"], str(log), r.line, workload, seed, "repeat"))
        hist = console.histogram
        if row["family"] == "calibration":
            calibration = _calibration(console)
        elif hist is not None and hist.complete:
            coverage.add_histogram(hist, workload, row["family"] in FOREIGN)
        else:
            why = console.coverage_note or "no histogram on the console (guest cut short?)"
            coverage.guests_without.append(f"{row['id']}: {why}")
        rows.append({**row, **_guest_summary(console, row)})
    findings.classify()
    return Harvest(findings, coverage, calibration, rows)


def _guest_summary(c: GuestConsole, row: dict[str, Any]) -> dict[str, Any]:
    return {"ended": c.ended, "workload_exit": c.workload_exit, "ran_seconds": c.ran_seconds,
            "stopped_early": stopped_early(c, row), "coverage": c.coverage_note,
            "reports": len(c.reports), "repeats": len(c.repeats),
            "alias_table": c.table is not None, "alias_table_problem": c.table_problem,
            "problems": c.problems, "output_tail": c.output[-8:]}


def stopped_early(c: GuestConsole, row: dict[str, Any]) -> str | None:
    """Why a workload did not fill its seconds (it failed or crashed in
    less than half of them: its guest's coverage is mostly boot), or None.
    A workload that exits 0 early has done its finite list (lab-probes,
    fs-probes); the calibration is one trigger and ends at once by design."""
    if row.get("family") == "calibration" or not c.ended:
        return None
    planned = int(row.get("seconds") or 0)
    if c.ran_seconds is None:
        return "no workload exit line"
    if planned and c.ran_seconds * 2 < planned and c.workload_exit != 0:
        return f"workload exited {c.workload_exit} after {c.ran_seconds} s of {planned} s"
    return None


def _calibration(c: GuestConsole) -> dict[str, Any]:
    """The known answer: the WARNING of lkdtm-usercopy's exposure harvested,
    and the probe's count of that cache's exposures (the good copy and the
    bad one: at least 2)."""
    warned = [r for r in c.reports if r.kind is ReportKind.USERCOPY_WARN
              and r.cache == CALIBRATION["cache"] and r.direction == CALIBRATION["direction"]]
    hits = None
    if c.histogram is not None:
        hits = sum(e.hits for e in c.histogram.entries
                   if e.cache == CALIBRATION["cache"] and e.direction == CALIBRATION["direction"])
    probe_ok = hits is None or hits >= 2
    ok = bool(warned) and (c.histogram is None or (c.histogram.complete and probe_ok))
    return {"ran": True, "ok": ok, "warning_harvested": bool(warned),
            "probe_hits": hits, "coverage": c.coverage_note,
            "what": "LKDTM USERCOPY_SLAB_WHITELIST_TO under the fallback: one WARNING of "
                    "'lkdtm-usercopy' (exposure) harvested, and >= 2 exposures of that "
                    "cache counted by the probe (the good copy and the bad one)"}


# ------------------------------------------------------------------- output
def write_outputs(root: Path, h: Harvest, notes: list[ReachNote], meta: dict[str, Any],
                  finder: dict[str, Any] | None = None) -> Path:
    """findings.json, findings.md and triage.txt; FINDER: the coverage
    against the gap finder's denominator (runner.finder_figure)."""
    hunt = root / "hunt"
    findings = h.findings.ordered()
    data = {
        **meta,
        "counts": {"unique_usercopy": len(findings),
                   **{c.value: sum(1 for f in findings if f.klass is c) for c in Class},
                   "other_oopses": len(h.findings.others)},
        "coverage": {**h.coverage.to_json(notes),
                     "finder": finder or {"measured": False, "summary": "not measured"}},
        "calibration": h.calibration,
        "findings": [f.to_json() for f in findings],
        "other_oopses": [o.to_json() for o in sorted(h.findings.others.values(),
                                                     key=lambda o: -len(o.occurrences))],
        "guests": h.guests,
    }
    text = json.dumps(data, indent=1).replace(f'"{root}/', '"')   # logs relative to the run
    (hunt / "findings.json").write_text(text + "\n")
    data = json.loads(text)
    (hunt / "findings.md").write_text(markdown(data))
    write_triage(hunt / "guests", hunt / "triage.txt")
    return hunt / "findings.json"


def write_triage(guests: Path, out: Path) -> None:
    """`usercopy-lab triage --syz-titles` over every console of the hunt,
    as anyone would run it on the logs: its table in triage.txt."""
    # every option triage has keeps its default: TriageOptions holds them
    with open(out, "w") as f:
        triage.report(triage.TriageOptions([guests], syz_titles=True), f, f)


def finder_markdown(f: dict[str, Any]) -> list[str]:
    """findings.md's part on the coverage against the finder's denominator."""
    out = ["### Against the finder's denominator", "", f.get("summary", "not measured"), ""]
    if not f.get("measured"):
        return out
    out += [f"M: {f['rule']} ({f['gaps_json']}: {f['finder_tree']}; "
            f"{f['compiled_files']} files of {f['compiled_objects']} objects in "
            f"{f['kbuild_dir']}).", ""]
    if f["left"]:
        out += [f"Left ({len(f['left'])} pairs of M never exercised), with the finder's "
                "sites and the coverage note:", ""]
        for p in f["left"]:
            out.append(f"- {p['cache']} {p['direction']}: sites {'; '.join(p['sites'])}"
                       + (f"; note: {p['note']}" if p["note"] else "; no note yet"))
        out.append("")
    if f["outside"]:
        out += [f"Exercised outside M ({len(f['outside'])}: copies the finder does not "
                "show; never counted in N): "
                + ", ".join(f"{p['cache']} {p['direction']}" for p in f["outside"]), ""]
    reasons: dict[str, int] = {}
    for p in f["not_in_m"]:
        reasons[p["why"]] = reasons.get(p["why"], 0) + 1
    out += ["Pairs of the booted kernel not in M: "
            + "; ".join(f"{n} {why}" for why, n in sorted(reasons.items())) + " "
            "(each with the finder's reason in findings.json, coverage.finder.not_in_m).", ""]
    return out


def markdown(d: dict[str, Any]) -> str:
    cov = d["coverage"]
    out = [f"# Hunt {d.get('run_id', '')}", "",
           f"Kernel `{d.get('kernel', '')}`, {len(d['guests'])} guests, "
           f"{d.get('minutes', '?')} min at -j{d.get('jobs', '?')}, run seed "
           f"{d.get('run_seed', '?')}; guest time {d.get('guest_seconds', 0):.0f} s.", "",
           "## Findings (usercopy reports, deduplicated)", ""]
    if not d["findings"]:
        out.append("No usercopy report in any guest.")
    else:
        out += ["| id | class | cache (group) | dir | offset | size | guilty frame | count | "
                "first | workload, seed |", "|---|---|---|---|---|---|---|---|---|---|"]
        for f in d["findings"]:
            group = f["cache"] + ("" if f["cache_group"] == [f["cache"]]
                                  else f" ({', '.join(f['cache_group'])})")
            out.append(f"| {f['id']} | {f['class']} | {group} | {f['direction']} | "
                       f"{f['offset']} | {f['size']} | {f['guilty_frame']} | {f['count']} | "
                       f"{f['first']['log']}:{f['first']['line']} | "
                       f"{f['first']['workload']}, {f['first']['seed']} |")
        out.append("")
        for f in d["findings"]:
            parts = [f["why"] or f"Untriaged; suggestion: {f['suggestion']}"]
            parts += [f"{k.capitalize()}: {f[k]}" for k in ("fix", "probe", "regression") if f[k]]
            parts.append(f"Region: {f['region']}")
            out.append(f"- **{f['id']}** ({f['class']}): "
                       + " ".join(p.rstrip(".") + "." for p in parts))
    out += ["", "## Other oopses (not usercopy)", ""]
    if not d["other_oopses"]:
        out.append("None.")
    for o in d["other_oopses"]:
        out.append(f"- {o['title']} ({o['kind']}): {o['count']}x, first "
                   f"{o['first']['log']}:{o['first']['line']} "
                   f"({o['first']['workload']}, seed {o['first']['seed']})")
    out += ["", "## Coverage", ""] + finder_markdown(cov.get("finder") or {})
    out += ["### Against every cache with a region of the booted kernel (the old "
            "denominator)", "", cov["summary"], "",
            "Workloads written elsewhere: trinity, stress-ng, the tree's selftests; "
            "this lab's own fillers (family lab-probes) are marked where a pair was "
            "reached by them alone.", ""]
    if cov["measured"]:
        out += ["| cache | region | exposure | overwrite |", "|---|---|---|---|"]
        for c in cov["caches"]:
            cells = []
            for dname in ("exposure", "overwrite"):
                s = c[dname]
                cells.append("-" if s is None else f"{s['hits']} ({', '.join(s['workloads'])})"
                             + ("" if s["foreign"] else " **lab filler only**"))
            out.append(f"| {c['name']} | {c['useroffset']}+{c['usersize']}/{c['object_size']} "
                       f"| {cells[0]} | {cells[1]} |")
        pw = cov.get("pairs_with_a_path")
        if pw:
            out += ["", f"Against the pairs some path of this kernel reaches (the "
                    f"denominator less {len(pw['pathless'])} pairs a coverage note argues "
                    f"unreachable): {pw['exercised']} of {pw['total']} = {pw['percent']} %."]
            if pw["notes_contradicted"]:
                out.append("Notes contradicted by this hunt (argued unreachable, yet "
                           "exercised; correct them): " + ", ".join(pw["notes_contradicted"]))
        out += ["", "Never exercised:", ""]
        for u in cov["unexercised"]:
            tag = "" if u.get("reachable", True) is not False else " (no path: argued)"
            out.append(f"- {u['cache']} {u['direction']}{tag}: {u['reach'] or 'no note yet'}")
    out += ["", "## Guests", ""]
    troubled = [g for g in d["guests"] if not g.get("ended") or g.get("stopped_early")
                or not g.get("alias_table") or g.get("problems")]
    out.append(f"{len(d['guests']) - len(troubled)} of {len(d['guests'])} guests ran their "
               f"workload to its end and printed their tables" + (":" if not troubled else
                                                                  "; the others:"))
    for g in troubled:
        why = [w for w in (None if g.get("ended") else "no END marker", g.get("stopped_early"),
                           None if g.get("alias_table") else "no alias table") if w]
        why += g.get("problems") or []
        out.append(f"- {g['id']} ({g['workload']}, seed {g['seed']}): {'; '.join(why)} "
                   f"({g['log']})")
    out += ["", "## Calibration", "", json.dumps(d["calibration"]), ""]
    return "\n".join(out) + "\n"
