"""The whitelist audit: the guest's slab table, judged against a golden file.

The consoles here are written in the format of initramfs-src/
audit-slab-caches.c; test_suite_consoles.py judges the real one captured
from the seeds kernel.
"""
import json
from pathlib import Path

import pytest

from usercopy_lab.judge.golden import Golden
from usercopy_lab.run.run_loop import plan
from usercopy_lab.audit.slab_audit import PROGRAM, AuditError, SlabTable, judge, parse_console
from usercopy_lab.run.suite import SuiteError, load_inputs, load_suites
from usercopy_lab.run.trigger_run import evaluate_check_log
from usercopy_lab.audit.whitelist_spec import DwarfTable, load_spec

SPEC = """
[[cache]]
name = "RAW"
seed = "007"
source = "net/ipv4/raw.c"
useroffset = "offsetof(struct raw_sock, filter)"
usersize = "sizeof_field(struct raw_sock, filter)"
object_size = "sizeof(struct raw_sock)"

[[cache]]
name = "PF_CAIF"
seed = "007"
state = "absent"

[[cache]]
name = "xfs_inode"
seed = "009"
state = "none"
source = "fs/xfs/xfs_super.c"
gone = ["offsetof(struct xfs_inode, i_df.if_u2.if_inline_data)"]

[[cache]]
name = "kmalloc-*"
useroffset = "0"
usersize = "object_size"
"""

DWARF = {"RAW": {"offsetof(struct raw_sock, filter)": 976,
                 "sizeof_field(struct raw_sock, filter)": 4,
                 "sizeof(struct raw_sock)": 984},
         "xfs_inode": {"offsetof(struct xfs_inode, i_df.if_u2.if_inline_data)":
                       "fs/xfs/xfs_super.c: struct xfs_inode has no member "
                       "'i_df.if_u2.if_inline_data' ('if_u2' not found)"}}

ROWS = [
    "cache RAW object_size=984 size=1024 useroffset=976 usersize=4 aliases=0",
    "cache kmalloc-64 object_size=64 size=64 useroffset=0 usersize=64 aliases=0",
    "cache xfs_inode object_size=960 size=960 useroffset=0 usersize=0 aliases=0",
    "cache :0000192 object_size=192 size=192 useroffset=0 usersize=0 aliases=2",
    "alias ip6-frags -> :0000192",
    "alias rds_tcp_incoming -> :0000192",
    "named RAW object_size=984",
    "named kmalloc-64 object_size=64",
    "named xfs_inode object_size=960",
    "named ip6-frags object_size=192",
]


def console(rows=ROWS, end=None):
    caches = sum(r.startswith("cache ") for r in rows)
    aliases = sum(r.startswith("alias ") for r in rows)
    named = sum(r.startswith("named ") for r in rows)
    end = end or f"end caches={caches} aliases={aliases} named={named}"
    lines = ["[    1.234] random: crng init done"]
    lines += [f"usercopy-lab-slab: {r}" for r in rows + [end]]
    return lines


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "slab-audit.toml"
    path.write_text(SPEC)
    return load_spec(path)


def audit(spec, rows=ROWS, dwarf=DWARF):
    return judge(parse_console(console(rows)), spec, DwarfTable("vmlinux", "", dwarf))


def problems(rows):
    return [p for r in rows for p in r.problems]


def test_table_parses_merged_caches_and_names_the_reported_one():
    table = parse_console(console())
    merged = table.lookup("rds_tcp_incoming")
    assert merged.sysfs == ":0000192" and merged.reported == "ip6-frags"
    assert table.merged_names("ip6-frags") == ("ip6-frags", "rds_tcp_incoming")
    assert table.merged_names("rds_tcp_incoming") == ("ip6-frags", "rds_tcp_incoming")
    assert table.merged_names("RAW") == ("RAW",)
    assert table.merged_names("nope") == ()
    assert table.groups() == {"ip6-frags": ["ip6-frags", "rds_tcp_incoming"]}


