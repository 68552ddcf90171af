"""Candidate crops for the planner: the box grown outward, with the box drawn on it.

May import: numpy, OpenCV, ``perception.types``.
"""

from __future__ import annotations

from collections.abc import Iterable

import cv2
import numpy as np

from perception.types import Box, Candidate

__all__ = ["candidate_crop", "numbered_candidates"]

_BOX_COLOUR = (255, 0, 0)  # red in RGB


def candidate_crop(image: np.ndarray, box: Box, margin: float) -> np.ndarray:
    """An RGB crop around ``box``, grown by ``margin`` x the image's short side, box drawn in red."""
    height, width = image.shape[:2]
    pad = max(8.0, margin * min(width, height))
    outer = box.expand(pad, pad, width, height)
    left, top, right, bottom = (int(v) for v in (outer.left, outer.top, outer.right, outer.bottom))
    right, bottom = max(right, left + 1), max(bottom, top + 1)
    crop = np.ascontiguousarray(image[top:bottom, left:right]).copy()
    thickness = max(2, int(round(min(width, height) / 360)))
    cv2.rectangle(
        crop,
        (int(box.left) - left, int(box.top) - top),
        (int(np.ceil(box.right)) - left - 1, int(np.ceil(box.bottom)) - top - 1),
        _BOX_COLOUR,
        thickness,
    )
    framed: np.ndarray = crop
    return framed


def numbered_candidates(
    image: np.ndarray, places: Iterable[tuple[Box, str | None, float]], margin: float
) -> tuple[Candidate, ...]:
    """``Candidate``s numbered 1..k for the planner, each with its crop, from (box, text, score)."""
    return tuple(
        Candidate(index=i, box=box, text=text, score=float(score), crop=candidate_crop(image, box, margin))
        for i, (box, text, score) in enumerate(places, start=1)
    )
