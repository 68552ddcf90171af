"""Frozen, typed results of perception.

Coordinate space: every ``Box`` and point here is in **image pixels of the image that
was given to perception**. The agent passes full-resolution screenshots, so for it these
are screen pixels. Nothing here is normalized.

May import: numpy and the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

__all__ = ["Box", "Candidate", "IconRegion", "Location", "LocateStatus", "TextLine"]


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in image pixels (left/top inclusive, right/bottom exclusive)."""

    left: float
    top: float
    right: float
    bottom: float

    @property
    def width(self) -> float:
        return max(0.0, self.right - self.left)

    @property
    def height(self) -> float:
        return max(0.0, self.bottom - self.top)

    @property
    def area(self) -> float:
        return self.width * self.height

    @property
    def center(self) -> tuple[int, int]:
        return (int(round((self.left + self.right) / 2)), int(round((self.top + self.bottom) / 2)))

    def contains(self, x: float, y: float) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom

    def iou(self, other: Box) -> float:
        ix = max(0.0, min(self.right, other.right) - max(self.left, other.left))
        iy = max(0.0, min(self.bottom, other.bottom) - max(self.top, other.top))
        inter = ix * iy
        union = self.area + other.area - inter
        return inter / union if union > 0 else 0.0

    def expand(self, dx: float, dy: float, width: float, height: float) -> Box:
        """Grown by dx/dy on each side, clipped to an image of width x height."""
        return Box(
            max(0.0, self.left - dx),
            max(0.0, self.top - dy),
            min(float(width), self.right + dx),
            min(float(height), self.bottom + dy),
        )

    def as_list(self) -> list[int]:
        return [int(round(v)) for v in (self.left, self.top, self.right, self.bottom)]


@dataclass(frozen=True)
class TextLine:
    """One OCR line."""

    text: str
    box: Box
    score: float


@dataclass(frozen=True)
class IconRegion:
    """A candidate icon/widget box from a detector, before or after ranking."""

    box: Box
    score: float
    source: str  # "grounding-dino", "groundingdino-py", "proposals"


class LocateStatus(str, Enum):
    FOUND = "found"  # exactly one place: tap ``Location.point``
    CANDIDATES = "candidates"  # 2..N places: the planner chooses one by number
    NOT_FOUND = "not_found"
    TOO_MANY = "too_many"


@dataclass(frozen=True)
class Candidate:
    """One of several places a target may be; ``crop`` is an RGB uint8 image for the planner."""

    index: int  # 1-based, as shown to the planner
    box: Box
    text: str | None
    score: float
    crop: np.ndarray | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Location:
    """The answer to 'where is X on this screen'."""

    status: LocateStatus
    target: str
    point: tuple[int, int] | None = None
    box: Box | None = None
    candidates: tuple[Candidate, ...] = ()
    closest: tuple[str, ...] = ()  # texts seen that came nearest, for NOT_FOUND feedback
    feedback: str = ""  # one sentence for the planner when not FOUND
    backend: str = ""  # which backends answered, for logs and trajectories