def test_alias_table_round_trips_through_the_results_json(tmp_path):
    table = parse_console(console())
    path = tmp_path / "slab-audit.json"
    path.write_text(json.dumps({"table": table.to_json()}))
    again = SlabTable.load(path)
    assert again.merged_names("ip6-frags") == ("ip6-frags", "rds_tcp_incoming")
    assert again.lookup("RAW") == table.lookup("RAW")


@pytest.mark.parametrize("lines,message", [
    (console(end="end caches=5 aliases=2 named=4"), "lists 4 caches.*guest counted 5"),
    (console()[:-1], "no end line"),
    (console(ROWS + ["cache broken line"]), "unreadable audit line"),
    (console(ROWS + ["alias x -> :nowhere"]), "points to :nowhere"),
])
def test_an_incomplete_table_is_an_error(lines, message):
    with pytest.raises(AuditError, match=message):
        parse_console(lines)


def test_the_expected_state_passes(spec):
    rows = audit(spec)
    assert problems(rows) == []
    by_name = {r.name: r for r in rows}
    assert by_name["RAW"].expected == "useroffset 976 usersize 4, object_size 984"
    assert by_name["PF_CAIF"].seen == "absent"
    assert by_name["kmalloc-64"].seen.startswith("useroffset 0 usersize 64")


@pytest.mark.parametrize("change,message", [
    # a region that differs from the source
    (("cache RAW", "cache RAW object_size=984 size=1024 useroffset=972 usersize=8 aliases=0"),
     "RAW: region useroffset 972 usersize 8, the source declares useroffset 976 usersize 4"),
    # a seed cache without its region
    (("cache RAW", "cache RAW object_size=984 size=1024 useroffset=0 usersize=0 aliases=0"),
     "RAW: region no region, the source declares"),
    # a family member with a partial region
    (("cache kmalloc-64", "cache kmalloc-64 object_size=64 size=64 useroffset=0 usersize=32 aliases=0"),
     "kmalloc-64: region useroffset 0 usersize 32"),
    # a cache that should not have a region
    (("cache xfs_inode", "cache xfs_inode object_size=960 size=960 useroffset=8 usersize=16 aliases=0"),
     "xfs_inode has a region"),
    # the object is not the struct the source names
    (("cache RAW", "cache RAW object_size=992 size=1024 useroffset=976 usersize=4 aliases=0"),
     "RAW: object_size 992, the source says 984"),
])
def test_a_wrong_region_fails_naming_the_cache(spec, change, message):
    rows = [change[1] if r.startswith(change[0] + " ") else r for r in ROWS]
    found = problems(audit(spec, rows))
    assert any(message in p for p in found), found


def test_a_missing_or_merged_seed_cache_fails(spec):
    rows = [r for r in ROWS if "RAW" not in r]
    assert "RAW missing from /sys/kernel/slab" in problems(audit(spec, rows))
    rows.append("alias RAW -> :0000192")
    assert "RAW is merged into :0000192 (ip6-frags)" in problems(audit(spec, rows))


def test_a_cache_that_must_not_exist_fails(spec):
    rows = ROWS + ["cache PF_CAIF object_size=1000 size=1024 useroffset=8 usersize=4 aliases=0"]
    assert "PF_CAIF exists, the golden says it must not" in problems(audit(spec, rows))


def test_an_unlisted_region_and_a_merge_into_a_region_cache_fail(spec):
    rows = ROWS + ["cache ext4_inode_cache object_size=1000 size=1024 useroffset=8 "
                   "usersize=4 aliases=0",
                   "alias ext4_foo -> ext4_inode_cache"]
    found = problems(audit(spec, rows))
    assert "ext4_inode_cache has a region (useroffset 8 usersize 4) that slab-audit.toml " \
           "does not list" in found
    assert "ext4_foo is merged into ext4_inode_cache, which has a region" in found
    merged_raw = ROWS + ["alias foo -> RAW"]
    assert "RAW has a region but foo is merged into it" in problems(audit(spec, merged_raw))


