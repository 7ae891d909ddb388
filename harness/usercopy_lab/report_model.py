"""The one data type every stage after capture speaks: a kernel report."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Kinds a report can have: the three usercopy generations, then by the
# kernel facility that printed it (report_formats.py maps each format).
KINDS = ("usercopy_abort", "usercopy_warn", "usercopy_legacy", "bug",
         "warning", "oops", "kasan", "panic", "kmsan", "kcsan", "kfence",
         "ubsan", "lockdep", "stall", "hang", "leak", "other")


def usercopy_line(kind: str, direction: object, obj: object, cache: object,
                  offset: object, size: object) -> str:
    """One-line form of a usercopy report, seen or expected:
    "usercopy_abort exposure SLUB object 'dentry' off 55 size 33"."""
    where = f"{obj} '{cache}'" if cache else f"{obj}"
    return f"{kind} {direction} {where} off {offset} size {size}"


@dataclass(frozen=True)
class FrameAddress:
    """Where a call-trace frame points: "do_usercopy_slab_size.cold+0x217"
    (in module "rds" for "... [rds]"), as printed, for symbolization."""

    symbol: str
    offset: int
    module: str | None = None


@dataclass
class Report:
    """One oops / BUG / WARNING / panic found in a console log.

    Line numbers are 1-based and refer to the original file.
    """

    file: str
    line: int
    kind: str
    end_line: int = 0
    direction: str | None = None      # "exposure" | "overwrite" | None
    direction_source: str | None = None  # "printed": a line of the report says it
                                      # (the usercopy message, whole or cut);
                                      # "inferred": no line says it, the copy
                                      # primitives of the trace name exactly one
                                      # direction; None: no direction
    object: str | None = None         # "SLUB object", "process stack", ...
    cache: str | None = None          # slab cache name, if any
    offset: int | None = None
    size: int | None = None
    bug_site: str | None = None       # "mm/usercopy.c:99" (BUG/WARNING line)
    rip: str | None = None            # function of RIP: "usercopy_abort"
    guilty_frame: str | None = None   # the frame to blame (usercopy: the
                                      # first outside the usercopy checks;
                                      # else syzkaller's choice)
    frames: list[str] = field(default_factory=list)  # reliable frames of its own trace
    frame_addresses: list[FrameAddress] = field(default_factory=list)  # per frame
    kernel: str | None = None         # "6.1.0 #1" etc., when the log says
    lkdtm_address: int | None = None  # last "attempting bad copy ... from
                                      # kernel X: ADDR" before the report
    truncated: bool = False           # cannot say what it is: header
                                      # details lost, trace cut where other
                                      # output goes on, no frame to blame
    title: str = ""
    syz_title: str = ""               # syzkaller's title for it ("" if
                                      # syzkaller would not report it)
    syz_alt: list[str] = field(default_factory=list)  # syzkaller's other titles
                                      # for it (syscall prefixes partly
                                      # stripped, the format's alternatives):
                                      # syzbot matches crashes to bugs by them
    signature: str = ""
    secondary: bool = False           # after an earlier oops in this boot
    header_cut: bool = False          # its header is the console's last line,
                                      # unfinished where the capture ended
                                      # (console_scan; the title may be short)
    lines: list[str] = field(default_factory=list)  # normalized report text

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("lines")
        data.pop("frame_addresses")
        return data
