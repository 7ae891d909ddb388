"""The audit golden file's format, its C expressions and the values cache."""
import json
from pathlib import Path

import pytest

from usercopy_lab.audit.whitelist_spec import (SpecError, State, Term, compute, load_or_compute,
                                               load_spec, parse_expr)

REPO = Path(__file__).resolve().parents[2]
ELF = Path(__file__).parent / "testdata" / "dwarf" / "layouts.elf"


def test_expressions_mirror_the_kernel_source():
    e = parse_expr("offsetof(struct sctp_sock, initmsg) - offsetof(struct sctp_sock, subscribe)"
                   " + sizeof_field(struct sctp_sock, initmsg)")
    assert [str(t) for t in e.terms()] == [
        "offsetof(struct sctp_sock, initmsg)", "offsetof(struct sctp_sock, subscribe)",
        "sizeof_field(struct sctp_sock, initmsg)"]
    values = {"offsetof(struct sctp_sock, initmsg)": 1232,
              "offsetof(struct sctp_sock, subscribe)": 1228,
              "sizeof_field(struct sctp_sock, initmsg)": 8}
    assert e.evaluate(values, None) == 12
    assert parse_expr("object_size / 4").evaluate({}, 1024) == 256
    assert parse_expr("2 * (object_size - 8)").evaluate({}, 24) == 32
    nested = parse_expr("offsetof(struct task_struct, thread.fpu.__fpstate.regs)")
    assert nested.terms() == [Term("offsetof", "task_struct", "thread.fpu.__fpstate.regs")]
    assert parse_expr("sizeof(struct rds_inc_usercopy)").terms() == [
        Term("sizeof", "rds_inc_usercopy")]


@pytest.mark.parametrize("text", ["offsetof(sctp_sock, x)", "1 +", "object_size 4",
                                  "sizeof(struct a, b)", "foo(1)"])
def test_bad_expressions_are_spec_errors(text):
    with pytest.raises(SpecError, match="expression"):
        parse_expr(text)


def test_a_term_without_a_value_names_the_term():
    e = parse_expr("offsetof(struct xfs_inode, i_df.if_u2.if_inline_data)")
    with pytest.raises(ValueError, match="if_u2.*no member"):
        e.evaluate({str(e.terms()[0]): "no member 'if_u2'"}, None)
    with pytest.raises(ValueError, match="object_size is not known"):
        parse_expr("object_size").evaluate({}, None)


def test_repo_golden_file_loads_and_covers_every_seed_cache():
    spec = load_spec(REPO / "expected-oops/seeds/slab-audit.toml")
    seeds = {r.name: r for r in spec.rules if r.seed}
    assert set(seeds) == {"cifs_request", "cifs_small_rq", "orangefs_inode_cache",
                          "task_struct", "mm_struct", "thread_stack", "RAW", "RAWv6",
                          "SCTP", "SCTPv6", "PF_CAIF", "dentry", "xfs_inode",
                          "rds_ib_incoming"}
    assert seeds["thread_stack"].state is State.ABSENT
    assert seeds["PF_CAIF"].state is State.ABSENT
    assert seeds["xfs_inode"].state is State.NONE and seeds["xfs_inode"].gone
    # exact names win over patterns; patterns cover the kmalloc families
    assert spec.rule_for("kmalloc-cg-64").name == "kmalloc-*"
    assert spec.rule_for("usersized-kmalloc-1k").name == "usersized-kmalloc-*"
    assert spec.rule_for("ip6-frags") is None


@pytest.mark.parametrize("body,message", [
    ('[[cache]]\nname = "a"\nuseroffset = "0"\n', "needs useroffset and usersize"),
    ('[[cache]]\nname = "a"\nstate = "gone"\n', "state must be"),
    ('[[cache]]\nname = "a"\nstate = "none"\nsize = "1"\n', "unknown key"),
    ('[[cache]]\nname = "a"\nuseroffset = "sizeof(struct x)"\nusersize = "1"\n',
     "need a 'source'"),
    ('[[cache]]\nname = "a"\nstate = "none"\n[[cache]]\nname = "a"\nstate = "none"\n',
     "listed twice"),
    ("", "no \\[\\[cache\\]\\] tables"),
])
def test_bad_golden_files_name_the_problem(tmp_path, body, message):
    path = tmp_path / "audit.toml"
    path.write_text(body)
    with pytest.raises(SpecError, match=message):
        load_spec(path)


SPEC = """
[[cache]]
name = "sock_like"
source = "layouts.c"
useroffset = "offsetof(struct sock_like, conn_req.param)"
usersize = "sizeof_field(struct sock_like, conn_req.param)"
object_size = "sizeof(struct sock_like)"

[[cache]]
name = "old"
state = "none"
source = "layouts.c"
gone = ["offsetof(struct sock_like, conn_req.if_inline_data)"]
"""


def test_dwarf_values_are_computed_once_per_vmlinux_and_spec(tmp_path):
    pytest.importorskip("elftools")
    spec_path = tmp_path / "audit.toml"
    spec_path.write_text(SPEC)
    spec = load_spec(spec_path)
    table = compute(spec, ELF)
    assert table.values["sock_like"] == {
        "offsetof(struct sock_like, conn_req.param)": 28,
        "sizeof_field(struct sock_like, conn_req.param)": 258,
        "sizeof(struct sock_like)": 328}
    assert "not found" in table.values["old"][
        "offsetof(struct sock_like, conn_req.if_inline_data)"]

    vmlinux = tmp_path / "vmlinux"
    vmlinux.write_bytes(ELF.read_bytes())
    cache = tmp_path / "out" / "whitelist-dwarf.json"
    first = load_or_compute(spec, vmlinux, cache)
    assert json.loads(cache.read_text())["stamp"] == first.stamp
    # a cache file with this stamp is used as it is, even with other values
    data = json.loads(cache.read_text())
    data["values"]["sock_like"]["sizeof(struct sock_like)"] = 1
    cache.write_text(json.dumps(data))
    assert load_or_compute(spec, vmlinux, cache).values["sock_like"][
        "sizeof(struct sock_like)"] == 1
    # ... but a changed spec recomputes
    spec_path.write_text(SPEC + "\n# edited\n")
    assert load_or_compute(load_spec(spec_path), vmlinux, cache).values["sock_like"][
        "sizeof(struct sock_like)"] == 328


def test_cli_prints_the_values_and_names_a_missing_vmlinux(tmp_path, capsys):
    from usercopy_lab.cli import main
    pytest.importorskip("elftools")
    spec_path = tmp_path / "audit.toml"
    spec_path.write_text(SPEC)
    assert main(["audit", "values", str(spec_path), "--vmlinux", str(ELF)]) == 0
    out = capsys.readouterr().out
    assert "offsetof(struct sock_like, conn_req.param)" in out and " 28\n" in out
    assert main(["audit", "values", str(spec_path), "--vmlinux", str(tmp_path / "vmlinux"),
                 "--cache", str(tmp_path / "c.json")]) == 2
    assert "vmlinux not found" in capsys.readouterr().err
    assert main(["audit", "values", str(tmp_path / "nope.toml"), "--vmlinux", str(ELF)]) == 2
    assert "nope.toml" in capsys.readouterr().err