def test_a_seed_field_that_came_back_fails(spec):
    dwarf = dict(DWARF, xfs_inode={
        "offsetof(struct xfs_inode, i_df.if_u2.if_inline_data)": 296})
    assert "offsetof(struct xfs_inode, i_df.if_u2.if_inline_data) still resolves in this " \
           "build" in problems(audit(spec, dwarf=dwarf))


def test_a_field_the_dwarf_lacks_fails(spec):
    dwarf = dict(DWARF, RAW={"offsetof(struct raw_sock, filter)": "no member 'filter'"})
    found = problems(audit(spec, dwarf=dwarf))
    assert any(p.startswith("cannot compute 'offsetof(struct raw_sock, filter)'")
               for p in found), found


def test_the_check_verdict_judges_the_table_and_writes_it_into_the_results(tmp_path):
    pytest.importorskip("elftools")
    elf = Path(__file__).parent / "testdata" / "dwarf" / "layouts.elf"
    kernel = tmp_path / "kernel-x"
    (kernel / "arch/x86/boot").mkdir(parents=True)
    (kernel / "arch/x86/boot/bzImage").write_bytes(b"")
    (kernel / "vmlinux").write_bytes(elf.read_bytes())
    spec = tmp_path / "slab-audit.toml"
    spec.write_text('[[cache]]\nname = "sock_like"\nsource = "layouts.c"\n'
                    'useroffset = "offsetof(struct sock_like, conn_req.param)"\n'
                    'usersize = "sizeof_field(struct sock_like, conn_req.param)"\n')
    rows = ["cache sock_like object_size=328 size=384 useroffset=28 usersize=258 aliases=0",
            "named sock_like object_size=328"]
    log = tmp_path / "results" / "seeds" / f"{PROGRAM}.log"
    log.parent.mkdir(parents=True)

    def run(rows):
        log.write_text("\n".join(["USERCOPY-LAB-READY", f"USERCOPY-LAB-START trigger={PROGRAM}"]
                                 + console(rows)
                                 + ["usercopy-lab-check: PASS: listed",
                                    f"USERCOPY-LAB-END trigger={PROGRAM} outcome=returned "
                                    "status=0"]) + "\n")
        return evaluate_check_log("seeds", PROGRAM, log, None, 1.0,
                                  Golden(spec, PROGRAM, "returned"),
                                  kernel / "arch/x86/boot/bzImage")

    result = run(rows)
    assert (result.verdict, result.diffs) == ("PASS", [])
    assert (kernel / "whitelist-values.json").is_file()
    written = json.loads((log.parent / "slab-audit.json").read_text())
    assert written["rows"][0]["name"] == "sock_like" and written["rows"][0]["ok"]
    assert "sock_like" in (log.parent / "slab-audit.txt").read_text()

    rows[0] = rows[0].replace("usersize=258", "usersize=256")
    result = run(rows)
    assert result.verdict == "FAIL"
    assert result.diffs == ["audit: sock_like: region useroffset 28 usersize 256, the "
                            "source declares useroffset 28 usersize 258"]

    (kernel / "vmlinux").unlink()
    result = run(rows)
    assert result.verdict == "ERROR" and "vmlinux not found" in result.summary


# -- the real audit console of the seeds kernel ------------------------------

REPO = Path(__file__).resolve().parents[2]
REAL = Path(__file__).parent / "testdata"
REAL_LOG = REAL / "console-series" / "seeds" / f"{PROGRAM}.log"


