"""Shape tests for icons drawn in several pieces or pointing one way, on real rendering
(anti-aliased, thin strokes): the three-line menu, three dots (vertical or horizontal),
stacked bars, bars getting shorter (a filter list), signal-strength bars, and arrows /
chevrons with their direction.

A glyph's pieces are the connected blobs of its foreground mask that are at least a
fifth of the largest one (anti-aliasing specks and a plate's rim fall below that). Each
test returns 0..1.

May import: numpy, OpenCV, the standard library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

__all__ = ["PIECE_SHAPES", "Piece", "glyph_pieces", "pointing", "piece_shape_score"]


@dataclass(frozen=True)
class Piece:
    x: float  # centre
    y: float
    width: float
    height: float
    area: float


def glyph_pieces(mask: np.ndarray) -> list[Piece]:
    count, _, stats, centroids = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    blobs = [
        Piece(float(cx), float(cy), float(w), float(h), float(a))
        for (_, _, w, h, a), (cx, cy) in zip(stats[1:count], centroids[1:count], strict=True)
    ]
    if not blobs:
        return []
    largest = max(b.area for b in blobs)
    return [b for b in blobs if b.area >= 0.2 * largest and b.area >= 3]


def _near(value: float, ideal: float, tolerance: float) -> float:
    return math.exp(-(((value - ideal) / tolerance) ** 2))


def _row_of(pieces: list[Piece], along: str) -> float:
    """0..1: pieces evenly spaced along one axis ('y' a column, 'x' a row) and lined up on the other."""
    if len(pieces) < 2:
        return 0.0
    pieces = sorted(pieces, key=lambda p: getattr(p, along))
    across = "x" if along == "y" else "y"
    size = float(np.median([max(p.width, p.height) for p in pieces]))
    offsets = [getattr(p, across) for p in pieces]
    lined = _near((max(offsets) - min(offsets)) / max(1.0, size), 0.0, 0.5)
    gaps = np.diff([getattr(p, along) for p in pieces])
    even = _near(float(gaps.std() / max(1.0, gaps.mean())), 0.0, 0.35) if len(gaps) > 1 else 1.0
    return lined * even


def _dots(pieces: list[Piece], along: str) -> float:
    if len(pieces) != 3:
        return 0.0
    round_ = float(np.mean([_near(math.log(max(1.0, p.width) / max(1.0, p.height)), 0.0, 0.45) for p in pieces]))
    areas = [p.area for p in pieces]
    alike = _near(float(np.std(areas) / max(1.0, np.mean(areas))), 0.0, 0.35)
    # dots are apart: the gap is at least half a dot
    spread = max(getattr(p, along) for p in pieces) - min(getattr(p, along) for p in pieces)
    dot = float(np.median([max(p.width, p.height) for p in pieces]))
    apart = 1.0 if spread >= 2.6 * dot else 0.3
    return _row_of(pieces, along) * round_ * alike * apart


def _bars(pieces: list[Piece]) -> float:
    """Stacked horizontal bars: a menu (three lines), a list, a stack of layers."""
    if not 2 <= len(pieces) <= 4:
        return 0.0
    # bars are wide: 1 from 3:1 on, 0 for squares and dots
    flat = float(np.mean([min(1.0, max(0.0, (p.width / max(1.0, p.height) - 1.2) / 1.8)) for p in pieces]))
    widths = [p.width for p in pieces]
    alike = _near(float(np.std(widths) / max(1.0, np.mean(widths))), 0.0, 0.3)
    count = 1.0 if len(pieces) == 3 else 0.6
    return _row_of(pieces, "y") * flat * alike * count


def _shorter_stack(pieces: list[Piece]) -> tuple[float, float, float]:
    """Three or four stacked horizontal bars, each shorter than the one above (0..1), and how
    they line up: (stack, centred, to one edge). Centred bars narrowing to a point are the
    filter list (Material's filter_list); bars sharing their left (or right) end are the sort
    glyph (Material's sort). Alignment is measured against how much the widths differ: centred
    bars' centres agree and their ends do not, edge-aligned bars' ends agree and their centres
    do not, so neither is taken for the other whatever the glyph's size."""
    if not 3 <= len(pieces) <= 4:
        return 0.0, 0.0, 0.0
    pieces = sorted(pieces, key=lambda p: p.y)
    flat = float(np.mean([min(1.0, max(0.0, (p.width / max(1.0, p.height) - 1.0) / 1.5)) for p in pieces[:-1]]))
    shorter = float(np.mean([1.0 if b.width <= 0.85 * a.width else 0.0 for a, b in zip(pieces, pieces[1:], strict=False)]))
    gaps = np.diff([p.y for p in pieces])
    even = _near(float(gaps.std() / max(1.0, gaps.mean())), 0.0, 0.35)
    # stacked: every bar lies within the widest one's span
    widest = pieces[0]
    stacked = float(all(p.x - p.width / 2 >= widest.x - widest.width / 2 - 0.1 * widest.width
                        and p.x + p.width / 2 <= widest.x + widest.width / 2 + 0.1 * widest.width for p in pieces))
    half = max(1.0, (max(p.width for p in pieces) - min(p.width for p in pieces)) / 2)

    def spread(values: list[float]) -> float:
        return (max(values) - min(values)) / half

    centred = _near(spread([p.x for p in pieces]), 0.0, 0.4)
    edge = max(_near(spread([p.x - p.width / 2 for p in pieces]), 0.0, 0.4),
               _near(spread([p.x + p.width / 2 for p in pieces]), 0.0, 0.4))
    return flat * shorter * even * stacked, centred, edge


def _narrowing(pieces: list[Piece]) -> float:
    """The filter-list glyph (Material's filter_list; a funnel drawn as lines): stacked bars
    centred on one line, each shorter than the one above; not bars sharing one end (sort)."""
    stack, centred, edge = _shorter_stack(pieces)
    return stack * centred * (1.0 - edge)


def _sorting(pieces: list[Piece]) -> float:
    """The sort glyph (Material's sort): stacked bars sharing their left (or, right to left,
    their right) end, each shorter than the one above; not centred ones (a filter list)."""
    stack, centred, edge = _shorter_stack(pieces)
    return stack * edge * (1.0 - centred)


def _signal(pieces: list[Piece]) -> float:
    """A signal-strength glyph: three to five upright bars standing on one line, each taller
    than the one before, left to right (a phone's cellular bars)."""
    if not 3 <= len(pieces) <= 5:
        return 0.0
    pieces = sorted(pieces, key=lambda p: p.x)
    tallest = max(p.height for p in pieces)
    bottoms = [p.y + p.height / 2 for p in pieces]
    standing = _near((max(bottoms) - min(bottoms)) / max(1.0, tallest), 0.0, 0.15)
    rising = float(np.mean([1.0 if b.height >= 1.1 * a.height else 0.0 for a, b in zip(pieces, pieces[1:], strict=False)]))
    widths = [p.width for p in pieces]
    alike = _near(float(np.std(widths) / max(1.0, np.mean(widths))), 0.0, 0.35)
    upright = 1.0 if pieces[-1].height >= 1.5 * np.median(widths) else 0.3
    return standing * rising * alike * upright


def _wedge(mask: np.ndarray) -> float:
    """The other signal glyph (Material's signal_cellular_4_bar): one filled right triangle
    rising to the right, its right angle at the bottom right."""
    ys, xs = np.nonzero(mask)
    if len(xs) < 12:
        return 0.0
    box = mask[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1].astype(bool)
    h, w = box.shape
    extent = float(box.mean())
    lower_right = float(box[h // 2:, w // 2:].mean())
    upper_left = float(box[: h // 2, : w // 2].mean())
    return _near(extent, 0.5, 0.12) * _near(lower_right, 1.0, 0.2) * _near(upper_left, 0.0, 0.15) * _near(w / h, 1.0, 0.3)


def pointing(mask: np.ndarray, head: bool = False) -> dict[str, float]:
    """How much the glyph points left / right / up / down (0..1 each). A chevron's tip is
    its narrow end (the arms spread toward the open end); an arrow with a shaft points
    toward its head, the wide end (the shaft's end is narrow). ``head``: the glyph is known
    to be an arrow with a head and no shaft along its middle (a curved undo / redo arrow):
    it points toward its wide end, the head (the tail is a stroke's end)."""
    ys, xs = np.nonzero(mask)
    if len(xs) < 6:
        return {"left": 0.0, "right": 0.0, "up": 0.0, "down": 0.0}
    out = {}
    for axis, (low_name, high_name) in (("x", ("left", "right")), ("y", ("up", "down"))):
        along, across = (xs, ys) if axis == "x" else (ys, xs)
        lo, hi = along.min(), along.max()
        span = max(1, hi - lo)
        cross_span = max(1, across.max() - across.min())
        band = max(1, int(0.2 * span))
        near_low = across[along <= lo + band]
        near_high = across[along >= hi - band]
        low_extent = (near_low.max() - near_low.min()) / cross_span if len(near_low) else 0.0
        high_extent = (near_high.max() - near_high.min()) / cross_span if len(near_high) else 0.0
        # a shaft: the middle line across the glyph is drawn along most of its length
        middle = (across.min() + across.max()) / 2
        on_axis = along[np.abs(across - middle) <= max(1.0, 0.08 * cross_span)]
        shaft = len(np.unique(on_axis)) / (span + 1) >= 0.7
        toward_low = (low_extent - high_extent) if shaft or head else (high_extent - low_extent)
        out[low_name] = float(max(0.0, min(1.0, toward_low * 1.6)))
        out[high_name] = float(max(0.0, min(1.0, -toward_low * 1.6)))
    return out


def _notches(mask: np.ndarray) -> int:
    """Deep concavities of the glyph's outline (deeper than 8% of its size): an arrow's head
    makes two, a chevron's bend one, a star's points five."""
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return 0
    contour = max(contours, key=cv2.contourArea)
    hull = cv2.convexHull(contour, returnPoints=False)
    if hull is None or len(hull) <= 3 or len(contour) <= 3:
        return 0
    try:
        found = cv2.convexityDefects(contour, np.sort(hull, axis=0))
    except cv2.error:  # self-intersecting contours on tiny blobs
        return 0
    if found is None:
        return 0
    _, _, w, h = cv2.boundingRect(contour)
    return int((found.reshape(-1, 4)[:, 3] / 256.0 > 0.08 * max(w, h)).sum())


def _diagonal(mask: np.ndarray) -> float:
    """0..1: the glyph's main axis runs corner to corner (a resize or open-in-full arrow), not
    along an edge (a digit 1, a back arrow): its pixels' principal axis within ~15 degrees of 45."""
    ys, xs = np.nonzero(mask)
    if len(xs) < 6:
        return 0.0
    cov = np.cov(np.stack([xs, ys]).astype(float))
    values, vectors = np.linalg.eigh(cov)
    if values[1] <= 1.5 * max(values[0], 1e-6):
        return 0.0  # no main axis (a blob, a square)
    vx, vy = vectors[:, 1]
    angle = math.degrees(math.atan2(abs(vy), abs(vx)))
    return _near(angle, 45.0, 15.0)


def _arrow(mask: np.ndarray, pieces: list[Piece], direction: str | None, head: bool = False) -> float:
    if len(pieces) != 1:
        return 0.0
    area = float(mask.sum())
    ys, xs = np.nonzero(mask)
    box = max(1, (xs.max() - xs.min() + 1) * (ys.max() - ys.min() + 1))
    thin = _near(area / box, 0.3, 0.2)  # strokes, not a filled blob
    if _notches(mask) > 3:
        return 0.0  # a star's five points or a plus's four arms, not a head's two notches
    if direction == "diagonal":
        return thin * _diagonal(mask)
    if direction is None:
        return thin * max(pointing(mask, head).values())
    return thin * pointing(mask, head)[direction]


def _minus(pieces: list[Piece]) -> float:
    """A minus sign (Material's remove, a stepper's or a map's zoom-out): one filled bar lying
    flat, from 3:1 (a bold minus drawn small, its anti-aliased ends and sides counted) on; a
    hyphen-like stub or a square is not one, nor a menu's stacked bars (several pieces)."""
    if len(pieces) != 1:
        return 0.0
    bar = pieces[0]
    flat = min(1.0, max(0.0, (bar.width / max(1.0, bar.height) - 1.5) / 2.0))
    filled = _near(bar.area / max(1.0, bar.width * bar.height), 1.0, 0.3)
    return flat * filled


# concept -> test on (mask, pieces, direction word or None); "curved" is an arrow bent round
# (undo, redo, reply) whose head is its wide end; "shorter" is bars getting shorter, said
# without saying sort or filter: either alignment
PIECE_SHAPES = ("menu", "kebab", "meatballs", "chevron", "arrow", "curved", "signal", "filter", "sort", "shorter",
                "minus")


def piece_shape_score(shape: str, mask: np.ndarray, direction: str | None = None) -> float:
    pieces = glyph_pieces(mask)
    if shape == "menu":
        return _bars(pieces)
    if shape == "kebab":
        return _dots(pieces, "y")
    if shape == "meatballs":
        return _dots(pieces, "x")
    if shape == "signal":
        return max(_signal(pieces), _wedge(mask) if len(pieces) == 1 else 0.0)
    if shape == "filter":  # the funnel is an outline prototype (perception.heuristic_ranker)
        return _narrowing(pieces)
    if shape == "sort":
        return _sorting(pieces)
    if shape == "shorter":
        return max(_narrowing(pieces), _sorting(pieces))
    if shape in ("chevron", "arrow"):
        return _arrow(mask, pieces, direction)
    if shape == "minus":
        return _minus(pieces)
    if shape == "curved":
        return _arrow(mask, pieces, direction, head=True)
    raise ValueError(f"not a piece shape: {shape}")
