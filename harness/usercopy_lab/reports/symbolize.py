"""Resolve call-trace frames (func+0x1a/0x40) to file:line with a vmlinux.

Takes the frames the parser read (Report.frame_addresses: reliable frames
only, in trace order) and resolves them with binutils the way
scripts/faddr2line does: `nm -S` gives every function's start address and
size, `addr2line -f -i` resolves the address.  A name can belong to several
functions (static functions of the same name in several files): every
definition the offset fits in (offset <= size) is resolved, and when they
name different places all are shown, "a.c:10 | b.c:20", rather than
silently picking one.  (faddr2line also compares the size printed after the
'/' in the trace; the frames as parsed carry only name and offset.)  Call-trace entries are return
addresses, so start+offset-1 is resolved (as gdb does for caller frames):
the return address itself names the line after the call, and after a call
to a noreturn function such as usercopy_abort() that is another statement
or no line of the function at all.  Frames in modules ("[rds]") need the
module's .ko and are left as they are.  A vmlinux without DWARF
(.debug_line) cannot give file:line; that is said once, as a
SymbolizeError, instead of printing '??:0' for every frame.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..model import FrameAddress

class SymbolizeError(RuntimeError):
    """vmlinux cannot be used (missing, no symbols, no debug info, no binutils)."""


@dataclass
class Symbolizer:
    vmlinux: Path
    # name -> (start, size) of every function of that name; size 0: unknown
    _symbols: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def check(self) -> None:
        if not self.vmlinux.is_file():
            raise SymbolizeError(f"{self.vmlinux}: no such file")
        for tool in ("nm", "addr2line", "readelf"):
            if shutil.which(tool) is None:
                raise SymbolizeError(f"{tool} not found (apt-get install binutils)")
        sections = _run(["readelf", "-S", "-W", str(self.vmlinux)])
        if ".debug_line" not in sections and ".debug_info" not in sections:
            raise SymbolizeError(
                f"{self.vmlinux} has no debug info (.debug_line); rebuild with "
                "CONFIG_DEBUG_INFO=y to get file:line, frames left as function names")
        for line in _run(["nm", "--defined-only", "-S", str(self.vmlinux)]).splitlines():
            parts = line.split()
            if len(parts) == 3:         # no size: "ADDR TYPE NAME"
                parts.insert(1, "0")
            if len(parts) == 4 and parts[2] in ("t", "T", "w", "W"):
                self._symbols.setdefault(parts[3], []).append(
                    (int(parts[0], 16), int(parts[1], 16)))
        if not self._symbols:
            raise SymbolizeError(f"{self.vmlinux} has no symbol table")

    def resolve(self, frames: list[FrameAddress]) -> list[str]:
        """One "func file:line" (or "func (not resolved: why)") per frame;
        "func a.c:1 | b.c:2" when several functions of that name fit."""
        # offset 0 is not a return address (nothing was called yet)
        cands = [[] if fr.module else
                 [start + fr.offset - (fr.offset > 0)
                  for start, size in self._symbols.get(fr.symbol, [])
                  if size == 0 or fr.offset <= size]
                 for fr in frames]
        wanted = sorted({a for c in cands for a in c})
        where: dict[int, str] = {}
        if wanted:
            text = _run(["addr2line", "-e", str(self.vmlinux), "-f", "-i", "-a"],
                        "\n".join(hex(a) for a in wanted) + "\n")
            where = _parse_addr2line(text)
        out = []
        for fr, addrs in zip(frames, cands):
            if fr.module:
                out.append(f"{fr.symbol} (module {fr.module}: needs its .ko)")
            elif not addrs:
                why = f"offset {fr.offset:#x} beyond every {fr.symbol}" \
                    if fr.symbol in self._symbols else f"not in {self.vmlinux.name}"
                out.append(f"{fr.symbol} ({why})")
            else:
                places = dict.fromkeys(where.get(a, "??:0") for a in addrs)
                out.append(f"{fr.symbol} {' | '.join(places)}")
        return out


def _parse_addr2line(text: str) -> dict[int, str]:
    """addr2line -a -f -i output: 0xADDR, then (func, file:line) pairs;
    inlined chains are joined innermost first with ' <- '."""
    result: dict[int, str] = {}
    addr: int | None = None
    locs: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("0x"):
            if addr is not None:
                result[addr] = " <- ".join(locs)
            addr, locs = int(line, 16), []
            i += 1
            continue
        loc = lines[i + 1] if i + 1 < len(lines) else "??:0"
        locs.append(loc.split(" (discriminator")[0])
        i += 2
    if addr is not None:
        result[addr] = " <- ".join(locs)
    return result


def _run(cmd: list[str], stdin: str | None = None) -> str:
    try:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True,
                              timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SymbolizeError(f"{cmd[0]}: {exc}") from exc
    if proc.returncode != 0:
        raise SymbolizeError(f"{' '.join(cmd[:2])}: {proc.stderr.strip()[:200]}")
    return proc.stdout
