"""Split console / dmesg / syslog text into kernel reports (report_model.Report).

Two entry points share one line-driven state machine (_Assembler):

  iter_reports(lines, file)  any iterable of text lines
  iter_file(path) / parse_file(path)
                             a file read in binary chunks with bounded
                             memory; chunks without any trigger substring
                             are skipped at C speed (bytes.find), so normal
                             log text is never decoded or matched line by
                             line.  Lines are capped at MAX_LINE bytes.

Recognized: usercopy_abort (4.16+, "usercopy: Kernel memory ... attempt
detected ... (offset N, size M)!" + "kernel BUG at mm/usercopy.c"),
usercopy_warn (4.16-5.15, "Bad or missing usercopy whitelist? ..." +
"WARNING: ... usercopy_warn"), the 4.8-4.15 wording ("usercopy: kernel
memory exposure attempt detected from ADDR (TYPE) (N bytes)"), and generic
kernel BUG / BUG: / WARNING / Oops / general protection fault / KASAN /
Kernel panic reports.
"""
from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .log_lines import normalize
from .report_model import FrameAddress, Report

MAX_LINE = 64 * 1024          # bytes kept of one line; the rest is dropped
CHUNK = 1 << 20               # bytes read at a time
MAX_REPORT_LINES = 4000       # lines kept in Report.lines
MAX_KEPT_LINE = 4096          # characters kept of one report line
MAX_HEADER_LINES = 300        # lines before a call trace, else truncated
MAX_UNKNOWN_RUN = 40          # unrelated lines inside a trace, else truncated

# Substrings one of which every line that starts or feeds a report has.
TRIGGERS: tuple[str, ...] = (
    "attempt detected", "usercopy whitelist", "BUG: ", "BUG at ", "WARNING:",
    "Oops", "general protection", "Kernel panic", "Unable to handle kernel",
    "Internal error:", "invalid opcode", "Linux version", "attempting bad copy")
_TRIGGERS_B = tuple(t.encode() for t in TRIGGERS)
_PREFILTER = re.compile("|".join(re.escape(t) for t in TRIGGERS))


class LogFormatError(ValueError):
    """The input is not a readable text log (binary, unreadable)."""


# --------------------------------------------------------------- patterns
_UC_ABORT = re.compile(
    r"usercopy: Kernel memory (exposure|overwrite) attempt detected (from|to) "
    r"(.*) \(offset (\d+), size (\d+)\)!?")
_UC_WARN = re.compile(
    r"Bad or missing usercopy whitelist\? Kernel memory (exposure|overwrite) "
    r"attempt detected (from|to) (.*) \(offset (\d+), size (\d+)\)!?")
_UC_LEGACY = re.compile(
    r"usercopy: kernel memory (exposure|overwrite) attempt detected (from|to) "
    r"(\S+) \((.*)\) \((\d+) bytes\)")
_OBJ_CACHE = re.compile(r"(.*?) '(.*)'$")
_KBUG = re.compile(r"kernel BUG at (\S+?):(\d+)!?")
_WARN_SITE = re.compile(r"WARNING: (?:CPU: \d+ PID: \d+ )?at (\S+?):(\d+) ?(\S*)")
_WARN_BARE = re.compile(r"WARNING: CPU: \d+ PID: \d+ at\s*$")
_SITE_CONT = re.compile(r"(\S+?):(\d+) (\S+)")
_KASAN = re.compile(r"BUG: KASAN: (\S+) in (\S+)")
_KASAN_ACCESS = re.compile(r"(Read|Write) of size (\d+)")
_KASAN_CACHE = re.compile(r"which belongs to the cache (\S+)")
_PANIC = re.compile(r"Kernel panic - not syncing:? ?(.*)")
_LINUX_VERSION = re.compile(r"Linux version (\S+)(?:.*?\s(#\d+))?")
# LKDTM names the kernel address of a bad copy that has no object offset
# (USERCOPY_KERNEL): "attempting bad copy_to_user from kernel text:
# ffffffff810a16a0".  Kept as report context for a golden offset-base.
_LKDTM_BAD_ADDRESS = re.compile(
    r"lkdtm: attempting bad copy_(?:to|from)_user\(?\)? from kernel [\w ]+: ([0-9a-f]{8,16})$")
