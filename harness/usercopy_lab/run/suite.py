"""Suites (suites.toml) and their trigger lists (selftests tests.txt format).

suites.toml holds one table per suite.  Its schema (suites.schema.json in
harness/usercopy_lab/schemas/) says each key's type and which are required;
SUITE_KEYS says which Suite field each fills and how its value is checked
beyond its type.  Adding a key is a property there, a line here and a field
in Suite.  Entries that are not tables, unknown keys and values of the
wrong type are refused with file:line.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Callable

from ..capture.qemu_boot import ARCHES, NATIVE
from ..inputs import (CHECK, KERNEL, SUITE, TRIGGER, InputError, NameRule, cmdline_problem,
                      load_toml, read_text, shown)
from ..judge.golden import Golden, load_layered
from ..model import Outcome
from ..schemas import SUITES, Problem, problems, schema
from ..audit.slab_audit import PROGRAM as AUDIT_PROGRAM
from ..audit.whitelist_spec import load_spec


class SuiteError(InputError):
    pass


# The `object` of a slab report, one per allocator (mm/slub.c, mm/slab.c).
SLAB_OBJECTS = ("SLUB object", "SLAB object")


@dataclass(frozen=True)
class Trigger:
    name: str
    expected_text: str     # the tests.txt column: must appear on the console
    skip_reason: str = ""  # "#NAME reason" lines


class ModuleSet(Enum):
    """Which of a kernel's modules a suite's guests get (suites.toml
    `modules`), each an archive the Makefile builds beside the kernel."""
    LKDTM = "lkdtm"          # lkdtm.ko alone, insmodded by init
    INSTALLED = "installed"  # and every module installed, with a modprobe

    @property
    def archive(self) -> str:
        return {ModuleSet.LKDTM: "modules.cpio",
                ModuleSet.INSTALLED: "modules-installed.cpio"}[self]

    def make_command(self, kernel: str) -> str:
        """The make command that builds this archive for kernel."""
        return f"make modules-cpio KERNEL={kernel} MODULE_SET={self.value}"


@dataclass(frozen=True)
class Suite:
    name: str
    kernel: str                    # build/kernel-<kernel>/
    golden_dirs: tuple[Path, ...]  # searched in order: a variant's own first
    triggers_file: Path
    cmdline: str = ""              # added to the guest kernel command line
    checks: tuple[str, ...] = ()   # in-guest check programs (initramfs-src/NAME.c)
    only: tuple[str, ...] | None = None  # run only these triggers ([]: none, checks only)
    expected_text: bool = True     # check tests.txt's expected-text column
    selftests: str = ""            # "tree" | "lab": run.sh in the guest (selftests.py)
    slab_audit: Path | None = None  # the audit golden file of AUDIT_PROGRAM
    allocator: str = ""            # "SLAB": heap reports name it (see golden())
    arch: str = NATIVE             # guest architecture (qemu_boot.ARCHES)
    on_demand: bool = False        # run only when named (--suite), never by default
    modules: ModuleSet | None = None  # the kernel's modules archive follows the initramfs
    follow_on: tuple[str, ...] = ()  # report titles tolerated after an oops (golden())

    def kernel_image(self, build_dir: Path) -> Path:
        return build_dir / f"kernel-{self.kernel}" / ARCHES[self.arch].image

    def modules_archive(self, build_dir: Path) -> Path:
        """The kernel's modules as a newc archive (the Makefile's
        build/kernel-NAME/modules*.cpio rules); LKDTM's alone when the
        suite names no set."""
        archive = (self.modules or ModuleSet.LKDTM).archive
        return build_dir / f"kernel-{self.kernel}" / archive

    def initramfs(self, base: Path) -> Path:
        """The userland archive this suite's guests need, from the x86-64
        one (--initramfs): build/initramfs.cpio, or beside it
        build/initramfs-ARCH.cpio for another arch (make initramfs-ARCH).
        A modules suite's guest gets it followed by modules_archive()
        (initramfs.with_modules())."""
        if self.arch == NATIVE:
            return base
        return base.with_name(f"{base.stem}-{self.arch}{base.suffix}")

    def triggers(self) -> list[Trigger]:
        listed = read_tests_txt(self.triggers_file)
        if self.only is None:
            return listed
        names = {t.name for t in listed}
        unknown = [n for n in self.only if n not in names]
        if unknown:
            raise SuiteError(f"suite [{self.name}]: 'only' names {', '.join(unknown)}, "
                             f"not in {shown(self.triggers_file, None)}")
        return [t for t in listed if t.name in self.only]

    def golden(self) -> dict[str, Golden]:
        """Golden file per trigger; a variant's folder overrides later ones.

        With an allocator, an expected `object: SLUB object` reads
        `<allocator> object`: __check_heap_object() of mm/slab.c and of
        mm/slub.c pass their allocator's name to usercopy_abort(), so a
        variant inherits the golden files whose other values do not depend
        on the allocator instead of copying them.  The whitelist audit's
        check gets its golden file too (slab_audit).  With follow_on, a golden
        file of an oops (outcome killed, a report) tolerates those report
        titles after its last expected report."""
        found = load_layered(self.golden_dirs)
        if self.allocator:
            for golden in found.values():
                for report in golden.reports:
                    if report.fields.get("object") in SLAB_OBJECTS:
                        report.fields["object"] = f"{self.allocator} object"
        if self.follow_on:
            for golden in found.values():
                if golden.outcome is Outcome.KILLED and golden.reports:
                    golden.follow_on = self.follow_on
        if self.slab_audit is not None:
            found[AUDIT_PROGRAM] = Golden(self.slab_audit, AUDIT_PROGRAM, Outcome.RETURNED)
        return found


# A key's parser gets the TOML value, of the type suites.schema.json
# gives it, and the folder of suites.toml and returns the field's value,
# or raises ValueError saying what is wrong with it beyond its type.
Parse = Callable[[Any, Path], Any]


@dataclass(frozen=True)
class Key:
    field: str
    parse: Parse


def _got(value: Any) -> str:
    """A TOML value in a message: one line, cut when long."""
    return shown(repr(value), 60)


def _as_is(value: Any, _root: Path) -> Any:
    return value


def _cmdline(value: Any, _root: Path) -> str:
    if problem := cmdline_problem(value):    # as shell --cmdline (parse_cmdline)
        raise ValueError(problem)
    return value


def _path(value: Any, root: Path) -> Path:
    return root / value


def _paths(value: Any, root: Path) -> tuple[Path, ...]:
    return tuple(root / v for v in ([value] if isinstance(value, str) else value))


def _names(rule: NameRule) -> Parse:
    def parse(value: Any, _root: Path) -> tuple[str, ...]:
        for v in value:
            if problem := rule.problem(v):
                raise ValueError(problem)
        if len(set(value)) != len(value):
            raise ValueError(f"names a {rule.what} twice")
        return tuple(value)
    return parse


def _name(rule: NameRule) -> Parse:
    def parse(value: Any, _root: Path) -> str:
        if problem := rule.problem(value):
            raise ValueError(problem)
        return value
    return parse


def _module_set(value: Any, _root: Path) -> ModuleSet:
    return ModuleSet(value)


def _titles(value: Any, _root: Path) -> tuple[str, ...]:
    """Report titles as the parser writes them: "KIND in FUNCTION"."""
    for v in value:
        if not re.fullmatch(r"[A-Za-z][\w -]* in [\w.]+", v):
            raise ValueError(f"{v!r} is not a report title like \"WARNING in func\"")
    return tuple(value)


def _audit_spec(value: Any, root: Path) -> Path:
    """The whitelist audit's golden file, read and checked now (not after
    the boot): whitelist_spec.SpecError is a ValueError naming the row."""
    path = _path(value, root)
    load_spec(path)
    return path


def _checks(value: Any, root: Path) -> tuple[str, ...]:
    names = _names(CHECK)(value, root)
    for n in names:
        if not (root / "initramfs-src" / f"{n}.c").is_file():
            raise ValueError(f"no check program initramfs-src/{n}.c")
    return names


# The keys of a suite, in the order of suites.schema.json (which says
# their types, which are required and that no other key is allowed).
SUITE_KEYS: dict[str, Key] = {
    "kernel": Key("kernel", _name(KERNEL)),
    "golden": Key("golden_dirs", _paths),
    "triggers": Key("triggers_file", _path),
    "cmdline": Key("cmdline", _cmdline),
    "checks": Key("checks", _checks),
    "only": Key("only", _names(TRIGGER)),
    "expected_text": Key("expected_text", _as_is),
    "selftests": Key("selftests", _as_is),
    "slab_audit": Key("slab_audit", _audit_spec),
    "allocator": Key("allocator", _as_is),
    "arch": Key("arch", _as_is),
    "on_demand": Key("on_demand", _as_is),
    "modules": Key("modules", _module_set),
    "follow_on": Key("follow_on", _titles),
}


def _schema_problems(data: dict[str, Any]) -> dict[tuple[str, ...], Problem]:
    """The first problem suites.schema.json finds with each suite (path
    (name,)) and each of its keys ((name, key)), an unknown key included."""
    found: dict[tuple[str, ...], Problem] = {}
    for p in problems(data, SUITES):
        if p.validator == "additionalProperties" and len(p.path) == 1:
            for k in p.value:
                if k not in p.schema["properties"]:
                    found.setdefault((str(p.path[0]), k), p)
        else:
            found.setdefault(tuple(str(k) for k in p.path[:2]), p)
    return found


def _must(key: str, value: Any) -> str:
    """What the schema says a key's value must be, for its message."""
    prop = schema(SUITES)["$defs"]["suite"]["properties"][key]
    if "enum" in prop:
        return f"must be {' or '.join(json.dumps(a) for a in prop['enum'])}, got {_got(value)}"
    return f"must be {prop['title']}, got {_got(value)}"


