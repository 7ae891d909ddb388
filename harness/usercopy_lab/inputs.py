"""What the harness accepts as input: names, numbers, paths, and the files it reads.

Every name ends up in a path (results/<run>/<suite>/<TRIGGER>.log,
build/kernel-<kernel>/, /bin/<check> in the guest) or on the guest kernel's
command line (lab.trigger=NAME), so each must be a plain word: no space (a
second kernel parameter, as in "X rdinit=/bin/sh"), no '/' or '..' (a path
outside the results folder), no shell or regex metacharacter, and at most
NAME_MAX_LEN characters.

Every file is read through read_bounded(): a regular file or a pipe (a
process substitution), never a device, at most a stated number of bytes,
so /dev/zero or a 10 GB file is refused at once instead of filling memory.
TOML goes through load_toml(), which also refuses, before tomllib sees
them, nesting deeper than TOML_MAX_DEPTH (tomllib recurses: a RecursionError
at about 300 levels) and dotted names of more than TOML_MAX_DOTTED parts
(tomllib is quadratic in them: 100 000 parts take hours).

Numbers (-j, timeouts, guest memory) have ranges (IntRange, SecondsRange),
the guest's extra kernel command line one rule (cmdline_problem), and a
file the run will write one check before the first boot (writable_file).
shown() is how any name, path or console text from outside is printed: one
line, control characters escaped, long text cut.

Bad input is an InputError whose message is one line naming the file (and
line) or the name; the CLI prints it and exits 2.
"""
from __future__ import annotations

import math
import os
import re
import stat
import tempfile
import tomllib
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any


NAME_MAX_LEN = 64       # LKDTM's longest crash type today: 37 characters
TEXT_LIMIT = 1 << 20    # a trigger list (tests.txt): 6 KB today
TOML_LIMIT = 256 << 10  # suites.toml, slab-audit.toml: 8 and 12 KB today; tomllib
                        # takes up to 1.5 s on 256 KiB of the worst TOML the
                        # shape check lets through
GOLDEN_LIMIT = 64 << 10  # one golden file: at most 2.5 KB today
GOLDEN_FILES_MAX = 1000  # golden files in one folder: 52 today
TOML_MAX_DEPTH = 32     # nested [ and { (a [[table]] header is 2)
TOML_MAX_DOTTED = 64    # parts of one dotted key or table name
SHOWN_MAX = 120         # characters of one name shown in a message


class InputError(ValueError):
    """Bad input; the message is one line naming file:line or the name."""


# ------------------------------------------------------------------ printing

