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

__all__ = ["DriftTracker", "Snap", "SnapTarget", "snap_point", "targets_from"]


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


class DriftTracker:
    """A model's habit, learned over a run: the constant offset between where it points
    and the centres of the elements it means.

    Each tap votes for the offsets to the centres of the targets around it (every one of
    them could be the meant element). The meant ones agree tap after tap; the others
    scatter. The offset with the most taps behind it (within ``tolerance`` pixels), once
    at least ``min_taps`` taps and half of those seen support it, is the drift; ``snap``
    subtracts it before snapping. Until then, or when the votes do not agree (a model
    with no habit, random noise), nothing is corrected. Not thread-safe: one per run.
    """

    def __init__(self, *, tolerance: float, min_taps: int = 3, window: int = 30) -> None:
        self.tolerance = tolerance
        self.min_taps = min_taps
        self.window = window
        self._votes: list[list[tuple[float, float]]] = []  # per tap: its candidate offsets

    def observe(self, point: tuple[int, int], targets: Sequence[SnapTarget], max_distance: float) -> None:
        x, y = point
        near = [t for t in targets if _edge_distance(t.box, x, y) <= max_distance]
        if near:
            votes = [(x - (t.box.left + t.box.right) / 2, y - (t.box.top + t.box.bottom) / 2) for t in near]
            self._votes = [*self._votes, votes][-self.window :]

    def offset(self) -> tuple[float, float, int] | None:
        """(dx, dy, taps behind it), or None while no offset has enough support."""
        taps = len(self._votes)
        if taps < self.min_taps:
            return None
        best: tuple[int, float, float, float] | None = None  # (support, -spread, dx, dy)
        for votes in self._votes:
            for cx, cy in votes:
                support, sx, sy = 0, 0.0, 0.0
                for others in self._votes:
                    close = [
                        (ox, oy)
                        for ox, oy in others
                        if abs(ox - cx) <= self.tolerance and abs(oy - cy) <= self.tolerance
                    ]
                    if close:
                        ox, oy = min(close, key=lambda o: abs(o[0] - cx) + abs(o[1] - cy))
                        support, sx, sy = support + 1, sx + ox, sy + oy
                key = (support, 0.0, sx / support, sy / support)
                if best is None or key[0] > best[0]:
                    best = key
        if best is None or best[0] < self.min_taps or best[0] * 2 < taps:
            return None
        return best[2], best[3], best[0]

    def snap(
        self, point: tuple[int, int], targets: Sequence[SnapTarget], *, max_distance: float, **kwargs: float
    ) -> Snap:
        """``snap_point`` after taking the learned drift off ``point``; then this tap votes."""
        drift = self.offset()
        self.observe(point, targets, max_distance)
        if drift is None or math.hypot(drift[0], drift[1]) < self.tolerance / 4:  # no habit worth correcting
            return snap_point(point, targets, max_distance=max_distance, **kwargs)
        dx, dy, taps = drift
        corrected = (int(round(point[0] - dx)), int(round(point[1] - dy)))
        snap = snap_point(corrected, targets, max_distance=max_distance, **kwargs)
        note = f"the model's drift ({dx:+.0f}, {dy:+.0f}) px, learned over {taps} taps, taken off; "
        return Snap(snap.point, (int(point[0]), int(point[1])), note + snap.reason, snap.target)


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
