"""The layers import downward only (docs/architecture.md, STYLE.md).

A static scan of every module's imports, including the ones inside functions: a lazy
import is still an import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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
