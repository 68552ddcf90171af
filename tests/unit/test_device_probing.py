"""Above the device layer, a device is used through its declared protocol
(``mobile_agent.operations.context.DeviceLike`` / ``AgentDevice``): no ``hasattr`` /
``getattr`` asks a device what it is or has (an Android phone or an iPhone differ only
behind the protocol: ``platform``, ``lists_apps``, ``current_app`` …). A static scan of
every module outside ``mobile_agent/device``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("mobile_agent", "server", "eval")


def _names_a_device(node: ast.expr) -> bool:
    """``device``, ``ctx.device``, ``self._device``, ``iphone``…: a name that says device or phone."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return any(word in name.lower() for word in ("device", "phone"))


def probes(source: str) -> list[int]:
    """Lines where ``hasattr``/``getattr`` is called on something named a device."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr")
                and node.args and _names_a_device(node.args[0])):
            found.append(node.lineno)
    return found


def test_no_layer_above_the_devices_probes_one() -> None:
    offenders = []
    for package in SCANNED:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.is_relative_to(ROOT / "mobile_agent" / "device"):
                continue
            offenders += [f"{path.relative_to(ROOT)}:{line}" for line in probes(path.read_text(encoding="utf-8"))]
    assert not offenders, "declare the member on the device protocol instead: " + ", ".join(offenders)


def test_the_scan_sees_a_probe() -> None:
    assert probes('if not hasattr(ctx.device, "launcher_apps"):\n    pass\n') == [1]
    assert probes('serial = getattr(device, "serial", "x")\n') == [1]
    assert probes('value = getattr(args, "config", None)\n') == []
