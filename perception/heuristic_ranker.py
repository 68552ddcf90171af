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

May import: numpy, OpenCV, the standard library, ``perception.types``, ``perception.icon_*``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import cv2
import numpy as np

from perception.icon_shapes import PIECE_SHAPES, piece_shape_score
from perception.icon_vocabulary import WORDS as VOCABULARY_WORDS
from perception.icon_vocabulary import read_icon_words
from perception.types import Box

__all__ = [
    "COLOUR_WORDS", "HUE_UNSEEN", "SHAPE_UNSEEN", "SHAPE_WORDS", "HeuristicRanker", "ShapeFeatures", "box_masks", "glyph_unknown", "names_a_shape", "shape_features", "flat_surface",
]  # fmt: skip

# OpenCV HSV: H 0..179, S and V 0..255.  (hue ranges, min S, max S, min V, max V)
_COLOURS: dict[str, list[tuple[tuple[int, int], int, int, int, int]]] = {
    "red": [((0, 8), 90, 255, 70, 255), ((175, 179), 90, 255, 70, 255)],
    # from 6 (12 degrees): Material's Deep Orange 500 #FF5722 is H 7, called orange; its Red 500 is H 2
    "orange": [((6, 20), 90, 255, 120, 255)],
    "yellow": [((21, 34), 80, 255, 120, 255)],
    "green": [((35, 85), 60, 255, 50, 255)],
    "cyan": [((86, 100), 60, 255, 60, 255)],
    "blue": [((95, 130), 60, 255, 50, 255)],
    # from 125: Material's violets (Deep Purple A200 #7C4DFF is H 128) are called purple
    "purple": [((125, 155), 50, 255, 50, 255)],
    "pink": [((150, 174), 50, 255, 100, 255), ((0, 8), 30, 89, 150, 255), ((175, 179), 30, 89, 150, 255)],
    "brown": [((8, 22), 80, 255, 40, 119)],
    "black": [((0, 179), 0, 255, 0, 59)],
    "white": [((0, 179), 0, 30, 216, 255)],
    "grey": [((0, 179), 0, 35, 60, 215)],
}
_COLOUR_SYNONYMS = {
    "gray": "grey", "violet": "purple", "magenta": "pink", "teal": "cyan", "golden": "yellow",
    "gold": "yellow", "silver": "grey", "reddish": "red", "bluish": "blue",
    "greenish": "green",
}
COLOUR_WORDS = tuple(_COLOURS)

