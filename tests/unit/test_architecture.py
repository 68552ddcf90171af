"""The layers import downward only (docs/architecture.md, STYLE.md).

A static scan of every module's imports, including the ones inside functions: a lazy
import is still an import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT_PACKAGES = {"mobile_agent", "perception", "server", "eval", "simphone"}

# package -> project packages it must never import
FORBIDDEN = {
    "perception": {"mobile_agent", "server", "eval", "simphone"},
    "mobile_agent": {"server", "eval", "simphone"},
    "simphone": {"mobile_agent", "perception", "server", "eval"},
    "server": {"eval", "simphone"},
    "eval": {"server", "simphone"},
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.add(node.args[0].value.split(".")[0])
    return found & PROJECT_PACKAGES


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layers_import_downward_only(package: str) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = imported_packages(path) & FORBIDDEN[package]
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {', '.join(sorted(bad))}")
    assert not offenders, "\n".join(offenders)


def test_the_scan_sees_lazy_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from server.app import create_app\n    importlib.import_module('eval.x')\n")
    assert imported_packages(module) == {"server", "eval"}


# --- no import circles inside a package -------------------------------------------------
# Modules import each other one way: a circle (a <-> b, even through an import inside a
# function or at the bottom of a file) means neither can be read, tested or loaded alone.
# Imports under ``if TYPE_CHECKING:`` are for annotations only and do not count.


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str, root: Path) -> bool:
    base = root.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
            if name == "TYPE_CHECKING":
                hidden.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return hidden


def imported_modules(path: Path, root: Path = ROOT, packages: set[str] = PROJECT_PACKAGES) -> set[str]:
    """The project modules ``path`` imports at run time: ``from a.b import c`` is ``a.b.c``
    when that is a module, else ``a.b``; relative imports resolved."""
    me = module_name(path, root).split(".")
    here = me if path.name == "__init__.py" else me[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    hidden = _type_checking_nodes(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] in packages)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] not in packages:
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.add(sub if _is_module(sub, root) else module)
    return found


def import_cycles(root: Path = ROOT, packages: set[str] = PROJECT_PACKAGES) -> list[list[str]]:
    """Every set of modules that import each other in a circle (Tarjan's strongly
    connected components of the import graph), each sorted."""
    graph = {
        module_name(path, root): imported_modules(path, root, packages)
        for package in sorted(packages)
        for path in sorted((root / package).rglob("*.py"))
    }
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in graph:
                continue
            if target not in order:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], order[target])
        if low[node] == order[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return cycles


def test_no_module_imports_itself_in_a_circle() -> None:
    cycles = import_cycles()
    assert not cycles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_circle_scan_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text("def f():\n    from .a import x\n")  # lazy and relative: still a circle
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import y\n")
    (package / "d.py").write_text("import pkg.c\n")
    assert import_cycles(tmp_path, {"pkg"}) == [["pkg.a", "pkg.b"]]