def real_audit(lines=None, dwarf=REAL / "seeds-audit" / "whitelist-dwarf.json"):
    spec = load_spec(REPO / "expected-oops/seeds/slab-audit.toml")
    values = json.loads(dwarf.read_text())["values"]
    lines = lines if lines is not None else REAL_LOG.read_text().splitlines()
    return judge(parse_console(lines), spec, DwarfTable("vmlinux", "", values))


def test_real_seeds_console_passes_and_covers_every_seed_cache():
    rows = real_audit()
    assert problems(rows) == []
    seeds = {r.name: r for r in rows if r.seed}
    assert set(seeds) == {r.name for r in load_spec(
        REPO / "expected-oops/seeds/slab-audit.toml").rules if r.seed}
    assert seeds["PF_CAIF"].seen == "absent"
    assert seeds["thread_stack"].seen == "absent"
    assert seeds["xfs_inode"].seen.startswith("no region")
    assert seeds["rds_ib_incoming"].seen.startswith("useroffset 144 usersize 16")


def test_real_seeds_console_has_rds_tcp_incoming_apart_with_its_region():
    # patches/0010 gives rds_tcp_incoming a region, so SLUB no longer folds
    # it into the region-less 184-byte cache (which holds ip6-frags and
    # xfs_icr); without 0010 it was merged there (make mutation-rds).
    table = parse_console(REAL_LOG.read_text().splitlines())
    cache = table.lookup("rds_tcp_incoming")
    assert (cache.sysfs, cache.useroffset, cache.usersize) == ("rds_tcp_incoming", 112, 16)
    assert table.merged_names("ip6-frags") == ("ip6-frags", "xfs_icr")
    rows = {r.name: r for r in real_audit()}
    assert rows["rds_tcp_incoming"].seen.startswith("useroffset 112 usersize 16")


@pytest.mark.parametrize("old,new,message", [
    ("cache mm_struct object_size=880 size=896 useroffset=304 usersize=368",
     "cache mm_struct object_size=880 size=896 useroffset=296 usersize=368",
     "mm_struct: region useroffset 296 usersize 368, the source declares useroffset 304 "
     "usersize 368"),
    ("cache rds_ib_incoming object_size=192 size=192 useroffset=144 usersize=16",
     "cache rds_ib_incoming object_size=192 size=192 useroffset=0 usersize=0",
     "rds_ib_incoming: region no region, the source declares useroffset 144 usersize 16"),
    ("cache rds_tcp_incoming object_size=184 size=184 useroffset=112 usersize=16",
     "cache rds_tcp_incoming object_size=184 size=184 useroffset=0 usersize=0",
     "rds_tcp_incoming: region no region, the source declares useroffset 112 usersize 16"),
    ("alias ip6-frags -> :0000184", "alias ip6-frags -> rds_ib_incoming",
     "rds_ib_incoming has a region but ip6-frags is merged into it"),
])
def test_real_seeds_console_edited_fails_naming_the_cache(old, new, message):
    text = REAL_LOG.read_text()
    assert old in text
    found = problems(real_audit(text.replace(old, new).splitlines()))
    assert message in found, found


# -- the audit in suites.toml and the run loop's plan --------------------------

AUDIT_SUITE = """[seeds]
kernel = "seeds"
golden = "{golden}"
triggers = "{triggers}"
only = ["USERCOPY_KERNEL"]
checks = {checks}
slab_audit = "{spec}"
"""


def audit_suites(tmp_path, spec_text, checks='["audit-slab-caches"]'):
    """A suites.toml with one audit suite; its check programs are the repo's."""
    (tmp_path / "initramfs-src").mkdir(exist_ok=True)
    for name in ("audit-slab-caches", "check-xfs-inline"):
        link = tmp_path / "initramfs-src" / f"{name}.c"
        if not link.exists():
            link.symlink_to(REPO / "initramfs-src" / f"{name}.c")
    spec = tmp_path / "slab-audit.toml"
    spec.write_text(spec_text)
    path = tmp_path / "suites.toml"
    path.write_text(AUDIT_SUITE.format(golden=REPO / "expected-oops/lab",
                                       triggers=REPO / "lkdtm-tests/tests.txt",
                                       checks=checks, spec=spec))
    return load_suites(path)


