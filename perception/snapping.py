"""Snapping: a point a grounding model answered, moved onto the element it most likely meant.

Grounding models aim at an element's centre but land off it: the image was resized
differently from what the model assumed, or the model has a habit (a constant vertical
offset). Given what perception sees on the frame (OCR text boxes, UI-element
proposals, accessibility nodes where a device gives them), ``snap_point`` moves the
point to the centre of the element that contains it or nearly contains it, when that
element is close enough and clearly closer than any other; otherwise the point stays as
given. The answer always says why (``Snap.reason``), for the step record.

The rule, in order:

1. Inside one or more targets: the smallest one containing the point (the most
   specific: a button's label rather than the panel behind it). Its centre.
2. Else the nearest target by edge distance, if within ``max_distance`` and the next
   nearest *other* target (not nested in or around it) is at least ``margin`` pixels
   farther and ``ratio`` times as far. Its centre.
3. Else the point as given: nothing near, or two targets equally near (ambiguous).

May import: the standard library, ``perception.types``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from perception.types import Box, IconRegion, TextLine

__all__ = ["Snap", "SnapTarget", "snap_point", "targets_from"]


@dataclass(frozen=True)
class SnapTarget:
    """Something tappable seen on the frame (screen pixels)."""

    box: Box
    label: str = ""  # the text read, or "" for a proposal
    source: str = "text"  # "text" (OCR), "element" (proposal), "node" (accessibility)

    def describe(self) -> str:
        what = f"{self.source} {self.label!r}" if self.label else self.source
        return (
            f"{what} at {[round(v) for v in (self.box.left, self.box.top, self.box.right, self.box.bottom)]}"
        )


@dataclass(frozen=True)
class Snap:
    """Where to tap, where the model pointed, and why they differ (or not)."""

    point: tuple[int, int]
    model_point: tuple[int, int]
    reason: str
    target: SnapTarget | None = None

    @property
    def moved(self) -> bool:
        return self.point != self.model_point

    def to_dict(self) -> dict[str, object]:
        return {
            "model_point": list(self.model_point),
            "point": list(self.point),
            "moved": self.moved,
            "reason": self.reason,
            "target": None
            if self.target is None
            else {"source": self.target.source, "label": self.target.label, "box": self.target.box.as_list()},
        }


def _edge_distance(box: Box, x: float, y: float) -> float:
    dx = max(box.left - x, 0.0, x - (box.right - 1))
    dy = max(box.top - y, 0.0, y - (box.bottom - 1))
    return math.hypot(dx, dy)


def _nested(a: Box, b: Box) -> bool:
    """One box (nearly) inside the other: a label and the button around it are one target."""
    small, big = (a, b) if a.area <= b.area else (b, a)
    ix = max(0.0, min(small.right, big.right) - max(small.left, big.left))
    iy = max(0.0, min(small.bottom, big.bottom) - max(small.top, big.top))
    return small.area > 0 and ix * iy >= 0.8 * small.area


def _centre(box: Box) -> tuple[int, int]:
    return int((box.left + box.right) // 2), int((box.top + box.bottom) // 2)


def snap_point(
    point: tuple[int, int],
    targets: Sequence[SnapTarget],
    *,
    max_distance: float,
    margin: float = 12.0,
    ratio: float = 1.5,
) -> Snap:
    """Snap ``point`` (screen pixels) to one of ``targets`` by the rule in the module docstring."""
    x, y = int(point[0]), int(point[1])
    given = (x, y)
    usable = [t for t in targets if t.box.width > 0 and t.box.height > 0]
    if not usable:
        return Snap(given, given, "tapped as given: nothing seen on the screen to snap to")
    inside = [t for t in usable if t.box.contains(x, y)]
    if inside:
        best = min(inside, key=lambda t: t.box.area)
        return Snap(_centre(best.box), given, f"inside {best.describe()}: its centre", best)
    ranked = sorted(usable, key=lambda t: _edge_distance(t.box, x, y))
    nearest = ranked[0]
    d1 = _edge_distance(nearest.box, x, y)
    if d1 > max_distance:
        return Snap(given, given, f"tapped as given: the nearest, {nearest.describe()}, is {d1:.0f} px away "
                    f"(more than {max_distance:.0f})")  # fmt: skip
    rival = next((t for t in ranked[1:] if not _nested(t.box, nearest.box)), None)
    if rival is not None:
        d2 = _edge_distance(rival.box, x, y)
        if d2 - d1 < margin or d2 < ratio * d1:
            return Snap(given, given, f"tapped as given: ambiguous between {nearest.describe()} ({d1:.0f} px) "
                        f"and {rival.describe()} ({d2:.0f} px)")  # fmt: skip
    return Snap(_centre(nearest.box), given, f"{d1:.0f} px from {nearest.describe()}: its centre", nearest)


def targets_from(
    text_lines: Iterable[TextLine] = (),
    regions: Iterable[IconRegion] = (),
    nodes: Iterable[tuple[Box, str]] = (),
) -> list[SnapTarget]:
    """Snap targets from OCR lines, UI-element proposals and accessibility nodes."""
    out = [SnapTarget(line.box, line.text, "text") for line in text_lines if line.text.strip()]
    out += [SnapTarget(region.box, "", "element") for region in regions]
    out += [SnapTarget(box, label, "node") for box, label in nodes]
    return out
