"""Quoted-printable mail bodies stored as they were sent (RFC 2045 6.7).

Mail archives keep many messages in their transfer encoding: a line
longer than 76 characters is broken with a soft line break ("=" at the
end of the physical line) and bytes outside ASCII, a literal "=" and
trailing spaces are escaped ("=C2=A0", "=3D", "=20").  A kernel report in
such a mail has its message and frames broken in the middle of words
("attem=" / "pt detected") and its timestamps full of escapes.

QuotedPrintable takes the physical lines of a stream in order and gives
back the logical lines: soft breaks joined, escapes decoded.  It only does
so once the text shows quoted-printable signs, so a console log whose
lines happen to contain "=" is left alone:

- an escaped UTF-8 sequence ("=C2=A0", "=E2=80=99"), an escaped "="
  between spaces (" =3D "; "RBX=3D" may be a register), or a quoted empty
  line whose space or tab was escaped (">=20", "=09");
- a soft break at the width encoders break at: a line of 73-76 characters
  that ends in a single "=" after a character a kernel line would not end
  an assignment with (a hex digit, a letter) and that the next line carries
  on; or a line of exactly 76 characters ending in " =" (the encoder broke
  right after a space: "... SLUB object =" / "'task_struct' ...").

Once seen, the signs hold for the rest of the stream (one mail body).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# the widest and narrowest soft-broken lines encoders write (RFC 2045: at
# most 76 characters including the "="; 73-75 where the break had to come
# before an escape); a narrower line ending in "=" counts only once the
# text showed other signs
QP_MAX_WIDTH = 76
QP_MIN_WIDTH = 73

_SIGNS = re.compile(r"=(?:[CD][0-9A-F]=[89AB][0-9A-F]|E[0-9A-F](?:=[89AB][0-9A-F]){2}"
                    r"|F[0-4](?:=[89AB][0-9A-F]){3}|3D(?= ))|(?<= )=3D|^[> ]*=(?:20|09)$")
_ESCAPE = re.compile(r"(?:=[0-9A-F]{2})+")
# "...detected from fff=" / "...__che=": a word broken by the encoder (a
# kernel line may end in "name=" with an empty value: a letter or digit
# before the "=" is not enough on its own, the width must say it too)
_SOFT_BREAK_AT_WIDTH = re.compile(r"[\w.,:;()\[\]<>/+-]=$")
MAX_JOINED = 64 * 1024         # characters of one logical line


def _decode(match: re.Match[str]) -> str:
    return bytes.fromhex(match.group().replace("=", "")).decode("utf-8", "replace")


def decode_escapes(line: str) -> str:
    """line with its "=XX" escapes decoded (UTF-8 sequences as one)."""
    return _ESCAPE.sub(_decode, line) if "=" in line else line


@dataclass
class QuotedPrintable:
    """Physical lines in, logical lines out (see the module's docstring)."""

    seen: bool = False          # the stream showed quoted-printable signs
    held: str | None = None     # a soft-broken line waiting for its rest
    held_line: int = 0

    @property
    def pending(self) -> bool:
        """A soft-broken line waits: the next physical line is needed."""
        return self.held is not None

    def _soft_break(self, line: str) -> bool:
        if not line.endswith("=") or line.endswith("=="):
            return False
        if self.seen:
            return len(line) <= QP_MAX_WIDTH
        if len(line) == QP_MAX_WIDTH and line.endswith(" ="):
            return True         # a break after a space, at the encoders' full width
        return QP_MIN_WIDTH <= len(line) <= QP_MAX_WIDTH and bool(_SOFT_BREAK_AT_WIDTH.search(line))

    def feed(self, lineno: int, raw: str) -> tuple[int, str] | None:
        """(line number, logical line) once a line is complete, else None
        (raw ended in a soft break).  The line number is the last physical
        line's, so that lines stay adjacent."""
        phys = raw.rstrip("\r\n")
        if "=" not in phys and self.held is None:
            return lineno, phys
        if not self.seen and _SIGNS.search(phys):
            self.seen = True
        soft = self._soft_break(phys)
        line = phys if self.held is None else (self.held + phys)[:MAX_JOINED]
        self.held = None
        if soft:
            self.seen = True
            self.held, self.held_line = line[:-1], lineno
            return None
        return lineno, decode_escapes(line) if self.seen else line

    def flush(self) -> tuple[int, str] | None:
        """The held line at the end of the input (a soft break with
        nothing after it)."""
        if self.held is None:
            return None
        line, self.held = self.held, None
        return self.held_line, decode_escapes(line)
