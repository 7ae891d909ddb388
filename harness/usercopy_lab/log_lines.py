"""Normalize one raw console/dmesg/syslog line to the bare kernel message.

Strips, in this order: line ends and carriage returns (text after the last
CR wins, as on a terminal), ANSI escape sequences, a syslog / journalctl
prefix ("Aug 23 10:00:01 host kernel: ", ISO dates, bare "kernel: "),
printk levels ("<4>"), /dev/kmsg records ("4,123,456,-;"), timestamps
("[   12.345678]", dmesg -T "[Thu Dec  3 10:00:01 2020]", dmesg
--time-format=iso), and PRINTK_CALLER ids ("[T123]", "[    C1]").

Lines that are not kernel messages (shell output, other syslog programs)
pass through with only line ends and escapes removed.
"""
from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][A-Za-z0-9]|[=>78cDEHM])")

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_SYSLOG_DATE = rf"(?:{_MONTH} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?|\d{{4}}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
# "Aug 23 10:00:01 host kernel: " / "2019-08-23T10:00:01+0000 host kernel: " /
# "kernel: " (as quoted in commit messages).
_SYSLOG_KERNEL = re.compile(rf"^(?:<\d{{1,3}}>)?(?:{_SYSLOG_DATE} \S+ )?kernel(?:\[\d+\])?: ?")

_KMSG = re.compile(r"^\d+,\d+,\d+,[-c+][^;]*;")
_LEVEL = re.compile(r"^<\d{1,3}>")
_STAMP = re.compile(
    rf"^\[(?:\s*\d+\.\d+|{_DAY} {_MONTH} [ \d]\d \d\d:\d\d:\d\d \d{{4}})\]"
    r"|^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[.,]\d+[+-]\d\d:?\d\d(?= )")
_CALLER = re.compile(r"^\[\s*[TC]\d+\]")


def normalize(raw: str) -> str:
    """The kernel message of raw, or raw without line ends if none."""
    line = raw.rstrip("\r\n")
    if "\r" in line:
        tail = line.rstrip("\r").rsplit("\r", 1)[-1]
        line = tail
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if not line:
        return line
    m = _SYSLOG_KERNEL.match(line)
    if m:
        line = line[m.end():]
    if line[:1].isdigit():
        m = _KMSG.match(line)
        if m:
            line = line[m.end():]
    if line[:1] == "<":
        m = _LEVEL.match(line)
        if m:
            line = line[m.end():]
    stripped = False
    if line[:1] == "[" or line[:1].isdigit():
        m = _STAMP.match(line)
        if m:
            line = line[m.end():]
            stripped = True
    if line[:1] == "[":
        m = _CALLER.match(line)
        if m:
            line = line[m.end():]
            stripped = True
    if stripped and line[:1] == " ":
        # printk puts exactly one space after the prefix; more is content
        # (call-trace frames are indented by one).
        line = line[1:]
    return line
