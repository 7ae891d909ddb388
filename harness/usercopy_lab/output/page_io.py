"""What the results, hunt and bench pages share: the templates, reading a
JSON input as one line of error, writing a page whole, and the command
line's exit status (0 written, 2 bad input with one line on stderr)."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ..inputs import shown
from .page_model import PageError

TEMPLATES = Path(__file__).resolve().parent / "templates"
MAX_JSON = 64 << 20


def environment() -> Environment:
    """Jinja2 over templates/, escaping everything it is given."""
    return Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True,
                       undefined=StrictUndefined, keep_trailing_newline=True)


def read_json(path: Path, what: str) -> Any:
    """The JSON of path, or PageError naming it (what: "hunt/findings.json")."""
    if not path.is_file():
        raise PageError(f"{shown(path, None)}: no such file (not {what}?)")
    try:
        if path.stat().st_size > MAX_JSON:
            raise PageError(f"{shown(path, None)}: over {MAX_JSON >> 20} MiB")
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PageError(f"{shown(path, None)}: {shown(exc, None)}") from None


def write_html(path: Path, text: str) -> Path:
    """path written whole (a reader never sees half a page)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def page_command(prog: str, write: Callable[[], Path]) -> int:
    """Call write(); print the page's path (0) or one line of why not (2)."""
    try:
        page = write()
    except PageError as exc:
        print(f"{prog}: {shown(exc, None)}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError) as exc:     # a JSON of another shape
        print(f"{prog}: input of an unexpected shape ({type(exc).__name__}: "
              f"{shown(exc, None)})", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{prog}: {shown(exc.filename or '', None)}: {shown(exc.strerror or exc, None)}",
              file=sys.stderr)
        return 2
    print(f"{prog}: {page}")
    return 0
