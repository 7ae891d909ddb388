"""offsetof/sizeof_field/sizeof of the whitelist audit from the compiler,
for a kernel built without DWARF.

The way kbuild's asm-offsets.c works (and scripts/probe-offsets.sh for the
hunt): a probe file that #includes the compilation unit itself -- so every
type the unit sees, its own static structs included, is in scope exactly
as the unit sees it -- and then puts each term into the assembly as a
constant (DEFINE() of <linux/kbuild.h>).  It is compiled to assembly with
the very command line kbuild used for the unit (KBUILD/<dir>/.<unit>.o.cmd:
same compiler, flags, configuration, include paths); nothing is linked or
run.  The compiler that laid the structs out for the kernel gives their
offsets, so the values are those the kernel's DWARF would give
(docs/whitelist-audit.md: both sources compared on one build).

A term that does not compile (a member a seed named that no longer exists:
the audit's `gone` expressions) gets gcc's first error line as its value,
as a DWARF lookup gets its error text -- but only when the unit and its
other terms compile without it, so a probe that cannot be built is an
error of its own (LayoutError), never a "gone" member.
"""
from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .dwarf_layout import DwarfError

COMPILE_TIMEOUT_S = 300.0
_DEP_FLAG = re.compile(r"\s-Wp,-MMD,\S+")
_ASCII = re.compile(r'^\s*\.ascii\s+"->T(\d+) [$#]?(-?\d+) ')
_ERROR = re.compile(r"error: (.*)")


class LayoutError(DwarfError):
    """The compiler could not give the values (no such unit in the build,
    an unknown command file, a probe that does not compile)."""


@dataclass(frozen=True)
class UnitCommand:
    """kbuild's compile line for one unit, split where the probe goes."""
    kbuild: Path
    head: str            # compiler and flags, before "-c -o OBJ SRC"
    source: Path         # the unit's source file (absolute, in the tree)
    tail: str            # flags after the source, if any

    def probe_line(self, probe: Path, out: Path) -> str:
        return f"{self.head} -S -o {out} {probe} {self.tail}".rstrip()


def unit_command(kbuild: Path, source: str) -> UnitCommand:
    """The compile line of SOURCE ("fs/orangefs/super.c") in KBUILD."""
    rel = Path(source)
    obj = rel.with_suffix(".o")
    cmdfile = kbuild / rel.parent / f".{obj.name}.cmd"
    try:
        with open(cmdfile, encoding="utf-8", errors="replace") as f:
            first = f.readline()
    except OSError as exc:
        raise LayoutError(f"{cmdfile}: {exc.strerror} (is {source} built into this "
                          "kernel?)") from None
    prefix = f"cmd_{obj} := "
    if not first.startswith(prefix):
        raise LayoutError(f"{cmdfile}: not kbuild's command file for {obj}")
    line = first[len(prefix):].rstrip("\n").split(" ; ", 1)[0]
    m = re.search(rf"\s-c -o {re.escape(str(obj))} (\S+/{re.escape(str(rel))})(?=\s|$)", line)
    if m is None:
        raise LayoutError(f"{cmdfile}: no '-c -o {obj} .../{rel}' in its compile line")
    head = _DEP_FLAG.sub("", line[:m.start()])
    return UnitCommand(kbuild, head, Path(m.group(1)), line[m.end():].strip())


def _probe_source(unit: Path, exprs: list[str]) -> str:
    defines = "".join(f"\tDEFINE(T{i}, {e});\n" for i, e in enumerate(exprs))
    return (f'#include "{unit}"\n'
            "#include <linux/kbuild.h>\n\n"
            "void usercopy_lab_probe(void);\n"
            "void usercopy_lab_probe(void)\n{\n" + defines + "}\n")


def _compile(cmd: UnitCommand, exprs: list[str]) -> tuple[dict[int, int], str]:
    """(index -> value, "") when the probe compiles, else ({}, first error)."""
    with tempfile.TemporaryDirectory(prefix="usercopy-lab-layout-") as tmp:
        probe, out = Path(tmp) / "probe.c", Path(tmp) / "probe.s"
        probe.write_text(_probe_source(cmd.source, exprs))
        try:
            done = subprocess.run(["/bin/sh", "-c", cmd.probe_line(probe, out)], cwd=cmd.kbuild,
                                  capture_output=True, text=True, errors="replace",
                                  timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise LayoutError(f"compiling the probe of {cmd.source} took over "
                              f"{COMPILE_TIMEOUT_S:.0f}s") from None
        if done.returncode != 0:
            m = _ERROR.search(done.stderr)
            return {}, m.group(1).strip() if m else (done.stderr.strip()[-200:] or
                                                      f"exit status {done.returncode}")
        values = {}
        for line in out.read_text(errors="replace").splitlines():
            if a := _ASCII.match(line):
                values[int(a.group(1))] = int(a.group(2))
    if len(values) != len(exprs):
        raise LayoutError(f"the probe of {cmd.source} gave {len(values)} of "
                          f"{len(exprs)} values")
    return values, ""


def unit_values(kbuild: Path, source: str, exprs: list[str]) -> dict[str, int | str]:
    """Each C expression's value in SOURCE's context, or the compiler's
    error for an expression that alone does not compile."""
    cmd = unit_command(kbuild, source)
    values, error = _compile(cmd, exprs)
    if not error:
        return {e: values[i] for i, e in enumerate(exprs)}
    # One at a time: which ones fail, and does the unit compile without them?
    out: dict[str, int | str] = {}
    for e in exprs:
        one, why = _compile(cmd, [e])
        out[e] = why or one[0]
    _, why = _compile(cmd, [])
    if why:
        raise LayoutError(f"the probe of {source} does not compile even without "
                          f"its terms: {why}")
    return out
