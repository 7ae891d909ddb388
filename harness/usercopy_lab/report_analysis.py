"""What one report says: kind, usercopy fields, frames, blame, titles.

analyze() takes the lines the parser grouped into one report (normalized,
other CPUs' and programs' lines already left out) and fills a Report:

- syzkaller's view (syz_describe): the first line with a syzkaller header
  picks a Group; the Format whose title matches earliest names the report;
  its Stack parts pick the blamed frame, skipping the reporting machinery
  (report_formats.SKIP and the format's own skip list); the title template
  gives syz_title.  A report whose header lost its details, whose trace has
  no frame to blame, or whose call trace heading is followed by no frame
  is corrupted, as syzkaller says.
- ours: the usercopy message fields, bug site, RIP, the main call trace's
  reliable frames (after the RIP line when the trace starts with the
  panic/WARN path, as with panic_on_warn), the guilty frame (for usercopy
  the first frame outside the usercopy machinery, otherwise syzkaller's),
  title, signature, and truncated: the report cannot say what it is (its
  header details are missing, or it has no frame to blame).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from .frames import Frame, parse_frame, rip_func, strip_suffix
from .report_formats import (CALL_TRACE, CORRUPTED_LINES, CUT_OBJECT, EXCEPTION_PATH, FRAME_LINES, FROM_USER,
                             GROUPS, HANG_ANCHORS, HANG_SKIP, INLINE_COPY, INTERRUPT, MACHINERY,
                             QUESTIONABLE,
                             REPORT_MIN_LINES, REPORT_MIN_LINES_KMSAN, RIP_LINE, RISCV_STACK_START,
                             SKIP, STACK_START, STALL_ANCHORS, TO_USER, TRACE_END, TRACE_HEADING,
                             STRIP_PREFIXES, TRACE, Format, Group, Stack, header_group)
from .report_formats import CHECK_FRAME, CUT_DIRECTION, TRACE_ENDED
from .report_model import Report
from .report_naming import make_signature, make_title, syz_normalize

MAX_TEXT = 512             # characters of a line that patterns look at (patterns
                           # like "WARNING: .* at" cost up to length squared)
MAX_TITLE_LINES = 400      # lines a title or detail pattern is searched in

# ------------------------------------------------------------- our fields
_UC_GROUP = next(g for g in GROUPS if g.header == "usercopy")
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


# ---------------------------------------------------------- syzkaller view
@dataclass
class SyzResult:
    title: str = ""
    corrupted: bool = False
    frame: str | None = None            # raw name of the blamed frame
    frames_only: bool = False           # corrupted only for want of frames
    alt: list[str] = field(default_factory=list)   # syzkaller's alternative titles
    fmt: Format | None = None
    group: Group | None = None
    header_line: int = -1               # index in the report's lines


@dataclass
class _Match:
    line: int
    col: int
    groups: list[str | None]


def _match_seq(patterns: tuple[re.Pattern[str], ...], lines: list[str]) -> _Match | None:
    """patterns[0] searched from the top, each next one on a later line.
    A pattern that may span lines ([\\s\\S]) also sees the line after."""
    first = patterns[0]
    spans = "[\\s\\S]" in first.pattern
    for i, text in enumerate(lines):
        if spans and i + 1 < len(lines):
            text = text + "\n" + lines[i + 1]
        m0 = first.search(text)
        if not m0:
            continue
        groups: list[str | None] = list(m0.groups())
        j = i
        for pattern in patterns[1:]:
            for k in range(j + 1, len(lines)):
                mk = pattern.search(lines[k])
                if mk:
                    groups.extend(mk.groups())
                    j = k
                    break
            else:
                return None
        return _Match(i, m0.start(), groups)
    return None


@functools.lru_cache(maxsize=None)
def _skip_re(extra: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(SKIP + extra))


def _strip_prefix(frame: str) -> str:
    best = frame
    for prefix in STRIP_PREFIXES:
        if frame.startswith(prefix) and len(frame) - len(prefix) < len(best):
            best = frame[len(prefix):]
    return best


def _extract(stack: Stack, frames: list[str]) -> tuple[str, str]:
    """(canonical, raw) blamed frame of the candidates, or ("", "")."""
    if not frames:
        return "", ""
    stripped = [_strip_prefix(f) for f in frames]
    if stack.extractor == "stall":
        idx, name = _stall_frame(stripped)
    elif stack.extractor == "hang":
        idx, name = _hang_frame(stripped)
    else:
        idx, name = 0, stripped[0]
    return (name, frames[idx]) if idx >= 0 else ("", "")


def _stall_frame(frames: list[str]) -> tuple[int, str]:
    """The frame above the first deep anchor (syscall, work, softirq)."""
    prev = 0
    for i, frame in enumerate(frames):
        if any(a.search(frame) for a in STALL_ANCHORS):
            if "smp_call_function" in frame:
                return i, "smp_call_function"
            return prev, frames[prev]
        prev = i
    return -1, ""


def _hang_frame(frames: list[str]) -> tuple[int, str]:
    for i, frame in enumerate(frames):
        for anchor, replacement in HANG_ANCHORS:
            if anchor in frame:
                return i, replacement or frame
    for i, frame in enumerate(frames):
        if not any(word in frame for word in HANG_SKIP):
            return i, frame
    return -1, ""


_CXX_LEN = re.compile(r"(\d+)")


def demangle(name: str) -> str:
    """The plain name of a C++ (Itanium ABI) symbol, without parameters:
    "_Z8fakeNameiii" -> "fakeName", "_ZN2ns4funcEv" -> "ns::func"."""
    if not name.startswith("_Z") or len(name) < 4:
        return name
    pos, nested = (3, True) if name[2] == "N" else (2, False)
    parts = []
    while pos < len(name):
        m = _CXX_LEN.match(name, pos)
        if not m:
            break
        n = int(m.group(1))
        start = m.end()
        if n == 0 or start + n > len(name):
            return name
        parts.append(name[start:start + n])
        pos = start + n
        if not nested or name[pos:pos + 1] == "E":
            break
    return "::".join(parts) if parts else name


def _frame_groups(line: str) -> list[str] | None:
    for pattern in FRAME_LINES:
        m = pattern.search(line)
        if m:
            return [g for g in m.groups() if g is not None]
    return None


def _stack_frames(stack: Stack, parts: tuple[object, ...],
                  lines: list[str]) -> tuple[list[tuple[str, str]], bool]:
    """Walk parts over lines; one blamed frame per trace part group."""
    skip = _skip_re(stack.skip)
    raw: list[str] = []
    results: list[tuple[str, str]] = []
    ok = True
    traces = 0
    pos = 0
    pi = 0

    def take(names: list[str | None]) -> None:
        for name in names:
            if name is not None:
                name = demangle(name)
                if not skip.search(name):
                    raw.append(name)

    while True:
        if pi == len(parts) or (parts[pi] is TRACE and traces > 0):
            key = _extract(stack, raw)
            if not key[0]:
                key, ok = ("corrupted", "corrupted"), False
            results.append(key)
            raw = []
        if pi == len(parts):
            break
        part = parts[pi]
        if part is TRACE:
            traces += 1
            while pos < len(lines):
                text = lines[pos]
                pos += 1
                if any(c.search(text) for c in CORRUPTED_LINES):
                    ok = False
                    break
                if any(s.search(text) for s in STACK_START):
                    # riscv's register dump ends with the status line and
                    # its frames follow without a heading: no end yet
                    if raw or not RISCV_STACK_START.search(text):
                        break
                    continue
                if pi + 1 < len(parts):
                    m = parts[pi + 1].search(text)  # type: ignore[union-attr]
                    if m:
                        take(list(m.groups()))
                        pi += 1
                        break
                names = _frame_groups(text)
                if names:
                    take(list(names))
        else:
            while pos < len(lines):
                text = lines[pos]
                pos += 1
                if any(c.search(text) for c in CORRUPTED_LINES):
                    ok = False
                    break
                m = part.search(text)  # type: ignore[union-attr]
                if m:
                    take(list(m.groups()))
                    break
        pi += 1
    return results, ok


def _format_title(template: str, args: list[str]) -> str:
    return template.format("", *args) if template else ""


def _alt_titles(fmt: Format, args: list[str], frames: list[tuple[str, str]]) -> list[str]:
    """syzkaller's alternative titles: the format's alternatives, and the
    title and those with the blamed frames as printed and with each one
    syscall prefix stripped (a bug first seen under an older stripping
    rule keeps that title, and syzbot still finds it by these)."""
    canonical = [c for c, _ in frames]
    out = [_format_title(a, args + canonical) for a in fmt.alt]
    for prefix in ("",) + STRIP_PREFIXES:
        trimmed = [r[len(prefix):] if prefix and r.startswith(prefix) else r for _, r in frames]
        if prefix and trimmed == [r for _, r in frames]:
            continue
        for template in (fmt.syz,) + fmt.alt:
            out.append(_format_title(template, args + trimmed))
    return out


def syz_lines(lines: list[str], stamped: bool) -> list[str]:
    """The report text syzkaller reads: questionable frames and lock
    debugging notes dropped, and a panic (or a lockdep splat) that comes
    after enough report lines left out with all that follows."""
    if not lines:
        return []
    min_lines = REPORT_MIN_LINES_KMSAN if "BUG: KMSAN:" in lines[0] else REPORT_MIN_LINES
    out: list[str] = []
    counted = 0
    for i, text in enumerate(lines):
        if i and stamped and "<EOI>" not in text:
            if QUESTIONABLE.search(text) or text.endswith(" (unreliable)"):
                continue
        counted += 1
        if i and "Disabling lock debugging due to kernel taint" in text:
            continue
        if i and counted > min_lines and (
                "Kernel panic - not syncing" in text
                or "WARNING: possible circular locking dependency detected" in text):
            break
        out.append(text)
    return out


def syz_describe(lines: list[str], stamped: bool, only: Group | None = None) -> SyzResult:
    """syzkaller's title and corruption verdict for a report's lines (only:
    read them as a report of this group, even one syzkaller does not know)."""
    lines = [t for t in lines if not INLINE_COPY.search(t)]
    start, group = -1, None
    for i, text in enumerate(lines):
        g = header_group(text)
        if g is not None and (g.syz or g is only):
            start, group = i, g
            break
    if group is None:
        return SyzResult()
    text = syz_lines([t[:MAX_TEXT] for t in lines[start:]], stamped)
    res = SyzResult(group=group, header_line=start)
    best: tuple[int, int] | None = None
    desc = ""
    reason = ""
    matched_title = False
    head = text[:MAX_TITLE_LINES]
    for fmt in group.formats:
        m = _match_seq(fmt.title, head)
        if m is None:
            continue
        pos = (m.line, m.col)
        if best is not None and (pos > best or (pos == best and desc)):
            continue
        if best is None or pos < best:
            desc, res.fmt, best = "", None, pos
        matched_title = True
        if fmt.detail:
            m = _match_seq(fmt.detail, head)
            if m is None:
                continue
        args = [g or "" for g in m.groups]
        reason = ""
        frames: list[tuple[str, str]] = []
        if fmt.stack is not None:
            tail = [text[m.line][m.col:]] + text[m.line + 1:]
            frames, ok = _stack_frames(fmt.stack, fmt.stack.parts, tail)
            if not ok and fmt.stack.parts2:
                frames, ok = _stack_frames(fmt.stack, fmt.stack.parts2, tail)
            if not ok:
                reason = "no frames"
        desc = _format_title(fmt.syz, args + [c for c, _ in frames])
        res.alt = _alt_titles(fmt, args, frames)
        res.fmt = fmt
        res.frame = next((r for c, r in frames if c != "corrupted"), None)
    if not desc:
        if matched_title:
            reason = "matched title but not report regexp"
        for t in text:
            pos = t.find(group.header)
            if pos >= 0:
                desc = t[pos:]
                break
        res.fmt = None
    elif res.fmt is not None and res.fmt.corrupted and not reason:
        reason = "format is corrupted"
    res.title = syz_normalize(desc)
    res.alt = [a for a in dict.fromkeys(syz_normalize(t) for t in res.alt) if a != res.title]
    if not reason:
        reason = _syz_corrupted(res.title, text, res.fmt)
    res.corrupted = bool(reason)
    res.frames_only = reason in ("no frames", "no stack trace")
    return res


_TITLE_STAMP = re.compile(r"\[ *[0-9]+\.[0-9]+\]")


def _syz_corrupted(title: str, text: list[str], fmt: Format | None) -> str:
    """Why syzkaller would call the report corrupted ("" if it would not)."""
    if _TITLE_STAMP.search(title):
        return "timestamp in title"
    if fmt is None or fmt.no_stack_trace:
        return ""
    has_stack = False
    for key in STACK_START:
        at = next(((i, m.start()) for i, t in enumerate(text) if (m := key.search(t))), None)
        if at is None:
            continue
        i, col = at
        rest = [text[i][col:]] + text[i + 1:]
        if len(rest) + 1 < 4:
            return "no stack trace"
        corrupted = True
        for t in rest[1:16]:
            if any(k.search(t) for k in STACK_START):
                break
            if "(stack is not available)" in t or _frame_groups(t) is not None:
                has_stack, corrupted = True, False
                break
        if key is not RISCV_STACK_START and corrupted:
            return "no stack trace"
    return "" if has_stack else "no stack trace"


# --------------------------------------------------------------- our view
@dataclass
class _Usercopy:
    kind: str
    direction: str
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
            if kind == "usercopy_legacy":
                typ = m.group(2)
                obj, cache = (typ.strip("<>"), None) if typ.startswith("<") else ("slab object", typ)
            else:
                obj, cache = _split_object(m.group(2))
            return _Usercopy(kind, m.group(1), obj, cache, None, None, cut=True)
    return None


def _usercopy_line(text: str) -> _Usercopy | None:
    for fmt in _UC_GROUP.formats:
        m = fmt.title[0].search(text[:MAX_TEXT])
        if not m:
            continue
        if fmt.kind == "usercopy_legacy":
            typ = m.group(4)
            obj, cache = (typ.strip("<>"), None) if typ.startswith("<") else ("slab object", typ)
            return _Usercopy(fmt.kind, m.group(1), obj, cache, None, int(m.group(5)))
        obj, cache = _split_object(m.group(3))
        return _Usercopy(fmt.kind, m.group(1), obj, cache, int(m.group(4)), int(m.group(5)))
    return None


def _cut_direction(lines: list[str]) -> str | None:
    """The direction a usercopy message cut before its object still names."""
    for text in lines[:12]:
        if "attempt detected" in text and (m := CUT_DIRECTION.search(text[:MAX_TEXT])):
            return m.group(1)
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


def _infer_direction(frames: list[str]) -> str | None:
    """The direction the copy primitives of the trace name, when they name
    exactly one: frames below the usercopy checks (those above them are the
    reporting path), every one that is a copy_to_user/copy_from_user-family
    or iov_iter primitive.  None when none is printed or both directions are."""
    start = next((i + 1 for i, f in enumerate(frames) if CHECK_FRAME.fullmatch(f)), 0)
    seen = set()
    for f in frames[start:]:
        if TO_USER.fullmatch(f):
            seen.add("exposure")
        elif FROM_USER.fullmatch(f):
            seen.add("overwrite")
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
    rep = Report(file=raw.file, line=raw.line, kind="bug", end_line=raw.end_line,
                 lkdtm_address=raw.lkdtm_address, secondary=raw.secondary or d.died > 1)
    rep.lines = list(lines)
    rep.frames = [f.func for f in frames]
    rep.frame_addresses = [f.address for f in frames]
    rep.bug_site, rep.rip = d.bug_site, d.rip
    rep.kernel = d.kernel or raw.kernel
    rep.kind = _kind(syz, opener, uc, d)
    if uc is not None:
        rep.direction, rep.object, rep.cache = uc.direction, uc.object, uc.cache
        rep.direction_source = "printed"
        rep.offset, rep.size = uc.offset, uc.size
    elif rep.kind == "kasan":
        rep.size, rep.cache = d.kasan_size, d.kasan_cache
    if rep.kind.startswith("usercopy"):
        rep.guilty_frame = _first_guilty(rep.frames)
        if rep.guilty_frame is None and not rep.frames:
            # every frame printed is a guess ("? f": an unwinder that lost
            # the frame pointers, int80 emulation): the guesses are all the
            # trace says; the culprit is the first after the last check
            guessed = [f.func for f in main_frames(lines, guesses=True)]
            last = max((i for i, f in enumerate(guessed) if CHECK_FRAME.fullmatch(f)), default=-1)
            rep.guilty_frame = _first_guilty(guessed[last + 1:]) if last >= 0 else None
        if rep.direction is None:
            # what a printed line says; else what the copy primitives say
            rep.direction = _cut_direction(lines)
            if rep.direction is not None:
                rep.direction_source = "printed"
            else:
                rep.direction = _infer_direction(rep.frames)
                rep.direction_source = "inferred" if rep.direction else None
    elif syz.frame:
        rep.guilty_frame = strip_suffix(syz.frame)
    elif rep.kind == "warning" and d.warn_func and not is_plumbing(d.warn_func):
        rep.guilty_frame = d.warn_func
    else:
        rip = [d.rip] if d.rip and rep.kind != "panic" else []
        skip = _skip_re(())
        rep.guilty_frame = next((f for f in rip + rep.frames
                                 if not is_plumbing(f) and not skip.search(f)),
                                _first_guilty(rip + rep.frames))
    detail = d.kasan_type if rep.kind == "kasan" else d.panic_msg if rep.kind == "panic" else ""
    rep.title = make_title(rep, head, detail or "")
    rep.syz_title = syz.title
    rep.syz_alt = syz.alt
    if opener is _UC_GROUP and (syz.group is None or syz.group.header == "Kernel panic"):
        # the BUG/WARNING line was cut off (the panic it caused is all
        # that follows): the title the whole report has
        syz = syz_describe(lines, raw.stamped, only=_UC_GROUP)
        rep.syz_title, rep.syz_alt = syz.title, syz.alt
    rep.signature = make_signature(rep)
    # Truncated: the report cannot say what it is.  Its header lost its
    # details (syzkaller: corrupted), its call trace was cut where other
    # output goes on, a usercopy report lacks its message or a frame to
    # blame (an empty "Call Trace:" is not a whole trace), or neither
    # syzkaller's reading nor ours finds a frame outside the reporting
    # machinery.  Where syzkaller finds no frame only because it does not
    # know the layout, ours count: a trace without any heading (riscv's
    # die(), ARM's unwinder in 6.1), or a faulting-function line its RIP
    # pattern does not read (mips "epc   :", s390 "Krnl PSW").
    if rep.kind.startswith("usercopy"):
        # a usercopy report says what it is by its message and its culprit;
        # syzkaller's corruption verdict is about its own title (a layout
        # it does not read, a frame it would skip), not these
        rep.truncated = raw.cut or uc is None or uc.cut or not rep.guilty_frame
    elif syz.group is not None:
        rep.truncated = raw.cut or syz.corrupted and not (
            syz.frames_only and _layout_unknown_to_syz(raw, rep.frames, d.rip, syz))
    else:
        rep.truncated = raw.cut or not rep.frames
    return rep


def _layout_unknown_to_syz(raw: RawReport, frames: list[str], rip: str | None,
                           syz: SyzResult) -> bool:
    lines = raw.lines
    skip = _skip_re(())
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


def _kind(syz: SyzResult, opener: Group | None, uc: _Usercopy | None, d: _Details) -> str:
    if uc is not None:
        return uc.kind
    if d.rip == "usercopy_abort" and d.bug_site is None:
        # a BUG() in usercopy_abort whose line names no file (ARM's "Kernel
        # BUG at usercopy_abort+0x98/0x9c", the message lost)
        return "usercopy_abort"
    if syz.group is not None:
        kind = syz.fmt.kind if syz.fmt is not None else syz.group.formats[-1].kind
        if kind == "usercopy_abort" and d.rip not in (None, "usercopy_abort"):
            return "usercopy_legacy"
        if kind in ("bug", "warning") and d.bug_site and d.bug_site.startswith("mm/usercopy.c"):
            return "usercopy_warn" if kind == "warning" else "usercopy_abort"
        return kind
    if opener is not None:
        return opener.formats[0].kind
    return "bug"