_SHAPE_SYNONYMS = {
    "circle": "circle", "circular": "circle", "round": "circle", "dot": "circle", "oval": "circle",
    "ball": "circle", "square": "square", "squared": "square", "box": "square", "rectangle": "rectangle",
    "rectangular": "rectangle", "card": "rectangle",
    "triangle": "triangle", "triangular": "triangle", "play": "triangle",
    "heart": "heart", "like": "heart", "love": "heart", "favorite": "heart", "favourite": "heart",
    "star": "star", "plus": "plus", "add": "plus", "cross": "plus", "close": "plus", "x": "plus", "new": "plus",
    "arrow": "arrow", "send": "arrow",
    "gear": "gear", "cog": "gear", "settings": "gear", "setting": "gear",
    "house": "house", "home": "house", "cloud": "cloud", "rain": "cloud", "cloudy": "cloud",
    "sun": "sun", "sunny": "sun", "brightness": "sun", "wifi": "wifi", "wireless": "wifi",
    "bluetooth": "bluetooth", "pin": "pin", "location": "pin", "marker": "pin", "map": "pin",
    "lock": "lock", "padlock": "lock", "security": "lock", "speaker": "speaker", "volume": "speaker",
    "sound": "speaker", "moon": "moon", "crescent": "moon", "bell": "bell", "notification": "bell",
    "alarm": "bell", "envelope": "envelope", "mail": "envelope", "email": "envelope",
    "check": "check", "checkmark": "check", "tick": "check", "done": "check", "confirm": "check",
    "magnifier": "magnifier", "magnifying": "magnifier", "search": "magnifier", "lens": "magnifier",
    "plane": "plane", "paper": "plane", "thumb": "thumb", "thumbs": "thumb",
    "bubble": "bubble", "speech": "bubble", "comment": "bubble", "comments": "bubble", "chat": "bubble",
    "message": "bubble", "share": "share", "battery": "battery",
    "globe": "globe", "world": "globe", "earth": "globe", "planet": "globe",
    "person": "person", "user": "person", "profile": "person", "account": "person", "friend": "person",
    "people": "person", "contact": "person", "avatar": "person",
    "picture": "picture", "photo": "picture", "image": "picture", "gallery": "picture", "landscape": "picture", "thumbnail": "picture",
    "wrench": "wrench", "spanner": "wrench", "build": "wrench", "tool": "wrench", "tools": "wrench",
    "folder": "folder", "directory": "folder", "cast": "cast", "chromecast": "cast", "casting": "cast",
    "pause": "pause", "paused": "pause", "bookmark": "bookmark", "ribbon": "bookmark",
    "phone": "phone", "call": "phone", "telephone": "phone", "handset": "phone",
    "calendar": "calendar", "event": "calendar", "date": "calendar",
}
# words that name two looks: "send" is an arrow, or (Material, Gmail, Telegram) a paper plane
_SHAPE_ALSO = {"send": ("plane",)}
# Prototypes: feature -> (ideal value, tolerance); a shape's score is the product of
# exp(-((value - ideal) / tolerance)^2) over its features. "pieces" counts the separate
# blobs of the glyph (a sun's rays, a Wi-Fi symbol's arcs).
_PROTOTYPES: dict[str, dict[str, tuple[float, float]]] = {
    "circle": {"circularity": (0.9, 0.12), "defects": (0, 0.8), "aspect": (1.0, 0.2)},
    "square": {"extent": (0.95, 0.1), "vertices": (4, 1.5), "aspect": (1.0, 0.2), "defects": (0, 0.8)},
    "rectangle": {"extent": (0.95, 0.1), "vertices": (4, 1.5), "defects": (0, 0.8)},
    "triangle": {"vertices": (3, 1.0), "extent": (0.5, 0.12), "solidity": (1.0, 0.1)},
    "heart": {"defects": (1, 0.7), "solidity": (0.93, 0.06), "aspect": (1.05, 0.2), "extent": (0.62, 0.12)},
    "star": {"defects": (5, 0.8), "solidity": (0.55, 0.15), "aspect": (1.0, 0.25)},
    "plus": {"defects": (4, 0.8), "solidity": (0.45, 0.15), "aspect": (1.0, 0.2)},
    # a close X or plus drawn with thin anti-aliased strokes: mostly empty hull
    "plus/thin": {"defects": (4, 1.0), "solidity": (0.22, 0.12), "aspect": (1.0, 0.2)},
    "gear": {"defects": (8, 2.0), "solidity": (0.75, 0.12), "aspect": (1.0, 0.2)},
    "arrow": {"defects": (2, 0.8), "solidity": (0.55, 0.2)},
    "house": {"vertices": (6, 1.5), "solidity": (0.9, 0.06), "extent": (0.6, 0.1), "aspect": (1.0, 0.2)},
    "cloud": {"aspect": (1.5, 0.35), "solidity": (0.97, 0.05), "extent": (0.71, 0.1), "defects": (0, 0.8)},
    "sun": {"pieces": (9, 3.0), "circularity": (0.88, 0.12)},
    "wifi": {"pieces": (3.5, 1.5), "aspect": (3.0, 1.2)},
    "bluetooth": {"aspect": (0.6, 0.12), "solidity": (0.58, 0.12), "defects": (4, 1.2)},
    "pin": {"aspect": (0.67, 0.1), "solidity": (0.96, 0.04), "extent": (0.6, 0.08), "defects": (0, 0.8)},
    "lock": {"aspect": (0.75, 0.1), "solidity": (0.95, 0.04), "extent": (0.8, 0.08)},
    "speaker": {"aspect": (0.62, 0.12), "solidity": (0.78, 0.1), "defects": (2, 1.0)},
    "moon": {"solidity": (0.62, 0.12), "defects": (1, 0.7), "aspect": (0.75, 0.15)},
    "bell": {"solidity": (0.93, 0.05), "extent": (0.68, 0.08), "aspect": (1.2, 0.15), "defects": (2, 1.0)},
    "envelope": {"aspect": (1.48, 0.2), "extent": (0.92, 0.06), "vertices": (4, 1.5)},
    "check": {"aspect": (1.35, 0.3), "solidity": (0.55, 0.15), "extent": (0.25, 0.1), "defects": (1, 0.8)},
    "magnifier": {"pieces": (2, 0.8), "circularity": (0.88, 0.12), "aspect": (1.0, 0.2)},
    # a lens whose handle touches the ring: one piece, a ring with a tail
    "magnifier/joined": {"solidity": (0.72, 0.12), "defects": (1.5, 1.0), "aspect": (1.0, 0.15), "extent": (0.5, 0.15)},
    # a paper plane drawn with its fold: the fold splits it, the largest half is a thin triangle
    "plane": {"vertices": (3.5, 1.0), "solidity": (0.9, 0.08), "extent": (0.35, 0.15)},
    # the same plane in one piece (the fold has the glyph's own colour, as in a dark theme,
    # or there is none, as in Material's filled "send"): a dart with a notch at its tail
    "plane/whole": {"vertices": (4.5, 1.5), "solidity": (0.8, 0.08), "extent": (0.37, 0.1), "defects": (1, 0.7)},
    "thumb": {"solidity": (0.86, 0.06), "defects": (1, 0.8), "aspect": (0.75, 0.15), "extent": (0.66, 0.1)},
    "bubble": {"solidity": (0.9, 0.06), "extent": (0.72, 0.1), "aspect": (1.05, 0.2), "defects": (2, 1.2)},
    # drawn as an outline (a drawer's "Chat"): a rounded body, its tail barely out of the hull,
    # most of it hollow — unlike an envelope (a full rectangle) or a round "i" (a circle)
    "bubble/outline": {"circularity": (0.78, 0.1), "solidity": (0.93, 0.05), "extent": (0.7, 0.12),
                       "aspect": (1.1, 0.2), "hollow": (0.6, 0.2)},
    "share": {"solidity": (0.42, 0.12), "defects": (3, 1.0), "aspect": (0.9, 0.2)},
    "battery": {"aspect": (0.5, 0.1), "extent": (0.9, 0.06), "solidity": (0.97, 0.04)},
    # Material-style outlines, measured loosely from their 24 dp drawings (not tuned on the dev set)
    # the basket with its handle is one piece, wider than tall; the two wheels are apart
    "cart": {"pieces": (3, 1.0), "aspect": (1.45, 0.35), "solidity": (0.7, 0.2)},
    "trash": {"aspect": (0.8, 0.12), "extent": (0.75, 0.12), "solidity": (0.88, 0.1)},
    "pencil": {"extent": (0.3, 0.12), "solidity": (0.8, 0.15), "aspect": (1.0, 0.2)},
    "mic": {"aspect": (0.68, 0.12), "solidity": (0.72, 0.15)},
    "camera": {"aspect": (1.2, 0.15), "extent": (0.78, 0.1), "solidity": (0.92, 0.08)},
    "download": {"aspect": (0.85, 0.2), "pieces": (2, 0.8), "solidity": (0.6, 0.2)},
    "filter": {"vertices": (3.5, 1.5), "extent": (0.5, 0.12), "aspect": (1.1, 0.25), "solidity": (0.9, 0.1)},
    "refresh": {"solidity": (0.45, 0.15), "circularity": (0.25, 0.15), "aspect": (1.0, 0.2)},
    # a person (head on shoulders): the neck's two concavities, as wide as tall; a gear's
    # teeth give many; mirror-symmetric (round 4: a lens with its handle to one side measured
    # the same otherwise, Material's search glyph scored 0.95; its mirror IoU is ~0.2, a
    # person's ~1.0 on Material, Rico and the simulated phone)
    "person": {"defects": (2, 0.8), "aspect": (0.95, 0.25), "solidity": (0.8, 0.12), "mirror": (1.0, 0.2)},
    # Round 4 (issue 30): measured on Google's Material Icons, filled and outlined fonts, drawn
    # at 42/63/84 px grey on white and white on a dark bar, through this ranker's own mask
    # (benchmarks/icon_prototypes.py), and on the Rico development glyphs of the same kind;
    # ideal = their mean, tolerance about three of their standard deviations (a floor for
    # each feature). Where the older prototype was measured loosely from one drawing, the
    # measured one is a second look ("x/material").
    # a picture (Material image / photo / insert_photo; mVideoPlayer's list): a full rounded
    # square whose mountains and sun are holes (a plain tile has none, a frame is all hole)
    "picture": {"vertices": (4, 1.0), "solidity": (0.99, 0.03), "extent": (0.94, 0.06), "aspect": (1.0, 0.12),
                "defects": (0, 0.7), "hollow": (0.35, 0.25)},
    # a wrench (Material build, mVideoPlayer's settings row): a diagonal bar with a jaw, three notches
    "wrench": {"circularity": (0.35, 0.08), "solidity": (0.73, 0.08), "extent": (0.37, 0.08), "defects": (3, 0.8),
               "aspect": (1.1, 0.3)},
    # a folder (Material folder / folder_open, mVideoPlayer's folders, the simulated phone's):
    # a full box wider than tall, its tab
    "folder": {"aspect": (1.32, 0.15), "extent": (0.86, 0.06), "solidity": (0.96, 0.03), "vertices": (4, 1.2),
               "defects": (0.4, 1.0)},
    # a person drawn as a head apart from its shoulders (Material person / person_outline, the
    # simulated phone's): the largest piece is the shoulders, a wide half-disc
    "person/two-piece": {"pieces": (2, 0.6), "aspect": (2.15, 0.25), "solidity": (0.97, 0.05), "extent": (0.76, 0.08),
                         "circularity": (0.68, 0.06), "mirror": (1.0, 0.2)},
    # a cast glyph (Material cast, NBC's toolbar): a screen corner and three arcs, four pieces
    "cast": {"pieces": (4, 1.0), "aspect": (1.23, 0.12), "solidity": (0.25, 0.08), "extent": (0.18, 0.06)},
    "check/material": {"aspect": (1.31, 0.12), "solidity": (0.5, 0.06), "extent": (0.18, 0.05),
                       "circularity": (0.23, 0.06)},
    "bell/material": {"solidity": (0.91, 0.04), "extent": (0.62, 0.06), "aspect": (0.97, 0.1),
                      "circularity": (0.65, 0.08), "pieces": (1.8, 0.8)},
    # the lid is a piece of its own
    "trash/material": {"aspect": (0.86, 0.08), "extent": (0.93, 0.05), "solidity": (0.99, 0.03), "pieces": (2, 0.6),
                       "vertices": (4, 1.2)},
    "pencil/material": {"extent": (0.40, 0.06), "solidity": (0.99, 0.03), "aspect": (1.0, 0.12), "pieces": (2, 0.8),
                        "circularity": (0.59, 0.08)},
    "camera/material": {"aspect": (1.11, 0.06), "extent": (0.88, 0.05), "solidity": (0.98, 0.03),
                        "hollow": (0.27, 0.15), "vertices": (4, 1.2)},
    "mic/material": {"aspect": (0.52, 0.07), "solidity": (0.98, 0.03), "extent": (0.8, 0.06), "pieces": (2, 0.8)},
    "house/material": {"solidity": (0.8, 0.05), "extent": (0.53, 0.06), "aspect": (1.16, 0.1), "defects": (3, 0.8),
                       "circularity": (0.42, 0.07)},
    "gear/material": {"defects": (6, 1.0), "solidity": (0.83, 0.05), "extent": (0.65, 0.08), "aspect": (0.96, 0.1),
                      "hollow": (0.21, 0.12)},
    # measured the same way (Material pause, bookmark / bookmark_border, call / phone, event /
    # calendar_today); Material's info, clock and eye are left out: a round or oval disc with
    # holes, they measure as a globe, a circle or a cloud do, and a shape test that cannot tell
    # them apart would tap the wrong one
    "pause": {"aspect": (0.3, 0.1), "solidity": (1.0, 0.04), "extent": (0.88, 0.09), "pieces": (2, 0.6),
              "hollow": (0, 0.12)},
    "bookmark": {"aspect": (0.79, 0.1), "solidity": (0.92, 0.04), "extent": (0.87, 0.06), "defects": (1, 0.8),
                 "circularity": (0.68, 0.06)},
    "phone": {"circularity": (0.27, 0.06), "solidity": (0.55, 0.06), "extent": (0.29, 0.06), "aspect": (1.0, 0.12),
              "defects": (1, 0.8)},
    "calendar": {"aspect": (0.9, 0.1), "extent": (0.88, 0.06), "solidity": (0.94, 0.04), "circularity": (0.71, 0.06),
                 "hollow": (0.44, 0.21)},
    # a globe (a browser's page-info "globe", a language picker): a round outline, full (its
    # meridians and continents are inside it, as holes: a ring's empty middle is a plain disc),
    # with nothing sticking out, unlike a lens
    "globe": {"circularity": (0.85, 0.12), "aspect": (1.0, 0.15), "solidity": (0.95, 0.05), "defects": (0, 0.8),
              "hollow": (0.25, 0.15)},
}
SHAPE_WORDS = tuple(name for name in _PROTOTYPES if "/" not in name)  # "x/variant": another look of x


