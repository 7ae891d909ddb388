"""syzkaller's view of a report: its title rules, re-expressed from
google/syzkaller pkg/report/linux.go (Apache-2.0) over the formats table
(report_formats.GROUPS).

syz_describe(): the first line with a syzkaller header picks a Group; the
Format whose title matches earliest names the report; its Stack parts pick
the blamed frame, skipping the reporting machinery (format_parts.SKIP and
the format's own skip list); the title template gives the title and its
alternatives.  A report whose header lost its details, whose trace has no
frame to blame, or whose call trace heading is followed by no frame is
corrupted, as syzkaller says.  The lab's own fields: report_analysis.py."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from ..model import ReportKind
from .format_parts import (CORRUPTED_LINES, FRAME_LINES, Format, Group, HANG_ANCHORS, HANG_SKIP,
                           QUESTIONABLE, RISCV_STACK_START, SKIP, STACK_START, STALL_ANCHORS,
                           STRIP_PREFIXES, Stack, TRACE)
from .report_naming import syz_normalize
from .trace_layout import INLINE_COPY, REPORT_MIN_LINES, REPORT_MIN_LINES_KMSAN, header_group

MAX_TEXT = 512             # characters of a line that patterns look at (patterns
                           # like "WARNING: .* at" cost up to length squared)
MAX_TITLE_LINES = 400      # lines a title or detail pattern is searched in



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
def skip_re(extra: tuple[str, ...]) -> re.Pattern[str]:
    """The frames a title skips: syzkaller's common list and a stack's own."""
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
    if stack.extractor is ReportKind.STALL:
        idx, name = _stall_frame(stripped)
    elif stack.extractor is ReportKind.HANG:
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
    skip = skip_re(stack.skip)
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