_TAINT = re.compile(r"\b(?:Not tainted|Tainted:[A-Z ]*?)\s+(\d+\.\d+\S*)(?:\s+(#\d+))?")
_RIP = re.compile(r"(?:RIP: 0010:|pc : |PC is at |NIP \[[0-9a-f]+\] |EIP: 0060:|EIP: )"
                  r"(?:\[<[0-9a-f]+>\]\s*)*(?:\[<[0-9a-f]+>\]\s*)?([A-Za-z_.$][\w.$]*)\+0x")
_FRAME = re.compile(
    r"\s*(?:\[<?[0-9a-f]+>?\]\s*)*(\?\s+)?([A-Za-z_.$][\w.$]*)\+(0x[0-9a-f]+)"
    r"(?:/0x[0-9a-f]+)?(?:\s+\[([\w-]+)[^\]]*\])?(\s*\(unreliable\))?")
_FN_SUFFIX = re.compile(r"(?:\.(?:isra|constprop|part|cold|llvm|lto_priv|localalias)(?:\.\d+)?)+$")
_TAIL = re.compile(
    r"\s*(?:RIP|RSP|RAX|RBX|RCX|RDX|RSI|RDI|RBP|R\d+|FS|GS|CS|DS|ES|CR\d|DR\d|PKRU|"
    r"EFLAGS|EIP|EAX|ESI|EBP|Code|Modules linked in|---\[ end|Kernel Offset|"
    r"Kernel panic|note: |Fixing recursive fault|Rebooting in|Dumping ftrace|"
    r"pc :|lr :|sp :|x\d+ *:|Stack:|Call Trace:|Call trace:|</?(?:TASK|IRQ|NMI|EOI|SOFTIRQ)>|"
    r"CPU: \d+ PID|Hardware name|Kernel Offset|SMP: stopping|\[ end Kernel panic)")
_TRACE_START = re.compile(r"\s*(?:Call Trace:|Call trace:|Backtrace:|<TASK>)")
_BANNER = re.compile(r"={40,}\s*$")
_ADDR_TAIL = re.compile(
    r"(?:,)?\s*(?:for address:?|address:|at virtual address|at)\s+(?:0x)?[0-9a-fA-F]{6,}\b.*$")
_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|[0-9a-f]{8,}|\d+")

_PLUMBING = re.compile(
    r"(?:usercopy_\w+|__check_heap_object|__check_object_size|check_heap_object|"
    r"check_object_size|check_\w+_object|check_bogus_address|check_copy_size|"
    r"__might_fault|might_fault|__might_sleep|__virt_addr_valid|copyout|copyin|"
    r"_copy_\w+|__copy_\w+|raw_copy_\w+|\w*copy_to_user\w*|\w*copy_from_user\w*|"
    r"\w*copy_to_iter\w*|\w*copy_from_iter\w*|copy_page_to_iter|copy_page_from_iter|"
    r"copy_user_\w+|rep_movs_alternative|memdup_user\w*|strndup_user|strncpy_from_user|"
    r"dump_stack\w*|__dump_stack|show_stack|show_trace_log_lvl|panic|__warn|"
    r"warn_slowpath\w*|__warn_printk|report_bug|handle_bug|exc_invalid_op|"
    r"asm_exc_invalid_op|do_error_trap|do_invalid_op|invalid_op|do_trap|die|__die\w*|"
    r"oops_end|kasan_\w+|__kasan_\w+|__asan_\w+|print_report|"
    r"print_address_description\w*|check_memory_region\w*|ubsan_\w+|__ubsan_\w+|"
    r"bug_handler|__bug|el1_\w+|el1h_\w+|do_mem_abort|die_kernel_fault|"
    r"__do_kernel_fault|do_page_fault|page_fault_oops|kernelmode_fixup_or_oops|"
    r"exc_page_fault|asm_exc_page_fault|__bad_area_nosemaphore|bad_area_nosemaphore|"
    r"exc_general_protection|asm_exc_general_protection)")
