"""hunt/compiled.py: which files a built kernel compiled, from its link
(vmlinux.a) and each object's .cmd file.

The .cmd text below is the head and tail of build/kernel-seeds/mm/.slub.o.cmd
(the seeds kernel built in /work/main/build on 2026-12-06, 1201 lines, cut
to the source line, four dependencies and kbuild's trailer); the thin
archives are made here with binutils' `ar rcT`, as kbuild makes vmlinux.a.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from usercopy_lab.hunt.compiled import (CompiledError, CompiledSources, archive_members,
                                        compiled_sources, read_cmd)

SRC = "/work/main/build/linux-source-6.1"
SLUB_CMD = f"""cmd_mm/slub.o := ccache gcc -Wp,-MMD,mm/.slub.o.d -nostdinc -I{SRC}/arch/x86/include -I./arch/x86/include/generated -c -o mm/slub.o {SRC}/mm/slub.c

source_mm/slub.o := {SRC}/mm/slub.c

deps_mm/slub.o := \\
    $(wildcard include/config/PREEMPT_RT) \\
    $(wildcard include/config/SLUB_DEBUG) \\
  {SRC}/include/linux/compiler-version.h \\
  {SRC}/include/linux/kconfig.h \\
  include/generated/autoconf.h \\
  {SRC}/mm/slab.h \\

mm/slub.o: $(deps_mm/slub.o)

$(deps_mm/slub.o):

mm/slub.o: $(wildcard ./tools/objtool/objtool)
"""

needs_ar = pytest.mark.skipif(shutil.which("ar") is None, reason="binutils' ar not installed")


def cmd_for(obj: str, source: str, deps: list[str]) -> str:
    body = "".join(f"  {d} \\\n" for d in deps)
    return f"cmd_{obj} := gcc -c\n\nsource_{obj} := {source}\n\ndeps_{obj} := \\\n{body}\n" \
           f"{obj}: $(deps_{obj})\n"


def kbuild(tmp_path: Path, objects: dict[str, tuple[str, list[str]]]) -> Path:
    """A build directory with OBJECTS (object: (source, deps)) linked into
    a thin vmlinux.a, each with its .cmd file, sources under tmp/src."""
    out = tmp_path / "kbuild"
    for obj, (source, deps) in objects.items():
        p = out / obj
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"\x7fELF")
        (p.parent / f".{p.name}.cmd").write_text(
            cmd_for(obj, f"{tmp_path}/src/{source}", [f"{tmp_path}/src/{d}" for d in deps]))
    subprocess.run(["ar", "rcT", "vmlinux.a", *objects], cwd=out, check=True)
    return out


def test_a_cmd_file_gives_its_source_and_its_files_not_kconfigs_wildcards():
    source, deps = read_cmd(SLUB_CMD)
    assert source == f"{SRC}/mm/slub.c"
    assert deps == [f"{SRC}/include/linux/compiler-version.h", f"{SRC}/include/linux/kconfig.h",
                    "include/generated/autoconf.h", f"{SRC}/mm/slab.h"]


@needs_ar
def test_a_thin_archive_lists_its_members_as_ar_does_long_names_included(tmp_path):
    names = ["a.o", "net/ipv4/netfilter/a_rather_long_object_name.o", "fs/x.o"]
    for n in names:
        (tmp_path / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / n).write_bytes(b"\x7fELF")
    subprocess.run(["ar", "rcT", "t.a", *names], cwd=tmp_path, check=True)
    assert archive_members(tmp_path / "t.a") == names
    subprocess.run(["ar", "rc", "n.a", "a.o"], cwd=tmp_path, check=True)   # not thin
    assert archive_members(tmp_path / "n.a") == ["a.o"]


@needs_ar
def test_the_compiled_files_are_the_linked_objects_sources_and_headers(tmp_path):
    out = kbuild(tmp_path, {
        "mm/slub.o": ("mm/slub.c", ["include/linux/slab.h", "mm/slab.h"]),
        "fs/namei.o": ("fs/namei.c", ["include/linux/slab.h"]),
    })
    # an object of an earlier configuration, still on disk but not linked
    (out / "sound").mkdir()
    (out / "sound" / ".wm_adsp.o.cmd").write_text(
        cmd_for("sound/wm_adsp.o", f"{tmp_path}/src/sound/wm_adsp.c", []))
    c = compiled_sources(out)
    assert c.srctree == f"{tmp_path}/src" and c.objects == 2
    assert c.files == {"mm/slub.c", "fs/namei.c", "include/linux/slab.h", "mm/slab.h"}
    assert "fs/namei.c" in c and "./mm/slab.h" in c and "sound/wm_adsp.c" not in c
    again = CompiledSources.from_text(c.to_text())
    assert again.files == c.files and again.objects == 2 and again.srctree == c.srctree


def test_a_directory_without_a_link_is_one_line(tmp_path):
    with pytest.raises(CompiledError, match="vmlinux.a not found: build the kernel first"):
        compiled_sources(tmp_path)
    (tmp_path / "vmlinux.a").write_bytes(b"not an archive")
    with pytest.raises(CompiledError, match="not an ar archive"):
        compiled_sources(tmp_path)
    with pytest.raises(CompiledError, match="without its kbuild_dir"):
        CompiledSources.from_text("mm/slub.c\n")
