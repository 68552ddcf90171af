"""What ``server/`` and ``eval/`` may import of ``mobile_agent`` (issue 28): its public API
only, i.e. a name in the ``__all__`` of one of ``PUBLIC_MODULES``. A static scan of every
import, the ones inside functions and under ``TYPE_CHECKING`` included: reaching into a
module such as ``mobile_agent.agent.mask`` or ``mobile_agent.planner.transport`` ties the
layers above to how the core is cut up inside, which the core must stay free to change.

A name they need is exported by the public module it belongs to (and so pinned here: a
name dropped from an ``__all__`` fails this test for every importer).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The public API of the core: the top package and the packages (or single modules) the
# architecture names. ``mobile_agent.cli`` is the command-line plugins' API (the
# ``mobile_agent.commands`` entry-point group: ``read_token_file`` for their --token-file).
PUBLIC_MODULES = (
    "mobile_agent",
    "mobile_agent.agent",
    "mobile_agent.cli",
    "mobile_agent.device",
    "mobile_agent.errors",
    "mobile_agent.locate",
    "mobile_agent.operations",
    "mobile_agent.planner",
    "mobile_agent.planner.dialects",
    "mobile_agent.replay",
    "mobile_agent.settings",
    "mobile_agent.testing",
    "mobile_agent.urls",
)
LAYERS_ABOVE = ("server", "eval")


def core_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name) for each ``mobile_agent`` import in ``path``; name None for a
    plain ``import mobile_agent.x`` or ``importlib.import_module("mobile_agent.x")``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "mobile_agent":
                found += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] == "mobile_agent"]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                if first.value.split(".")[0] == "mobile_agent":
                    found.append((node.lineno, first.value, None))
    return found


def boundary_violations(package: str) -> list[str]:
    exported = {name: set(importlib.import_module(name).__all__) for name in PUBLIC_MODULES}
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        where = path.relative_to(ROOT)
        for line, module, name in core_imports(path):
            if module not in exported:
                bad.append(f"{where}:{line} imports {module}, not one of the public modules (PUBLIC_MODULES)")
            elif name is not None and name != "*" and name not in exported[module]:
                bad.append(f"{where}:{line} imports {name} from {module}, which is not in its __all__")
    return bad


@pytest.mark.parametrize("package", LAYERS_ABOVE)
def test_the_layers_above_use_the_public_api_only(package: str) -> None:
    bad = boundary_violations(package)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_public_name_resolves(module: str) -> None:
    loaded = importlib.import_module(module)
    missing = [name for name in loaded.__all__ if not hasattr(loaded, name)]
    assert not missing, f"{module}.__all__ names what it does not have: {missing}"


def test_the_scan_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from mobile_agent.agent.mask import LiveMask\n"
        "def f():\n    from mobile_agent.planner.transport import shared_client\n    import mobile_agent.cli.run\n"
        "    importlib.import_module('mobile_agent.planner.client')\n"
    )
    assert sorted(core_imports(module)) == [
        (3, "mobile_agent.agent.mask", "LiveMask"),
        (5, "mobile_agent.planner.transport", "shared_client"),
        (6, "mobile_agent.cli.run", None),
        (7, "mobile_agent.planner.client", None),
    ]
