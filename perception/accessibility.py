"""The accessibility tree as a second text source: ``uiautomator dump`` XML in, typed
nodes out, and the check whether the tree agrees with the pixels.

Format (AOSP ``AccessibilityNodeInfoDumper``, as real phones write it; see
``tests/fixtures/uiautomator_dump_*.xml`` for published dumps): ``<hierarchy rotation="0">``
holding nested ``<node>`` elements with ``text``, ``content-desc``, ``resource-id``,
``class``, ``package``, ``clickable``, ``enabled``, ``password`` and
``bounds="[left,top][right,bottom]"`` in screen pixels. Nodes the app scrolled away
or hid are dumped with ``bounds="[0,0][0,0]"`` (zero area): they are not on screen.

The tree is only trusted where it agrees with the screenshot: WebViews, games,
Flutter/Compose canvases and secure screens give an empty, partial or stale tree. So a
match in the tree is spot-checked by OCR on that node's crop only (a few tens of pixels
high: cheap), and anything the tree does not hold is left to vision.

The XML is parsed with the standard library's expat-backed ElementTree (Python ≥ 3.11's
expat refuses entity-expansion bombs; a dump has no DTD anyway).

May import: numpy, the standard library, ``perception.*``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from perception.errors import InvalidInputError
from perception.types import Box, TextLine

__all__ = ["AccessibilityNode", "nodes_from", "parse_uiautomator_dump", "tap_targets", "text_lines", "tree_fits_image"]

_BOUNDS = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")


@dataclass(frozen=True)
class AccessibilityNode:
    """One ``<node>`` of a dump, bounds in screen pixels."""

    text: str
    content_desc: str
    resource_id: str
    class_name: str
    package: str
    clickable: bool
    enabled: bool
    password: bool
    bounds: Box
    depth: int

    @property
    def label(self) -> str:
        """What a user reads or hears for it: its text, else its content description."""
        return self.text.strip() or self.content_desc.strip()


def _flag(element: ET.Element, name: str) -> bool:
    return element.get(name, "false").strip().lower() == "true"


def _bounds(raw: str | None) -> Box | None:
    match = _BOUNDS.match((raw or "").strip())
    if not match:
        return None
    left, top, right, bottom = (float(v) for v in match.groups())
    return Box(left, top, right, bottom)


def parse_uiautomator_dump(xml: str | bytes) -> list[AccessibilityNode]:
    """Every node of a ``uiautomator dump`` that has an area on screen, in document order.

    Raises ``InvalidInputError`` for text that is not a dump (a device error message
    such as ``ERROR: could not get idle state.`` is not XML)."""
    if isinstance(xml, bytes):
        xml = xml.decode("utf-8", errors="replace")
    start = xml.find("<")
    if start < 0:
        raise InvalidInputError(f"not a uiautomator dump: {xml.strip()[:120]!r}", backend="accessibility")
    try:
        root = ET.fromstring(xml[start:].strip())
    except ET.ParseError as exc:
        raise InvalidInputError(f"uiautomator dump is not well-formed XML: {exc}", backend="accessibility") from exc
    if root.tag not in ("hierarchy", "node"):
        raise InvalidInputError(f"not a uiautomator dump: root element <{root.tag}>", backend="accessibility")
    nodes: list[AccessibilityNode] = []

    def walk(element: ET.Element, depth: int) -> None:
        for child in element:
            if child.tag != "node":
                continue
            box = _bounds(child.get("bounds"))
            if box is not None and box.area > 0:
                nodes.append(
                    AccessibilityNode(
                        text=child.get("text", ""),
                        content_desc=child.get("content-desc", ""),
                        resource_id=child.get("resource-id", ""),
                        class_name=child.get("class", ""),
                        package=child.get("package", ""),
                        clickable=_flag(child, "clickable"),
                        enabled=child.get("enabled", "true").strip().lower() != "false",
                        password=_flag(child, "password"),
                        bounds=box,
                        depth=depth,
                    )
                )
            walk(child, depth + 1)

    if root.tag == "node":  # some tools drop the <hierarchy> wrapper
        wrapper = ET.Element("hierarchy")
        wrapper.append(root)
        root = wrapper
    walk(root, 0)
    return nodes


def text_lines(nodes: list[AccessibilityNode], image_size: tuple[int, int]) -> list[TextLine]:
    """The tree's labelled nodes as ``TextLine``s (score 1.0), clipped to the image;
    password fields and nodes wholly off the image are left out."""
    width, height = image_size
    lines = []
    for node in nodes:
        label = node.label
        if not label or node.password:
            continue
        b = node.bounds
        box = Box(max(0.0, b.left), max(0.0, b.top), min(float(width), b.right), min(float(height), b.bottom))
        if box.area > 0:
            lines.append(TextLine(text=label, box=box, score=1.0))
    return lines


def tree_fits_image(nodes: list[AccessibilityNode], image_size: tuple[int, int]) -> bool:
    """Whether the tree was dumped for a screen of this size: its outermost nodes must
    not reach past the image (a rotated or resized screen, or a tree from another display)."""
    if not nodes:
        return False
    width, height = image_size
    right = max(n.bounds.right for n in nodes)
    bottom = max(n.bounds.bottom for n in nodes)
    return right <= width * 1.01 and bottom <= height * 1.01 and right >= width * 0.5


def nodes_from(hierarchy: object) -> list[AccessibilityNode] | None:
    """The nodes of ``hierarchy`` (a dump's XML, or nodes already parsed); None when the
    phone answered an error instead of a tree. Raises ``InvalidInputError`` for anything else."""
    if isinstance(hierarchy, (str, bytes)):
        try:
            return parse_uiautomator_dump(hierarchy)
        except InvalidInputError:
            return None
    if isinstance(hierarchy, list) and all(isinstance(n, AccessibilityNode) for n in hierarchy):
        return hierarchy
    raise InvalidInputError(
        f"hierarchy must be uiautomator dump XML or a list of AccessibilityNode, got {type(hierarchy).__name__}",
        backend="accessibility",
    )


def tap_targets(
    nodes: list[AccessibilityNode], image_size: tuple[int, int], *, max_area_fraction: float = 0.15
) -> list[tuple[Box, str]]:
    """The tree's controls a tap may land on, as (bounds clipped to the image, label): enabled
    nodes that are clickable or say what they are (a text, a content-desc), no larger than
    ``max_area_fraction`` of the screen (a button, a row, a field; not a page or a panel).
    A password field keeps no label."""
    width, height = image_size
    limit = max_area_fraction * width * height
    out = []
    for node in nodes:
        if not node.enabled or not (node.clickable or node.label):
            continue
        b = node.bounds
        box = Box(max(0.0, b.left), max(0.0, b.top), min(float(width), b.right), min(float(height), b.bottom))
        if 0 < box.area <= limit:
            out.append((box, "" if node.password else node.label))
    return out
