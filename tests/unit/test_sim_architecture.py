"""The simulated phone's modules import one another without a cycle, and its state
model imports neither the command shell nor the apps nor the renderer (issue 10: they
used to import themselves in a seven-file circle).

A static scan of every import, including those inside functions and under
``TYPE_CHECKING``: a type-only import still ties two files together.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "simphone"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The simphone modules ``path`` imports (``from simphone import x`` is the module
    ``simphone.x`` when there is one, else the package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                if candidate in known:
                    found.add(candidate)
                elif base in known:
                    found.add(base)
    return found - {here}


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(path, set(mods)) for name, path in mods.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_simphone_has_no_import_cycle() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_state_model_imports_no_shell_apps_or_renderer() -> None:
    edges = graph()
    # permissions: the runtime-permission part of the state, functions over the state dict
    allowed = {"simphone.types", "simphone.fs", "simphone.profiles", "simphone.permissions"}
    # navigation: the other half of PhoneModel (tasks, focus, power), under the same rule
    assert edges["simphone.navigation"] <= allowed, edges["simphone.navigation"] - allowed
    assert edges["simphone.phone"] <= allowed | {"simphone.navigation"}, edges["simphone.phone"] - allowed
    assert edges["simphone.profiles"] == set()
    assert edges["simphone.permissions"] == set()


def test_the_scan_finds_a_cycle_and_type_only_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "simphone"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from simphone.b import B\n")
    (pkg / "b.py").write_text("def f():\n    from simphone import a\n")
    known = {"simphone", "simphone.a", "simphone.b"}
    global ROOT
    saved = ROOT
    ROOT = tmp_path
    try:
        edges = {m: imports_of(pkg / f"{m.split('.')[-1]}.py", known) for m in ("simphone.a", "simphone.b")}
    finally:
        ROOT = saved
    assert edges == {"simphone.a": {"simphone.b"}, "simphone.b": {"simphone.a"}}
    assert find_cycle(edges) in (["simphone.a", "simphone.b", "simphone.a"], ["simphone.b", "simphone.a", "simphone.b"])
