"""The lab's data model: what every stage after capture speaks.

Enums for the closed vocabularies (a trigger's verdict, a report's kind, a
usercopy's direction, how a trigger ended, how a guest booted, a harness
fault), with predicates for the questions the pipeline asks of them, and
the two records the pipeline passes on: a kernel Report (reports/ builds
them) and a TriggerResult (run/ builds them, judge/ and output/ read them).
The enums are StrEnums: a member is its string ("PASS" == Verdict.PASS), so
JSON, goldens and results read and write the same text as before; the
records turn a word given for a member (JSON read back) into the member.
This module imports nothing of the lab's.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class _Word(StrEnum):
    """A word of a closed vocabulary: a str in every way, repr() included
    (golden diff lines print values with !r)."""

    def __repr__(self) -> str:
        return str.__repr__(self)


class Verdict(_Word):
    """A trigger's verdict, as results.json, KTAP and JUnit spell it."""

    PASS = "PASS"
    FAIL = "FAIL"
    XFAIL = "XFAIL"
    SKIP = "SKIP"
    ERROR = "ERROR"


class ReportKind(_Word):
    """Kinds a report can have: the three usercopy generations, then by the
    kernel facility that printed it (reports/report_formats.py maps each format)."""

    USERCOPY_ABORT = "usercopy_abort"
    USERCOPY_WARN = "usercopy_warn"
    USERCOPY_LEGACY = "usercopy_legacy"
    BUG = "bug"
    WARNING = "warning"
    OOPS = "oops"
    KASAN = "kasan"
    PANIC = "panic"
    KMSAN = "kmsan"
    KCSAN = "kcsan"
    KFENCE = "kfence"
    UBSAN = "ubsan"
    LOCKDEP = "lockdep"
    STALL = "stall"
    HANG = "hang"
    LEAK = "leak"
    OTHER = "other"

    @property
    def is_usercopy(self) -> bool:
        """A usercopy report (mm/usercopy.c), of any generation: it has a
        direction, an object, an offset and a size."""
        return self in USERCOPY_KINDS


KINDS = tuple(k.value for k in ReportKind)
USERCOPY_KINDS = (ReportKind.USERCOPY_WARN, ReportKind.USERCOPY_ABORT, ReportKind.USERCOPY_LEGACY)


class Direction(_Word):
    """Which way a usercopy went: to user space (exposure) or from it (overwrite)."""

    EXPOSURE = "exposure"
    OVERWRITE = "overwrite"


DIRECTIONS = tuple(d.value for d in Direction)


class Outcome(_Word):
    """How a trigger ended: what init's END marker says of it, and what a
    golden file expects (XFAIL only in a golden file)."""

    KILLED = "killed"                    # the trigger's process was killed (signal=N)
    RETURNED = "returned"                # it exited (status=N)
    XFAIL = "xfail"                      # golden only: LKDTM is expected to say XFAIL
    UNKNOWN_TRIGGER = "unknown-trigger"  # LKDTM has no such trigger
    NO_LKDTM = "no-lkdtm"                # the guest has no LKDTM at all

    @property
    def ran_trigger(self) -> bool:
        """The trigger's process ran to an end of its own (killed or returned),
        so what the kernel printed meanwhile is the trigger's doing."""
        return self in (Outcome.KILLED, Outcome.RETURNED)


# The outcomes a golden file may expect: not NO_LKDTM, a guest's fault.
OUTCOMES = tuple(o.value for o in Outcome if o is not Outcome.NO_LKDTM)


class BootMode(_Word):
    """How a trigger's guest booted: restored from a snapshot, or a full boot."""

    SNAPSHOT = "snapshot"
    FULL = "full"


class Fault(_Word):
    """A harness fault: why a guest gave no verdict (judge/faults.py names it
    from the console; results.json's "fault")."""

    GUEST_HANG = "guest-hang"                # QEMU alive, marker not seen in time
    QEMU_EXITED_EARLY = "qemu-exited-early"  # QEMU ended before END, no panic, no cut report
    CONSOLE_CUT = "console-cut"              # the console ended inside a report
    PANIC_BEFORE_INIT = "panic-before-init"  # kernel panic, init never ran
    KERNEL_PANIC = "kernel-panic"            # kernel panic after init ran
    CONSOLE_GARBAGE = "console-garbage"      # the console is not text
    INTERRUPTED = "interrupted"              # the run was cancelled (Ctrl-C)
    HARNESS_ERROR = "harness-error"          # the harness could not drive QEMU
    WRONG_TRIGGER = "wrong-trigger"          # the console answers another request


def usercopy_line(kind: object, direction: object, obj: object, cache: object,
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


@dataclass(frozen=True)
class Report:
    """One oops / BUG / WARNING / panic found in a console log, built once
    by reports/report_analysis.analyze() (or read back from JSON).

    Line numbers are 1-based and refer to the original file.
    """

    file: str
    line: int
    kind: ReportKind
    end_line: int = 0
    direction: Direction | None = None
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

    def __post_init__(self) -> None:
        # words (JSON read back, a test's literal) become members
        object.__setattr__(self, "kind", ReportKind(self.kind))
        if self.direction is not None:
            object.__setattr__(self, "direction", Direction(self.direction))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("lines")
        data.pop("frame_addresses")
        return data


@dataclass(frozen=True)
class TriggerResult:
    """What one trigger's run came to: its verdict and the reports behind it."""

    suite: str
    trigger: str
    verdict: Verdict
    summary: str
    seconds: float
    log: str
    golden: str | None
    diffs: list[str] = field(default_factory=list)
    expected_text_seen: bool | None = None
    reports: list[Report] = field(default_factory=list)
    fault: Fault | None = None      # why an ERROR gave no verdict
    boot: BootMode = BootMode.FULL
    fallback: str | None = None     # why a snapshot-mode trigger booted in full
    reused_qemu: bool = False       # restored in the QEMU of the worker's last trigger
    # why the trigger was restored a second time, in a new QEMU: the QEMU its
    # worker kept ended before END (restore.py); the verdict is the new one's
    qemu_retry: str | None = None

    def __post_init__(self) -> None:
        # words (results.json read back, a test's literal) become members
        object.__setattr__(self, "verdict", Verdict(self.verdict))
        object.__setattr__(self, "boot", BootMode(self.boot))
        if self.fault is not None:
            object.__setattr__(self, "fault", Fault(self.fault))

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite, "name": self.trigger, "verdict": self.verdict,
            "fault": self.fault, "summary": self.summary,
            "seconds": round(self.seconds, 2), "boot": self.boot,
            "boot_fallback": self.fallback, "reused_qemu": self.reused_qemu,
            "qemu_retry": self.qemu_retry,
            "log": self.log, "golden": self.golden, "diffs": self.diffs,
            "expected_text_seen": self.expected_text_seen,
            "reports": [r.to_json() for r in self.reports],
        }