@dataclass(frozen=True)
class ShapeFeatures:
    circularity: float
    vertices: int
    solidity: float
    extent: float
    aspect: float
    defects: int
    foreground_share: float
    pieces: int = 1
    hollow: float = 0.0  # share of the outline's area that is holes (a globe's continents, a ring)
    mirror: float = 1.0  # left-right symmetry: IoU of the glyph and its mirror image (a person 1, a lens 0.2)


def _near(value: float, ideal: float, tolerance: float) -> float:
    return math.exp(-(((value - ideal) / tolerance) ** 2))


def _shape_score(shape: str, f: ShapeFeatures) -> float:
    best = 0.0
    for name, prototype in _PROTOTYPES.items():
        if name == shape or name.startswith(shape + "/"):
            score = 1.0
            for feature, (ideal, tolerance) in prototype.items():
                score *= _near(float(getattr(f, feature)), ideal, tolerance)
            best = max(best, score)
    return best


def _surface(patch: np.ndarray, inner: tuple[int, int, int, int]) -> np.ndarray:
    """The colour around the box (RGB, int16): the median of the margin ``patch`` has
    beyond ``inner``, or of the box's own edge when there is no margin."""
    colour: np.ndarray = np.median(_ring(patch, inner), axis=0).astype(np.int16)
    return colour