# Direction of a usercopy whose message line is missing, from the copy helper.
_TO_USER = re.compile(r"\w*(?:copy_to_user|copyout|copy_to_iter|put_cmsg|copy_page_to_iter)\w*")
_FROM_USER = re.compile(r"\w*(?:copy_from_user|copyin|copy_from_iter|memdup_user|copy_page_from_iter)\w*")


@dataclass(frozen=True)
class _Frame:
    func: str                 # normalized: no .cold/.isra/... suffix
    address: FrameAddress
    reliable: bool            # not "? func" and not "(unreliable)"


def _parse_frame(text: str) -> _Frame | None:
    """The call-trace frame on a line, or None if it is not one."""
    m = _FRAME.match(text)
    if not m:
        return None
    return _Frame(_FN_SUFFIX.sub("", m.group(2)),
                  FrameAddress(m.group(2), int(m.group(3), 16), m.group(4)),
                  not (m.group(1) or m.group(5)))


def _add_frame(rep: Report, fr: _Frame | None) -> None:
    if fr is not None and fr.reliable:
        rep.frames.append(fr.func)
        rep.frame_addresses.append(fr.address)


def is_plumbing(func: str) -> bool:
    return _PLUMBING.fullmatch(func) is not None


# --------------------------------------------------------------- headers
@dataclass
class _Header:
    kind: str                 # report kind this header opens
    role: str                 # "usercopy" | "warnmsg" | "kbug" | "warning"
                              # | "follow" | "bug" | "kasan" | "oops" | "panic"
    text: str
    fields: dict[str, object] = field(default_factory=dict)


def _classify(text: str) -> _Header | None:
    s = text.lstrip()
    c = s[:1]
    if c == "u" and s.startswith("usercopy: "):
        m = _UC_ABORT.match(s)
        if m:
            obj, cache = _split_object(m.group(3))
            return _Header("usercopy_abort", "usercopy", s, dict(
                direction=m.group(1), object=obj, cache=cache,
                offset=int(m.group(4)), size=int(m.group(5))))
        m = _UC_LEGACY.match(s)
        if m:
            typ = m.group(4)
            if typ.startswith("<"):
                obj, cache = typ.strip("<>"), None
            else:
                obj, cache = "slab object", typ
            return _Header("usercopy_legacy", "usercopy", s, dict(
                direction=m.group(1), object=obj, cache=cache,
                size=int(m.group(5))))
        return None
    if c == "B":
        if s.startswith("Bad or missing usercopy whitelist?"):
            m = _UC_WARN.match(s)
            fields: dict[str, object] = {}
            if m:
                obj, cache = _split_object(m.group(3))
                fields = dict(direction=m.group(1), object=obj, cache=cache,
                              offset=int(m.group(4)), size=int(m.group(5)))
            return _Header("usercopy_warn", "warnmsg", s, fields)
        if s.startswith("BUG: KASAN: "):
            return _Header("kasan", "kasan", s)
        if s.startswith("BUG: "):
            oopsish = ("unable to handle" in s or "NULL pointer" in s
                       or "paging request" in s)
            return _Header("oops" if oopsish else "bug", "bug", s)
        return None
    if c == "k" and s.startswith("kernel BUG at "):
        return _Header("bug", "kbug", s)
    if c == "W" and s.startswith("WARNING:"):
        return _Header("warning", "warning", s)
    if c == "O" and (s.startswith("Oops: ") or s.startswith("Oops - ") or s.startswith("Oops#")):
        return _Header("oops", "follow", s)
    if c == "I" and s.startswith("Internal error: "):
        return _Header("oops", "follow", s)
    if c == "i" and s.startswith("invalid opcode: "):
        return _Header("oops", "follow", s)
    if c == "g" and s.startswith("general protection fault"):
        return _Header("oops", "oops", s)
    if c == "U" and s.startswith("Unable to handle kernel "):
        return _Header("oops", "bug", s)
    if c == "K" and s.startswith("Kernel panic - not syncing"):
        return _Header("panic", "panic", s)
    return None


