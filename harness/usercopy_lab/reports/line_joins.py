"""Continuation joining: when a line is the rest of the line before it,
which an open report took (a kernel line wrapped by a mailer or a bug
tracker, or a header printed in pieces), and how the two are joined."""
from __future__ import annotations

import re

from .log_lines import LogLine
from .open_report import OpenReport
from .report_lines import context, starts_kernel_line
from .trace_layout import SOURCE_TAIL, header_group

WRAP_WIDTH = 70               # a line this long may have been wrapped
# The lab harness's own lines in a captured console (console_capture): never
# the rest of a kernel line, however unfinished that line is.
HARNESS_PREFIXES = ("# usercopy-lab: ", "# qemu: ")

# a kernel message cannot end with these words; a line that does was wrapped
_OPEN_WORD = re.compile(r"\b(?:at|from|to|in|of|for|on|by|with)$")


def continues_line(last: OpenReport, lineno: int, ll: LogLine, still_open: bool) -> bool:
    """Whether ll (line lineno) is the rest of the line that last took
    just before; still_open: last is still its context's open report."""
    if (ll.foreign or not ll.text.strip() or last.last.number != lineno - 1
            or not still_open or ll.text.startswith(HARNESS_PREFIXES)):
        return False
    if last.last.broken:
        # a header broken before its end (by a mailer, or printed in
        # pieces): the next line of its context completes it, indented
        # (a commit message) or not, even where a mailer's wrap lost the
        # quote marks of the rest
        return ((context(ll) == last.ctx or not (ll.stamped or ll.caller))
                and ll.quote <= last.last.quote and not starts_kernel_line(ll.text.lstrip()))
    if ll.quote != last.last.quote:
        return False
    if ll.stamped or ll.caller:
        return False
    if SOURCE_TAIL.match(ll.text):
        return True
    prev = last.raw.lines[-1]
    if last.raw.stamped:
        # an unstamped line after a stamped one: wrapped by a mailer or tracker
        return prev.endswith(" ") or last.last.width >= WRAP_WIDTH or bool(_OPEN_WORD.search(prev))
    # No stamps (a mail): format=flowed's soft break ends a line with a
    # space (the kernel's own lines can too, but then a kernel line
    # follows); a hard wrap before a word no kernel message ends with.
    return ((prev.endswith(" ") or bool(_OPEN_WORD.search(prev)))
            and not starts_kernel_line(ll.text))


def join_line(last: OpenReport, lineno: int, ll: LogLine, text: str) -> None:
    """Join text, the rest of last's last line (continues_line), to it."""
    prev = last.raw.lines[-1]
    if prev.endswith("  "):
        prev = prev[:-1]        # format=flowed; DelSp=yes added one
    broken = last.last.broken
    if broken:
        text = text.lstrip()
    # a mailer wraps between words (the space is gone), a tracker at a
    # fixed width, maybe inside a word: a broken header takes the join its
    # group's formats read, else the width decides
    glue = " " if not prev.endswith(" ") and (
        (broken and last.last.width < WRAP_WIDTH) or _OPEN_WORD.search(prev)
        or SOURCE_TAIL.match(text)) else ""
    if broken and not prev.endswith(" "):
        glue = cut_glue(prev, text, glue)
    last.rejoin(lineno, ll.width, prev + glue + text)


def cut_glue(prev: str, text: str, default: str) -> str:
    """"" or " " between a broken header and its rest.  Only a break inside
    a word (letters or digits on both sides) can do without a space; there
    the width's guess stands unless only the other join lets a format of
    the header's group read the line ("detected" + "from")."""
    if not (prev[-1:].isalnum() and text[:1].isalnum()):
        return " "
    group = header_group(prev)
    if group is None:
        return default
    other = "" if default else " "

    def reads(glue: str) -> bool:
        joined = prev + glue + text
        return any(f.title[0].groups and f.title[0].search(joined) for f in group.formats)

    return other if not reads(default) and reads(other) else default
