"""The accessibility tree as a second opinion for icons: a node's ``content-desc`` ("More
options", "Navigate up", "Search") or its ``resource-id`` words against the planner's
description ("three vertical dots", "back arrow", "magnifying glass").

They agree when both name the same icon shape (``perception.icon_vocabulary``: "More
options" and "three vertical dots" are both a kebab) or share a content word ("search").
A vote only counts where the pixels agree too: the locator adds it to a proposal that
lies inside the node and that the pixel ranker did not rule out, so a stale or partial
tree cannot put a tap where nothing is drawn.

May import: the standard library, ``perception.*``.
"""

from __future__ import annotations

import re

from perception.accessibility import AccessibilityNode, parse_uiautomator_dump, tree_fits_image
from perception.errors import InvalidInputError
from perception.icon_vocabulary import read_icon_words
from perception.types import Box

__all__ = ["icon_nodes", "tree_icon_boxes", "tree_votes"]

# words that say nothing about which control it is
_FILLER = {
    "a", "an", "the", "icon", "button", "of", "with", "in", "on", "at", "and", "to", "image", "view", "id", "btn",
    "action", "white", "black", "grey", "gray", "red", "blue", "green", "yellow", "orange", "purple", "pink",
    "small", "big", "top", "bottom", "left", "right", "corner", "round", "circle", "android", "com", "app",
}  # fmt: skip


def icon_nodes(hierarchy: object, width: int, height: int) -> list[AccessibilityNode] | None:
    """Nodes that can name an icon (a content-desc or a resource-id) from a dump (XML, or
    parsed nodes); None when there is no usable tree for this frame."""
    if isinstance(hierarchy, (str, bytes)):
        try:
            nodes = parse_uiautomator_dump(hierarchy)
        except InvalidInputError:
            return None  # the phone answered an error instead of a tree
    elif isinstance(hierarchy, list) and all(isinstance(n, AccessibilityNode) for n in hierarchy):
        nodes = hierarchy
    else:
        raise InvalidInputError(
            f"hierarchy must be uiautomator dump XML or a list of AccessibilityNode, got {type(hierarchy).__name__}",
            backend="accessibility",
        )
    if not tree_fits_image(nodes, (width, height)):
        return None
    return [n for n in nodes if n.content_desc.strip() or n.resource_id.strip()]


def _content_words(text: str) -> set[str]:
    words = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower())
    return {w for w in words if w not in _FILLER and len(w) > 1}


def _agreement(node: AccessibilityNode, shapes: set[str], words: set[str]) -> float:
    desc = node.content_desc.strip()
    if desc:
        if shapes and shapes & set(read_icon_words(desc).shapes):
            return 1.0
        return 0.8 if words & _content_words(desc) else 0.0
    # a resource id is a developer's name ("drawer_item_icon" is an item of the drawer, not
    # its button): only a shared word counts, not the shape vocabulary
    name = node.resource_id.split("/")[-1].replace("_", " ")
    return 0.6 if words & _content_words(name) else 0.0


def tree_votes(nodes: list[AccessibilityNode], description: str, boxes: list[Box], max_node_area: float) -> list[float]:
    """0..1 per box: how well the named nodes holding the box's centre agree with the
    description (nodes larger than ``max_node_area`` are panels, not controls)."""
    shapes = set(read_icon_words(description).shapes)
    words = _content_words(description)
    controls = [n for n in nodes if n.bounds.area <= max_node_area]
    votes = []
    for box in boxes:
        cx, cy = (box.left + box.right) / 2, (box.top + box.bottom) / 2
        # the ImageView and the clickable group around it may each carry a name: any that agrees
        holders = [n for n in controls if n.bounds.contains(cx, cy) and n.bounds.area >= 0.5 * box.area]
        votes.append(max((_agreement(n, shapes, words) for n in holders), default=0.0))
    return votes


def tree_icon_boxes(nodes: list[AccessibilityNode], description: str, max_node_area: float) -> list[tuple[Box, float]]:
    """(bounds, agreement) of the named controls that agree with the description, best
    first: where the icon is when the pixels cannot say (a frame captured blank)."""
    shapes = set(read_icon_words(description).shapes)
    words = _content_words(description)
    found = [(n.bounds, _agreement(n, shapes, words)) for n in nodes if n.bounds.area <= max_node_area]
    return sorted([(b, a) for b, a in found if a > 0], key=lambda pair: -pair[1])
