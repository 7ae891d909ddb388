"""What the harness accepts as input: names, and text files it reads.

Every name ends up in a path (results/<run>/<suite>/<TRIGGER>.log,
build/kernel-<kernel>/, /bin/<check> in the guest) or on the guest kernel's
command line (lab.trigger=NAME), so each must be a plain word: no space (a
second kernel parameter, as in "X rdinit=/bin/sh"), no '/' or '..' (a path
outside the results folder), no shell or regex metacharacter.

Bad input is an InputError whose message is one line naming the file (and
line) or the name; the CLI prints it and exits 2.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


class InputError(ValueError):
    """Bad input; the message is one line naming file:line or the name."""


@dataclass(frozen=True)
class NameRule:
    what: str           # "trigger name", ...
    pattern: str        # a regular expression the whole name must match

    def problem(self, name: object) -> str | None:
        """None if name is acceptable, else one line saying why not."""
        if not isinstance(name, str):
            return f"{self.what} must be a string, got {name!r}"
        if not re.fullmatch(self.pattern, name):
            return f"{self.what} {name!r} must match {self.pattern}"
        return None


TRIGGER = NameRule("trigger name", r"[A-Z0-9_]+")
SUITE = NameRule("suite name", r"[a-z0-9][a-z0-9_-]*")       # suites.toml tables
KERNEL = NameRule("kernel variant", r"[a-z0-9][a-z0-9_-]*")  # build/kernel-NAME
CHECK = NameRule("check program", r"[a-z0-9][a-z0-9_-]*")    # initramfs-src/NAME.c


def read_text(path: Path, error: type[InputError] = InputError) -> str:
    """The file as UTF-8 text; error(one line naming path[:line]) if it is
    missing, not a regular file, unreadable or not UTF-8."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise error(f"{path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{path}:{line}: not UTF-8 (byte {data[exc.start]:#04x})") from None
