"""Text localization from the accessibility tree, where it agrees with the pixels.

The tree's matches for the target are spot-checked: the node's crop is read by OCR (a
small image: a few tens of milliseconds) and must show the node's text. Agreement gives
the node's exact bounds without a full-screen OCR pass; a tree that is stale (the screen
moved on), partial (WebView, Flutter, games) or silent about the target gives ``None``,
and vision decides.

May import: numpy, rapidfuzz, the standard library, ``perception.*``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from rapidfuzz import fuzz

from perception.accessibility import nodes_from, text_lines, tree_fits_image
from perception.crops import numbered_candidates
from perception.text_match import TIER_EXACT, TIER_PARTIAL, fold, match_text
from perception.types import Box, LocateStatus, Location, TextLine

__all__ = ["node_shows_text", "tree_location", "tree_only_location"]

_SPOT_CHECKS = 3
_AGREE = 80.0  # rapidfuzz partial ratio between the node's text and what OCR reads in its crop


def node_shows_text(read: Callable[[np.ndarray], list[TextLine]], image: np.ndarray, line: TextLine) -> bool:
    """Whether OCR on the node's crop reads (most of) the node's text."""
    b = line.box
    pad = max(4.0, 0.15 * b.height)
    height, width = image.shape[:2]
    box = b.expand(pad, pad, width, height)
    crop = image[int(box.top) : int(box.bottom) + 1, int(box.left) : int(box.right) + 1]
    if crop.shape[0] < 4 or crop.shape[1] < 4:
        return False
    seen = fold(" ".join(ln.text for ln in read(np.ascontiguousarray(crop))))
    wanted = fold(line.text)
    if not seen or not wanted:
        return False
    # a long label may be ellipsized on screen: its start must be there
    return fuzz.partial_ratio(wanted[: max(len(seen), 3)], seen) >= _AGREE


def tree_only_location(
    image: np.ndarray,
    target: str,
    hierarchy: object,
    locate: Callable[[np.ndarray, list[TextLine], str, str], Location],
    crop_margin: float = 0.02,
) -> Location | None:
    """The target's place from the tree alone, for a frame whose pixels hold nothing to
    check it against (a FLAG_SECURE window captures black: ``perception.blank_screen``).
    ``None`` when there is no usable tree."""
    height, width = image.shape[:2]
    nodes = nodes_from(hierarchy)
    if nodes is None or not tree_fits_image(nodes, (width, height)):
        return None
    lines = text_lines(nodes, (width, height))
    # a control and the text inside it often carry one label (a Button's node and its
    # TextView, a row's content-desc and its title): one place, the control's
    lines = [a for a in lines if not any(b is not a and fold(b.text) == fold(a.text) and _within(a.box, b.box)
                                         for b in lines)]  # fmt: skip
    location = locate(image, lines, target, "accessibility only (the capture is blank)")
    exact = [m.line.box for m in match_text(lines, target, (width, height), 1.0) if m.tier == TIER_EXACT]
    if location.status is LocateStatus.FOUND and location.box is not None and location.box not in exact:
        # not a whole label: a part of a longer one (a URL, a sentence) or a look-alike; nothing
        # on the pixels can confirm that is the place, so the planner confirms it (one candidate)
        only = numbered_candidates(image, [(location.box, location.target, 1.0)], crop_margin)
        return Location(LocateStatus.CANDIDATES, target, candidates=only, backend=location.backend,
                        feedback=f'Only a longer text holds "{target}"; choose 1 if that is the place.')  # fmt: skip
    return location


def _within(inner: Box, outer: Box) -> bool:
    return (outer.left <= inner.left and outer.top <= inner.top and inner.right <= outer.right
            and inner.bottom <= outer.bottom and inner.area < outer.area)  # fmt: skip


def tree_location(
    image: np.ndarray,
    target: str,
    hierarchy: object,
    read: Callable[[np.ndarray], list[TextLine]],
    locate: Callable[[np.ndarray, list[TextLine], str, str], Location],
) -> Location | None:
    """The target's place from the tree, or ``None`` when vision must decide."""
    height, width = image.shape[:2]
    nodes = nodes_from(hierarchy)
    if nodes is None or not tree_fits_image(nodes, (width, height)):
        return None
    lines = text_lines(nodes, (width, height))
    matches = [m for m in match_text(lines, target, (width, height), 1.0) if m.tier != TIER_PARTIAL]
    if not matches:
        return None  # the tree does not hold it (a WebView, a canvas): vision decides
    if not any(m.tier == TIER_EXACT for m in matches):
        # the tree holds it only inside a longer label ("youtube" in the URL bar's
        # https://m.youtube.com/...): the screen may show it whole elsewhere, in a WebView
        # the tree cannot see. Vision decides, and finds the span too if that is all there is
        return None
    checked = {id(m.line): m.line for m in matches[:_SPOT_CHECKS]}
    if not all(node_shows_text(read, image, line) for line in checked.values()):
        return None  # out of sync with the pixels
    location = locate(image, [m.line for m in matches], target, "accessibility")
    return location if location.status is not LocateStatus.NOT_FOUND else None
