"""A zoomed second look for short targets ("1", "0", "-", "...").

At screen scale a lone digit or symbol is a few pixels wide: the detector merges it
into its neighbours ("-1+" as one line, "5|" with a cursor) or the recogniser drops it.
When a short target is not matched, the places that may hold it are read again at 3x:
lines whose characters include the target's, and small text-free widgets
(``propose_ui_elements``: buttons, stepper cells) that OCR left empty. Each crop is
small, so the second look costs tens of milliseconds, and it runs only on a miss.

May import: numpy, OpenCV, the standard library, ``perception.*``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

import cv2
import numpy as np

from perception.types import Box, TextLine

__all__ = ["is_short_target", "zoom_regions", "read_zoomed"]

_SCALE = 3.0
_MAX_REGIONS = 12


def _literal(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def is_short_target(target: str) -> bool:
    """Three characters or fewer once spaces go, or symbols only."""
    literal = _literal(target)
    return 0 < len(literal) <= 3 or not any(c.isalnum() for c in literal)


def zoom_regions(lines: list[TextLine], target: str, image_size: tuple[int, int],
                 empty_widgets: Sequence[Box] = ()) -> list[Box]:  # fmt: skip
    """Boxes worth a second look for ``target``: lines holding its characters inside
    longer text, then text-free widgets about one text line high."""
    width, height = image_size
    literal = _literal(target)
    regions = [ln.box for ln in lines if literal and literal in _literal(ln.text) and _literal(ln.text) != literal]
    line_height = float(np.median([ln.box.height for ln in lines])) if lines else 0.03 * height
    for box in empty_widgets:
        if 0.5 * line_height <= box.height <= 3.5 * line_height and box.width <= 6 * line_height:
            regions.append(box)
    grown = []
    for box in regions[:_MAX_REGIONS]:
        pad = 0.4 * max(box.height, line_height)
        grown.append(box.expand(pad, pad, width, height))
    return grown


def read_zoomed(read: Callable[[np.ndarray], list[TextLine]], image: np.ndarray, regions: list[Box]) -> list[TextLine]:
    """OCR of each region at 3x, boxes mapped back to image pixels."""
    found: list[TextLine] = []
    for region in regions:
        left, top, right, bottom = (int(round(v)) for v in (region.left, region.top, region.right, region.bottom))
        crop = image[top:bottom, left:right]
        if crop.shape[0] < 4 or crop.shape[1] < 4:
            continue
        big = cv2.resize(crop, None, fx=_SCALE, fy=_SCALE, interpolation=cv2.INTER_CUBIC)
        # a white frame: the detector misses text that touches the crop's edge
        big = cv2.copyMakeBorder(big, 16, 16, 16, 16, cv2.BORDER_REPLICATE)
        for line in read(np.ascontiguousarray(big)):
            b = line.box
            box = Box(
                left + max(0.0, b.left - 16) / _SCALE,
                top + max(0.0, b.top - 16) / _SCALE,
                left + max(0.0, b.right - 16) / _SCALE,
                top + max(0.0, b.bottom - 16) / _SCALE,
            )
            found.append(TextLine(line.text, box, line.score))
    return found
