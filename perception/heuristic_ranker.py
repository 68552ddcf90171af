"""The weight-free icon ranker: scores each crop against the colour and shape words of a
description ("red heart", "blue gear", "white plus in a green circle").

- Colour: the crop's foreground (pixels unlike the background sampled on a margin around
  the box) is measured in HSV; the score is the share of foreground in the named colour.
- Shape: the largest foreground contour's features — circularity 4*pi*A/P^2, vertex count
  of its polygon approximation, solidity A/hull, extent A/box, aspect, and the number of
  deep convexity defects (heart 1, arrow 2, plus/cross 4, star 5, gear 6+) — scored
  against a prototype per shape word.

Words it does not know are ignored; the score is the mean of the parts it could judge,
with the detector's own score as a small tie-breaker.

May import: numpy, OpenCV, the standard library, ``perception.types``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import cv2
import numpy as np

from perception.types import Box

__all__ = ["COLOUR_WORDS", "SHAPE_WORDS", "HeuristicRanker", "ShapeFeatures", "shape_features"]

# OpenCV HSV: H 0..179, S and V 0..255.  (hue ranges, min S, max S, min V, max V)
_COLOURS: dict[str, list[tuple[tuple[int, int], int, int, int, int]]] = {
    "red": [((0, 8), 90, 255, 70, 255), ((170, 179), 90, 255, 70, 255)],
    "orange": [((9, 20), 90, 255, 120, 255)],
    "yellow": [((21, 34), 80, 255, 120, 255)],
    "green": [((35, 85), 60, 255, 50, 255)],
    "cyan": [((86, 100), 60, 255, 60, 255)],
    "blue": [((95, 130), 60, 255, 50, 255)],
    "purple": [((131, 155), 50, 255, 50, 255)],
    "pink": [((156, 169), 50, 255, 100, 255), ((0, 8), 30, 89, 150, 255), ((160, 179), 30, 89, 150, 255)],
    "brown": [((8, 22), 80, 255, 40, 119)],
    "black": [((0, 179), 0, 255, 0, 59)],
    "white": [((0, 179), 0, 30, 216, 255)],
    "grey": [((0, 179), 0, 35, 60, 215)],
}
_COLOUR_SYNONYMS = {
    "gray": "grey", "violet": "purple", "magenta": "pink", "teal": "cyan", "golden": "yellow",
    "gold": "yellow", "silver": "grey", "dark": "black", "reddish": "red", "bluish": "blue",
    "greenish": "green",
}
COLOUR_WORDS = tuple(_COLOURS)

_SHAPE_SYNONYMS = {
    "circle": "circle", "circular": "circle", "round": "circle", "dot": "circle", "ring": "circle",
    "oval": "circle", "ball": "circle", "button": None,
    "square": "square", "squared": "square", "box": "square", "rectangle": "rectangle",
    "rectangular": "rectangle", "card": "rectangle",
    "triangle": "triangle", "triangular": "triangle", "play": "triangle",
    "heart": "heart", "like": "heart", "love": "heart", "favorite": "heart", "favourite": "heart",
    "star": "star", "bookmark": None,
    "plus": "plus", "add": "plus", "cross": "plus", "close": "plus", "x": "plus", "new": "plus",
    "arrow": "arrow", "back": "arrow", "forward": "arrow", "send": "arrow", "share": None,
    "gear": "gear", "cog": "gear", "settings": "gear", "setting": "gear", "wheel": "gear",
}
SHAPE_WORDS = ("circle", "square", "rectangle", "triangle", "heart", "star", "plus", "arrow", "gear")


@dataclass(frozen=True)
class ShapeFeatures:
    circularity: float
    vertices: int
    solidity: float
    extent: float
    aspect: float
    defects: int
    foreground_share: float


def _near(value: float, ideal: float, tolerance: float) -> float:
    return math.exp(-(((value - ideal) / tolerance) ** 2))


def _shape_score(shape: str, f: ShapeFeatures) -> float:
    square_aspect = _near(f.aspect, 1.0, 0.25)
    if shape == "circle":
        return min(1.0, max(0.0, (f.circularity - 0.55) / 0.3)) * square_aspect * _near(f.defects, 0, 0.8)
    if shape == "square":
        return _near(f.extent, 0.95, 0.12) * square_aspect * _near(f.vertices, 4, 1.5) * _near(f.defects, 0, 0.8)
    if shape == "rectangle":
        return _near(f.extent, 0.95, 0.12) * _near(f.vertices, 4, 1.5) * _near(f.defects, 0, 0.8)
    if shape == "triangle":
        return _near(f.extent, 0.5, 0.15) * _near(f.vertices, 3, 1.0) * _near(f.solidity, 1.0, 0.15)
    if shape == "heart":
        return _near(f.defects, 1, 0.7) * _near(f.solidity, 0.92, 0.08) * square_aspect
    if shape == "arrow":
        return _near(f.defects, 2, 0.8) * _near(f.solidity, 0.65, 0.2)
    if shape == "plus":
        return _near(f.defects, 4, 0.8) * _near(f.solidity, 0.5, 0.2) * square_aspect
    if shape == "star":
        return _near(f.defects, 5, 0.8) * _near(f.solidity, 0.6, 0.2) * square_aspect
    if shape == "gear":
        return min(1.0, max(0.0, (f.defects - 4) / 4)) * _near(f.solidity, 0.85, 0.12) * square_aspect
    return 0.0


def _background_and_mask(patch: np.ndarray, inner: tuple[int, int, int, int]) -> np.ndarray:
    """Foreground mask of the box region: pixels unlike the colour around the box."""
    left, top, right, bottom = inner
    ring = np.concatenate(
        [
            patch[:top].reshape(-1, 3),
            patch[bottom:].reshape(-1, 3),
            patch[top:bottom, :left].reshape(-1, 3),
            patch[top:bottom, right:].reshape(-1, 3),
        ]
    )
    region = patch[top:bottom, left:right].astype(np.int16)
    if len(ring) == 0:
        ring = np.concatenate([region[0], region[-1], region[:, 0], region[:, -1]])
    background = np.median(ring, axis=0).astype(np.int16)
    diff = np.abs(region - background).max(axis=2)
    return (diff > 40).astype(np.uint8)


def shape_features(mask: np.ndarray) -> ShapeFeatures | None:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    contour = max(contours, key=cv2.contourArea)
    area = float(cv2.contourArea(contour))
    if area < 12:
        return None
    perimeter = cv2.arcLength(contour, True)
    x, y, w, h = cv2.boundingRect(contour)
    hull = cv2.convexHull(contour)
    hull_area = float(cv2.contourArea(hull)) or 1.0
    approx = cv2.approxPolyDP(contour, 0.04 * perimeter, True)
    size = max(w, h)
    defects = 0
    hull_idx = cv2.convexHull(contour, returnPoints=False)
    if hull_idx is not None and len(hull_idx) > 3 and len(contour) > 3:
        try:
            found = cv2.convexityDefects(contour, np.sort(hull_idx, axis=0))
        except cv2.error:  # self-intersecting contours on tiny blobs
            found = None
        if found is not None:
            depths = found.reshape(-1, 4)[:, 3] / 256.0
            defects = int((depths > 0.08 * size).sum())
    return ShapeFeatures(
        circularity=4 * math.pi * area / (perimeter * perimeter) if perimeter else 0.0,
        vertices=len(approx),
        solidity=area / hull_area,
        extent=area / float(w * h),
        aspect=w / float(h),
        defects=defects,
        foreground_share=float(mask.mean()),
    )


def _words(description: str) -> tuple[list[str], list[str]]:
    colours: list[str] = []
    shapes: list[str] = []
    for word in re.findall(r"[a-z]+", description.lower()):
        colour = _COLOUR_SYNONYMS.get(word, word)
        if colour in _COLOURS and colour not in colours:
            colours.append(colour)
        shape = _SHAPE_SYNONYMS.get(word.rstrip("s"), _SHAPE_SYNONYMS.get(word))
        if shape and shape not in shapes:
            shapes.append(shape)
    return colours, shapes


def _colour_share(pixels_hsv: np.ndarray, colour: str) -> float:
    if len(pixels_hsv) == 0:
        return 0.0
    h, s, v = pixels_hsv[:, 0], pixels_hsv[:, 1], pixels_hsv[:, 2]
    hit = np.zeros(len(pixels_hsv), dtype=bool)
    for (h0, h1), s0, s1, v0, v1 in _COLOURS[colour]:
        hit |= (h >= h0) & (h <= h1) & (s >= s0) & (s <= s1) & (v >= v0) & (v <= v1)
    return float(hit.mean())


class HeuristicRanker:
    """Ranks boxes by how well their pixels fit the description's colour and shape words."""

    name = "heuristic"

    def understands(self, description: str) -> bool:
        colours, shapes = _words(description)
        return bool(colours or shapes)

    def score(self, image: np.ndarray, boxes: list[Box], description: str, prior: list[float]) -> list[float]:
        colours, shapes = _words(description)
        height, width = image.shape[:2]
        scores = []
        for box, base in zip(boxes, prior, strict=True):
            pad = max(3, int(0.15 * max(box.width, box.height)))
            outer = box.expand(pad, pad, width, height)
            ol, ot = int(outer.left), int(outer.top)
            patch = image[ot: int(np.ceil(outer.bottom)), ol: int(np.ceil(outer.right))]
            inner = (
                int(box.left) - ol,
                int(box.top) - ot,
                max(int(box.left) - ol + 1, int(np.ceil(box.right)) - ol),
                max(int(box.top) - ot + 1, int(np.ceil(box.bottom)) - ot),
            )
            mask = _background_and_mask(patch, inner)
            parts: list[float] = []
            if colours:
                region = patch[inner[1]: inner[3], inner[0]: inner[2]]
                hsv = cv2.cvtColor(np.ascontiguousarray(region), cv2.COLOR_RGB2HSV).reshape(-1, 3)
                fg = mask.reshape(-1).astype(bool)
                pixels = hsv[fg] if fg.sum() >= 8 else hsv
                # "white plus on a blue circle": every named colour should be present
                parts.append(float(np.mean([min(1.0, _colour_share(pixels, c) / 0.5) for c in colours])))
            if shapes:
                features = shape_features(mask)
                parts.append(0.0 if features is None else max(_shape_score(s, features) for s in shapes))
            own = float(np.mean(parts)) if parts else 0.0
            scores.append(own + 0.05 * base)
        return scores
