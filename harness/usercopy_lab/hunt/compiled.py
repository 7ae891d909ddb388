"""Which source files a built kernel was compiled from: the finder's sites
restricted to one configuration (make hunt's denominator, docs/gaps.md).

The finder reads the whole tree; a configuration builds part of it.  The
rule here is kbuild's own record, not a list of names: the objects linked
into vmlinux are the members of KBUILD_DIR/vmlinux.a (a thin archive that
kbuild makes from every built-in.a and lib.a, 6.1's link-vmlinux input),
and each object's `.NAME.o.cmd` (fixdep's output) names its source file
(`source_X.o := ...`) and every file it includes (`deps_X.o := ...`).  A
file is compiled into the kernel when it is the source or a dependency of
one of those objects: a `.c` file, a header, a `.c` another one includes.
Modules count when the build made them (KBUILD_DIR/modules.order: each
module's objects from its `.mod` file); a kernel built with `make bzImage`
has none, whatever `=m` its .config says, and none boots in the guest.

Paths are relative to the source tree (the finder's), taken from the
source paths the .cmd files give; files kbuild generates in the build
directory (include/generated/...) are kept with their build-relative name.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

THIN_MAGIC = b"!<thin>\n"
ARCHIVE_MAGIC = b"!<arch>\n"
_HEADER = 60
_LONGNAME = re.compile(r"^/(\d+)")
_SOURCE = re.compile(r"^source_(?P<obj>\S+)\s*:=\s*(?P<path>\S+)\s*$", re.M)
_DEPS = re.compile(r"^deps_\S+\s*:=\s*\\\n(?P<body>(?:[ \t]+.*\n)*)", re.M)


class CompiledError(ValueError):
    """A build directory that cannot say what it compiled: one line, exit 2."""


@dataclass(frozen=True)
class CompiledSources:
    """The files a kernel build compiled into its image."""

    kbuild_dir: str
    srctree: str                  # the tree the .cmd files name
    objects: int                  # objects linked (vmlinux.a + modules)
    files: frozenset[str]         # tree-relative source files and headers
    missing_cmd: tuple[str, ...] = ()   # objects without a .cmd (assembler stubs ...)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and path.removeprefix("./") in self.files

    def to_text(self) -> str:
        """The form a hunt keeps in its run (hunt/compiled-sources.txt)."""
        head = [f"# kbuild_dir {self.kbuild_dir}", f"# srctree {self.srctree}",
                f"# objects {self.objects}"]
        return "\n".join(head + sorted(self.files)) + "\n"

    @classmethod
    def from_text(cls, text: str) -> "CompiledSources":
        meta: dict[str, str] = {}
        files = set()
        for line in text.splitlines():
            if line.startswith("# "):
                key, _, value = line[2:].partition(" ")
                meta[key] = value
            elif line.strip():
                files.add(line.strip())
        try:
            return cls(meta["kbuild_dir"], meta["srctree"], int(meta["objects"]),
                       frozenset(files))
        except (KeyError, ValueError):
            raise CompiledError("compiled-sources list without its kbuild_dir/srctree/"
                                "objects header") from None


def archive_members(path: Path) -> list[str]:
    """The member names of an ar archive (thin or not), in order, without
    the symbol table and the long-name table."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CompiledError(f"{path}: {exc.strerror}") from None
    thin = data.startswith(THIN_MAGIC)
    if not thin and not data.startswith(ARCHIVE_MAGIC):
        raise CompiledError(f"{path}: not an ar archive")
    pos, names, longnames = len(THIN_MAGIC), [], b""
    while pos + _HEADER <= len(data):
        header = data[pos:pos + _HEADER]
        if header[58:60] != b"`\n":
            raise CompiledError(f"{path}: bad member header at byte {pos}")
        name = header[:16].decode("ascii", "replace").rstrip()
        size = int(header[48:58].decode("ascii").strip() or 0)
        pos += _HEADER
        special = name in ("/", "//", "/SYM64/")
        if name == "//":
            longnames = data[pos:pos + size]
        if special or not thin:
            pos += size + (size & 1)
        if special:
            continue
        if m := _LONGNAME.match(name):      # "/N", or "/N /M" for a nested archive's
            start = int(m.group(1))           # member (M: where that archive is)
            end = longnames.find(b"/\n", start)
            name = longnames[start:end if end >= 0 else None].decode("utf-8", "replace")
        else:
            name = name.rstrip("/")
        names.append(name)
    return names


def _cmd_file(kbuild: Path, obj: str) -> Path:
    p = Path(obj)
    return kbuild / p.parent / f".{p.name}.cmd"


def read_cmd(text: str) -> tuple[str | None, list[str]]:
    """(source path, dependency paths) of one `.X.o.cmd` file; the
    `$(wildcard include/config/...)` entries are kconfig's, not files."""
    source = m.group("path") if (m := _SOURCE.search(text)) else None
    deps: list[str] = []
    for block in _DEPS.finditer(text):
        for line in block.group("body").splitlines():
            item = line.strip().rstrip("\\").strip()
            if item and not item.startswith("$("):
                deps.append(item)
    return source, deps


def _objects(kbuild: Path) -> list[str]:
    archive = kbuild / "vmlinux.a"
    if not archive.is_file():
        raise CompiledError(f"{archive} not found: build the kernel first "
                            "(what it compiled is read from its link)")
    objs = archive_members(archive)
    order = kbuild / "modules.order"
    if order.is_file():
        for ko in order.read_text().split():
            mod = kbuild / Path(ko).with_suffix(".mod")
            if mod.is_file():
                objs += mod.read_text().split()
    return objs


def compiled_sources(kbuild_dir: Path) -> CompiledSources:
    """The files KBUILD_DIR's kernel was compiled from (the module's rule)."""
    kbuild = kbuild_dir.resolve()
    objs = _objects(kbuild)
    read: list[tuple[str, str | None, list[str]]] = []
    missing: list[str] = []
    for obj in objs:
        try:
            read.append((obj, *read_cmd(_cmd_file(kbuild, obj).read_text(errors="replace"))))
        except OSError:
            missing.append(obj)
    srctree = next((src[:-len(rel) - 1] for obj, src, _ in read if src
                    and src.endswith("/" + (rel := Path(obj).with_suffix(Path(src).suffix)
                                            .as_posix()))), "")
    if not srctree:
        raise CompiledError(f"{kbuild}: no object's .cmd file names its source "
                            "(not a kbuild O= build directory?)")
    files = {_relative(path, srctree, kbuild)
             for _, src, deps in read for path in ([src] if src else []) + deps}
    return CompiledSources(str(kbuild), srctree, len(objs), frozenset(files), tuple(missing))


def _relative(path: str, srctree: str, kbuild: Path) -> str:
    for root in (srctree, str(kbuild)):
        if root and path.startswith(root + "/"):
            return path[len(root) + 1:]
    return path[2:] if path.startswith("./") else path
