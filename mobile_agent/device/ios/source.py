"""WDA's page source as the accessibility tree the rest of the agent reads.

WDA's ``/source`` is an XML tree of ``XCUIElementType…`` elements with ``name``,
``label``, ``value``, ``enabled``, ``visible`` and a frame (``x``, ``y``, ``width``,
``height``) in **points** (sample: ``tests/data/wda/source_settings.xml``; Appium wraps
it in ``<AppiumAUT>``). The agent's perception reads ``uiautomator dump``'s format
(``<hierarchy><node text content-desc class bounds="[l,t][r,b]" …>``, pixels), so
``hierarchy_from_source`` writes the same tree in that format, frames times ``scale``:
the one tree format above the device layer, whatever the phone.

Mapping: ``text`` = label, else value; ``content-desc`` = the accessibility name when it
differs from the text; ``resource-id`` = the name; ``class`` = the element type;
``password`` = a secure text field; ``clickable`` = a type people tap. Elements WDA
reports as not visible are left out (their visible children stay). Bounds are the part on
the screen (the application's frame), as ``uiautomator dump`` writes a node's visible bounds
(AOSP uiautomator ``AccessibilityNodeInfoDumper``: ``getVisibleBoundsInScreen(node, width,
height)``); WDA's frames run past the screen's edge in a scrolled list, and an element
wholly off the screen is left out.

May import: the standard library.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

__all__ = ["TAPPABLE_TYPES", "hierarchy_from_source"]

TAPPABLE_TYPES = frozenset(
    "XCUIElementType" + t
    for t in ("Button", "Cell", "Link", "Icon", "Switch", "Toggle", "TextField", "SecureTextField", "SearchField",
              "Key", "Tab", "MenuItem", "SegmentedControl", "Slider", "PickerWheel", "TextView")
)


def _number(element: ET.Element, name: str) -> float:
    try:
        return float(element.get(name, "0"))
    except ValueError:
        return 0.0


def hierarchy_from_source(source: str, scale: float) -> str:
    """WDA's XML page source as a ``uiautomator dump`` document in pixels. Raises
    ``ValueError`` for text that is not a page source."""
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    start = source.find("<")
    try:
        root = ET.fromstring(source[start:].strip()) if start >= 0 else None
    except ET.ParseError as exc:
        raise ValueError(f"WDA's page source is not well-formed XML: {exc}") from exc
    if root is not None and root.tag == "AppiumAUT" and len(root):
        root = root[0]
    if root is None or not root.tag.startswith("XCUIElementType"):
        raise ValueError(f"not a WDA page source: {source.strip()[:120]!r}")
    out = ET.Element("hierarchy", rotation="0")
    # the screen in points: the application's frame (a source without one is not clipped)
    screen_w = _number(root, "width") or float("inf")
    screen_h = _number(root, "height") or float("inf")

    def convert(element: ET.Element, parent: ET.Element) -> None:
        target = parent
        x, y = max(_number(element, "x"), 0.0), max(_number(element, "y"), 0.0)
        x2 = min(_number(element, "x") + _number(element, "width"), screen_w)
        y2 = min(_number(element, "y") + _number(element, "height"), screen_h)
        on_screen = x2 > x and y2 > y
        if element.get("visible", "true") != "false" and element.tag.startswith("XCUIElementType") and on_screen:
            left, top = round(x * scale), round(y * scale)
            right, bottom = round(x2 * scale), round(y2 * scale)
            name = element.get("name") or ""
            text = element.get("label") or element.get("value") or ""
            attributes = {
                "index": str(len(parent)),
                "text": text,
                "resource-id": name,
                "content-desc": name if name != text else "",
                "class": element.tag,
                "package": "",
                "clickable": "true" if element.tag in TAPPABLE_TYPES else "false",
                "enabled": "false" if element.get("enabled") == "false" else "true",
                "password": "true" if element.tag == "XCUIElementTypeSecureTextField" else "false",
                "bounds": f"[{left},{top}][{right},{bottom}]",
            }
            target = ET.SubElement(parent, "node", attributes)
        for child in element:
            convert(child, target)

    convert(root, out)
    return "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>" + ET.tostring(out, encoding="unicode")