def load_suites(path: Path) -> dict[str, Suite]:
    text, data = load_toml(path, SuiteError, what="suites file")
    lines = _key_lines(text)
    root = path.parent
    file = shown(path, None)
    found = _schema_problems(data)
    suites = {}
    for name, table in data.items():
        where = f"{file}:{lines.get((name, None), 1)}"
        problem = found.get((name,))
        if problem and problem.validator == "type":
            raise SuiteError(f"{where}: '{shown(name)}' is not a [suite] table")
        if rule_problem := SUITE.problem(name):
            raise SuiteError(f"{where}: {rule_problem}")
        if problem and problem.validator == "required":
            raise SuiteError(f"{where}: suite [{name}] {problem.what()}")
        fields: dict[str, Any] = {}
        for k, value in table.items():
            at = f"{file}:{lines.get((name, k), lines.get((name, None), 1))}"
            if (problem := found.get((name, k))) and k not in SUITE_KEYS:
                raise SuiteError(f"{at}: suite [{name}]: unknown key '{shown(k)}' "
                                 f"(known: {', '.join(SUITE_KEYS)})")
            if problem:
                raise SuiteError(f"{at}: suite [{name}] {k}: {_must(k, value)}")
            try:
                fields[SUITE_KEYS[k].field] = SUITE_KEYS[k].parse(value, root)
            except ValueError as exc:
                raise SuiteError(f"{at}: suite [{name}] {k}: {exc}") from None
        suites[name] = Suite(name=name, **fields)
        if fields.get("only") == () and not fields.get("checks") and not fields.get("selftests"):
            raise SuiteError(f"{where}: suite [{name}] runs nothing: 'only' is empty "
                             "and it has no checks")
        if suites[name].slab_audit and AUDIT_PROGRAM not in suites[name].checks:
            raise SuiteError(f"{where}: suite [{name}] has slab_audit but does not "
                             f"list {AUDIT_PROGRAM} in checks")
    return suites


