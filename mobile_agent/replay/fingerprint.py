"""A screen's fingerprint: what a cached step's screen looked like, compared with the
screen a replay finds.

Two parts, both indifferent to the screen's size and theme, so that a plan recorded on
one phone replays on another (another resolution, dark instead of light):

- ``texts``: the set of the screen body's OCR lines, folded (NFKC, case, spaces),
  without the status and navigation bars (the clock and battery tick on their own) and
  without digits-only lines (counters, times). Compared by Jaccard similarity.
- ``thumb``: a 16x32 grey thumbnail of the body, standardised (zero mean, unit
  variance). Compared by the absolute Pearson correlation: a dark theme roughly inverts
  the grey levels, which flips the sign but keeps the shape. Used when a screen has too
  few texts to judge by them (a home screen of icons, a video).

May import: numpy, OpenCV, the standard library and ``perception.types``.
"""

from __future__ import annotations

import base64
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from perception.types import TextLine

__all__ = ["ScreenFingerprint", "fingerprint", "fold_text", "layout_similarity", "thumbnail"]

# the shares of the status and navigation bars that screen_diff masks too
_STATUS_BAR_SHARE = 0.04
_NAV_BAR_SHARE = 0.06
_THUMB = (16, 32)  # width, height
_MIN_TEXTS = 3  # fewer texts on either screen: judge by the thumbnail


def fold_text(text: str) -> str:
    """``text`` folded for comparison: NFKC, lower case, single spaces, no edge punctuation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split()).strip(" .,:;!?·•…\"'()[]")


@dataclass(frozen=True)
class ScreenFingerprint:
    texts: frozenset[str]
    thumb: tuple[float, ...]  # _THUMB[0] * _THUMB[1] standardised grey levels, row by row

    def similarity(self, other: ScreenFingerprint) -> float:
        """0..1: how alike two screens are (1: the same texts, or the same layout)."""
        if len(self.texts) >= _MIN_TEXTS and len(other.texts) >= _MIN_TEXTS:
            union = self.texts | other.texts
            return len(self.texts & other.texts) / len(union)
        texts_agree = not (self.texts or other.texts) or bool(self.texts & other.texts)
        layout = layout_similarity(self.thumb, other.thumb)
        return layout if texts_agree else layout * 0.5

    def to_dict(self) -> dict[str, Any]:
        # float16, not a coarser int8 scale: a mostly blank page has pixels many standard
        # deviations out, and clipping them made a screen unlike itself at a glance (0.9)
        thumb = np.asarray(self.thumb, dtype="<f2")
        return {"texts": sorted(self.texts), "thumb16": base64.b64encode(thumb.tobytes()).decode("ascii")}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScreenFingerprint:
        if "thumb16" in data:
            values = np.frombuffer(base64.b64decode(str(data["thumb16"])), dtype="<f2").astype(np.float64)
        else:  # plans stored before: int8 at 1/32 of a standard deviation
            values = np.frombuffer(base64.b64decode(str(data.get("thumb", ""))), dtype=np.int8) / 32.0
        return cls(
            texts=frozenset(str(t) for t in data.get("texts", ())),
            thumb=tuple(float(v) for v in values),
        )


def _body_texts(lines: Iterable[TextLine], height: int) -> frozenset[str]:
    top, bottom = height * _STATUS_BAR_SHARE, height * (1.0 - _NAV_BAR_SHARE)
    texts = set()
    for line in lines:
        centre_y = (line.box.top + line.box.bottom) / 2.0
        if not top <= centre_y <= bottom:
            continue
        text = fold_text(line.text)
        if len(text) < 2 or not any(ch.isalpha() for ch in text):
            continue  # a counter, a time, a stray glyph: they change between runs
        texts.add(text)
    return frozenset(texts)


def layout_similarity(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """The absolute correlation of two thumbnails (``thumbnail``): 1 for the same layout,
    in either theme; no OCR needed, so a replay tries it first."""
    x, y = np.asarray(a), np.asarray(b)
    if x.size != y.size or x.size == 0:
        return 0.0
    return abs(float(np.dot(x, y) / x.size))


def thumbnail(pixels: np.ndarray) -> tuple[float, ...]:
    """The standardised 16x32 grey thumbnail of the frame's body (a millisecond)."""
    return _thumb(pixels)


def _thumb(pixels: np.ndarray) -> tuple[float, ...]:
    height = pixels.shape[0]
    body = pixels[int(height * _STATUS_BAR_SHARE) : height - int(height * _NAV_BAR_SHARE), :, :3]
    grey = cv2.cvtColor(np.ascontiguousarray(body), cv2.COLOR_RGB2GRAY)
    small = cv2.resize(grey, _THUMB, interpolation=cv2.INTER_AREA).astype(np.float64)
    std = float(small.std())
    if std < 1e-6:
        return tuple(0.0 for _ in range(small.size))
    return tuple(float(v) for v in ((small - small.mean()) / std).ravel())


def fingerprint(pixels: np.ndarray, lines: Iterable[TextLine], thumb: tuple[float, ...] | None = None) -> ScreenFingerprint:
    """The fingerprint of an RGB frame whose OCR lines are ``lines`` (``thumb``: its
    ``thumbnail``, when already made)."""
    if pixels.ndim != 3 or pixels.shape[2] < 3:
        raise ValueError(f"expected an RGB HxWx3 frame, got shape {pixels.shape}")
    return ScreenFingerprint(texts=_body_texts(lines, pixels.shape[0]), thumb=thumb or _thumb(pixels))
