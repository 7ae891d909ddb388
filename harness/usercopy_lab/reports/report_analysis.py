"""What one report says: kind, the lab's usercopy fields, frames, blame, titles.

analyze() takes the lines the parser grouped into one report (normalized,
other CPUs' and programs' lines already left out) and builds its Report:
syzkaller's view of it comes from syz_titles.syz_describe() (its group,
format, blamed frame, title and corruption); this module adds the lab's
own: the usercopy message fields (every generation, whole or cut), bug
site, RIP, the main call trace's reliable frames (after the RIP line when
the trace starts with the panic/WARN path, as with panic_on_warn), the
guilty frame (for usercopy the first frame outside the usercopy machinery,
otherwise syzkaller's), the direction when no line prints it (from the
copy primitives of the trace), title, signature, and truncated: the report
cannot say what it is (its header details are missing, or it has no frame
to blame).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ..model import Direction, Report, ReportKind
from .format_parts import CALL_TRACE, Group, RIP_LINE
from .frames import Frame, parse_frame, rip_func, strip_suffix
from .report_formats import GROUPS
from .report_naming import make_signature, make_title
from .syz_titles import MAX_TEXT, SyzResult, skip_re, syz_describe
from .trace_layout import (CUT_OBJECT, EXCEPTION_PATH, FROM_USER, INTERRUPT, MACHINERY, TO_USER,
                           TRACE_END, TRACE_HEADING, header_group)
from .trace_layout import CHECK_FRAME, CUT_DIRECTION, TRACE_ENDED

# ------------------------------------------------------------- our fields
_UC_GROUP = next(g for g in GROUPS if g.header == "usercopy")
# mm/usercopy.c's reporting function, as a RIP names it (the kind is named after it)
USERCOPY_ABORT_FUNC = "usercopy_abort"
_OBJ_CACHE = re.compile(r"(.*?) '(.*)'$")
# the non-slab objects mm/usercopy.c names (every generation), by their
# text without spaces
_FIXED_OBJECTS = {name.replace(" ", ""): name for name in (
    "vmalloc 'no area'", "kernel text", "linear kernel text", "kernel data", "kernel rodata",
    "process stack", "page alloc", "null address", "wrapped address", "spans multiple pages",
    "SLUB object not in SLUB page?!", "kmap", "vmalloc")}
_KBUG = re.compile(r"kernel BUG at (\S+?):(\d+)!?")
_WARN_SITE = re.compile(r"WARNING: (?:CPU: \d+ PID: \d+ )?at (\S+?):(\d+) ?(\S*)")
_WARN_BARE = re.compile(r"WARNING: CPU: \d+ PID: \d+ at\s*$")
# newer kernels: "WARNING: [cond] FILE:LINE at FUNC+0x1/0x2, CPU#N: comm/pid"
_WARN_NEW = re.compile(r"WARNING: (?:\[.*?\] )?(\S+?\.\w+):(\d+) at ([\w.]+)")
_SITE_CONT = re.compile(r"\s*(\S+?):(\d+) (\S+)")
_FUNC_CONT = re.compile(r"\s+([A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+\(\)\s*$")
_KASAN = re.compile(r"BUG: KASAN: (\S+) in (\S+)")
_KASAN_ACCESS = re.compile(r"(Read|Write) of size (\d+)")
_KASAN_CACHE = re.compile(r"which belongs to the cache (\S+)")
_PANIC = re.compile(r"Kernel panic - not syncing:? ?(.*)")
_TAINT = re.compile(r"\b(?:Not tainted|Tainted:[A-Z ]*?)\s+(\d+\.\d+\S*)(?:\s+(#\d+))?")
_DIE = re.compile(r"\[#(\d+)\]")
ELISION = re.compile(r"\s*(?:\.\.\.|\[\.\.\.\]|\.\.\.\s*snip.*|<snip>)\s*$")


def is_plumbing(func: str) -> bool:
    return MACHINERY.fullmatch(func) is not None


@dataclass
class RawReport:
    """Lines the parser grouped into one report, with what it knew."""
    file: str
    line: int
    end_line: int
    lines: list[str]
    stamped: bool = False
    kernel: str | None = None
    lkdtm_address: int | None = None
    secondary: bool = False
    cut: bool = False                   # its call trace stops, other output goes on
    ended: bool = False                 # its end marker was seen
    syz_extra: list[str] = field(default_factory=list)  # more lines for the syz title


# --------------------------------------------------------------- our view
@dataclass
class _Usercopy:
    kind: ReportKind
    direction: Direction
    object: str
    cache: str | None
    offset: int | None
    size: int | None
    cut: bool = False               # the message stops after its object


def _usercopy(lines: list[str]) -> _Usercopy | None:
    for text in lines[:12]:
        if "attempt detected" not in text:
            continue
        uc = _usercopy_line(text)
        if uc is not None:
            return uc
    for text in lines[:12]:
        if "attempt detected" not in text:
            continue
        for kind, pattern in CUT_OBJECT:
            m = pattern.search(text[:MAX_TEXT])
            if not m:
                continue
            if kind is ReportKind.USERCOPY_LEGACY:
                typ = m.group(2)
                obj, cache = (typ.strip("<>"), None) if typ.startswith("<") else ("slab object", typ)
            else:
                obj, cache = _split_object(m.group(2))
            return _Usercopy(kind, Direction(m.group(1)), obj, cache, None, None, cut=True)
    return None


def _usercopy_line(text: str) -> _Usercopy | None:
    for fmt in _UC_GROUP.formats:
        m = fmt.title[0].search(text[:MAX_TEXT])
        if not m:
            continue
        if fmt.kind is ReportKind.USERCOPY_LEGACY:
            typ = m.group(4)
            obj, cache = (typ.strip("<>"), None) if typ.startswith("<") else ("slab object", typ)
            return _Usercopy(fmt.kind, Direction(m.group(1)), obj, cache, None, int(m.group(5)))
        obj, cache = _split_object(m.group(3))
        return _Usercopy(fmt.kind, Direction(m.group(1)), obj, cache, int(m.group(4)),
                         int(m.group(5)))
    return None


def _cut_direction(lines: list[str]) -> Direction | None:
    """The direction a usercopy message cut before its object still names."""
    for text in lines[:12]:
        if "attempt detected" in text and (m := CUT_DIRECTION.search(text[:MAX_TEXT])):
            return Direction(m.group(1))
    return None


def _split_object(text: str) -> tuple[str, str | None]:
    """("SLUB object", "kmalloc-64") from "SLUB object 'kmalloc-64'".

    Only slab objects carry a cache name in the quotes; for the others the
    quoted detail (vmalloc 'no area') stays part of the object."""
    m = _OBJ_CACHE.match(text)
    if m and ("SLUB" in m.group(1) or "SLAB" in m.group(1)):
        return m.group(1), m.group(2)
    # mm/usercopy.c's own object names are fixed text: one a re-wrap broke
    # inside a word (an 80-column copy joined with a space: "vmalloc 'n o
    # area'") is that name
    return _FIXED_OBJECTS.get(text.replace(" ", ""), text), None


# A frame line abridged by hand to the function's name, after a "Call
# Trace:" heading ("   kfifo_copy_to_user", "   copy_header_to_ring   fs/fuse/dev_uring.c:618")
# (one name on the line: with an underscore, or all lower case)
BARE_FRAME = re.compile(r"^\s+((?:(?=\w*_)[A-Za-z_]\w*|[a-z][a-z0-9]*)(?:\.[a-z_]+(?:\.\d+)?)*)"
                        r"(?:\s+\S+\.[ch]:\d+)?\s*$")


def main_frames(lines: list[str], guesses: bool = False) -> list[Frame]:
    """Reliable frames of the report's own call trace (guesses: the "? f"
    and "(unreliable)" ones too)."""
    start = 0
    for i, text in enumerate(lines):
        if "stack backtrace:" in text:
            start = i + 1
            break
    segments: list[list[Frame]] = [[]]
    dropped: list[bool] = []
    taken = False
    in_trace = False
    headed = False                  # a "Call Trace:" heading was seen
    frozen = False                  # frames without a heading ended
    printed = False                 # a frame as the kernel prints it was seen
    bare = False
    for text in lines[start:]:
        if TRACE_HEADING.match(text):
            if taken and headed:
                break
            # frames before the first heading were part of the header
            segments, dropped, taken, in_trace, headed = [[]], [], False, True, True
            frozen = False
            continue
        # right after an exception path's RIP line its code and registers
        # come before the rest of the frames (panic_on_warn on x86)
        if taken and TRACE_END.match(text) and not (dropped and dropped[-1] and not segments[-1]
                                                   and text.startswith("Code: ")):
            if headed:
                break
            frozen = True           # unless a heading follows, these are all
        if frozen:
            continue
        frame = parse_frame(text)
        if frame is None and headed and not printed and (m := BARE_FRAME.match(text)):
            # a trace abridged by hand to bare function names (a commit
            # message): frames while no printed frame says otherwise
            frame = Frame(m.group(1), strip_suffix(m.group(1)), None, None, True)
            bare = True
        if frame is not None:
            in_trace = True
            taken = True
            printed = printed or not bare
            bare = False
            segments[-1].append(frame)
            continue
        if in_trace and segments[-1] and (rip_func(text) or INTERRUPT.match(text)):
            # the frames so far were the exception/panic path into this RIP
            dropped.append(any(EXCEPTION_PATH.fullmatch(f.func) for f in segments[-1]))
            segments.append([])
    dropped.append(False)
    return [f for seg, drop in zip(segments, dropped) if not drop for f in seg
            if f.reliable or guesses]


def _first_guilty(frames: list[str]) -> str | None:
    # frames above the usercopy checks are the reporting path, not callers
    start = next((i for i, f in enumerate(frames) if CHECK_FRAME.fullmatch(f)), 0)
    return next((f for f in frames[start:] if not is_plumbing(f)), None)


def _infer_direction(frames: list[str]) -> Direction | None:
    """The direction the copy primitives of the trace name, when they name
    exactly one: frames below the usercopy checks (those above them are the
    reporting path), every one that is a copy_to_user/copy_from_user-family
    or iov_iter primitive.  None when none is printed or both directions are."""
    start = next((i + 1 for i, f in enumerate(frames) if CHECK_FRAME.fullmatch(f)), 0)
    seen = set()
    for f in frames[start:]:
        if TO_USER.fullmatch(f):
            seen.add(Direction.EXPOSURE)
        elif FROM_USER.fullmatch(f):
            seen.add(Direction.OVERWRITE)
    return seen.pop() if len(seen) == 1 else None


@dataclass
class _Details:
    bug_site: str | None = None
    warn_func: str | None = None
    rip: str | None = None
    kernel: str | None = None
    kasan_type: str | None = None
    kasan_size: int | None = None
    kasan_cache: str | None = None
    panic_msg: str | None = None
    died: int = 0
    extra: dict[str, str] = field(default_factory=dict)


def _details(lines: list[str]) -> _Details:
    d = _Details()
    for i, raw in enumerate(lines):
        text = raw[:MAX_TEXT]
        s = text.strip()
        if d.bug_site is None:
            if "kernel BUG at " in s and (m := _KBUG.search(s)):
                d.bug_site = f"{m.group(1)}:{m.group(2)}"
            elif "WARNING:" in s:
                m = _WARN_SITE.search(s)
                if not m and (m2 := _WARN_NEW.search(s)):
                    d.bug_site = f"{m2.group(1)}:{m2.group(2)}"
                    d.warn_func = strip_suffix(m2.group(3)) or None
                elif m:
                    d.bug_site = f"{m.group(1)}:{m.group(2)}"
                    d.warn_func = strip_suffix(m.group(3).split("+", 1)[0].strip("()")) or None
                    if d.warn_func is None and i + 1 < len(lines) and (
                            m := _FUNC_CONT.match(lines[i + 1])):
                        d.warn_func = strip_suffix(m.group(1))   # 2.6: "func+0x1/0x2()" wrapped
                elif _WARN_BARE.search(s) and i + 1 < len(lines) and (
                        m := _SITE_CONT.match(lines[i + 1])):
                    d.bug_site = f"{m.group(1)}:{m.group(2)}"
                    d.warn_func = strip_suffix(m.group(3).split("+", 1)[0]) or None
        if d.rip is None and ("IP" in s or s.startswith(("pc ", "PC is", "epc", "Krnl PSW"))):
            d.rip = rip_func(s)
        if d.kernel is None and "ainted" in s and (m := _TAINT.search(s)):
            d.kernel = m.group(1) + (" " + m.group(2) if m.group(2) else "")
        if d.kasan_type is None and "BUG: KASAN: " in s and (m := _KASAN.search(s)):
            d.kasan_type = m.group(1)
        if d.kasan_size is None and (m := _KASAN_ACCESS.match(s)):
            d.kasan_size = int(m.group(2))
        if d.kasan_cache is None and "belongs to the cache" in s and (m := _KASAN_CACHE.search(s)):
            d.kasan_cache = m.group(1)
        if d.panic_msg is None and "Kernel panic" in s and (m := _PANIC.search(s)):
            d.panic_msg = m.group(1).strip()
        if not d.died and i < 12 and "[#" in s and (m := _DIE.search(s)):
            d.died = int(m.group(1))
    return d


def _header_text(lines: list[str], syz: SyzResult) -> tuple[str, Group | None]:
    """The first header line, from its header substring on."""
    for text in lines:
        g = header_group(text)
        if g is not None:
            return text[text.find(g.header):].strip(), g
    return (lines[0].strip() if lines else ""), None


def analyze(raw: RawReport) -> Report:
    lines = raw.lines
    syz = syz_describe(lines + raw.syz_extra, raw.stamped)
    d = _details(lines)
    uc = _usercopy(lines)
    head, opener = _header_text(lines, syz)
    frames = main_frames(lines)
    funcs = [f.func for f in frames]
    kind = _kind(syz, opener, uc, d)
    direction: Direction | None = None
    direction_source = obj = cache = offset = size = None
    if uc is not None:
        direction, obj, cache = uc.direction, uc.object, uc.cache
        direction_source = "printed"
        offset, size = uc.offset, uc.size
    elif kind is ReportKind.KASAN:
        size, cache = d.kasan_size, d.kasan_cache
    if kind.is_usercopy:
        guilty = _first_guilty(funcs)
        if guilty is None and not funcs:
            # every frame printed is a guess ("? f": an unwinder that lost
            # the frame pointers, int80 emulation): the guesses are all the
            # trace says; the culprit is the first after the last check
            guessed = [f.func for f in main_frames(lines, guesses=True)]
            last = max((i for i, f in enumerate(guessed) if CHECK_FRAME.fullmatch(f)), default=-1)
            guilty = _first_guilty(guessed[last + 1:]) if last >= 0 else None
        if direction is None:
            # what a printed line says; else what the copy primitives say
            direction = _cut_direction(lines)
            if direction is not None:
                direction_source = "printed"
            else:
                direction = _infer_direction(funcs)
                direction_source = "inferred" if direction else None
    elif syz.frame:
        guilty = strip_suffix(syz.frame)
    elif kind is ReportKind.WARNING and d.warn_func and not is_plumbing(d.warn_func):
        guilty = d.warn_func
    else:
        rip = [d.rip] if d.rip and kind is not ReportKind.PANIC else []
        skip = skip_re(())
        guilty = next((f for f in rip + funcs if not is_plumbing(f) and not skip.search(f)),
                      _first_guilty(rip + funcs))
    syz_title, syz_alt = syz.title, syz.alt
    if opener is _UC_GROUP and (syz.group is None or syz.group.header == "Kernel panic"):
        # the BUG/WARNING line was cut off (the panic it caused is all
        # that follows): the title the whole report has
        whole = syz_describe(lines, raw.stamped, only=_UC_GROUP)
        syz_title, syz_alt = whole.title, whole.alt
    # Truncated: the report cannot say what it is.  Its header lost its
    # details (syzkaller: corrupted), its call trace was cut where other
    # output goes on, a usercopy report lacks its message or a frame to
    # blame (an empty "Call Trace:" is not a whole trace), or neither
    # syzkaller's reading nor ours finds a frame outside the reporting
    # machinery.  Where syzkaller finds no frame only because it does not
    # know the layout, ours count: a trace without any heading (riscv's
    # die(), ARM's unwinder in 6.1), or a faulting-function line its RIP
    # pattern does not read (mips "epc   :", s390 "Krnl PSW").
    if kind.is_usercopy:
        # a usercopy report says what it is by its message and its culprit;
        # syzkaller's corruption verdict is about its own title (a layout
        # it does not read, a frame it would skip), not these
        truncated = raw.cut or uc is None or uc.cut or not guilty
    elif syz.group is not None:
        truncated = raw.cut or syz.corrupted and not (
            syz.frames_only and _layout_unknown_to_syz(raw, funcs, d.rip, syz))
    else:
        truncated = raw.cut or not funcs
    rep = Report(file=raw.file, line=raw.line, kind=kind, end_line=raw.end_line,
                 direction=direction, direction_source=direction_source, object=obj,
                 cache=cache, offset=offset, size=size, bug_site=d.bug_site, rip=d.rip,
                 guilty_frame=guilty, frames=funcs,
                 frame_addresses=[f.address for f in frames], kernel=d.kernel or raw.kernel,
                 lkdtm_address=raw.lkdtm_address, truncated=truncated,
                 syz_title=syz_title, syz_alt=syz_alt,
                 secondary=raw.secondary or d.died > 1, lines=list(lines))
    # named from its own fields: our title and the signature
    detail = d.kasan_type if kind is ReportKind.KASAN else \
        d.panic_msg if kind is ReportKind.PANIC else ""
    title = make_title(rep, head, detail or "")
    return replace(rep, title=title, signature=make_signature(rep, title))


def _layout_unknown_to_syz(raw: RawReport, frames: list[str], rip: str | None,
                           syz: SyzResult) -> bool:
    lines = raw.lines
    skip = skip_re(())
    good = [f for f in frames if not is_plumbing(f) and not skip.search(f)]
    if good and not any(CALL_TRACE.search(t) for t in lines) and (
            raw.ended or (not raw.cut and any(ELISION.match(t) or TRACE_ENDED.match(t)
                                              for t in lines))):
        # a trace without a heading that ran to its end marker, or an
        # excerpt that marks what it left out ("...", "[...]")
        return True
    stack = syz.fmt.stack if syz.fmt is not None else None
    wants_rip = stack is not None and stack.parts[:1] == (RIP_LINE,)
    return (wants_rip and rip is not None and not skip.search(rip)
            and not any(RIP_LINE.search(t) for t in lines))


def _kind(syz: SyzResult, opener: Group | None, uc: _Usercopy | None,
          d: _Details) -> ReportKind:
    if uc is not None:
        return uc.kind
    if d.rip == USERCOPY_ABORT_FUNC and d.bug_site is None:
        # a BUG() in usercopy_abort whose line names no file (ARM's "Kernel
        # BUG at usercopy_abort+0x98/0x9c", the message lost)
        return ReportKind.USERCOPY_ABORT
    if syz.group is not None:
        kind = syz.fmt.kind if syz.fmt is not None else syz.group.formats[-1].kind
        if kind is ReportKind.USERCOPY_ABORT and d.rip not in (None, USERCOPY_ABORT_FUNC):
            return ReportKind.USERCOPY_LEGACY
        if kind in (ReportKind.BUG, ReportKind.WARNING) and d.bug_site \
                and d.bug_site.startswith("mm/usercopy.c"):
            return ReportKind.USERCOPY_WARN if kind is ReportKind.WARNING \
                else ReportKind.USERCOPY_ABORT
        return kind
    if opener is not None:
        return opener.formats[0].kind
    return ReportKind.BUG