_HEADER_RE = re.compile(r"\s*\[\s*([^\]\s]+)\s*\]")
_KEY_RE = re.compile(r"\s*([A-Za-z0-9_-]+)\s*=")


def _key_lines(text: str) -> dict[tuple[str, str | None], int]:
    """(table, key) -> line number, for messages; (name, None) is the
    [name] header or a top-level 'name = ...' line.  Only simple TOML (what
    suites.toml uses) is located; anything else is reported at line 1."""
    found: dict[tuple[str, str | None], int] = {}
    table: str | None = None
    for num, line in enumerate(text.splitlines(), 1):
        if m := _HEADER_RE.match(line):
            table = m.group(1).strip('"')   # ["stock-6.12"]
            found.setdefault((table, None), num)
        elif m := _KEY_RE.match(line):
            key = (table, m.group(1)) if table else (m.group(1), None)
            found.setdefault(key, num)
    return found


def read_tests_txt(path: Path) -> list[Trigger]:
    triggers = []
    seen: dict[str, int] = {}
    file = shown(path, None)
    for num, raw in enumerate(read_text(path, SuiteError, what="trigger list").splitlines(), 1):
        line = raw.strip()
        if not line or line == "#" or line.startswith("# "):
            continue
        skipped = line.startswith("#")
        name, _, rest = line.lstrip("#").partition(" ")
        if problem := TRIGGER.problem(name):
            raise SuiteError(f"{file}:{num}: '{shown(raw, 80)}' is not 'NAME expected-text': "
                             f"{problem}")
        if name in seen:
            raise SuiteError(f"{file}:{num}: {name} is listed twice (first on line {seen[name]})")
        seen[name] = num
        if skipped:
            triggers.append(Trigger(name, "", rest.strip() or "skipped"))
        else:
            triggers.append(Trigger(name, rest.strip()))
    return triggers


@dataclass(frozen=True)
class SuiteInputs:
    """A suite's files, read and checked: its golden files and trigger list."""
    golden: dict[str, Golden]
    triggers: list[Trigger]


def load_inputs(suites: dict[str, Suite]) -> dict[str, SuiteInputs]:
    """Every suite's golden files and trigger list, read once; the first bad
    one raises its InputError (file:line).  Done before any guest boots."""
    return {name: SuiteInputs(s.golden(), s.triggers()) for name, s in suites.items()}


def default_names(suites: dict[str, Suite]) -> list[str]:
    """The suites a run without --suite runs: all but the on_demand ones."""
    return [n for n, s in suites.items() if not s.on_demand]


def pick(suites: dict[str, Suite], names: list[str]) -> list[Suite]:
    """The named suites, in order; SuiteError naming any unknown one."""
    unknown = [n for n in names if n not in suites]
    if unknown:
        raise SuiteError(f"no suite {', '.join(shown(n) for n in unknown)} "
                         f"(have: {', '.join(suites)})")
    return [suites[n] for n in names]
