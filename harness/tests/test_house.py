"""The harness's shape (harness/README.md): no module over 500 lines, no
import cycle, and imports that run one way, from the CLI down to the model."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "usercopy_lab"
MAX_LINES = 500
# Stage of each top-level module or subpackage: a module imports only from
# lower stages and from its own subpackage.
# protocol.py (the guest's markers) reads the model's Outcome: one above it.
STAGE = {"model": 0, "inputs": 0, "schemas": 0, "protocol": 1, "capture": 2, "reports": 3,
         "audit": 4, "judge": 5, "triage": 6, "run": 6, "hunt": 7, "output": 7, "gaps": 7,
         "lava": 8, "cli": 9, "__main__": 10, "__init__": 10}


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


def test_every_argument_parser_is_in_cli():
    """One command line: argparse only in the cli/ package, and no module
    but the package's __main__ runs as a program."""
    wrong = []
    for name, path in _modules().items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if name.split(".")[0] != "cli" and (
                    isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names)
                    or isinstance(node, ast.ImportFrom) and node.module == "argparse"):
                wrong.append(f"{name} imports argparse")
            if name != "__main__" and isinstance(node, ast.Compare) \
                    and isinstance(node.left, ast.Name) and node.left.id == "__name__":
                wrong.append(f"{name} runs as a program (__name__ == ...)")
    assert wrong == []


def test_reports_are_read_through_the_package_api():
    """Outside reports/, the lab imports the parser's public API from the
    package (reports/__init__.py), never one of its modules."""
    wrong = sorted(f"{name} imports {dep}" for name, deps in _graph().items()
                   if not name.startswith("reports.")
                   for dep in deps if dep.startswith("reports.") and dep != "reports.__init__")
    assert wrong == []


def _tracked_text() -> dict[Path, str]:
    import subprocess
    repo = PACKAGE.parents[1]
    names = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True,
                           text=True, check=True).stdout.split()
    out = {}
    for name in names:
        path = repo / name
        if name == "docs/history.md" or name.startswith("docs/hunt-runs/") \
                or "testdata" in name or not path.is_file() \
                or path.stat().st_size > 1 << 20:
            continue
        try:
            out[path] = path.read_text()
        except UnicodeDecodeError:
            continue
    return out


def test_the_harness_modules_named_anywhere_exist():
    """A module path under harness/usercopy_lab/ or a dotted usercopy_lab
    name, wherever the repository names one (code, comments, configs, docs;
    history.md tells the past), is a module that exists; a bare NAME.py in
    the package's own text is a file of the repository."""
    import re
    repo = PACKAGE.parents[1]
    files = _tracked_text()
    # the repository's own files, and the one program of the kernel tree
    # the package's text names by its bare name (tools/testing/kunit/)
    basenames = {p.name for p in files} | {"kunit.py"}
    wrong = []
    for path, text in files.items():
        for m in re.finditer(r"harness/usercopy_lab/([\w/]+\.py)", text):
            if not (PACKAGE / m.group(1)).is_file():
                wrong.append(f"{path.relative_to(repo)}: {m.group(0)}")
        for m in re.finditer(r"\busercopy_lab((?:\.\w+)+)", text):
            parts = m.group(1).lstrip(".").split(".")
            # the longest prefix that is a module or package; what follows
            # it must be a name that module defines or imports
            found = None
            for n in range(len(parts), 0, -1):
                for cand in (PACKAGE.joinpath(*parts[:n]).with_suffix(".py"),
                             PACKAGE.joinpath(*parts[:n]) / "__init__.py"):
                    if cand.is_file():
                        found = (n, cand)
                        break
                if found:
                    break
            if found is None or (found[0] < len(parts) and not re.search(
                    rf"\b{parts[found[0]]}\b", found[1].read_text())):
                wrong.append(f"{path.relative_to(repo)}: usercopy_lab{m.group(1)}")
        for m in re.finditer(r"-m usercopy_lab\.[\w.]+", text):
            # one entry point: python3 -m usercopy_lab COMMAND
            wrong.append(f"{path.relative_to(repo)}: {m.group(0)} (no module runs with -m)")
        if path.is_relative_to(PACKAGE):
            for m in re.finditer(r"(?<![\w/.-])(\w+\.py)\b", text):
                if m.group(1) not in basenames:
                    wrong.append(f"{path.relative_to(repo)}: {m.group(1)}")
    assert wrong == []