def _ring(patch: np.ndarray, inner: tuple[int, int, int, int]) -> np.ndarray:
    left, top, right, bottom = inner
    ring = np.concatenate(
        [
            patch[:top].reshape(-1, 3),
            patch[bottom:].reshape(-1, 3),
            patch[top:bottom, :left].reshape(-1, 3),
            patch[top:bottom, right:].reshape(-1, 3),
        ]
    )
    if len(ring) == 0:
        region = patch[top:bottom, left:right]
        ring = np.concatenate([region[0], region[-1], region[:, 0], region[:, -1]])
    return ring


# a margin is one flat colour when this share of it lies within this many levels of its median
_FLAT_SHARE = 0.9
_FLAT_LEVELS = 24


def _patch_around(image: np.ndarray, box: Box) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """The box with a margin of 15% of its longer side (3 px at least), clipped to the image,
    and the box's own (left, top, right, bottom) inside that patch: what the ranker reads of
    a box and its surface."""
    height, width = image.shape[:2]
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
    return patch, inner


def flat_surface(image: np.ndarray, box: Box) -> np.ndarray | None:
    """The colour a box sits on (RGB, int16), sampled on a margin around it as the ranker
    does, when that margin is one flat colour (a bar, a list's background); None over a
    photo or a gradient, where no one colour is the box's surface."""
    patch, inner = _patch_around(image, box)
    ring = _ring(patch, inner).astype(np.int16)
    colour: np.ndarray = np.median(ring, axis=0).astype(np.int16)
    near = np.abs(ring - colour).max(axis=1) <= _FLAT_LEVELS
    return colour if float(near.mean()) >= _FLAT_SHARE else None


def _background_and_mask(patch: np.ndarray, inner: tuple[int, int, int, int], strict: bool = False) -> np.ndarray:
    """Foreground mask of the box region: pixels unlike the colour around the box.
    ``strict``: only pixels at least half as far from the background as the glyph's core,
    so the anti-aliased seams between strokes drawn close together (stacked layers, a
    dot column) stay gaps."""
    left, top, right, bottom = inner
    region = patch[top:bottom, left:right].astype(np.int16)
    diff = np.abs(region - _surface(patch, inner)).max(axis=2)
    floor = max(40.0, 0.5 * float(np.percentile(diff, 97))) if strict else 40.0
    mask: np.ndarray = (diff > floor).astype(np.uint8)
    return mask