def _split_object(text: str) -> tuple[str, str | None]:
    """("SLUB object", "kmalloc-64") from "SLUB object 'kmalloc-64'".

    Only slab objects carry a cache name in the quotes; for the others the
    quoted detail (vmalloc 'no area') stays part of the object."""
    m = _OBJ_CACHE.match(text)
    if m and ("SLUB" in m.group(1) or "SLAB" in m.group(1)):
        return m.group(1), m.group(2)
    return text, None


# --------------------------------------------------------------- assembly
@dataclass
class _Open:
    report: Report
    opener: str                   # role of the first header
    phase: str = "header"         # header | trace | tail | panic
    ended: bool = False           # an end-of-trace marker was seen
    saw_task: bool = False
    frames_done: bool = False
    header_lines: int = 0
    unknown_run: int = 0
    want_site: bool = False       # "WARNING: CPU: n PID: n at" wrapped
    followed: bool = False        # an Oops/invalid opcode line was merged
    warn_func: str | None = None
    head: str = ""                # text of the generic header line
    kasan_type: str | None = None
    kasan_func: str | None = None
    panic_msg: str | None = None


@dataclass
class _Assembler:
    """Feed (lineno, normalized text); finished reports collect in .done."""

    file: str
    done: list[Report] = field(default_factory=list)
    current: _Open | None = None
    version: str | None = None
    lkdtm_address: int | None = None

    @property
    def busy(self) -> bool:
        return self.current is not None

    def feed(self, lineno: int, text: str) -> None:
        cur = self.current
        head = _classify(text) if (cur is not None or _PREFILTER.search(text)) else None
        if cur is None:
            if head is not None:
                self._open(lineno, text, head)
            elif "Linux version" in text:
                m = _LINUX_VERSION.search(text)
                if m:
                    self.version = m.group(1) + (" " + m.group(2) if m.group(2) else "")
            elif m := _LKDTM_BAD_ADDRESS.search(text):
                self.lkdtm_address = int(m.group(1), 16)
            return
        if head is not None:
            if self._merge(cur, lineno, text, head):
                return
            self._close(truncated=not cur.ended)
            self._open(lineno, text, head)
            return
        if not self._absorb(cur, lineno, text):
            self._close(truncated=not cur.ended)
            self.feed(lineno, text)

    def finish(self) -> None:
        if self.current is not None:
            self._close(truncated=not self.current.ended)

    # ..................................................... open / merge
    def _open(self, lineno: int, text: str, head: _Header) -> None:
        rep = Report(file=self.file, line=lineno, kind=head.kind, end_line=lineno,
                     lkdtm_address=self.lkdtm_address)
        cur = _Open(report=rep, opener=head.role)
        self.current = cur
        for key, value in head.fields.items():
            setattr(rep, key, value)
        self._apply(cur, head)
        self._keep(cur, lineno, text)
        if head.role == "panic":
            cur.phase = "panic"

    def _apply(self, cur: _Open, head: _Header) -> None:
        rep = cur.report
        s = head.text
        if head.role == "kbug":
            m = _KBUG.match(s)
            if m and rep.bug_site is None:
                rep.bug_site = f"{m.group(1)}:{m.group(2)}"
            if not cur.head:
                cur.head = "kernel BUG at " + (rep.bug_site or "?")
        elif head.role == "warning":
            m = _WARN_SITE.match(s)
            if m:
                rep.bug_site = f"{m.group(1)}:{m.group(2)}"
                cur.warn_func = _func_of(m.group(3))
            elif _WARN_BARE.match(s):
                cur.want_site = True
            elif not cur.head:
                cur.head = s.rstrip(" !")
        elif head.role == "kasan":
            m = _KASAN.match(s)
            if m:
                cur.kasan_type, cur.kasan_func = m.group(1), _func_of(m.group(2))
        elif head.role in ("bug", "oops", "follow"):
            if not cur.head:
                cur.head = s
        elif head.role == "panic":
            m = _PANIC.match(s)
            cur.panic_msg = (m.group(1) if m else s).strip()

    def _merge(self, cur: _Open, lineno: int, text: str, head: _Header) -> bool:
        """True if head continues the open report rather than starting one."""
        if head.role == "panic":
            # A panic while a report is open is its consequence
            # ("Fatal exception", panic_on_warn, ...).
            if cur.phase != "panic":
                if not cur.saw_task and cur.report.frames:
                    cur.ended = True
                cur.phase = "panic"
                m = _PANIC.match(head.text)
                cur.panic_msg = (m.group(1) if m else head.text).strip()
            self._keep(cur, lineno, text)
            return True
        if cur.phase != "header":
            return False
        rep = cur.report
        ok = False
        if head.role == "follow" and not cur.followed:
            cur.followed = True
            if rep.kind == "bug" and cur.opener == "bug":
                rep.kind = "oops"
            ok = True
        elif head.role == "kbug" and cur.opener == "usercopy" and rep.bug_site is None:
            ok = True
        elif (head.role == "warning" and cur.opener == "warnmsg"
              and rep.bug_site is None):
            ok = True
        if ok:
            self._apply(cur, head)
            self._keep(cur, lineno, text)
        return ok

    # ..................................................... body lines
    def _absorb(self, cur: _Open, lineno: int, text: str) -> bool:
        """Take a non-header line into the open report; False closes it."""
        rep = cur.report
        s = text.strip()
        if cur.phase == "header":
            cur.header_lines += 1
            if cur.header_lines > MAX_HEADER_LINES:
                return False
            if cur.want_site:
                cur.want_site = False
                m = _SITE_CONT.match(s)
                if m:
                    rep.bug_site = f"{m.group(1)}:{m.group(2)}"
                    cur.warn_func = _func_of(m.group(3))
                    self._keep(cur, lineno, text)
                    return True
            self._info(cur, s)
            if _TRACE_START.match(text):
                cur.phase = "trace"
                if s == "<TASK>":
                    cur.saw_task = True
            self._keep(cur, lineno, text)
            return True
        if cur.phase == "trace":
            return self._trace_line(cur, lineno, text, s)
        if cur.phase == "panic":
            self._info(cur, s)
            if s.startswith("<TASK>"):
                cur.saw_task = True
            elif s.startswith("</TASK>"):
                cur.ended = True
            elif s.startswith("---[ end Kernel panic"):
                cur.ended = True
                self._keep(cur, lineno, text)
                self._close(truncated=not cur.ended)
                return True
            elif rep.kind == "panic" and not cur.frames_done:
                _add_frame(rep, _parse_frame(text))
            cur.header_lines += 1
            if cur.header_lines > MAX_HEADER_LINES:
                return False
            self._keep(cur, lineno, text)
            return True
        # tail: register dumps and end markers after a finished trace
        if rep.kind == "kasan" and not cur.ended:
            # KASAN's allocation/free stacks and memory dump, up to its banner
            cur.header_lines += 1
            if cur.header_lines > MAX_HEADER_LINES:
                return False
            if _BANNER.match(s):
                cur.ended = True
            else:
                self._info(cur, s)
            self._keep(cur, lineno, text)
            return True
        if _TAIL.match(text):
            self._keep(cur, lineno, text)
            return True
        return False

    def _trace_line(self, cur: _Open, lineno: int, text: str, s: str) -> bool:
        rep = cur.report
        fr = _parse_frame(text) if not s.startswith(("RIP:", "RSP:", "Code:")) else None
        if fr is not None:
            cur.unknown_run = 0
            if not cur.frames_done:
                _add_frame(rep, fr)
            self._keep(cur, lineno, text)
            return True
        if s == "<TASK>":
            cur.saw_task = True
        elif s == "</TASK>":
            cur.frames_done = True
            if rep.kind != "kasan":
                cur.ended = True
                cur.phase = "tail"
        elif s.startswith("---[ end"):
            cur.frames_done = True
            cur.ended = True
            cur.phase = "tail"
        elif s.startswith("Code:") and not cur.saw_task and rep.frames:
            cur.frames_done = True
            cur.ended = True
            cur.phase = "tail"
        elif rep.kind == "kasan" and _BANNER.match(s):
            cur.frames_done = True
            cur.ended = True
            cur.phase = "tail"
        elif rep.kind == "kasan" and rep.frames and (
                s == "" or s.startswith(("Allocated by", "Freed by", "The buggy"))):
            cur.frames_done = True
            cur.phase = "tail"
            self._info(cur, s)
        elif _TAIL.match(text) or s.startswith(("<IRQ>", "</IRQ>", "<NMI>", "</NMI>", "<EOI>")):
            pass
        else:
            cur.unknown_run += 1
            if cur.unknown_run > MAX_UNKNOWN_RUN:
                return False
        self._keep(cur, lineno, text)
        return True

    def _info(self, cur: _Open, s: str) -> None:
        """Pick RIP, kernel version and KASAN details from a report line."""
        rep = cur.report
        if rep.rip is None and ("RIP" in s or s.startswith(("pc :", "PC is", "NIP", "EIP"))):
            m = _RIP.search(s)
            if m:
                rep.rip = _FN_SUFFIX.sub("", m.group(1))
        if rep.kernel is None and "ainted" in s:
            m = _TAINT.search(s)
            if m:
                rep.kernel = m.group(1) + (" " + m.group(2) if m.group(2) else "")
        if rep.kind == "kasan":
            m = _KASAN_ACCESS.match(s)
            if m and rep.size is None:
                rep.size = int(m.group(2))
            m = _KASAN_CACHE.search(s)
            if m and rep.cache is None:
                rep.cache = m.group(1)

    def _keep(self, cur: _Open, lineno: int, text: str) -> None:
        rep = cur.report
        rep.end_line = lineno
        if len(rep.lines) < MAX_REPORT_LINES:
            rep.lines.append(text[:MAX_KEPT_LINE])

    def _close(self, truncated: bool) -> None:
        cur = self.current
        assert cur is not None
        self.current = None
        rep = cur.report
        # A cut-off or missing call trace is not trusted.  A standalone panic
        # may legitimately print no trace but must reach its end marker.
        rep.truncated = truncated or (rep.kind != "panic" and not rep.frames)
        if rep.kernel is None:
            rep.kernel = self.version
        _finish(rep, cur)
        self.done.append(rep)


