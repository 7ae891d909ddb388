#!/usr/bin/python3
"""dwarf-offsets.py KERNEL_DIR SOURCE EXPR...

The offsetof/sizeof values a golden file cites, for a kernel built without
debug information (the arch kernels, docs/arches.md): SOURCE (a path in the
tree, e.g. kernel/fork.c) is compiled once more with the kernel build's own
command line (KERNEL_DIR/DIR/.NAME.o.cmd: same compiler, ARCH, config and
flags) plus -g, into a temporary object, whose DWARF is then read by
harness/usercopy_lab/audit/dwarf_layout.py.  Nothing in KERNEL_DIR is written.

EXPR is one of  offsetof(STRUCT,MEMBER)  sizeof_field(STRUCT,MEMBER)
sizeof(STRUCT); MEMBER may be a designator (thread.uw, sctp.subscribe).
Prints one "EXPR = VALUE" line each; exit 2 with one line on bad input.

  scripts/dwarf-offsets.py build/kernel-arm64 fs/dcache.c \
      'offsetof(dentry,d_iname)' 'sizeof_field(dentry,d_iname)'
"""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
from usercopy_lab.audit.dwarf_layout import DwarfError, Layouts  # noqa: E402

_EXPR = re.compile(r"\s*(offsetof|sizeof_field|sizeof)\(\s*(?:struct\s+)?(\w+)\s*"
                   r"(?:,\s*([\w.]+)\s*)?\)\s*")


def compile_command(kdir: Path, source: str) -> list[str]:
    """The build's gcc command for SOURCE, without its dependency file and
    whatever runs after it (objtool)."""
    obj = Path(source).with_suffix(".o")
    cmd_file = kdir / obj.parent / f".{obj.name}.cmd"
    if not cmd_file.is_file():
        raise ValueError(f"{cmd_file} missing: is {source} part of this build?")
    for line in cmd_file.read_text().splitlines():
        if line.startswith(f"cmd_{obj} := "):
            command = line.split(" := ", 1)[1].split(";")[0]
            break
    else:
        raise ValueError(f"{cmd_file}: no cmd_{obj} line")
    argv = [a for a in shlex.split(command) if not a.startswith("-Wp,-MMD")]
    if "-o" not in argv or "-c" not in argv:
        raise ValueError(f"{cmd_file}: not a compile command: {command[:80]}")
    return argv


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    kdir, source, exprs = Path(argv[0]), argv[1], argv[2:]
    try:
        parsed = []
        for e in exprs:
            m = _EXPR.fullmatch(e)
            if not m or (m.group(1) == "sizeof") != (m.group(3) is None):
                raise ValueError(f"{e!r}: want offsetof(S,M), sizeof_field(S,M) or sizeof(S)")
            parsed.append((e, m.group(1), m.group(2), m.group(3)))
        gcc = compile_command(kdir, source)
        with tempfile.TemporaryDirectory(prefix="dwarf-offsets-") as tmp:
            out = Path(tmp) / "probe.o"
            gcc[gcc.index("-o") + 1] = str(out)
            done = subprocess.run([*gcc, "-g", "-gdwarf-4"], cwd=kdir, capture_output=True,
                                  text=True, check=False)
            if done.returncode:
                raise ValueError(f"compiling {source} with -g failed: "
                                 f"{done.stderr.strip().splitlines()[-1:]}")
            with Layouts(out) as layouts:
                for text, kind, struct, member in parsed:
                    value = (layouts.sizeof(source, struct) if kind == "sizeof" else
                             getattr(layouts, kind)(source, struct, member))
                    print(f"{text.strip()} = {value}")
    except (ValueError, DwarfError, OSError) as exc:
        print(f"dwarf-offsets: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
