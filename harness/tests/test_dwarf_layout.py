"""dwarf_layout on a small ELF whose expected layout gcc itself asserted.

testdata/dwarf/layouts.elf is built from testdata/dwarf/layouts.c (the
command is in its header): DWARF 5 in zlib-compressed sections, like the
seeds kernel's vmlinux.  The numbers below are the ones the file's
_Static_asserts check with offsetof()/sizeof at compile time.
"""
from pathlib import Path

import pytest

pytest.importorskip("elftools")

from usercopy_lab.audit.dwarf_layout import DwarfError, Field, Layouts  # noqa: E402

ELF = Path(__file__).parent / "testdata" / "dwarf" / "layouts.elf"


@pytest.fixture(scope="module")
def layouts():
    with Layouts(ELF) as opened:
        yield opened


def test_nested_member_path(layouts):
    assert layouts.member("layouts.c", "sock_like", "conn_req.param") == Field(28, 258)
    assert layouts.offsetof("layouts.c", "sock_like", "conn_req.param") == 28
    assert layouts.sizeof_field("layouts.c", "sock_like", "conn_req.param") == 258


def test_anonymous_union_and_struct_members_are_searched(layouts):
    assert layouts.member("layouts.c", "sock_like", "r") == Field(288, 8)
    # through an anonymous struct, then a const typedef'd struct
    assert layouts.member("layouts.c", "sock_like", "anon_inner.tail") == Field(312, 3)
    assert layouts.member("layouts.c", "sock_like", "anon_inner") == Field(304, 16)


def test_flexible_array_has_size_zero_and_sizeof_is_the_struct(layouts):
    assert layouts.member("layouts.c", "sock_like", "flex") == Field(321, 0)
    assert layouts.sizeof("layouts.c", "sock_like") == 328


def test_missing_member_struct_and_unit_name_what_is_missing(layouts):
    with pytest.raises(DwarfError, match="no member 'conn_req.nope' \\('nope' not found\\)"):
        layouts.offsetof("layouts.c", "sock_like", "conn_req.nope")
    with pytest.raises(DwarfError, match="no definition of struct nope"):
        layouts.sizeof("layouts.c", "nope")
    with pytest.raises(DwarfError, match="no compilation unit for kernel/fork.c"):
        layouts.sizeof("kernel/fork.c", "task_struct")


def test_a_file_without_dwarf_is_an_error(tmp_path):
    bogus = tmp_path / "vmlinux"
    bogus.write_bytes(b"not an ELF file")
    with pytest.raises(DwarfError, match="vmlinux"):
        Layouts(bogus)