def _func_of(token: str) -> str | None:
    name = token.split("+", 1)[0].strip("()")
    return _FN_SUFFIX.sub("", name) or None


# --------------------------------------------------------------- naming
def _finish(rep: Report, cur: _Open) -> None:
    """Settle kind, guilty frame, title and signature of a closed report."""
    site_file = rep.bug_site.rsplit(":", 1)[0] if rep.bug_site else None
    if rep.kind == "warning" and (cur.warn_func == "usercopy_warn"
                                  or rep.rip == "usercopy_warn"):
        rep.kind = "usercopy_warn"
    if rep.kind in ("bug", "oops") and cur.opener in ("kbug", "follow") and (
            site_file == "mm/usercopy.c" or rep.rip == "usercopy_abort"):
        rep.kind = "usercopy_abort" if rep.rip in (None, "usercopy_abort") else "usercopy_legacy"
    if rep.kind.startswith("usercopy"):
        rep.guilty_frame = _first_guilty(rep.frames)
        if rep.direction is None:
            rep.direction = _infer_direction(rep.frames)
    elif rep.kind == "kasan":
        rep.guilty_frame = cur.kasan_func or _first_guilty(rep.frames)
    elif rep.kind == "warning":
        rep.guilty_frame = _first_guilty(
            [f for f in (cur.warn_func, rep.rip) if f] + rep.frames)
    else:
        rep.guilty_frame = _first_guilty(
            ([rep.rip] if rep.rip and rep.kind != "panic" else []) + rep.frames)
    rep.title = make_title(rep, cur)
    rep.signature = make_signature(rep)


