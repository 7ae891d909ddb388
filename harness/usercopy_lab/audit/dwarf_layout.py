"""offsetof / sizeof_field / sizeof of C structs, from an ELF's DWARF.

The whitelist audit computes the region each cache should have from the
debug information of the very kernel build it boots (build/kernel-seeds/
vmlinux), never from numbers typed by hand.  A struct is looked up in one
compilation unit, named by its source path (e.g. "kernel/fork.c": the file
that creates the cache), so that the layout is the one that file was
compiled with.  Member paths are C member designators ("thread.fpu.regs",
"conn_req.param"); anonymous struct and union members are searched the way
C does.  DWARF 4 and 5, compressed or not (python3-pyelftools).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_QUALIFIERS = ("DW_TAG_typedef", "DW_TAG_const_type", "DW_TAG_volatile_type",
               "DW_TAG_atomic_type", "DW_TAG_restrict_type")
_AGGREGATES = ("DW_TAG_structure_type", "DW_TAG_union_type")


class DwarfError(ValueError):
    """A source, struct or member that the debug information does not have."""


@dataclass(frozen=True)
class Field:
    offset: int     # from the start of the outermost struct
    size: int


@dataclass
class _Unit:
    name: str
    structs: dict[str, Any] = field(default_factory=dict)   # name -> DIE


def has_dwarf(path: Path) -> bool:
    """Whether the ELF file has DWARF (a .debug_info section); False when
    it cannot be read as ELF or pyelftools is missing."""
    try:
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
    except ImportError:  # pragma: no cover - depends on the host
        return False
    try:
        with open(path, "rb") as f:
            return ELFFile(f).get_section_by_name(".debug_info") is not None
    except (OSError, ELFError):
        return False


class Layouts:
    """Struct layouts of one ELF file; units are indexed on first use."""

    def __init__(self, path: Path) -> None:
        try:
            from elftools.common.exceptions import DWARFError, ELFError
            from elftools.elf.elffile import ELFFile
        except ImportError as exc:  # pragma: no cover - depends on the host
            raise DwarfError("python3-pyelftools is not installed "
                             "(apt-get install python3-pyelftools)") from exc
        self._errors = (ELFError, DWARFError)
        self.path = Path(path)
        try:
            self._file = open(self.path, "rb")
        except OSError as exc:
            raise DwarfError(f"{self.path}: {exc}") from exc
        try:
            elf = ELFFile(self._file)
            if not elf.has_dwarf_info():
                raise DwarfError(f"{self.path}: no DWARF debug information")
            self._dwarf = elf.get_dwarf_info()
        except (ELFError, DwarfError) as exc:
            self._file.close()
            raise DwarfError(str(exc) if isinstance(exc, DwarfError)
                             else f"{self.path}: {exc}") from exc
        self._units: dict[str, _Unit] = {}

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Layouts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the three C operators -------------------------------------------
    def offsetof(self, source: str, struct: str, member: str) -> int:
        return self.member(source, struct, member).offset

    def sizeof_field(self, source: str, struct: str, member: str) -> int:
        return self.member(source, struct, member).size

    def sizeof(self, source: str, struct: str) -> int:
        try:
            return _type_size(self._struct(source, struct))
        except self._errors as exc:
            raise DwarfError(f"{self.path}: {source}: struct {struct}: {exc}") from exc

    def member(self, source: str, struct: str, member: str) -> Field:
        try:
            return self._member(source, struct, member)
        except self._errors as exc:
            raise DwarfError(f"{self.path}: {source}: struct {struct}: {exc}") from exc

    def _member(self, source: str, struct: str, member: str) -> Field:
        die = self._struct(source, struct)
        offset = 0
        for part in member.split("."):
            found = _find_member(die, part)
            if found is None:
                raise DwarfError(f"{source}: struct {struct} has no member "
                                 f"'{member}' ('{part}' not found)")
            delta, mdie = found
            offset += delta
            die = _strip(_type_of(mdie))
        return Field(offset, _type_size(die))

    # -- lookup ------------------------------------------------------------
    def _struct(self, source: str, struct: str) -> Any:
        unit = self._unit(source)
        die = unit.structs.get(struct)
        if die is None:
            raise DwarfError(f"{source} ({unit.name}): no definition of struct {struct}")
        return die

    def _unit(self, source: str) -> _Unit:
        if source in self._units:
            return self._units[source]
        for cu in self._dwarf.iter_CUs():
            top = cu.get_top_DIE()
            attr = top.attributes.get("DW_AT_name")
            name = attr.value.decode(errors="replace") if attr else ""
            if name == source or name.endswith("/" + source):
                unit = _Unit(name)
                for die in top.iter_children():
                    if (die.tag == "DW_TAG_structure_type"
                            and "DW_AT_declaration" not in die.attributes
                            and "DW_AT_name" in die.attributes):
                        unit.structs.setdefault(
                            die.attributes["DW_AT_name"].value.decode(), die)
                self._units[source] = unit
                return unit
        raise DwarfError(f"{self.path}: no compilation unit for {source}")


def _type_of(die: Any) -> Any:
    if "DW_AT_type" not in die.attributes:
        raise DwarfError(f"DIE at {die.offset:#x} ({die.tag}) has no type")
    return die.get_DIE_from_attribute("DW_AT_type")


def _strip(die: Any) -> Any:
    while die.tag in _QUALIFIERS:
        if "DW_AT_type" not in die.attributes:
            break
        die = _type_of(die)
    return die


def _member_offset(die: Any) -> int:
    attr = die.attributes.get("DW_AT_data_member_location")
    if attr is None:
        return 0                      # union members
    if isinstance(attr.value, int):
        return attr.value
    # A location expression: gcc and clang emit DW_OP_plus_uconst N.
    expr = list(attr.value)
    if len(expr) >= 2 and expr[0] == 0x23:    # DW_OP_plus_uconst, ULEB128
        value, shift = 0, 0
        for byte in expr[1:]:
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value
    raise DwarfError(f"member at {die.offset:#x}: unsupported location {attr.value!r}")


def _find_member(aggregate: Any, name: str) -> tuple[int, Any] | None:
    """(offset, member DIE) of NAME in a struct/union, looking through
    anonymous struct and union members as C does."""
    if aggregate.tag not in _AGGREGATES:
        return None
    anonymous = []
    for child in aggregate.iter_children():
        if child.tag != "DW_TAG_member":
            continue
        attr = child.attributes.get("DW_AT_name")
        if attr is None:
            anonymous.append(child)
        elif attr.value.decode() == name:
            return _member_offset(child), child
    for child in anonymous:
        inner = _strip(_type_of(child))
        found = _find_member(inner, name)
        if found is not None:
            return _member_offset(child) + found[0], found[1]
    return None


def _type_size(die: Any) -> int:
    die = _strip(die)
    if "DW_AT_byte_size" in die.attributes:
        return int(die.attributes["DW_AT_byte_size"].value)
    if die.tag == "DW_TAG_array_type":
        count = 1
        for sub in die.iter_children():
            if sub.tag != "DW_TAG_subrange_type":
                continue
            if "DW_AT_count" in sub.attributes:
                count *= int(sub.attributes["DW_AT_count"].value)
            elif "DW_AT_upper_bound" in sub.attributes:
                count *= int(sub.attributes["DW_AT_upper_bound"].value) + 1
            else:
                count = 0             # flexible array member
        return count * _type_size(_type_of(die))
    raise DwarfError(f"type at {die.offset:#x} ({die.tag}) has no size")
