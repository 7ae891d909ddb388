"""The gap finder on committed excerpts (testdata/gaps/rds-6.1: each file
says where it comes from and what is expected of it): the RDS/TCP cookie
is a candidate, the RDS/IB one is inside its region until the mutation
takes the region back; the copy-function table; bad input.  The finder on
whole trees: test_gaps_trees.py (make gaps-test)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from usercopy_lab.gaps import scan, sites
from usercopy_lab.gaps.copyfuncs import COPY_FUNCTIONS, by_name
from usercopy_lab.gaps.model import AccessKind, Placement, RegionKind
from usercopy_lab.gaps.structs import parse_members
from usercopy_lab.gaps.tree import Tree

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "testdata" / "gaps" / "rds-6.1"
IB_MUTATION = ROOT / "lkdtm-tests" / "mutations" / "rds-ib-incoming-no-region.patch"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "usercopy_lab", "gaps", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.fixture(scope="module")
def fixture_scan():
    return scan.run(Tree(FIXTURE))


def _by_name(result, name):
    return next(r for r in result.results.values() if r.cache.name == name)


def test_caches_and_regions_of_the_excerpts(fixture_scan):
    names = {c.name: c for c in fixture_scan.caches}
    assert names["rds_tcp_incoming"].region.kind is RegionKind.NONE
    assert names["rds_tcp_incoming"].struct == "rds_tcp_incoming"
    ib = names["rds_ib_incoming"].region
    assert (ib.kind, ib.struct, ib.first, ib.last) == \
        (RegionKind.FIELDS, "rds_ib_incoming", "ii_inc.i_usercopy", "ii_inc.i_usercopy")
    assert names["kmalloc-*"].region.kind is RegionKind.WHOLE


def test_rds_cmsg_recv_site_resolves_to_the_embedded_member(fixture_scan):
    [site] = [s for s in fixture_scan.sites if s.function == "rds_cmsg_recv"]
    assert site.callee == "put_cmsg" and site.checked
    assert (site.access.kind, site.access.struct, site.access.path) == \
        (AccessKind.TYPED, "rds_incoming", "i_usercopy.rdma_cookie")


def test_tcp_cookie_is_a_candidate_ib_cookie_is_inside(fixture_scan):
    tcp = _by_name(fixture_scan, "rds_tcp_incoming")
    assert [(m.site.function, m.path, m.placement) for m in tcp.outside] == \
        [("rds_cmsg_recv", "ti_inc.i_usercopy.rdma_cookie", Placement.OUTSIDE)]
    ib = _by_name(fixture_scan, "rds_ib_incoming")
    assert [(m.site.function, m.path) for m in ib.inside] == \
        [("rds_cmsg_recv", "ii_inc.i_usercopy.rdma_cookie")]
    assert ib.outside == []


def test_ib_mutation_makes_rds_ib_incoming_a_candidate(tmp_path):
    done = _cli("--tree", str(FIXTURE), "--out", str(tmp_path), "--patch", str(IB_MUTATION),
                "--quiet")
    assert done.returncode == 1, done.stderr     # untriaged candidates: no triage file given
    data = json.loads((tmp_path / "gaps.json").read_text())
    cands = {c["name"]: [s["key"] for s in c["candidates"]] for c in data["caches"]}
    assert cands["rds_ib_incoming"] == ["rds_ib_incoming:rds_cmsg_recv:ii_inc.i_usercopy.rdma_cookie"]
    assert cands["rds_tcp_incoming"] == ["rds_tcp_incoming:rds_cmsg_recv:ti_inc.i_usercopy.rdma_cookie"]
    assert "recall 0 of 2 caches with a region" in (tmp_path / "gaps.md").read_text()
    # the fixture itself is untouched: the patch went to a copy
    assert "kmem_cache_create_usercopy" in (FIXTURE / "net/rds/ib_recv.c").read_text()


def test_gaps_json_and_md_carry_the_scans_cpu_time(tmp_path):
    # the finder's cost target is CPU (test_gaps_trees), which a busy host
    # does not inflate the way it does wall time; a scan this small may
    # take less than a clock tick, so only the field's shape is checked here
    _cli("--tree", str(FIXTURE), "--out", str(tmp_path), "--quiet")
    data = json.loads((tmp_path / "gaps.json").read_text())
    assert isinstance(data["cpu_seconds"], float) and data["cpu_seconds"] >= 0
    assert " s of CPU." in (tmp_path / "gaps.md").read_text()


def test_second_run_reuses_the_scan(tmp_path):
    assert _cli("--tree", str(FIXTURE), "--out", str(tmp_path)).returncode == 1
    again = _cli("--tree", str(FIXTURE), "--out", str(tmp_path))
    assert "unchanged since the last scan" in again.stderr


def test_copy_function_table():
    table = by_name()
    assert table["put_cmsg"].kptr == 4 and table["put_cmsg"].always
    assert table["copy_to_user"].kptr == 1 and not table["copy_to_user"].always
    assert table["copy_from_user"].kptr == 0
    assert {f.name for f in COPY_FUNCTIONS} >= {
        "copy_to_user", "__copy_to_user", "__copy_to_user_inatomic", "copy_from_user",
        "__copy_from_user", "__copy_from_user_inatomic", "put_cmsg", "copy_to_iter",
        "copy_from_iter", "simple_read_from_buffer"}


@pytest.mark.parametrize("size,constant", [
    ("sizeof(tv)", True), ("sizeof(struct foo) * 2", True), ("PATH_MAX", True), ("16", True),
    ("len", False), ("min(len, sizeof(x))", False), ("sizeof(*s) + n", False),
    ("CMSG_LEN(len)", False)])
def test_constant_sizes(size, constant):
    assert sites.is_constant(size) is constant


def test_members_anonymous_unions_and_attributes():
    members = parse_members("""
        struct { int a; struct rds_incoming inc; } __randomize_layout;
        union { char *p; u8 buf[16]; };
        struct sock *sk;
        unsigned long cpu_bitmap[];""")
    assert [(m.name, m.struct, m.pointer_to, m.array) for m in members] == [
        ("a", "", "", False), ("inc", "rds_incoming", "", False), ("p", "", "", False),
        ("buf", "", "", True), ("sk", "", "sock", False), ("cpu_bitmap", "", "", True)]


@pytest.mark.parametrize("args,message", [
    (["--tree", "/nonexistent"], "not a kernel source tree"),
    (["--tree", str(FIXTURE), "--patch", "/nonexistent.patch"], "/nonexistent.patch"),
    (["--tree", str(FIXTURE), "--patch", str(FIXTURE / "Makefile")], "not a patch"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, args, message):
    done = _cli(*args, "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_triage_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "triage.toml"
    bad.write_text('[[candidate]]\nkey = "x:y:z"\nstatus = "maybe"\n')
    done = _cli("--tree", str(FIXTURE), "--out", str(tmp_path / "out"), "--triage", str(bad))
    assert done.returncode == 2 and "status must be" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_patch_over_a_base_scan_gives_the_full_scans_answer(tmp_path):
    base, full, quick = tmp_path / "base", tmp_path / "full", tmp_path / "quick"
    _cli("--tree", str(FIXTURE), "--out", str(base), "--quiet")
    _cli("--tree", str(FIXTURE), "--out", str(full), "--patch", str(IB_MUTATION), "--quiet")
    done = _cli("--tree", str(FIXTURE), "--out", str(quick), "--patch", str(IB_MUTATION),
                "--base", str(base))
    assert "read again over the base scan" in done.stderr
    strip = lambda d: {k: v for k, v in json.loads((d / "gaps.json").read_text()).items()
                       if k not in ("seconds",)}
    assert strip(quick) == strip(full)


def test_output_piped_to_a_reader_that_leaves_early(tmp_path):
    """`... | head -1`: the reader closes the pipe before the finder
    writes; the finder ends quietly, with the scan's status."""
    read, write = os.pipe()
    os.close(read)                       # the reader is gone before the first line
    done = subprocess.run([sys.executable, "-m", "usercopy_lab", "gaps", "--tree", str(FIXTURE),
                           "--out", str(tmp_path), "--quiet"], stdout=write,
                          stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    os.close(write)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.stderr == ""
    assert done.returncode == 1          # untriaged candidates: no triage file given


# ------------------------------------------------ recall excerpts (recall-6.1)

RECALL = Path(__file__).parent / "testdata" / "gaps" / "recall-6.1"


@pytest.fixture(scope="module")
def recall_scan():
    return scan.run(Tree(RECALL))


def test_a_function_passing_its_parameter_to_a_copy_is_a_copy_function(recall_scan):
    """readlink_copy(buffer, buflen, link) ends in copy_to_user(buffer, link,
    len): its call in vfs_readlink() is a site, checked (len is strlen's)."""
    [f] = [f for f in recall_scan.derived if f.name == "readlink_copy"]
    assert (f.kptr, f.size, f.always) == (2, -1, True)
    [site] = [s for s in recall_scan.sites if s.function == "vfs_readlink"]
    assert site.callee == "readlink_copy" and site.via == "copy_to_user" and site.checked


def test_a_member_pointer_is_followed_to_what_the_tree_stores_there(recall_scan):
    """link = READ_ONCE(inode->i_link); ext2 stores (char*)EXT2_I(inode)->i_data
    there, so the copy is inside ext2_inode_cache's region."""
    ext2 = _by_name(recall_scan, "ext2_inode_cache")
    assert [(m.site.function, m.path, m.how) for m in ext2.inside] == [("vfs_readlink", "i_data", "type")]
    assert ext2.outside == []


def test_a_size_clamped_under_an_if_is_not_a_constant(recall_scan):
    """raw_geticmpfilter(): `if (len > sizeof(struct icmp_filter)) len = sizeof(..);`
    leaves len a variable: the copy is checked, inside RAW's filter."""
    [site] = [s for s in recall_scan.sites if s.function == "raw_geticmpfilter"]
    assert site.checked
    raw = _by_name(recall_scan, "RAW")
    assert {m.site.function for m in raw.inside} == {"raw_geticmpfilter", "raw_seticmpfilter"}


def test_constant_size_only_when_every_path_assigns_it():
    from usercopy_lab.gaps.csource import Source, functions
    code = ("int f(int len) {\n if (x)\n  len = sizeof(struct a);\n copy_to_user(u, p, len);\n}\n"
            "int g(int len) {\n len = sizeof(struct a);\n if (y) { copy_to_user(u, p, len); }\n}\n"
            "int h(int len) {\n if (x) { len = 4; }\n copy_to_user(u, p, len);\n}\n")
    src = Source.parse("x.c", code)
    got = {fn.name: sites._constant_before(src, fn, src.code.index("copy_to_user", fn.body), "len")
           for fn in functions(src)}
    assert got == {"f": False, "g": True, "h": False}


def _mini_tree(tmp_path: Path, files: dict[str, str]) -> Tree:
    (tmp_path / "Makefile").write_text("")
    (tmp_path / "mm").mkdir()
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return Tree(tmp_path)


def test_accessor_laying_a_struct_over_a_member_and_an_indirect_call(tmp_path):
    """`&SOCK_SKB_CB(skb)->dropcount` is in skb->cb (the region); a function
    stored as `.dma_rw` is called by `ops->dma_rw(...)` on that struct."""
    tree = _mini_tree(tmp_path, {
        "include/skb.h": "struct sk_buff { int len; char cb[48]; int tail; };\n"
                         "struct sock_skb_cb { u32 dropcount; };\n"
                         "#define SOCK_SKB_CB(__skb) ((struct sock_skb_cb *)((__skb)->cb + \\\n"
                         "\t\t\tSOCK_SKB_CB_OFFSET))\n"
                         "struct box { int a; char buf[64]; int b; };\n"
                         "struct rw_ops { int (*dma_rw)(void *d, void *data, size_t n); };\n"
                         "struct dev { const struct rw_ops *ops; };\n",
        "net/skb.c": "void skb_init(void) {\n"
                     " skbuff_head_cache = kmem_cache_create_usercopy(\"skbuff_head_cache\",\n"
                     "  sizeof(struct sk_buff), 0, 0, offsetof(struct sk_buff, cb),\n"
                     "  sizeof_field(struct sk_buff, cb), NULL);\n"
                     " box_cache = kmem_cache_create_usercopy(\"box\", sizeof(struct box), 0, 0,\n"
                     "  offsetof(struct box, buf), sizeof_field(struct box, buf), NULL);\n}\n"
                     "void drops(struct msghdr *msg, struct sk_buff *skb) {\n"
                     " put_cmsg(msg, SOL_SOCKET, SO_RXQ_OVFL, sizeof(__u32), &SOCK_SKB_CB(skb)->dropcount);\n}\n",
        "drivers/rw.c": "static int my_dma_rw(void *d, void *data, size_t n) {\n"
                        " return copy_to_user(d, data, n);\n}\n"
                        "static const struct rw_ops my_ops = {\n .dma_rw = my_dma_rw,\n};\n"
                        "int fill(struct dev *dev, struct box *b, size_t n) {\n"
                        " return dev->ops->dma_rw(NULL, b->buf, n);\n}\n"})
    result = scan.run(tree)
    skb = _by_name(result, "skbuff_head_cache")
    assert [(m.site.function, m.path) for m in skb.inside] == [("drops", "cb")]
    box = _by_name(result, "box")
    assert [(m.site.function, m.site.callee, m.path) for m in box.inside] == [("fill", "dma_rw", "buf")]


def test_a_constant_declaration_initializer_is_a_constant_size():
    """orangefs_devreq_write_iter(): `int downcall_size = sizeof(..);` and never
    assigned again: copy_from_iter_full(&op->downcall, downcall_size, ..) is
    never checked."""
    from usercopy_lab.gaps.csource import Source, functions
    code = ("int f(void) {\n int head = 1;\n int downcall_size = sizeof(struct d);\n"
            " copy_from_iter_full(&op->downcall, downcall_size, iter);\n}\n")
    src = Source.parse("x.c", code)
    [fn] = functions(src)
    assert sites._constant_before(src, fn, src.code.index("copy_from_iter"), "downcall_size")


def test_a_function_returning_its_parameter_plus_an_offset(tmp_path):
    """`dst = __raw_xsave_addr(xsave, i)` points into *xsave (the function
    returns `(void *)xsave + offset`); a region that runs to the end of the
    object holds it whatever the offset."""
    tree = _mini_tree(tmp_path, {
        "include/t.h": "struct xregs { int h; char area[512]; };\n"
                       "struct task { int a; struct xregs regs; };\n",
        "kernel/t.c": "void init(void) {\n task_cache = kmem_cache_create_usercopy(\"task\", sizeof(struct task),\n"
                      "  0, 0, offsetof(struct task, regs), sizeof(struct task) - offsetof(struct task, regs), NULL);\n}\n"
                      "static void *xaddr(struct xregs *x, int nr)\n{\n if (!nr)\n  return NULL;\n"
                      " return (void *)x + offsets[nr];\n}\n"
                      "int load(struct task *t, const void __user *u, int nr, size_t n)\n{\n"
                      " struct xregs *x = &t->regs;\n void *dst = xaddr(x, nr);\n"
                      " return copy_from_user(dst, u, n);\n}\n"})
    result = scan.run(tree)
    task = _by_name(result, "task")
    assert [(m.site.function, m.path) for m in task.inside] == [("load", "regs")]


def test_recall_sets_apart_regions_no_checked_copy_uses(tmp_path):
    """triage.toml's [[recall]] kind = "unused": the region is not a miss of
    the finder; gaps.md gives both ratios."""
    tri = tmp_path / "triage.toml"
    tri.write_text('[[recall]]\ncache = "kmalloc-rcl-*"\nwhy = "x"\nkind = "unused"\n')
    _cli("--tree", str(FIXTURE), "--out", str(tmp_path / "o"), "--patch", str(IB_MUTATION),
         "--triage", str(tri), "--quiet")
    r = json.loads((tmp_path / "o" / "gaps.json").read_text())["recall"]
    assert (r["n"], r["m"], r["m_used"], r["unused"]) == (0, 2, 1, ["kmalloc-rcl-*"])
    assert "0 of 1 (0.0 %) with the 1 regions no checked copy uses set apart" in \
        (tmp_path / "o" / "gaps.md").read_text()
    tri.write_text('[[recall]]\ncache = "x"\nwhy = "y"\nkind = "maybe"\n')
    done = _cli("--tree", str(FIXTURE), "--out", str(tmp_path / "o2"), "--triage", str(tri))
    assert done.returncode == 2 and "kind is missed or unused" in done.stderr


def test_struct_index_reuses_unchanged_files_results(tmp_path):
    """A full scan keeps the struct index's per-file results
    (index-cache.pickle); the next one reads only files whose size or mtime
    changed, and sees what changed."""
    import shutil
    from usercopy_lab.gaps.structs import Structs
    tree_dir = tmp_path / "tree"
    shutil.copytree(FIXTURE, tree_dir)
    cache: dict = {}
    Structs(Tree(tree_dir)).build_index(cache=cache)
    assert "net/rds/rds.h" in cache
    tcp = tree_dir / "net/rds/tcp.h"
    tcp.write_text(tcp.read_text() + "\nstruct lab_new { int x; };\n")
    read = []

    class Counting(Tree):
        def text(self, rel: str) -> str:
            read.append(rel)
            return super().text(rel)
    again = Structs(Counting(tree_dir))
    again.build_index(cache=cache)
    assert read == ["net/rds/tcp.h"] and "lab_new" in again.index
    out = tmp_path / "out"
    assert _cli("--tree", str(tree_dir), "--out", str(out), "--quiet").returncode == 1
    assert (out / "index-cache.pickle").is_file()


def test_a_region_of_expressions_is_compared_as_written(recall_scan):
    """LKDTM's lkdtm-usercopy: region cache_size / 4, cache_size / 16 (a
    static no function writes); do_usercopy_slab_whitelist() copies
    `buf + offset` / `size` with offset = (cache_size / 4) + unconst and
    unconst a static never written (0): inside; `buf + offset - 1`: outside."""
    lk = _by_name(recall_scan, "lkdtm-usercopy")
    assert (lk.cache.region.kind, lk.cache.region.useroffset, lk.cache.region.usersize) == \
        (RegionKind.OPAQUE, "cache_size / 4", "cache_size / 16")
    assert sorted((m.site.callee, m.site.pointer) for m in lk.inside) == \
        [("copy_from_user", "buf + offset"), ("copy_to_user", "buf + offset")]
    assert sorted((m.site.callee, m.site.pointer) for m in lk.outside) == \
        [("copy_from_user", "buf + offset - 1"), ("copy_to_user", "buf + offset - 1")]
    assert lk.unsure == []


ANYBUS = "drivers/staging/fieldbus/anybuss/host.c"


def test_offsetof_through_an_anonymous_union_member(recall_scan, tmp_path):
    """anybus-s' ab_task: area_pd is a member of an anonymous union; without
    a region both copies of area_pd.buf are candidates, with
    offsetof(struct ab_task, area_pd.buf), sizeof_field(struct ab_task,
    area_pd.buf) (the region a fix gives it) both are inside."""
    ab = _by_name(recall_scan, "<dev_name(dev)>")
    assert ab.cache.region.kind is RegionKind.NONE and ab.cache.struct == "ab_task"
    sites_of = {(m.site.function, m.path) for m in ab.outside}
    assert sites_of == {("anybuss_read_output", "area_pd.buf"), ("create_area_user_writer", "area_pd.buf")}
    import shutil
    tree_dir = tmp_path / "tree"
    shutil.copytree(RECALL, tree_dir)
    host = tree_dir / ANYBUS
    text = host.read_text()
    old = "kmem_cache_create(dev_name(dev),\n\t\t\t\t       sizeof(struct ab_task), 0, 0, NULL);"
    assert old in text
    host.write_text(text.replace(old, "kmem_cache_create_usercopy(dev_name(dev),\n"
                                 "\t\t\t\t       sizeof(struct ab_task), 0, 0,\n"
                                 "\t\t\t\t       offsetof(struct ab_task, area_pd.buf),\n"
                                 "\t\t\t\t       sizeof_field(struct ab_task, area_pd.buf), NULL);"))
    fixed = _by_name(scan.run(Tree(tree_dir)), "<dev_name(dev)>")
    r = fixed.cache.region
    assert (r.kind, r.struct, r.first, r.last) == (RegionKind.FIELDS, "ab_task", "area_pd.buf", "area_pd.buf")
    assert {(m.site.function, m.path) for m in fixed.inside} == sites_of
    assert fixed.outside == [] and fixed.unsure == []


@pytest.mark.parametrize("a,b,diff", [
    ("((cache_size / 4) + (0)) - 1", "cache_size / 4", -1),
    ("(cache_size) / 4 + 8", "cache_size/4", 8),
    ("(size_t)(sizeof(struct x) + 4)", "sizeof(struct x)", 4),
    ("P9_HDRSZ + 4", "4 + P9_HDRSZ", 0),
    ("a - (b - c)", "a - b + c", 0),
    ("cache_size / 4", "cache_size / 16", None),
    ("cache_size >> 2", "cache_size / 4", None),      # equal values, other expressions
    ("2 * n", "n + n", None)])
def test_linear_sums_compare_as_written(a, b, diff):
    from usercopy_lab.gaps.symbolic import linear
    assert linear(a).minus(linear(b)) == diff


def test_a_region_of_expressions_only_where_its_values_are_the_same(tmp_path):
    """Inside only with the region's own expressions: in the cache's file,
    from its statics no function writes, with the copy's locals written
    once before it; a region of a parameter (9p's clnt->msize), a local
    written twice (a static's name too), a module parameter's region or a
    copy in another file is unsure."""
    tree = _mini_tree(tmp_path, {
        "drivers/w.c": "static size_t cache_size = 1024;\nstatic size_t zero;\n"
                       "static struct kmem_cache *wc, *pc;\n"
                       "void init(struct client *clnt)\n{\n"
                       " wc = kmem_cache_create_usercopy(\"w\", cache_size, 0, 0, cache_size / 4 + zero,\n"
                       "  cache_size / 16, NULL);\n"
                       " pc = kmem_cache_create_usercopy(\"p\", clnt->msize, 0, 0, 8, clnt->msize - 8, NULL);\n}\n"
                       "void good(void __user *u, size_t n)\n{\n char *buf = kmem_cache_alloc(wc, GFP_KERNEL);\n"
                       " size_t off = cache_size / 4 + 8;\n"
                       " copy_to_user(u, buf + off, cache_size / 16 - 8);\n"
                       " copy_to_user(u, buf + cache_size / 4, cache_size / 16 + 1);\n"
                       " copy_to_user(u, buf, cache_size / 16);\n"
                       " copy_to_user(u, buf + cache_size / 4, n);\n}\n"
                       "void twice(void __user *u, int x)\n{\n u8 *buf = kmem_cache_alloc(wc, GFP_KERNEL);\n"
                       " size_t off = cache_size / 4;\n if (x)\n  off = 0;\n"
                       " copy_to_user(u, buf + off, cache_size / 16);\n}\n"
                       "void param(void __user *u, struct client *clnt)\n{\n"
                       " char *buf = kmem_cache_alloc(pc, GFP_KERNEL);\n"
                       " copy_to_user(u, buf + 8, clnt->msize - 8);\n}\n"
                       "void shadow(void __user *u, int x)\n{\n char *buf = kmem_cache_alloc(wc, GFP_KERNEL);\n"
                       " size_t zero = 4;\n if (x)\n  zero = 0;\n"
                       " copy_to_user(u, buf + cache_size / 4 + zero, cache_size / 16);\n}\n",
        "drivers/m.c": "static size_t msz;\nmodule_param(msz, ulong, 0644);\nstatic struct kmem_cache *mc;\n"
                       "void minit(void)\n{\n mc = kmem_cache_create_usercopy(\"m\", 1024, 0, 0, msz, 16, NULL);\n}\n",
        "drivers/other.c": "extern struct kmem_cache *wc;\n"
                           "void elsewhere(void __user *u)\n{\n char *buf = kmem_cache_alloc(wc, GFP_KERNEL);\n"
                           " copy_to_user(u, buf + cache_size / 4, cache_size / 16);\n}\n"})
    result = scan.run(tree)
    w = _by_name(result, "w")
    assert (w.cache.region.useroffset, w.cache.region.usersize) == ("cache_size / 4 + (0)", "cache_size / 16")
    placed = {(m.site.function, m.site.pointer, m.site.size, m.placement) for m in w.inside + w.outside + w.unsure}
    assert placed == {
        ("good", "buf + off", "cache_size / 16 - 8", Placement.INSIDE),
        ("good", "buf + cache_size / 4", "cache_size / 16 + 1", Placement.OUTSIDE),
        ("good", "buf", "cache_size / 16", Placement.OUTSIDE),
        ("good", "buf + cache_size / 4", "n", Placement.UNSURE),
        ("twice", "buf + off", "cache_size / 16", Placement.UNSURE),
        ("shadow", "buf + cache_size / 4 + zero", "cache_size / 16", Placement.UNSURE),
        ("elsewhere", "buf + cache_size / 4", "cache_size / 16", Placement.UNSURE)}
    p = _by_name(result, "p")
    assert p.cache.region.kind is RegionKind.OPAQUE and p.cache.region.useroffset == ""
    assert [m.placement for m in p.unsure] == [Placement.UNSURE] and p.inside == []
    m = _by_name(result, "m")       # a module parameter may change after the cache is made
    assert m.cache.region.kind is RegionKind.OPAQUE and m.cache.region.useroffset == ""