def _first_guilty(frames: list[str]) -> str | None:
    for f in frames:
        if not is_plumbing(f):
            return f
    return None


def _infer_direction(frames: list[str]) -> str | None:
    for f in frames:
        if _TO_USER.fullmatch(f):
            return "exposure"
        if _FROM_USER.fullmatch(f):
            return "overwrite"
        if not is_plumbing(f):
            return None
    return None


def make_title(rep: Report, cur: _Open | None = None) -> str:
    where = f" in {rep.guilty_frame}" if rep.guilty_frame else ""
    if rep.kind.startswith("usercopy"):
        what = rep.direction or "violation"
        if rep.object:
            prep = "from" if rep.direction == "exposure" else "to"
            cache = f" '{rep.cache}'" if rep.cache else ""
            what += f" {prep} {rep.object}{cache}"
        return f"usercopy: {what}{where}"
    head = cur.head if cur else ""
    if rep.kind == "kasan":
        typ = cur.kasan_type if cur and cur.kasan_type else "bug"
        return f"KASAN: {typ}{where}"
    if rep.kind == "panic":
        msg = cur.panic_msg if cur and cur.panic_msg is not None else ""
        return f"kernel panic: {msg}".rstrip()
    if rep.kind == "warning":
        if rep.bug_site or not head:
            return f"WARNING{where}"
        return f"{_clean(head)}{where}"
    if rep.kind == "bug" and rep.bug_site and (not head or head.startswith("kernel BUG")):
        return f"kernel BUG at {rep.bug_site}{where}"
    if head:
        return f"{_clean(head)}{where}"
    return f"{rep.kind}{where}"