_CONTROL = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def _escape(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:         # an undecodable byte (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch, f"\\x{code:02x}")
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(text: object, limit: int | None = SHOWN_MAX) -> str:
    """text as one printable line: control, format and separator characters
    (newline, ESC, U+202E ...) and undecodable bytes (surrogate escapes of
    a file name) as backslash escapes; cut after limit characters (None:
    never), saying how long it was.  Printable text is returned as it is."""
    text = str(text)
    cut = limit is not None and len(text) > limit
    head = text[:limit] if cut else text
    if not head.isprintable():
        head = "".join(_escape(ch) if unicodedata.category(ch) in _CONTROL else ch
                       for ch in head)
    return f"{head}... ({len(text)} characters)" if cut else head


# ------------------------------------------------------------------ names

@dataclass(frozen=True)
class NameRule:
    what: str           # "trigger name", ...
    pattern: str        # a regular expression the whole name must match
    max_len: int = NAME_MAX_LEN

    def problem(self, name: object) -> str | None:
        """None if name is acceptable, else one line saying why not."""
        if not isinstance(name, str):
            return f"{self.what} must be a string, got {shown(repr(name))}"
        if len(name) > self.max_len:
            return f"{self.what} {shown(name, 40)!s} is longer than {self.max_len} characters"
        if not re.fullmatch(self.pattern, name):
            return f"{self.what} '{shown(name)}' must match {self.pattern}"
        return None

    def parse(self, name: str) -> str:
        """name if acceptable, else ValueError saying why (the CLI's option types' form)."""
        if problem := self.problem(name):
            raise ValueError(problem)
        return name


TRIGGER = NameRule("trigger name", r"[A-Z0-9_]+")
# A suite name may hold a dot between two other characters ("stock-6.12": a
# kernel line's version; quoted in suites.toml, where a bare dot nests).
SUITE = NameRule("suite name", r"[a-z0-9](?:[a-z0-9_-]|\.(?=[a-z0-9]))*")
KERNEL = NameRule("kernel variant", r"[a-z0-9][a-z0-9_-]*")  # build/kernel-NAME
CHECK = NameRule("check program", r"[a-z0-9][a-z0-9_-]*")    # initramfs-src/NAME.c


# ------------------------------------------------------------------ numbers

@dataclass(frozen=True)
class IntRange:
    what: str
    low: int
    high: int
    why: str = ""       # why the upper bound, for the message

    def parse(self, text: str) -> int:
        """text as an int in [low, high]; ValueError (one line) if not."""
        try:
            value = int(text.strip(), 10) if len(text) <= 20 else None
        except ValueError:
            value = None
        if value is None or not self.low <= value <= self.high:
            why = f" ({self.why})" if self.why else ""
            raise ValueError(f"{self.what} must be a whole number from {self.low} to "
                             f"{self.high}{why}, got '{shown(text, 40)}'")
        return value


@dataclass(frozen=True)
class SecondsRange:
    what: str
    low: float = 0.1
    high: float = 86400.0

    def parse(self, text: str) -> float:
        """text as finite seconds in [low, high] (not inf, nan or 1e400)."""
        try:
            value = float(text) if len(text) <= 40 else math.nan
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and self.low <= value <= self.high):
            raise ValueError(f"{self.what} must be seconds from {self.low:g} to "
                             f"{self.high:g}, got '{shown(text, 40)}'")
        return value


JOBS = IntRange("-j", 1, 64, "guests at once; each is a QEMU of its own")
GUEST_MEMORY_MB = IntRange("guest memory", 64, 16384, "MiB")
TIMEOUT = SecondsRange("a timeout")

# The guest's extra kernel command line (suites.toml cmdline, shell
# --cmdline): the lab adds console=, panic=, lab.* (about 120 characters)
# and x86's COMMAND_LINE_SIZE is 2048.
CMDLINE_MAX_LEN = 1024


def cmdline_problem(text: object) -> str | None:
    """None if text may be added to a guest's kernel command line, else one
    line saying why not: one line of printable ASCII, at most
    CMDLINE_MAX_LEN characters."""
    if not isinstance(text, str):
        return f"must be a one-line string, got {shown(repr(text))}"
    if len(text) > CMDLINE_MAX_LEN:
        return f"is {len(text)} characters long, at most {CMDLINE_MAX_LEN}"
    bad = next((ch for ch in text if not " " <= ch <= "~"), None)
    if bad is not None:
        return (f"must be one line of printable ASCII, has {shown(bad)!s} in "
                f"'{shown(text, 60)}'")
    return None


def parse_cmdline(text: str) -> str:
    """text if cmdline_problem() finds none, else ValueError saying why."""
    if problem := cmdline_problem(text):
        raise ValueError(f"kernel command line {problem}")
    return text


# ------------------------------------------------------------------ paths

