"""Suites (suites.toml) and their trigger lists (selftests tests.txt format)."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .golden import Golden, load_layered


_NAME_RE = re.compile(r"[A-Z][A-Z0-9_]*")


class SuiteError(ValueError):
    pass


@dataclass(frozen=True)
class Trigger:
    name: str
    expected_text: str     # the tests.txt column: must appear on the console
    skip_reason: str = ""  # "#NAME reason" lines


@dataclass(frozen=True)
class Suite:
    name: str
    kernel: str            # build/kernel-<kernel>/
    cmdline: str
    golden_dirs: tuple[Path, ...]  # searched in order: a variant's own first
    triggers_file: Path
    checks: tuple[str, ...] = ()   # in-guest check programs (initramfs-src/NAME.c)
    only: tuple[str, ...] = ()     # run only these triggers of triggers_file
    expected_text: bool = True     # check tests.txt's expected-text column
    selftests: str = ""            # "tree" | "lab": run.sh in the guest (selftests.py)

    def kernel_image(self, build_dir: Path) -> Path:
        return build_dir / f"kernel-{self.kernel}" / "arch/x86/boot/bzImage"

    def triggers(self) -> list[Trigger]:
        listed = read_tests_txt(self.triggers_file)
        if not self.only:
            return listed
        names = {t.name for t in listed}
        unknown = [n for n in self.only if n not in names]
        if unknown:
            raise SuiteError(f"suite [{self.name}]: 'only' names {', '.join(unknown)}, "
                             f"not in {self.triggers_file}")
        return [t for t in listed if t.name in self.only]

    def golden(self) -> dict[str, Golden]:
        """Golden file per trigger; a variant's folder overrides later ones."""
        return load_layered(self.golden_dirs)


def load_suites(path: Path) -> dict[str, Suite]:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SuiteError(f"{path}: {exc}") from exc
    root = path.parent
    suites = {}
    for name, table in data.items():
        missing = {"kernel", "golden", "triggers"} - table.keys()
        if missing:
            raise SuiteError(f"{path}: suite [{name}] lacks {', '.join(sorted(missing))}")
        golden = table["golden"]
        golden = [golden] if isinstance(golden, str) else golden
        suites[name] = Suite(name, table["kernel"], table.get("cmdline", ""),
                             tuple(root / g for g in golden), root / table["triggers"],
                             tuple(table.get("checks", ())), tuple(table.get("only", ())),
                             bool(table.get("expected_text", True)),
                             table.get("selftests", ""))
        if suites[name].selftests not in ("", "tree", "lab"):
            raise SuiteError(f"{path}: suite [{name}]: selftests must be \"tree\" or \"lab\"")
    return suites


def read_tests_txt(path: Path) -> list[Trigger]:
    triggers = []
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("# "):
            continue
        skipped = line.startswith("#")
        name, _, rest = line.lstrip("#").partition(" ")
        if not _NAME_RE.fullmatch(name):
            raise SuiteError(f"{path}: {raw!r} is not 'NAME expected-text'")
        if skipped:
            triggers.append(Trigger(name, "", rest.strip() or "skipped"))
        else:
            triggers.append(Trigger(name, rest.strip()))
    return triggers


def pick(suites: dict[str, Suite], names: list[str]) -> list[Suite]:
    """The named suites, in order; SuiteError naming any unknown one."""
    unknown = [n for n in names if n not in suites]
    if unknown:
        raise SuiteError(f"no suite {', '.join(unknown)} (have: {', '.join(suites)})")
    return [suites[n] for n in names]