def _clean(head: str) -> str:
    """A generic header without addresses, error codes and oops counters."""
    s = head.strip()
    if s.startswith("general protection fault"):
        return "general protection fault"
    if s.startswith(("Oops", "Internal error", "invalid opcode")):
        return s.split(":", 1)[0].split(" - ", 1)[0] if not s.startswith("Internal error") \
            else "Internal error: Oops"
    s = _ADDR_TAIL.sub("", s)
    return s.rstrip(" ,:!")


def make_signature(rep: Report) -> str:
    """Stable id: kind, direction, object, cache, guilty frame and the
    title with every number masked (no offsets, sizes, addresses, pids)."""
    title = _NUMBERS.sub("N", rep.title)
    key = "\x1f".join(str(x) for x in (rep.kind, rep.direction, rep.object,
                                        rep.cache, rep.guilty_frame, title))
    return hashlib.sha1(key.encode()).hexdigest()[:16]


# --------------------------------------------------------------- drivers
def iter_reports(lines: Iterable[str], file: str = "<input>") -> Iterator[Report]:
    """Reports in lines (text, with or without line ends), in order."""
    asm = _Assembler(file)
    for lineno, raw in enumerate(lines, 1):
        if not asm.busy and not _PREFILTER.search(raw):
            continue
        if len(raw) > MAX_LINE:
            raw = raw[:MAX_LINE]
        asm.feed(lineno, normalize(raw))
        if asm.done:
            yield from asm.done
            asm.done.clear()
    asm.finish()
    yield from asm.done


@dataclass
class ScanStats:
    """What a file scan saw besides reports (for clear messages)."""
    bytes: int = 0
    lines: int = 0
    long_lines: int = 0
    first_long_line: int = 0


_MAGIC = ((b"\x1f\x8b", gzip.open), (b"\xfd7zXZ\x00", lzma.open), (b"BZh", bz2.open))


def open_log(path: str | Path) -> BinaryIO:
    """A binary stream of path, transparently decompressed (gz, xz, bz2)."""
    f = open(path, "rb")
    head = f.peek(8)[:8] if hasattr(f, "peek") else b""
    for magic, opener in _MAGIC:
        if head.startswith(magic):
            f.close()
            return opener(path, "rb")  # type: ignore[return-value]
    return f


def looks_binary(sample: bytes) -> bool:
    """True for data that is not a text log (many NUL/control bytes)."""
    if not sample:
        return False
    bad = sum(sample.count(bytes([c])) for c in range(32) if c not in (9, 10, 13, 27))
    return bad > len(sample) * 0.10