def _glyph_mask(region: np.ndarray, mask: np.ndarray) -> np.ndarray | None:
    """For an icon drawn on its own filled plate (app icon, round button): the glyph on
    the plate, as pixels unlike the plate's colour; None when there is no plate."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    plate = np.zeros_like(mask)
    cv2.drawContours(plate, [max(contours, key=cv2.contourArea)], -1, 1, thickness=cv2.FILLED)
    if plate.mean() < 0.55:
        return None
    colour = np.median(region[(plate & mask).astype(bool)], axis=0).astype(np.int16)
    glyph = np.abs(region.astype(np.int16) - colour).max(axis=2) > 60
    # erode the plate's edge away so its anti-aliased rim is not taken for the glyph
    glyph &= cv2.erode(plate, np.ones((5, 5), np.uint8), iterations=2).astype(bool)
    return glyph.astype(np.uint8) if glyph.mean() > 0.02 else None


# a container's plate may be a pale tint of its surface (Material 3's tonal buttons: a light
# blue square on a white page is 33 levels off): seen from this many levels off
_PLATE_LEVELS = 16


def box_masks(image: np.ndarray, box: Box) -> list[np.ndarray]:
    """The glyph masks the ranker judges a box's shape by (uint8, 1 = glyph, the box's own
    size): its foreground (pixels unlike the colour around it), then, when the box is a filled
    plate (a round button), the glyph unlike the plate."""
    patch, inner = _patch_around(image, box)
    mask = _background_and_mask(patch, inner)
    glyph = _glyph_mask(patch[inner[1]: inner[3], inner[0]: inner[2]], mask)
    return [mask] if glyph is None else [mask, glyph]


def _plate(patch: np.ndarray, inner: tuple[int, int, int, int]) -> np.ndarray | None:
    """The container the box shows: its largest outline unlike the surface around it, filled,
    when that covers most of it (a round button, a rounded square, a ring), as
    ``_glyph_mask`` tells a plate; None when it shows none."""
    left, top, right, bottom = inner
    region = patch[top:bottom, left:right].astype(np.int16)
    mask = (np.abs(region - _surface(patch, inner)).max(axis=2) > _PLATE_LEVELS).astype(np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    plate = np.zeros_like(mask)
    cv2.drawContours(plate, [max(contours, key=cv2.contourArea)], -1, 1, thickness=cv2.FILLED)
    return plate if plate.mean() >= 0.55 else None


_PLATE_FLAT = 6
# the largest plate around a glyph, in glyph boxes: a narrow glyph on a floating button (Material's
# play triangle, ~11 x 14 of its 24 dp, on a 56 dp disc) is ~16 of them
_PLATE_AREA = 20


def _plate_around(image: np.ndarray, box: Box) -> np.ndarray | None:
    """The container a glyph's box sits on when the proposals did not give it (a grey circle
    behind a back arrow): the region of the glyph's surface colour around it, enclosed within
    three box sizes and 1.5 to ``_PLATE_AREA`` times the box's area; None when the glyph sits on the page."""
    surface = flat_surface(image, box)
    if surface is None:
        return None
    height, width = image.shape[:2]
    reach = 3 * max(box.width, box.height)
    window = box.expand(reach, reach, width, height)
    left, top = int(window.left), int(window.top)
    patch = image[top: int(np.ceil(window.bottom)), left: int(np.ceil(window.right))].astype(np.int16)
    # a plate drawn flat: its own colour within a few levels (a pale one is 12 off the page)
    same = (np.abs(patch - surface).max(axis=2) <= _PLATE_FLAT).astype(np.uint8)
    # the glyph's own box belongs to the plate (its strokes are another colour)
    gl, gt = int(box.left) - left, int(box.top) - top
    same[gt: gt + int(box.height) + 1, gl: gl + int(box.width) + 1] = 1
    count, labels, stats, _ = cv2.connectedComponentsWithStats(same, connectivity=4)
    label = labels[min(labels.shape[0] - 1, gt + int(box.height) // 2), min(labels.shape[1] - 1, gl + int(box.width) // 2)]
    x, y, w, h, area = (int(v) for v in stats[label])
    touches = x == 0 or y == 0 or x + w >= same.shape[1] or y + h >= same.shape[0]
    if label == 0 or touches or not 1.5 * box.area <= area <= _PLATE_AREA * box.area:
        return None
    plate: np.ndarray = (labels[y: y + h, x: x + w] == label).astype(np.uint8)
    return plate


def _inside_ring(mask: np.ndarray) -> np.ndarray | None:
    """For a glyph drawn inside an outlined container of its own colour (a plus in a ring):
    the pieces inside, the ring taken away; None when nothing lies inside the largest piece."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if count < 3:
        return None
    ring = 1 + int(np.argmax(stats[1:count, cv2.CC_STAT_AREA]))
    x, y, w, h = (int(v) for v in stats[ring, :4])
    inner = (labels != ring) & (labels > 0)
    inner[:y] = False
    inner[y + h:] = False
    inner[:, :x] = False
    inner[:, x + w:] = False
    return inner.astype(np.uint8) if inner.sum() >= 12 else None


def _ring_outline(mask: np.ndarray) -> np.ndarray | None:
    """A container drawn as a line of the glyph's own colour, broken or dotted (a resize arrow
    in a dotted square): when pieces lie inside the largest one's span (``_inside_ring``), the
    filled hull of all of them is the container; None otherwise (a lone glyph, a lens whose
    ring holds nothing)."""
    if _inside_ring(mask) is None:
        return None
    points = cv2.findNonZero(mask.astype(np.uint8))
    outline = np.zeros_like(mask, dtype=np.uint8)
    cv2.fillConvexPoly(outline, cv2.convexHull(points), 1)
    return outline


def shape_features(mask: np.ndarray) -> ShapeFeatures | None:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    contour = max(contours, key=cv2.contourArea)
    area = float(cv2.contourArea(contour))
    if area < 12:
        return None
    outline = np.zeros_like(mask)
    cv2.drawContours(outline, [contour], -1, 1, thickness=cv2.FILLED)
    hollow = float((outline.astype(bool) & ~mask.astype(bool)).sum()) / max(1.0, float(outline.sum()))
    pieces = sum(1 for c in contours if cv2.contourArea(c) >= 0.02 * area)
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
        pieces=pieces,
        hollow=hollow,
        mirror=_mirror(mask),
    )


def _mirror(mask: np.ndarray) -> float:
    """IoU of the glyph (all its pieces, a pixel of slack) and its left-right mirror image."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return 0.0
    glyph = cv2.dilate(mask[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1].astype(np.uint8), np.ones((3, 3), np.uint8))
    shown, flipped = glyph.astype(bool), glyph[:, ::-1].astype(bool)
    return float((shown & flipped).sum()) / max(1.0, float((shown | flipped).sum()))


# shapes that hold a glyph ("a crop icon in a green circle", "a white circle with a dark down
# arrow"): the plate is not the glyph, and look-alike plates hold different glyphs
_CONTAINERS = ("circle", "square", "rectangle")
# a button said to have a shape ("a blue round button with a red dot", a map's floating buttons)
# is a container as a circle is; a button said without one may be a labelled button, no plate
_CONTAINER = r"(?:circle|square|rectangle|box|disc|disk|(?:round|circular|rounded|square|pill|oval)\s+button)"
# "<glyph> in / inside / on a <colour, rounded ...> <container>" and "<container> with a <glyph>"
_GLYPH_IN = re.compile(r"^(?P<glyph>.+?)\s+(?:in|inside|within|on)\s+(?:(?:a|an|the)\s+)?(?:[a-z-]+\s+){0,3}?" + _CONTAINER
                       + r"s?\b")  # fmt: skip
_GLYPH_WITH = re.compile(r"\b" + _CONTAINER + r"\s+with\s+(?:(?:a|an|the)\s+)?(?P<glyph>.+)$")
# "... in the green bar", "... on a dark toolbar": a colour said of the place an icon sits in is
# its surface's, not its glyph's (a white back arrow on a green bar shows no green)
_ON_SURFACE = re.compile(r"\b(?:in|on|inside|within|over|at)\s+(?:(?:a|an|the)\s+)?(?P<colours>(?:[a-z-]+\s+){1,3}?)"
                         r"(?:top\s+|bottom\s+|app\s+|action\s+|title\s+|status\s+)?"
                         r"(?:bar|toolbar|header|banner|strip|panel|row|card|tab|tabs|navigation)\b")


def _surface_colours(description: str) -> list[str]:
    """The colours a description says of the surface its icon sits on ("in the green bar")."""
    text = " ".join(re.findall(r"[a-z]+(?:-[a-z]+)*", description.lower()))
    found: list[str] = []
    for match in _ON_SURFACE.finditer(text):
        for word in match.group("colours").split():
            colour = _COLOUR_SYNONYMS.get(word, word)
            if colour in _COLOURS and colour not in found:
                found.append(colour)
    return found


# words about a glyph that say nothing of its shape
_PLAIN = {"a", "an", "the", "icon", "button", "symbol", "sign", "glyph", "logo", "small", "large", "big", "little",
          "light", "dark", "thin", "thick", "bold", "bright", "pale", "filled", "outlined", "solid", "tiny", "of",
          "and", "with"}  # fmt: skip


def _glyph_of(description: str) -> str | None:
    """The words about the glyph of a description that puts it in a container ("crop icon"
    of "crop icon in a light green circle", "dark down arrow" of "white circle with a dark
    down arrow"); None when it names no container."""
    return _glyph_and_container(description)[0]


def _glyph_and_container(description: str) -> tuple[str | None, list[str]]:
    """The glyph's words and the container's shapes (circle, square, rectangle)."""
    text = " ".join(re.findall(r"[a-z]+(?:-[a-z]+)*", description.lower()))
    found = _GLYPH_IN.search(text) or _GLYPH_WITH.search(text)
    if not found:
        return None, []
    rest = text[found.end("glyph"):] if found.re is _GLYPH_IN else text[: found.start("glyph")]
    return found.group("glyph"), [c for c in _all_words(rest)[1] if c in _CONTAINERS]


def _words(description: str) -> tuple[list[str], list[str], str | None]:
    """(colours, shapes, direction) named by the description. Of a glyph in a container, the
    shapes are the glyph's when it names one ("plus in a circle": plus); when it names none
    the container's ("crop icon in a circle": circle, ``glyph_unknown``)."""
    colours, shapes, direction = _all_words(description)
    glyph = _glyph_of(description)
    if glyph is not None:
        _, inside, way = _all_words(glyph)
        if inside:
            return colours, inside, way
    return colours, shapes, direction


def glyph_unknown(description: str) -> bool:
    """The description puts a glyph in a container ("crop icon in a light green circle") and
    names no shape of the glyph the ranker can test: only the container's look is judged,
    and look-alike containers may hold other glyphs."""
    glyph = _glyph_of(description)
    if glyph is None or _all_words(glyph)[1]:
        return False
    colours = set(_COLOURS) | set(_COLOUR_SYNONYMS)
    return any(w not in _PLAIN and w not in colours for w in glyph.split())


# a shape's adjective before another shape's noun says how that one is drawn
_SHAPE_ADJECTIVES = {"circular", "round", "oval", "rectangular", "triangular"}


def _names_shape(word: str) -> bool:
    return word in VOCABULARY_WORDS or word.rstrip("s") in _SHAPE_SYNONYMS or word in _SHAPE_SYNONYMS


def _all_words(description: str) -> tuple[list[str], list[str], str | None]:
    colours: list[str] = []
    for word in re.findall(r"[a-z]+", description.lower()):
        colour = _COLOUR_SYNONYMS.get(word, word)
        if colour in _COLOURS and colour not in colours:
            colours.append(colour)
    vocabulary = read_icon_words(description)
    shapes = list(vocabulary.shapes)
    words = vocabulary.rest.split()
    for at, word in enumerate(words):
        if word in VOCABULARY_WORDS:  # "dots" is three dots, not a circle
            continue
        if word in _SHAPE_ADJECTIVES and at + 1 < len(words) and _names_shape(words[at + 1]):
            continue  # "circular arrows" are arrows drawn round, not a circle
        shape = _SHAPE_SYNONYMS.get(word.rstrip("s"), _SHAPE_SYNONYMS.get(word))
        for named in (shape, *_SHAPE_ALSO.get(word, ())):
            if named and named not in shapes:
                shapes.append(named)
    return colours, shapes, vocabulary.direction


# Material's palette draws icons and secondary text as white or black at reduced opacity:
# white at 70% on dark surfaces, black at 54% on light ones (its alphas for text and icons:
# black 87/54/38%, white 100/70/50%). Blended over a dark (light) surface such a glyph
# lands at V ~180-215 (~115-125), outside "white" (V >= 216) and "black" (V < 60), yet
# a person who sees it beside the surface calls it white (black): counted there.
_WHITE_ON_DARK = ((0, 179), 0, 30, 180, 255)
_BLACK_ON_LIGHT = ((0, 179), 0, 40, 0, 125)
_DARK_SURFACE = 80  # V of the background below which it is a dark surface
_LIGHT_SURFACE = 200
# A white glyph of thin strokes on a saturated surface (a white back arrow on an orange
# toolbar) is tinted by it through and through: JPEG keeps colour at half resolution (4:2:0
# chroma subsampling, JFIF/ITU-T T.81) and anti-aliasing blends every edge, so a 3 px
# stroke measures S ~30-100 where "white" wants S <= 30, and the glyph scored as little
# white as a photo's highlight. Beside such a surface, a bright pixel far less saturated
# than it is the white glyph: counted as white.
_SATURATED_SURFACE = 150  # S of the background from which it tints a white glyph
_WHITE_TINT_SHARE = 0.35  # ... whose pixels keep at most this share of the surface's S


def _colour_share(
    pixels_hsv: np.ndarray, colour: str, surface_v: float | None = None, surface_s: float | None = None
) -> float:
    """Share of ``pixels_hsv`` in ``colour``; ``surface_v``: the background's brightness
    (0..255), which lets a white or black icon drawn at reduced opacity count;
    ``surface_s``: its saturation, which lets a thin white glyph tinted by a saturated
    surface count."""
    if len(pixels_hsv) == 0:
        return 0.0
    h, s, v = pixels_hsv[:, 0], pixels_hsv[:, 1], pixels_hsv[:, 2]
    hit = np.zeros(len(pixels_hsv), dtype=bool)
    ranges = list(_COLOURS[colour])
    if surface_v is not None and colour == "white" and surface_v < _DARK_SURFACE:
        ranges.append(_WHITE_ON_DARK)
    if surface_s is not None and colour == "white" and surface_s >= _SATURATED_SURFACE:
        ranges.append(((0, 179), 0, int(_WHITE_TINT_SHARE * surface_s), 216, 255))
    if surface_v is not None and colour == "black" and surface_v > _LIGHT_SURFACE:
        ranges.append(_BLACK_ON_LIGHT)
    for (h0, h1), s0, s1, v0, v1 in ranges:
        hit |= (h >= h0) & (h <= h1) & (s >= s0) & (s <= s1) & (v >= v0) & (v <= v1)
    return float(hit.mean())


def names_a_shape(description: str) -> bool:
    """Does the description name a shape the ranker can test? ("grey folder": no, only its
    colour can be judged, and every box of that colour is as likely; "crop icon in a green
    circle": no, only the circle can be, and every green circle is as likely.)"""
    return bool(_words(description)[1]) and not glyph_unknown(description)


# a box whose shape score is below this does not show the shape named
SHAPE_UNSEEN = 0.15
# ... and one whose hue score is below this shows none of the hue named (white, grey and black
# are left out: a glyph drawn at reduced opacity or thin anti-aliased strokes measures as
# little of them, where a hue is a hue)
HUE_UNSEEN = 0.1
_ACHROMATIC = ("white", "grey", "black")


class HeuristicRanker:
    """Ranks boxes by how well their pixels fit the description's colour and shape words."""

    name = "heuristic"

    def __init__(self) -> None:
        # each box's shape score of the last ``score`` call (empty when no shape was named):
        # a best box that does not show the named shape won by its colour alone
        self.shape_scores: list[float] = []
        # each box's share of the least-shown hue the description names ("purple", "green"; 0..1,
        # 1 = half its foreground or more), empty when it names none: a best box showing none
        # of it won by its shape alone (a grey lens for "a plus in a purple circle")
        self.hue_scores: list[float] = []
        # of a description that puts its glyph in a container ("a white circle with a dark
        # arrow"), how well the container each box shows fits the one named (0..1; 1 when it
        # names none of circle / square / rectangle, 0 when the box shows no container);
        # empty otherwise: a lone glyph, or a glyph in another container, is not it
        self.plates: list[float] = []

    def understands(self, description: str) -> bool:
        colours, shapes, _ = _words(description)
        return bool(colours or shapes)

    def score(self, image: np.ndarray, boxes: list[Box], description: str, prior: list[float]) -> list[float]:
        colours, shapes, direction = _words(description)
        self.shape_scores = []
        self.hue_scores = []
        self.plates = []
        held, containers = _glyph_and_container(description)
        contained = held is not None
        on_surface = _surface_colours(description)
        hues = [c for c in colours if c not in _ACHROMATIC]
        scores = []
        for box, base in zip(boxes, prior, strict=True):
            patch, inner = _patch_around(image, box)
            mask = _background_and_mask(patch, inner)
            around: np.ndarray | None = None
            if contained:
                # the box's own outline, else the region around it; a filled glyph (a play
                # triangle on an orange disc) is an outline of its own that fits no container,
                # so the region around it is tried too
                fits = -1.0
                around = _plate_around(image, box)
                for plate in (_plate(patch, inner), around, _ring_outline(mask)):
                    if plate is None:
                        continue
                    features = shape_features(plate) if containers else None
                    fits = max(fits, max((_shape_score(c, features) for c in containers), default=0.0) if features else 1.0)
                self.plates.append(max(fits, 0.0))
            parts: list[float] = []
            if colours:
                region = patch[inner[1]: inner[3], inner[0]: inner[2]]
                hsv = cv2.cvtColor(np.ascontiguousarray(region), cv2.COLOR_RGB2HSV).reshape(-1, 3)
                fg = mask.reshape(-1).astype(bool)
                pixels = hsv[fg] if fg.sum() >= 8 else hsv
                # "white plus on a blue circle": every named colour should be present
                ground = _surface(patch, inner).astype(np.uint8).reshape(1, 1, 3)
                _, saturation, surface = (float(x) for x in cv2.cvtColor(ground, cv2.COLOR_RGB2HSV).reshape(3))
                shares = {c: min(1.0, _colour_share(pixels, c, surface, saturation) / 0.5) for c in colours}
                if around is not None:
                    # a glyph in a container: the container's colour is the surface it sits on
                    # ("an orange circle with a white play triangle": the triangle's box is white)
                    shown = _surface(patch, inner).astype(np.uint8).reshape(1, 1, 3)
                    plate_hsv = cv2.cvtColor(shown, cv2.COLOR_RGB2HSV).reshape(-1, 3)
                    shares = {c: max(v, _colour_share(plate_hsv, c)) for c, v in shares.items()}
                if on_surface:
                    # the colour said of the bar the icon is on is the colour around the box
                    shown = _surface(patch, inner).astype(np.uint8).reshape(1, 1, 3)
                    surface_hsv = cv2.cvtColor(shown, cv2.COLOR_RGB2HSV).reshape(-1, 3)
                    shares = {c: max(v, _colour_share(surface_hsv, c)) if c in on_surface else v
                              for c, v in shares.items()}  # fmt: skip
                parts.append(float(np.mean(list(shares.values()))))
                if hues:
                    self.hue_scores.append(min(shares[c] for c in hues))
            if shapes:
                region = patch[inner[1]: inner[3], inner[0]: inner[2]]
                masks = [mask]
                glyph = _glyph_mask(region, mask)
                if glyph is not None:
                    masks.append(glyph)
                inside = _inside_ring(mask) if contained else None
                if inside is not None:
                    masks.append(inside)
                piece_named = [s for s in shapes if s in PIECE_SHAPES]
                piece_masks = [*masks, _background_and_mask(patch, inner, strict=True)] if piece_named else []
                best = 0.0
                for candidate in piece_masks:
                    best = max(best, max(piece_shape_score(s, candidate, direction) for s in piece_named))
                for candidate in masks:
                    features = shape_features(candidate)
                    # a filter is a funnel (an outline) or a filter list (pieces): both tried
                    outline_named = [s for s in shapes if s not in PIECE_SHAPES or s == "filter"]
                    if features is not None and outline_named:
                        best = max(best, max(_shape_score(s, features) for s in outline_named))
                parts.append(best)
            own = float(np.mean(parts)) if parts else 0.0
            if shapes:
                self.shape_scores.append(parts[-1])
            scores.append(own + 0.05 * base)
        return scores
