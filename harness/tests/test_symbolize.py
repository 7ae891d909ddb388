"""Symbolization of duplicated function names (static functions of the same
name in several files, as the kernel has by the hundred): every definition
the offset fits in is resolved, never just the first one nm lists.

The binary is built here from two C files, each with its own static
helper(); a's is small, b's is large, so an offset past a's end can only be
b's and a small offset fits both.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

from usercopy_lab.model import FrameAddress
from usercopy_lab.reports.symbolize import Symbolizer

A_C = """static __attribute__((noinline)) int helper(int x)
{
\treturn x + 1;
}

int a_entry(int x)
{
\treturn helper(x);
}
"""

B_C = """static __attribute__((noinline)) int helper(int x)
{
\tvolatile int v = x;

\tv = v * 3 + 1; v = v * 5 + 2; v = v * 7 + 3; v = v * 11 + 4;
\tv = v * 13 + 5; v = v * 17 + 6; v = v * 19 + 7; v = v * 23 + 8;
\treturn v;
}

int b_entry(int x)
{
\treturn helper(x);
}
"""

MAIN_C = """int a_entry(int x);
int b_entry(int x);

int main(int argc, char **argv)
{
\t(void)argv;
\treturn a_entry(argc) + b_entry(argc);
}
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    if not (shutil.which("gcc") and shutil.which("nm") and shutil.which("addr2line")):
        pytest.skip("gcc/binutils not installed")
    d = tmp_path_factory.mktemp("dup")
    for name, text in (("a.c", A_C), ("b.c", B_C), ("main.c", MAIN_C)):
        (d / name).write_text(text)
    exe = d / "prog"
    subprocess.run(["gcc", "-g", "-O0", "-o", str(exe), "a.c", "b.c", "main.c"],
                   cwd=d, check=True)
    sizes = {}
    for line in subprocess.run(["nm", "-S", "-l", str(exe)], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[3] == "helper":
            sizes[parts[-1].split("/")[-1].split(":")[0]] = int(parts[1], 16)
    assert set(sizes) == {"a.c", "b.c"} and sizes["a.c"] < sizes["b.c"], sizes
    sym = Symbolizer(exe)
    sym.check()
    return sym, sizes


def test_offset_past_the_small_helper_resolves_in_the_large_one(prog):
    sym, sizes = prog
    offset = sizes["a.c"] + 8          # inside b.c's helper only
    [where] = sym.resolve([FrameAddress("helper", offset)])
    assert where.startswith("helper ") and "b.c:" in where and "a.c" not in where, where


def test_offset_that_fits_both_names_both_places(prog):
    sym, _ = prog
    [where] = sym.resolve([FrameAddress("helper", 4)])
    places = where.removeprefix("helper ").split(" | ")
    assert sorted(p.split("/")[-1].split(":")[0] for p in places) == ["a.c", "b.c"], where


def test_offset_beyond_every_definition_is_said(prog):
    sym, sizes = prog
    [where] = sym.resolve([FrameAddress("helper", sizes["b.c"] + 1)])
    assert where == f"helper (offset {sizes['b.c'] + 1:#x} beyond every helper)"