def iter_file(path: str | Path, stats: ScanStats | None = None,
              name: str | None = None) -> Iterator[Report]:
    """Reports of one log file, streaming; raises LogFormatError on binary
    input and OSError when it cannot be read."""
    stats = stats if stats is not None else ScanStats()
    asm = _Assembler(name if name is not None else str(path))
    with open_log(path) as f:
        yield from _scan(f, asm, stats)


def parse_file(path: str | Path) -> list[Report]:
    return list(iter_file(path))


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _scan(f: BinaryIO, asm: _Assembler, stats: ScanStats) -> Iterator[Report]:
    carry = b""
    skipping = False          # inside the dropped part of an overlong line
    first = True
    while True:
        chunk = f.read(CHUNK)
        if not chunk:
            break
        stats.bytes += len(chunk)
        if first:
            first = False
            if looks_binary(chunk[:65536]):
                raise LogFormatError("binary data, not a text log")
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                continue
            chunk = chunk[nl + 1:]
            skipping = False
        buf = carry + chunk if carry else chunk
        last = buf.rfind(b"\n")
        if last < 0:
            carry = buf
        else:
            carry = buf[last + 1:]
            yield from _block(buf, last + 1, asm, stats)
        if len(carry) > MAX_LINE:
            _long_line(stats)
            asm_line = carry[:MAX_LINE]
            carry = b""
            skipping = True
            yield from _one(asm, stats, asm_line)
    if carry and not skipping:
        yield from _one(asm, stats, carry)
    asm.finish()
    yield from _drain(asm)


def _long_line(stats: ScanStats) -> None:
    stats.long_lines += 1
    if not stats.first_long_line:
        stats.first_long_line = stats.lines + 1


def _one(asm: _Assembler, stats: ScanStats, raw: bytes) -> Iterator[Report]:
    stats.lines += 1
    if asm.busy or any(t in raw for t in _TRIGGERS_B):
        asm.feed(stats.lines, normalize(_decode(raw)))
    return _drain(asm)


def _drain(asm: _Assembler) -> Iterator[Report]:
    done = list(asm.done)
    asm.done.clear()
    return iter(done)


def _skip(buf: bytes, pos: int, end: int, stats: ScanStats) -> None:
    """Count the complete lines buf[pos:end] without looking at them, except
    for noting overlong ones (one rfind per MAX_LINE window)."""
    base = stats.lines
    stats.lines += buf.count(b"\n", pos, end)
    p = pos
    while end - p > MAX_LINE:
        nl = buf.rfind(b"\n", p, p + MAX_LINE + 1)
        if nl >= 0:
            p = nl + 1
            continue
        stats.long_lines += 1
        if not stats.first_long_line:
            stats.first_long_line = base + buf.count(b"\n", pos, p) + 1
        nl = buf.find(b"\n", p, end)
        p = end if nl < 0 else nl + 1


def _block(buf: bytes, end: int, asm: _Assembler, stats: ScanStats) -> Iterator[Report]:
    """Feed the complete lines buf[:end]; skip trigger-free stretches."""
    nexts = [-2] * len(_TRIGGERS_B)   # cached next hit per trigger; -1: none
    pos = 0
    while pos < end:
        if not asm.busy:
            hit = -1
            for i, trig in enumerate(_TRIGGERS_B):
                p = nexts[i]
                if p == -1:
                    continue
                if p < pos:
                    p = buf.find(trig, pos, end)
                    nexts[i] = p
                    if p == -1:
                        continue
                if hit < 0 or p < hit:
                    hit = p
            if hit < 0:
                _skip(buf, pos, end, stats)
                return
            start = buf.rfind(b"\n", pos, hit) + 1
            if start < pos:
                start = pos
            _skip(buf, pos, start, stats)
            pos = start
        nl = buf.find(b"\n", pos, end)
        raw = buf[pos:nl]
        pos = nl + 1
        stats.lines += 1
        if len(raw) > MAX_LINE:
            _long_line(stats)
            raw = raw[:MAX_LINE]
        asm.feed(stats.lines, normalize(_decode(raw)))
        if asm.done:
            yield from asm.done
            asm.done.clear()