def test_a_broken_audit_golden_stops_suites_toml_loading(tmp_path):
    """Before any boot, with suites.toml's line and the golden's row."""
    with pytest.raises(SuiteError, match=r"suites.toml:7: suite \[seeds\] slab_audit: "
                                         r".*slab-audit.toml: \[\[cache\]\] #\d+ \(RAW\): "
                                         r"listed twice"):
        audit_suites(tmp_path, SPEC + '\n[[cache]]\nname = "RAW"\nstate = "none"\n')


def test_slab_audit_needs_the_audit_check(tmp_path):
    with pytest.raises(SuiteError, match=r"suites.toml:1: suite \[seeds\] has slab_audit "
                                         r"but does not list audit-slab-caches in checks"):
        audit_suites(tmp_path, SPEC, checks='["check-xfs-inline"]')


def test_plan_gives_the_audit_its_golden_and_its_dwarf_before_any_boot(tmp_path):
    pytest.importorskip("elftools")
    spec = ('[[cache]]\nname = "sock_like"\nsource = "layouts.c"\n'
            'useroffset = "offsetof(struct sock_like, conn_req.param)"\n'
            'usersize = "sizeof_field(struct sock_like, conn_req.param)"\n')
    suites = audit_suites(tmp_path, spec)
    build = tmp_path / "build"
    image = build / "kernel-seeds" / "arch/x86/boot/bzImage"
    image.parent.mkdir(parents=True)
    image.write_bytes(b"")
    inputs = load_inputs(suites)
    # no vmlinux: refused while planning, naming it (the CLI exits 2)
    with pytest.raises(SuiteError, match=r"suite \[seeds\] slab_audit: .*vmlinux not found"):
        plan(list(suites.values()), inputs, None, build, tmp_path / "initramfs.cpio", "tcg")
    elf = Path(__file__).parent / "testdata" / "dwarf" / "layouts.elf"
    (build / "kernel-seeds" / "vmlinux").write_bytes(elf.read_bytes())
    jobs = plan(list(suites.values()), inputs, None, build, tmp_path / "initramfs.cpio", "tcg")
    [audit] = [j for j in jobs if j.spec.helper == PROGRAM]
    assert audit.golden is not None and audit.golden.path == tmp_path / "slab-audit.toml"
    cache = json.loads((build / "kernel-seeds" / "whitelist-values.json").read_text())
    assert cache["values"]["sock_like"] == {
        "offsetof(struct sock_like, conn_req.param)": 28,
        "sizeof_field(struct sock_like, conn_req.param)": 258}
    # --trigger drops the checks, and with them the DWARF work
    (build / "kernel-seeds" / "vmlinux").unlink()
    assert [j.spec.trigger for j in plan(list(suites.values()), inputs, ["USERCOPY_KERNEL"],
                                         build, tmp_path / "initramfs.cpio", "tcg")] \
        == ["USERCOPY_KERNEL"]


def test_a_printk_record_inside_an_audit_line_does_not_break_the_table():
    # A real console (testdata/interleaved/README.md): the clocksource
    # watchdog's record ends the line "usercopy-lab-slab: named
    # usersized-kmalloc-32 object_size=32", whose newline follows alone.
    lines = (REAL / "interleaved" / f"{PROGRAM}.log").read_text().splitlines()
    glued = [line for line in lines if "object_size=32[" in line]
    assert len(glued) == 1 and "clocksource: Long readout interval" in glued[0]
    table = parse_console(lines)
    assert table.lookup("usersized-kmalloc-32").object_size == 32
    # judged with the DWARF values of the kernel that printed it
    assert problems(real_audit(lines, REAL / "interleaved" / "whitelist-dwarf.json")) == []
