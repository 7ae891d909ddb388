"""One raw console/dmesg/syslog line -> the kernel message and its context.

Strips, in this order: line ends and carriage returns (text after the last
CR wins, as on a terminal), NUL and other control bytes, ANSI escape
sequences, mail quoting ("> ", ">> "), what another writer glued in front
of a kernel line ("host login: ", "** 5 printk messages dropped ** ",
shell output before a timestamp), a syslog / journalctl prefix ("Aug 23
10:00:01 host kernel: ", ISO dates, bare "kernel: "), /dev/kmsg records
("4,123,456,-;"), printk levels ("<4>"), timestamps ("[   12.345678]",
dmesg -T "[Thu Dec  3 10:00:01 2020]", dmesg --time-format=iso),
PRINTK_CALLER ids ("[T123]", "[    C1]"), the stars a mailer puts
around bold words ("*(kmalloc-64) (192 bytes*)"), and encoding debris
(mojibake of non-breaking spaces and quotes: "Â ", "A " before frames,
"â€™", curly quotes).

parse_line() also says whether the line carried a kernel prefix (stamped)
and which caller id it had, so the parser can keep lines of one report
together when CPUs or programs interleave.  Lines that are not kernel
messages (shell output, other syslog programs) pass through with only line
ends, control bytes and escapes removed.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][A-Za-z0-9]|[=>78cDEHM])")
# C0 controls but TAB and ESC, and DEL: binary junk in a text log
_CONTROL: dict[int, str | None] = {c: None for c in (*range(0, 9), *range(10, 27), *range(28, 32), 127)}
# mailers and web pages indent with non-breaking and other Unicode spaces
_CONTROL.update({c: " " for c in (0xa0, *range(0x2000, 0x200b), 0x202f, 0x205f, 0x3000)})
_CONTROL.update({c: None for c in (0x200b, 0xfeff)})

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_SYSLOG_DATE = rf"(?:{_MONTH} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?|\d{{4}}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
# "Aug 23 10:00:01 host kernel: " / "2019-08-23T10:00:01+0000 host kernel: " /
# "kernel: " (as quoted in commit messages).
_SYSLOG_KERNEL = re.compile(rf"^(?:<\d{{1,3}}>)?(?:{_SYSLOG_DATE} \S+ )?kernel(?:\[\d+\])?: ?")
# another program's syslog line: "Aug 23 10:00:02 host myapp[123]: "
_SYSLOG_OTHER = re.compile(rf"^(?:<\d{{1,3}}>)?{_SYSLOG_DATE} \S+ [^\s:\[]+(?:\[\d+\])?: ")
# journalctl -o short-monotonic: "[   12.345678] host kernel: "
_HOST_KERNEL = re.compile(r"^\S+ kernel: ?")
_KMSG = re.compile(r"^\d+,\d+,\d+,[-c+][^;]*;")
_LEVEL = re.compile(r"^<\d{1,3}>")
_STAMP = re.compile(
    # "[   12.345678]"; vendor kernels add the CPU ("[    0.000000,0]", Qualcomm)
    # or a unit ("[  253.955444s]", HiSilicon)
    rf"^\[(?:\s*\d+\.\d+(?:,\d+|s)?|{_DAY} {_MONTH} [ \d]\d \d\d:\d\d:\d\d \d{{4}})\]"
    r"|^\[\](?= )"                       # timestamps cut out by hand: "[] "
    r"|^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[.,]\d+[+-]\d\d:?\d\d(?= )")
_CALLER = re.compile(r"^\[\s*([TC]\d+)\]")
# mail quoting: "> ", ">> ", "> > ", " > " (some mailers indent it)
_QUOTE = re.compile(r"^ ?(?:>(?: {1,2}(?=>)| ?))+")
_DROPPED = re.compile(r"^\*\* \d+ printk messages dropped \*\* ?")
_LOGIN = re.compile(r"^\S+ login: ")
# What a tool writes in front of a kernel line, before the kernel's own
# prefix (level, timestamp): one row per format, (name, pattern), tried as
# one alternation at the line's start (after mail quoting).  A new tool's
# format is a new row.
TOOL_PREFIXES: tuple[tuple[str, str], ...] = (
    # dmesg -x / --decode ("kern  :emerg : "), also as a test harness
    # records it after its own timestamp ("2023-02-09T04:57:30.752403  kern  :emerg : ")
    ("dmesg --decode", r"\s*(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[.,]\d+\S*\s+)?"
     r"(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local[0-7])"
     r" *:(?:emerg|alert|crit|err|warn|notice|info|debug) *: "),
    # journalctl -o short-unix ("1733390401.123456 host kernel: ")
    ("journalctl short-unix", r"\d{9,10}\.\d{6} \S+ kernel: ?"),
    # adb logcat -b kernel, threadtime ("12-05 10:00:01.123     0     0 E         : "):
    # logd files kernel messages under pid 0; the padded tag is empty, or the
    # message's own "subsystem:" (kept)
    # ("-v year": "2026-08-20 ...", "-v uid": "  root     0     0 ")
    ("logcat -b kernel", r"(?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\s+(?:[a-z]\w*\s+)?0\s+0 "
     r"[VDIWEFS] (?: +: )?"),
)
_TOOL = re.compile("^(?:" + "|".join(f"(?:{p})" for _, p in TOOL_PREFIXES) + ")")
# logcat pads the tag it took from a kernel message ("amdgpu  : Topology")
_PADDED_TAG = re.compile(r"^([\w.-]+) +: ")
# What the kernel or a vendor's printk writes after the timestamp to say
# which task or CPU printed the line: (name, pattern, spaces it puts before
# the message, whether it needs a timestamp before it).  The pattern's
# group "id" is the caller id (T<pid>, C<cpu>).
CALLER_IDS: tuple[tuple[str, str, int, bool], ...] = (
    # CONFIG_PRINTK_CALLER ("[  T123]", "[    C1]"), also on serial consoles
    ("PRINTK_CALLER", r"\[\s*(?P<id>[TC]\d+)\]", 1, False),
    # MediaTek's Android kernels: "(cpu)[pid:comm]" after a state mark
    # (" ", ".", "-", "*") and sometimes a level ("<0>"), the message glued on
    ("MediaTek", r" ?(?:<\d>)?[ .*-]?\(\d+\)\[(?P<id>\d+):[^\]]*\]", 0, True),
    # Samsung's Exynos kernels: "[cpu:  comm:  pid]"
    ("Samsung", r" ?\[\d+: *[^\]]*?: *(?P<id>\d+)\]", 1, True),
)
_CALLERS = tuple((re.compile("^" + pattern), spaces, stamp)
                 for _, pattern, spaces, stamp in CALLER_IDS)
# "*...*" a mailer made of bold or emphasised words (Gmail's text part of an
# HTML mail): the stars open after a space or "(" before a non-space and
# close after a non-space before a space, punctuation or the line end;
# C ("*ptr", "(u32 *)"), "**" and x86's "*pde = " are not emphasis
_EMPHASIS = re.compile(r"(?:^|(?<=[\s(\[]))\*(?=[^\s*])([^*]*?[^\s*])\*(?=$|[\s).,;:!?\]])")
# Encoding debris of text that went through the wrong charset (a UTF-8
# mail or web page read as Latin-1 / cp1252 and written back as UTF-8, or
# smart quotes a blog or word processor put in): a non-breaking space
# became "Â " (twice mangled: "Ã‚Â "), quotes became "â€˜"/"â€™"/"â€œ",
# dashes "â€“"; curly quotes stand for the kernel's ASCII ones; an
# undecodable byte (U+FFFD) in a line's indentation was a non-breaking
# space.  (pattern, replacement) rows, applied in order to lines that are
# not ASCII.
_MOJIBAKE: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile("(?:\u00c3\u201a|\u00c3\u0082)?\u00c2(?:\u00a0| )"), " "),
    (re.compile("\u00e2\u20ac[\u201c\u201d]|[\u2013\u2014]"), "-"),    # before the quotes
    (re.compile("\u00e2\u20ac[\u02dc\u2122]|[\u2018\u2019]"), "'"),
    (re.compile("\u00e2\u20ac[\u0153\u009d]|[\u201c\u201d]"), '"'),
    (re.compile("^[\ufffd\\s]*\ufffd"), lambda m: " " * len(m.group())),
)
# A non-breaking space whose "Â" lost its hat ("A " before every frame of a
# quoted trace): "A " runs in front of what a frame line holds
# ("func+0x1/0x2", "func file.c:12", "func (file.c:12)", "? func") are
# indentation.
_A_INDENT = re.compile(
    r"^(?:A[ \u00a0])+(?=\s*(?:\?\s+)?[A-Za-z_.$][\w.$]*"
    r"(?:\+0x[0-9a-f]+| \S+\.\w+:\d+| \(\S+\.\w+:\d+))")
# a printk timestamp inside a line: what precedes it was glued on
# the indentation before "[] " (timestamps cut out by hand) in an indented
# excerpt (a commit message's console lines)
_INDENTED_CUT_STAMP = re.compile(r"^[ \t]+(?=\[\] )")
_GLUED_STAMP = re.compile(r"(?:<\d{1,3}>)?\[ {0,5}\d{1,6}\.\d{6}\]")


@dataclass(frozen=True)
class LogLine:
    text: str                 # the kernel message (or the line, if none)
    stamped: bool = False     # had a kernel prefix (timestamp, syslog, kmsg)
    caller: str | None = None  # PRINTK_CALLER id: "T123" / "C1"
    width: int = 0            # characters of the physical line
    foreign: bool = False     # another program's syslog line
    quote: int = 0            # mail quoting depth ("> " = 1, ">> " = 2)


def parse_line(raw: str) -> LogLine:
    line = raw.rstrip("\r\n")
    if "\r" in line:
        line = line.rstrip("\r").rsplit("\r", 1)[-1]
    width = len(line)
    if not line.isascii():
        for pattern, repl in _MOJIBAKE:
            line = pattern.sub(repl, line)
    if not line.isprintable():
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        line = line.translate(_CONTROL)
    if not line:
        return LogLine(line, width=width)
    c = line[0]
    quote = 0
    if c == ">" or (c == " " and line[1:2] == ">"):
        m = _QUOTE.match(line)
        if m:
            quote = m.group().count(">")
            line = line[m.end():]
        c = line[:1]
    if c == "A" and line[1:2] in (" ", "\u00a0") and (m := _A_INDENT.match(line)):
        line = " " * m.end() + line[m.end():]
    if c == "*" and (m := _DROPPED.match(line)):
        line = line[m.end():]
        c = line[:1]
    decoded = False
    if ":" in line[:64] and (m := _TOOL.match(line[:160])):
        line = line[m.end():]
        if "  :" in line[:40] and (m := _PADDED_TAG.match(line)):
            line = m.group(1) + ": " + line[m.end():]
        c = line[:1]
        decoded = True
    if not decoded and c not in "[<0123456789" and "] " in line:
        if m := _LOGIN.match(line):
            line = line[m.end():]
        elif (m := _GLUED_STAMP.search(line)) and m.start() > 0 and not _SYSLOG_KERNEL.match(line):
            line = line[m.start():]
        elif line[:1] in " \t" and (m := _INDENTED_CUT_STAMP.match(line)):
            line = line[m.end():]       # an indented excerpt's hand-cut "[] " stamps
    stamped = decoded
    m = _SYSLOG_KERNEL.match(line)
    if m:
        line = line[m.end():]
        stamped = True
    elif line[:1] in "<ADFJMNOS12" and _SYSLOG_OTHER.match(line) and not _STAMP.match(line):
        return LogLine(line, width=width, foreign=True, quote=quote)
    if line[:1].isdigit():
        m = _KMSG.match(line)
        if m:
            line = line[m.end():]
            stamped = True
    if line[:1] == "<":
        m = _LEVEL.match(line)
        if m:
            line = line[m.end():]
    prefix = False
    if line[:1] == "[" or line[:1].isdigit():
        m = _STAMP.match(line)
        if m:
            line = line[m.end():]
            prefix = stamped = True
    caller = None
    space = 1
    if line[:1] in "[(" or (prefix and line[:1] in " <.*-"
                             and ("(" in line[:12] or line[:2] == " [")):
        for pattern, spaces, needs_stamp in _CALLERS:
            m = None if needs_stamp and not prefix else pattern.match(line)
            if m:
                ident = m.group("id")
                caller = ident if ident[0] in "TC" else "T" + ident
                line = line[m.end():]
                prefix, space = True, spaces
                break
    if prefix and space and line[:1] == " ":
        # printk puts exactly one space after the prefix; more is content
        # (call-trace frames are indented by one).
        line = line[1:]
        if "kernel:" in line[:64] and (m := _HOST_KERNEL.match(line)):
            line = line[m.end():]
    if "*" in line and line.count("*") < 16:
        line = _EMPHASIS.sub(r"\1", line)
    return LogLine(line, stamped, caller, width, quote=quote)


def normalize(raw: str) -> str:
    """The kernel message of raw, or raw without line ends if none."""
    return parse_line(raw).text


# a physical line that a printk record begins (level, timestamp)
_KERNEL_START = re.compile(r"^(?:<\d{1,3}>)?\[ {0,5}\d{1,6}\.\d{6}\]")


def begins_record(line: str) -> bool:
    """Whether line begins a stamped printk record ("[    1.234567] ...")."""
    return bool(_KERNEL_START.match(line))


def cut_by_record(line: str) -> bool:
    """Whether line is a program's line with a printk record glued into it
    (iter_program_pairs): the program's remainder comes on a later line,
    after the record and any records that follow it."""
    return not (_KERNEL_START.match(line) or _SYSLOG_KERNEL.match(line)) \
        and bool(_GLUED_STAMP.search(line, 1))


def iter_program_lines(lines: Iterable[str]) -> Iterator[str]:
    """program_lines() one at a time."""
    return (line for _, line in iter_program_pairs(enumerate(lines, 1)))


def iter_program_pairs(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The console as user space wrote it, for parsers of a guest program's
    own lines (a check program's protocol.CHECK_PREFIX lines).

    The kernel writes a printk record to the serial console at once, while a
    program's write waits in the tty buffer, so a record can land in the
    middle of a program's line: "...object_size=32[    2.108188] clocksource:
    ...", the program's remainder (often just its newline) following on the
    next line.  Here such a record is cut out and put on a line of its own,
    and the program's line is joined again with its remainder, the next line
    that does not begin a printk record.  The result has as many lines as
    the input (plus one if the console ends inside a cut line), in order, so
    the line numbers of what a parser finds stay close to the capture's.
    Only stamped records can be recognised (printk.time=1, as the lab boots).
    Given and giving (line number, text): a cut line's parts keep its number.
    """
    head: tuple[int, str] | None = None   # a program's line cut by a printk record
    for num, raw in lines:
        line = raw.rstrip("\r\n")
        if head is not None:
            if begins_record(line):
                yield num, line
                continue
            (num, first), head = head, None
            line = first + line
        m = _GLUED_STAMP.search(line, 1) if cut_by_record(line) else None
        if m:
            yield num, line[m.start():]
            head = num, line[:m.start()]
        else:
            yield num, line
    if head is not None:
        yield head


def program_lines(lines: Iterable[str]) -> list[str]:
    """iter_program_lines() as a list."""
    return list(iter_program_lines(lines))
