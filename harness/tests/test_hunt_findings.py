"""make hunt's findings: dedup through the alias table, classes from the
classifications file and from the fallback's own semantics.

The reports are parsed from real consoles: the fallback suite's
USERCOPY_WHITELIST_TWO_CACHES_TO (RAW and dentry WARNINGs in one boot) and
the RDS/TCP mutant's fallback console, whose report names 'xfs_icr', the
cache SLUB merged the region-less rds_tcp_incoming into; the alias table is
the seeds audit console (testdata/console-series/seeds/audit-slab-caches.log).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from usercopy_lab.hunt.findings import Class, Findings, FindingsError, Occurrence, load_rules
from usercopy_lab.reports.log_reader import split_lines
from usercopy_lab.reports.oops_parser import iter_reports
from usercopy_lab.audit.slab_audit import SlabCache, SlabTable, parse_console

DATA = Path(__file__).resolve().parent / "testdata"
TWO = DATA / "console-series" / "fallback" / "USERCOPY_WHITELIST_TWO_CACHES_TO.log"
RDS = DATA / "rds" / "mutant-rds-no-region" / "seeds-fallback" / "rds-tcp-cookie.log"
AUDIT = DATA / "console-series" / "seeds" / "audit-slab-caches.log"


def reports(path: Path):
    return list(iter_reports(split_lines(path.read_bytes()), str(path)))


def table() -> SlabTable:
    return parse_console(split_lines(AUDIT.read_bytes()))


def test_the_same_copy_in_two_guests_is_one_finding_counted_twice():
    f = Findings()
    for guest in ("g001-a", "g002-b"):
        for rep in reports(TWO):
            f.add_report(rep, table(), guest, "stress-net", 7)
    f.classify()
    assert len(f.findings) == 2       # RAW and dentry
    for finding in f.findings.values():
        assert [o.guest for o in finding.occurrences] == ["g001-a", "g002-b"]
        assert finding.klass is Class.NOT_WHITELIST     # LKDTM's frames
        assert "LKDTM" in finding.why


def test_a_merged_cache_is_keyed_by_its_whole_group():
    t = table()
    group = t.merged_names("xfs_icr")
    assert len(group) > 1 and "xfs_icr" in group
    [rep] = [r for r in reports(RDS) if r.kind == "usercopy_warn"]
    f = Findings()
    f.add_report(rep, t, "g001", "lab-probes", 1)
    [(key, finding)] = f.findings.items()
    assert key.group == group
    assert finding.reported_cache == "xfs_icr"
    assert finding.region.startswith("no region")
    f.classify()          # not LKDTM, not a BUG: a person has to look at it
    assert finding.klass is Class.UNTRIAGED
    assert "no region" in finding.suggestion


def test_a_rule_matches_any_name_of_the_group(tmp_path):
    rules = tmp_path / "c.toml"
    rules.write_text('[[finding]]\ncache = "ip6-frags"\ndirection = "exposure"\n'
                     'frame = "put_cmsg"\nclass = "missing whitelist"\n'
                     'why = "rds_tcp_incoming has no region"\nfix = "patches/x"\n')
    t = table()
    if "ip6-frags" not in t.merged_names("xfs_icr"):
        pytest.skip("this build did not merge ip6-frags with xfs_icr")
    [rep] = [r for r in reports(RDS) if r.kind == "usercopy_warn"]
    f = Findings(load_rules(rules))
    f.add_report(rep, t, "g001", "lab-probes", 1)
    f.classify()
    [finding] = f.findings.values()
    assert finding.klass is Class.MISSING and finding.fix == "patches/x"
    assert finding.rule == "c.toml#1"


def test_repeat_lines_join_the_finding_of_the_same_copy_or_stand_alone():
    t = SlabTable({"x": SlabCache("x", 64, 64, 0, 0, 0, (), "x")})
    [rep] = [r for r in reports(TWO) if r.cache == "RAW"][:1]
    f = Findings()
    f.add_report(rep, t, "g1", "w", 1)
    occ = Occurrence("g1", "log", 9, "w", 1, "repeat")
    f.add_repeat(rep.direction, "SLUB object", "RAW", rep.offset, rep.size, t, occ)
    f.add_repeat("overwrite", "SLUB object", "x", 3, 4, t, occ)
    f.classify()
    assert len(f.findings) == 2
    counts = sorted(len(x.occurrences) for x in f.findings.values())
    assert counts == [1, 2]
    alone = next(x for x in f.findings.values() if x.key.frame is None)
    assert alone.klass is Class.UNTRIAGED and alone.region.startswith("no region")


def test_other_oopses_are_kept_apart_by_signature():
    warning = DATA / "console" / "WARNING.log"
    f = Findings()
    for rep in reports(warning):
        f.add_report(rep, None, "g1", "trinity", 3)
    assert not f.findings and len(f.others) == 1
    [other] = f.others.values()
    assert other.title and other.to_json()["first"]["workload"] == "trinity"


@pytest.mark.parametrize("text,problem", [
    ('[[finding]]\nclass = "untriaged"\nwhy = "x"\n', "what is left"),
    ('[[finding]]\nclass = "missing whitelist"\n', "reasoning"),
    ('[[finding]]\nclass = "bad"\nwhy = "x"\n', "class must be"),
    ('[[finding]]\nclass = "missing whitelist"\nwhy = "x"\ncolour = 1\n', "unknown key"),
    ("[[finding]\n", "c.toml"),
])
def test_a_bad_classifications_file_is_one_line(tmp_path, text, problem):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(FindingsError, match=problem):
        load_rules(path)


def test_the_committed_classifications_file_loads():
    repo = Path(__file__).resolve().parents[2]
    load_rules(repo / "expected-oops" / "hunt" / "classifications.toml")