def writable_dir(path: Path) -> str | None:
    """None if path is a folder the harness can write in, made now (with
    its parents) if missing, else one line saying why not.  Tried, not
    guessed from permission bits (root passes os.access() on /proc)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return f"{shown(path, None)} is not a directory"
    except OSError as exc:
        return f"cannot make {shown(exc.filename or path, None)}: " \
               f"{shown(exc.strerror or exc, None)}"
    try:
        with tempfile.TemporaryFile(dir=path, prefix=".usercopy-lab-probe-"):
            pass
    except OSError as exc:
        return f"cannot write in {shown(path, None)}: {shown(exc.strerror or exc, None)}"
    return None


def writable_file(path: Path) -> str | None:
    """None if path can be written as a file (its folder made now if
    missing; the file itself untouched), else one line naming it and
    saying why not: it is a folder, not writable, or its folder cannot be
    made or written in."""
    if path.is_dir():
        return f"{shown(path, None)}: is a directory, not a file"
    if problem := writable_dir(path.parent):
        return f"{shown(path, None)}: {problem}"
    if path.exists():
        try:
            with open(path, "ab"):
                pass
        except OSError as exc:
            return f"{shown(path, None)}: {shown(exc.strerror or exc, None)}"
    return None


# ------------------------------------------------------------------ files

def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 and not limit % (1 << 20) \
        else f"{limit >> 10} KiB" if limit >= 1 << 10 and not limit % (1 << 10) \
        else f"{limit} bytes"


def file_kind(mode: int) -> str:
    """What a file of this st_mode is, for a message: "a FIFO (named
    pipe)", "a character device", ... (read_bounded's words)."""
    return "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else _kind(mode)


def too_big(path: Path, size: int, limit: int, what: str = "file") -> str | None:
    """None when size is at most limit, else read_bounded's line for a file
    over its limit: 'PATH: more than LIMIT, the most a WHAT may be'.  For
    the files read in a stream rather than whole (a console that match
    scans): the caller knows the size (a stat) and says which option
    raises the limit."""
    if size <= limit:
        return None
    return f"{shown(path, None)}: more than {_size(limit)}, the most a {what} may be"


