"""compiled_layout: the audit's terms from the compiler, in the unit's own
context, with kbuild's command line.

The unit is testdata/dwarf/layouts.c, the fixture whose layout
test_dwarf_layout.py reads from DWARF (and whose _Static_asserts pin it):
both ways must give the same numbers.  The "kbuild" folder is made here: a
.layouts.o.cmd written the way kbuild writes one (dependency flag, -c -o,
the source, then objtool after " ; "), and an include/linux/kbuild.h with
the kernel's DEFINE() (include/linux/kbuild.h, 6.1).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from usercopy_lab.audit import whitelist_spec
from usercopy_lab.audit.compiled_layout import LayoutError, unit_command, unit_values
from usercopy_lab.audit.dwarf_layout import Layouts

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")

FIXTURE = Path(__file__).parent / "testdata" / "dwarf"
KBUILD_H = """#ifndef __LINUX_KBUILD_H
#define __LINUX_KBUILD_H
#define DEFINE(sym, val) \\
	asm volatile("\\n.ascii \\"->" #sym " %0 " #val "\\"" : : "i" (val))
#endif
"""
# The audit's terms as whitelist_spec writes them for the compiler (Term.c_expr).
TERMS = ["__builtin_offsetof(struct sock_like, conn_req.param)",
         "sizeof(((struct sock_like *)0)->conn_req.param)",
         "__builtin_offsetof(struct sock_like, r)",
         "__builtin_offsetof(struct sock_like, anon_inner.tail)",
         "sizeof(((struct sock_like *)0)->anon_inner.tail)", "sizeof(struct sock_like)"]


def kbuild(tmp_path: Path, source: Path = FIXTURE / "layouts.c", extra: str = "") -> Path:
    """A build folder whose command file compiles SOURCE as unit
    'lab/layouts.c' (the tree is elsewhere, as O= builds have it)."""
    build = tmp_path / "build"
    (build / "include/linux").mkdir(parents=True)
    (build / "include/linux/kbuild.h").write_text(KBUILD_H)
    tree = tmp_path / "tree" / "lab"
    tree.mkdir(parents=True)
    shutil.copy(source, tree / "layouts.c")
    (build / "lab").mkdir()
    (build / "lab/.layouts.o.cmd").write_text(
        "cmd_lab/layouts.o := gcc -Wp,-MMD,lab/.layouts.o.d -O2 -I./include"
        f"{extra} -DKBUILD_BASENAME='\"layouts\"' -c -o lab/layouts.o {tree}/layouts.c"
        "  ; ./tools/objtool/objtool --orc lab/layouts.o\n\n"
        "source_lab/layouts.o := ...\n")
    return build


def test_the_compiler_gives_what_dwarf_gives(tmp_path):
    got = unit_values(kbuild(tmp_path), "lab/layouts.c", TERMS)
    assert list(got.values()) == [28, 258, 288, 312, 3, 328]
    pytest.importorskip("elftools")
    with Layouts(FIXTURE / "layouts.elf") as layouts:
        param = layouts.member("layouts.c", "sock_like", "conn_req.param")
        tail = layouts.member("layouts.c", "sock_like", "anon_inner.tail")
        assert list(got.values()) == [
            param.offset, param.size, layouts.offsetof("layouts.c", "sock_like", "r"),
            tail.offset, tail.size, layouts.sizeof("layouts.c", "sock_like")]


def test_a_member_that_is_gone_gets_the_compilers_error_the_others_their_values(tmp_path):
    gone = "__builtin_offsetof(struct sock_like, conn_req.nope)"
    got = unit_values(kbuild(tmp_path), "lab/layouts.c", TERMS[:2] + [gone])
    assert got[TERMS[0]] == 28 and got[TERMS[1]] == 258
    assert isinstance(got[gone], str) and "has no member named" in got[gone]


def test_a_unit_that_does_not_compile_is_an_error_never_a_gone_member(tmp_path):
    broken = tmp_path / "broken.c"
    broken.write_text((FIXTURE / "layouts.c").read_text() + "\nthis is not C;\n")
    with pytest.raises(LayoutError, match="does not compile even without its terms"):
        unit_values(kbuild(tmp_path, broken), "lab/layouts.c", TERMS[:1])


def test_a_unit_the_build_has_no_command_for_is_an_error(tmp_path):
    with pytest.raises(LayoutError, match="is fs/nope.c built into this kernel"):
        unit_values(kbuild(tmp_path), "fs/nope.c", TERMS[:1])
    build = kbuild(tmp_path / "other")
    (build / "lab/.layouts.o.cmd").write_text("cmd_lab/layouts.o := gcc -c layouts.c\n")
    with pytest.raises(LayoutError, match="no '-c -o lab/layouts.o .../lab/layouts.c'"):
        unit_command(build, "lab/layouts.c")


def test_the_probe_line_is_kbuilds_without_its_dependency_file_and_object(tmp_path):
    cmd = unit_command(kbuild(tmp_path), "lab/layouts.c")
    line = cmd.probe_line(Path("/p/probe.c"), Path("/p/probe.s"))
    assert line.startswith("gcc -O2 -I./include -DKBUILD_BASENAME='\"layouts\"' -S -o /p/probe.s ")
    assert "-MMD" not in line and "objtool" not in line and "-c -o" not in line


def test_the_audit_uses_the_compiler_when_vmlinux_has_no_dwarf(tmp_path):
    """whitelist_spec on a build without DWARF: every term from the
    compiler, cached, the cache stamped with the method."""
    build = kbuild(tmp_path)
    vmlinux = build / "vmlinux"
    vmlinux.write_bytes(b"\x7fELF not really")
    spec_path = tmp_path / "audit.toml"
    spec_path.write_text('[[cache]]\nname = "sock_like"\nsource = "lab/layouts.c"\n'
                         'useroffset = "offsetof(struct sock_like, conn_req.param)"\n'
                         'usersize = "sizeof_field(struct sock_like, conn_req.param) + 2"\n')
    spec = whitelist_spec.load_spec(spec_path)
    assert whitelist_spec.method_for(vmlinux) == "compiled"
    table = whitelist_spec.load_or_compute(spec, vmlinux, build / "cache.json")
    assert table.values == {"sock_like": {"offsetof(struct sock_like, conn_req.param)": 28,
                                          "sizeof_field(struct sock_like, conn_req.param)": 258}}
    assert table.stamp.endswith(":compiled")
    assert spec.rules[0].usersize is not None
    assert spec.rules[0].usersize.evaluate(table.values["sock_like"], None) == 260
