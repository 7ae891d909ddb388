"""No module of the lab imports a private name (one starting with "_") from
another module of the lab: a name used across modules is public, and a
private one can change without looking beyond its own module."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "usercopy_lab"

def _modules() -> dict[str, Path]:
    return {".".join(p.relative_to(PACKAGE).with_suffix("").parts): p
            for p in sorted(PACKAGE.rglob("*.py"))}


def _private_imports(path: Path) -> set[str]:
    """The private names that the module at path imports from the lab
    (relative imports and absolute usercopy_lab ones, function-local too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            lab = node.level > 0 or (node.module or "").split(".")[0] == "usercopy_lab"
            if lab:
                names |= {a.name for a in node.names if a.name.startswith("_")}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "usercopy_lab" and any(p.startswith("_") for p in parts[1:]):
                    names.add(alias.name)
    return names


def _found() -> set[tuple[str, str]]:
    return {(name, imported) for name, path in _modules().items()
            for imported in _private_imports(path)}


def test_no_private_name_imported_across_modules():
    assert sorted(_found()) == []