def read_bounded(path: Path, limit: int, error: type[Exception] = InputError,
                 what: str = "file") -> bytes:
    """The bytes of path, a regular file or a pipe of at most limit bytes;
    error(one line naming path) if it is missing, a directory or device,
    unreadable or longer.  Never reads more than limit + 1 bytes, and never
    blocks on opening a FIFO nobody writes to (it reads as empty)."""
    name = shown(path, None)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except IsADirectoryError:
        raise error(f"{name}: is a directory, not a file") from None
    except OSError as exc:
        raise error(f"{name}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise error(f"{name}: is a directory, not a file")
        raise error(f"{name}: is {_kind(mode)}, not a file")
    os.set_blocking(fd, True)
    chunks, got = [], 0
    with os.fdopen(fd, "rb", buffering=0) as f:
        try:
            while got <= limit:
                chunk = f.read(min(1 << 20, limit + 1 - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        except OSError as exc:
            raise error(f"{name}: {exc.strerror or exc}") from None
    if got > limit:
        raise error(f"{name}: more than {_size(limit)}, the most a {what} may be")
    return b"".join(chunks)


_TEXT_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def read_text(path: Path, error: type[Exception] = InputError,
              limit: int = TEXT_LIMIT, what: str = "file") -> str:
    """The file as UTF-8 text (read_bounded); error(one line naming
    path[:line]) if it is missing, not a regular file or pipe, larger than
    limit, not UTF-8 or holds a control character other than tab and the
    line ends (a NUL, ESC ...)."""
    data = read_bounded(path, limit, error, what)
    name = shown(path, None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{name}:{line}: not UTF-8 (byte {data[exc.start]:#04x})") from None
    if m := _TEXT_CONTROL.search(text):
        line = text.count("\n", 0, m.start()) + 1
        raise error(f"{name}:{line}: control character {ord(m.group()):#04x} "
                    "in a text file") from None
    return text


def list_files(folder: Path, pattern: str, limit: int,
               error: type[Exception] = InputError) -> list[Path]:
    """Files of folder matching pattern (sorted); error if more than limit
    entries match, found without listing the rest of a huge folder."""
    found = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if Path(entry.name).match(pattern):
                    found.append(folder / entry.name)
                    if len(found) > limit:
                        raise error(f"{shown(folder, None)}: more than {limit} {pattern} "
                                    "files")
    except OSError as exc:
        raise error(f"{shown(folder, None)}: {exc.strerror or exc}") from None
    return sorted(found)


# ------------------------------------------------------------------ TOML

# Where a TOML string or comment may start, and where each kind of string
# may stop (its closing quote, an escape to step over, the line end).
_TOML_STOP = re.compile(r"[\"'#]")
_BASIC_STOP = re.compile(r'["\\\n]')
_LITERAL_STOP = re.compile("['\\n]")
_ML_BASIC_STOP = re.compile(r'\\|"""')
_TOML_BRACKET = re.compile(r"[\[\]{}]")
# A run of key characters, dots and blanks long enough to hold a dotted
# name of more than TOML_MAX_DOTTED parts (a dotted key, a [table.name]):
# anything else (=, a comma, a line end) ends a run.
_TOML_DOTTED = re.compile(r"[A-Za-z0-9_+\-. \t]{%d,}" % (2 * TOML_MAX_DOTTED + 1))


def _string_end(text: str, start: int) -> int:
    """The index just past the string opening at start (a quote), or, if it
    is never closed, where tomllib will refuse it (its line end, or the end
    of the file for a multi-line one)."""
    quote, n = text[start], len(text)
    if text.startswith(quote * 3, start):
        pos = start + 3
        while True:
            m = _ML_BASIC_STOP.search(text, pos) if quote == '"' else None
            if quote == "'":
                pos = text.find("'''", pos)
                if pos < 0:
                    return n
            elif m is None:
                return n
            elif m.group() == "\\":
                pos = m.end() + 1
                continue
            else:
                pos = m.start()
            end = pos + 3
            while end < n and end - pos < 5 and text[end] == quote:
                end += 1         # a closing quote may follow the content's own
            return end
    pos = start + 1
    while True:
        m = (_BASIC_STOP if quote == '"' else _LITERAL_STOP).search(text, pos)
        if m is None:
            return n
        if m.group() == quote:
            return m.end()
        if m.group() == "\n":
            return m.start()
        pos = m.end() + (text[m.end():m.end() + 1] != "\n")   # after an escape


def _toml_skeleton(text: str) -> str:
    """text with each string replaced by the word S and each comment
    removed, line ends kept: one step per string, comment or escape."""
    out, pos, n = [], 0, len(text)
    while pos < n:
        m = _TOML_STOP.search(text, pos)
        if m is None:
            out.append(text[pos:])
            break
        out.append(text[pos:m.start()])
        if m.group() == "#":
            end = text.find("\n", m.start())
            pos = n if end < 0 else end
            continue
        end = _string_end(text, m.start())
        out.append("S" + "\n" * text.count("\n", m.start(), end))
        pos = end
    return "".join(out)


def toml_shape_problem(text: str) -> str | None:
    """None, or one line 'line N: ...' when text nests [ and { deeper than
    TOML_MAX_DEPTH or has a dotted name of more than TOML_MAX_DOTTED parts,
    outside strings and comments.  Linear; what it cannot read (an
    unterminated string) is left to tomllib, which refuses it."""
    skel = _toml_skeleton(text)
    depth = 0
    for m in _TOML_BRACKET.finditer(skel):
        if m.group() in "[{":
            depth += 1
            if depth > TOML_MAX_DEPTH:
                line = skel.count("\n", 0, m.start()) + 1
                return f"line {line}: nested deeper than {TOML_MAX_DEPTH} levels"
        else:
            depth = max(0, depth - 1)
    for m in _TOML_DOTTED.finditer(skel):
        if m.group().count(".") >= TOML_MAX_DOTTED:    # more than that many parts
            line = skel.count("\n", 0, m.start()) + 1
            return f"line {line}: a dotted name of more than {TOML_MAX_DOTTED} parts"
    return None


def load_toml(path: Path, error: type[Exception] = InputError,
              limit: int = TOML_LIMIT, what: str = "TOML file") -> tuple[str, dict[str, Any]]:
    """(text, table) of a TOML file, read with read_text() and checked with
    toml_shape_problem() before tomllib parses it; every problem is
    error('path[:line]: ...'), one line."""
    text = read_text(path, error, limit, what)
    if problem := toml_shape_problem(text):
        raise error(f"{shown(path, None)}:{problem.removeprefix('line ')}")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{shown(path, None)}: {shown(exc, None)}") from None
    except RecursionError:   # not reached after the shape check; never a traceback
        raise error(f"{shown(path, None)}: nested too deeply") from None
