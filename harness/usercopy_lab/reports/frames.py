"""Call-trace frames and faulting-function lines of every architecture.

One frame per line, in any of the layouts kernels and tools print:

  x86_64, arm64     " func+0x1a/0x40 [module]"        ("? func" unreliable)
  old x86, i386     " [<ffffffff81234567>] ? func+0x1a/0x40"
  riscv, mips, s390 " [<ffffffff80003d4a>] func+0x1c/0x40" (s390 "([<...>] f+0x..)":
                    unreliable)
  powerpc           "[c0000000fffa3c00] [c000000000e3b2b8] func+0x58/0x80 (unreliable)"
  arm               "[<c0100000>] (func) from [<c0100100>] (caller+0x10/0x20)",
                    " func from caller+0x10/0x14"
  syzbot            " func+0x1/0x2 net/x.c:12", " func net/x.c:12 [inline]" (or
                    without "[inline]": an inlined frame has no offset)
  decode_stacktrace " func (net/x.c:12)", " func (a.h:1 b.c:2) [mod]" or "... mod"
  crash (vmcore)    " #15 [ffff800009d4fab0] func at ffffdf7f6c3a93ec [mod]"

and the lines that name the faulting function (x86 RIP/IP/EIP, arm64
"pc :", arm "PC is at", powerpc NIP, riscv/mips "epc :", s390 "Krnl PSW").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import FrameAddress

_NAME = r"[A-Za-z_.$][\w.$]*"
_LEAD = r"^\s*(?:<(?:IRQ|EOI|NMI)>\s+)?\(?(?:\[<?(?:0x)?[0-9a-f]+>?\]\s*){0,2}(\?\s+)?"
_FRAME = re.compile(
    _LEAD + rf"({_NAME})\+(0x[0-9a-f]+)(?:/(0x[0-9a-f]+))?"
    r"(?:\s+\[([\w-]+)[^\]]*\])?(\s+\S+\.\w+:\d+)?\)?(\s*\(unreliable\))?")
_INLINE = re.compile(_LEAD + rf"({_NAME}) \S+\.\w+:\d+(?: \S+\.\w+:\d+)*(?: \[inline\])?\s*$")
_DECODED = re.compile(_LEAD + rf"({_NAME}) \((?:\S+/)?\S+\.\w+:\d+[^)]*\)+\s*\[?([\w-]+)?\]?\s*$")
_ARM_VERBOSE = re.compile(
    r"^\s*\[<[0-9a-f]+>\] \(" + rf"({_NAME})(?:\+(0x[0-9a-f]+)/0x[0-9a-f]+)?" + r"(?: \[[\w-]+\])?\) from ")
_ARM = re.compile(rf"^\s*({_NAME}) from ({_NAME})\+0x[0-9a-f]+/0x[0-9a-f]+")
# the crash utility's "bt" from a vmcore: " #15 [ffff800009d4fab0] func at ffffdf7f6c3a93ec [mod]"
_CRASH_BT = re.compile(rf"^\s*#\d+ \[[0-9a-f]+\] ({_NAME}) at [0-9a-f]+(?: \[([\w-]+)\])?\s*$")
SUFFIX = re.compile(r"(?:\.(?:isra|constprop|part|cold|llvm|lto_priv|localalias|"
                    r"clone|str|specialized)(?:\.\d+)?)+$")

_RIP = (
    re.compile(r"^\s*(?:RIP|EIP|IP):?\s+(?:[0-9a-f]{4}:)?(?:\[<[0-9a-f]+>\]\s*){0,2}"
               rf"({_NAME})(?:\+0x| \(\S+:\d+)"),          # decode_stacktrace: "f (file:line)"
    re.compile(rf"\bEIP is at ({_NAME})\+0x"),
    re.compile(rf"^\s*pc\s*:\s*(?:\[<[0-9a-f]+>\]\s*)?({_NAME})\+0x"),
    re.compile(rf"\bPC is at ({_NAME})\+0x"),
    re.compile(rf"^\s*NIP\s*\[[0-9a-f]+\]\s*({_NAME})\+0x"),
    re.compile(rf"^\s*epc\s*:\s*(?:[0-9a-f]+\s+)?({_NAME})\+0x"),
    re.compile(rf"^\s*Krnl PSW\s*:\s*[0-9a-f]+\s+[0-9a-f]+\s+\(({_NAME})\+0x"),
)


@dataclass(frozen=True)
class Frame:
    name: str                 # as printed: "do_usercopy_slab_size.cold"
    func: str                 # without .cold/.isra/...: "do_usercopy_slab_size"
    offset: int | None        # None for inlined frames and arm "f from g"
    module: str | None
    reliable: bool            # not "? f", not "(unreliable)"
    inline: bool = False

    @property
    def address(self) -> FrameAddress:
        return FrameAddress(self.name, self.offset or 0, self.module)


def strip_suffix(name: str) -> str:
    """The function of a printed name: no compiler suffix (.isra.0, .cold),
    no ELFv1 (ppc64 big-endian) function-descriptor dot (".func")."""
    if name.startswith(".") and len(name) > 1:
        name = name[1:]
    return SUFFIX.sub("", name) or name


MAX_FRAME_LINE = 512        # characters of a line looked at (a frame is short)


def parse_frame(text: str) -> Frame | None:
    """The frame on a call-trace line, or None if it is not one."""
    text = text[:MAX_FRAME_LINE]
    m = _FRAME.match(text)
    if m:
        name = m.group(2)
        # s390 prints a frame it is not sure of in parentheses
        unsure = text.lstrip().startswith("(") and text.rstrip().endswith(")")
        return Frame(name, strip_suffix(name), int(m.group(3), 16), m.group(5),
                     not (m.group(1) or m.group(7) or unsure))
    if ":" in text:
        m = _INLINE.match(text)
        if m:
            return Frame(m.group(2), strip_suffix(m.group(2)), None, None, not m.group(1), True)
    if " from " in text:
        m = _ARM_VERBOSE.match(text)
        if m:
            name = m.group(1)
            off = int(m.group(2), 16) if m.group(2) else None
            return Frame(name, strip_suffix(name), off, None, True)
        m = _ARM.match(text)
        if m:
            return Frame(m.group(1), strip_suffix(m.group(1)), None, None, True)
    if "#" in text[:8] and " at " in text:
        m = _CRASH_BT.match(text)
        if m:
            return Frame(m.group(1), strip_suffix(m.group(1)), None, m.group(2), True)
    if "(" in text:
        m = _DECODED.match(text)
        if m:
            return Frame(m.group(2), strip_suffix(m.group(2)), None, m.group(3), not m.group(1))
    return None


def rip_func(text: str) -> str | None:
    """The function a register line says the CPU was in (kernel mode)."""
    text = text[:MAX_FRAME_LINE]
    for pattern in _RIP:
        m = pattern.search(text)
        if m:
            return strip_suffix(m.group(1))
    return None
