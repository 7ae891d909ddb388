"""The harness's shape (harness/README.md): no module over 500 lines, no
import cycle, and imports that run one way, from the CLI down to the model."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "usercopy_lab"
MAX_LINES = 500
# Stage of each top-level module or subpackage: a module imports only from
# lower stages and from its own subpackage.
STAGE = {"model": 0, "inputs": 0, "capture": 1, "reports": 2, "audit": 3, "judge": 4,
         "triage": 5, "run": 5, "hunt": 6, "output": 6, "gaps": 6, "lava": 7, "cli": 8,
         "soak": 9, "__main__": 9, "__init__": 9}


def _modules() -> dict[str, Path]:
    return {".".join(p.relative_to(PACKAGE).with_suffix("").parts): p
            for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of the lab that `name` imports, anywhere in it (function-local too)."""
    package = name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
            elif node.module and node.module.split(".")[0] == "usercopy_lab":
                out |= _resolve(node.module.split(".")[1:], node, known)
                continue
            else:
                continue
            target = base + (node.module.split(".") if node.module else [])
            out |= _resolve(target, node, known)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "usercopy_lab" and len(parts) > 1:
                    out |= _resolve(parts[1:], None, known)
    out.discard(name)
    return out


def _resolve(target: list[str], node: ast.ImportFrom | None, known: set[str]) -> set[str]:
    dotted = ".".join(target)
    found = set()
    if dotted in known:
        found.add(dotted)
    for alias in (node.names if node else []):
        sub = f"{dotted}.{alias.name}" if dotted else alias.name
        if sub in known:
            found.add(sub)
    if not found and f"{dotted}.__init__" in known:
        found.add(f"{dotted}.__init__")
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {name: _imports(name, path, set(mods)) for name, path in mods.items()}


def test_no_module_over_500_lines():
    long = {name: n for name, path in _modules().items()
            if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_no_import_cycle():
    graph = _graph()
    done: set[str] = set()

    def visit(name: str, stack: list[str]) -> None:
        if name in stack:
            raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(name):] + [name]))
        if name in done:
            return
        for dep in sorted(graph[name]):
            visit(dep, stack + [name])
        done.add(name)

    for name in graph:
        visit(name, [])


def test_imports_run_down_the_stages():
    wrong = []
    for name, deps in _graph().items():
        here = name.split(".")[0]
        for dep in deps:
            there = dep.split(".")[0]
            if there != here and STAGE[there] >= STAGE[here]:
                wrong.append(f"{name} imports {dep}")
    assert wrong == []


def test_every_module_has_a_stage():
    assert {name.split(".")[0] for name in _modules()} <= set(STAGE)
