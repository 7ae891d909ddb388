"""What every part of the command line shares: the one-line usage error,
option types from the lab's input rules, and reading a parsed command
line into a wing's typed options."""
from __future__ import annotations

import argparse
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, Callable, NoReturn, TypeVar

from ..inputs import shown

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[3]


class Parser(argparse.ArgumentParser):
    """A usage error is one line and exit status 2 (not the usage text)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {shown(message, None)} (see {self.prog} --help)\n")


def arg_type(parse: Callable[[str], T]) -> Callable[[str], T]:
    """An argparse type= from one of the input rules (inputs.IntRange.parse,
    NameRule.parse, parse_cmdline ...): its ValueError is the one-line
    usage error, so an option and a file are checked by the same rule."""
    def checked(value: str) -> T:
        try:
            return parse(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    checked.__name__ = getattr(parse, "__name__", "value")
    return checked


def mib(text: str) -> int:
    """A positive number of MiB (triage's and match's limits)."""
    try:
        value = int(text) if len(text) <= 12 else 0
    except ValueError:
        value = 0
    if not 0 < value < 1 << 30:
        raise argparse.ArgumentTypeError(f"{text!r}: want a positive number of MiB")
    return value


def options(cls: type[T], args: argparse.Namespace) -> T:
    """The wing's options dataclass CLS filled from the parsed command line
    (every field of CLS that the command has; the others keep their default)."""
    assert is_dataclass(cls)
    given: dict[str, Any] = {f.name: getattr(args, f.name) for f in fields(cls)
                             if hasattr(args, f.name)}
    return cls(**given)


def described(sub: Any, name: str, doc: str | None, help_: str) -> argparse.ArgumentParser:
    """A subcommand whose --help shows a module's docstring as written."""
    return sub.add_parser(name, help=help_, description=doc,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
