"""What `usercopy-lab gaps` is asked (cli/ reads the command line into GapsOptions)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class GapsOptions:
    """What `usercopy-lab gaps` is asked (cli/ reads the command line into it)."""

    tree: Path
    out: Path
    patch: list[str] = field(default_factory=list)
    triage: Path | None = None
    label: str = ""
    base: Path | None = None
    force: bool = False
    quiet: bool = False
