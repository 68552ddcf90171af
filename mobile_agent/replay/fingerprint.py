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
- ``level``: the thumbnail's grey mean and standard deviation before standardising, so
  that its absolute grey levels can be had back: a screen dimmed under a dialog's scrim
  standardises to much the same thumbnail, and only the absolute levels show the dimming
  (``replay.overlay``). None in plans stored before it was kept.

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

__all__ = ["ScreenFingerprint", "body_share", "fingerprint", "fold_text", "grey_thumbnail", "layout_similarity", "standardised",
           "thumbnail"]

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
    level: tuple[float, float] | None = None  # the grey mean and standard deviation taken out of ``thumb``

    def grey(self) -> np.ndarray | None:
        """The thumbnail's absolute grey levels (0..255, ``_THUMB`` rows x columns), or None
        when the level was not kept."""
        if self.level is None or len(self.thumb) != _THUMB[0] * _THUMB[1]:
            return None
        mean, std = self.level
        return (np.asarray(self.thumb, dtype=np.float64) * std + mean).reshape(_THUMB[1], _THUMB[0])

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
        data: dict[str, Any] = {"texts": sorted(self.texts), "thumb16": base64.b64encode(thumb.tobytes()).decode("ascii")}
        if self.level is not None:
            data["level"] = [round(self.level[0], 2), round(self.level[1], 3)]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScreenFingerprint:
        if "thumb16" in data:
            values = np.frombuffer(base64.b64decode(str(data["thumb16"])), dtype="<f2").astype(np.float64)
        else:  # plans stored before: int8 at 1/32 of a standard deviation
            values = np.frombuffer(base64.b64decode(str(data.get("thumb", ""))), dtype=np.int8) / 32.0
        level = data.get("level")
        return cls(
            texts=frozenset(str(t) for t in data.get("texts", ())),
            thumb=tuple(float(v) for v in values),
            level=(float(level[0]), float(level[1])) if isinstance(level, list) and len(level) == 2 else None,
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


def body_share(y: float) -> float:
    """A height share of the whole screen as a share of the thumbnail's body (the screen
    less its status and navigation bars), clipped to 0..1."""
    return min(1.0, max(0.0, (y - _STATUS_BAR_SHARE) / (1.0 - _STATUS_BAR_SHARE - _NAV_BAR_SHARE)))


def layout_similarity(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """The absolute correlation of two thumbnails (``thumbnail``): 1 for the same layout,
    in either theme; no OCR needed, so a replay tries it first."""
    x, y = np.asarray(a), np.asarray(b)
    if x.size != y.size or x.size == 0:
        return 0.0
    return abs(float(np.dot(x, y) / x.size))


def thumbnail(pixels: np.ndarray) -> tuple[float, ...]:
    """The standardised 16x32 grey thumbnail of the frame's body (a millisecond)."""
    return standardised(grey_thumbnail(pixels))[0]


def grey_thumbnail(pixels: np.ndarray) -> np.ndarray:
    """The frame's body (no status or navigation bar) shrunk to 16x32 grey levels, 0..255."""
    height = pixels.shape[0]
    body = pixels[int(height * _STATUS_BAR_SHARE) : height - int(height * _NAV_BAR_SHARE), :, :3]
    grey = cv2.cvtColor(np.ascontiguousarray(body), cv2.COLOR_RGB2GRAY)
    return cv2.resize(grey, _THUMB, interpolation=cv2.INTER_AREA).astype(np.float64)


def standardised(grey: np.ndarray) -> tuple[tuple[float, ...], tuple[float, float]]:
    """A grey thumbnail with zero mean and unit variance, and the (mean, std) taken out."""
    mean, std = float(grey.mean()), float(grey.std())
    if std < 1e-6:
        return tuple(0.0 for _ in range(grey.size)), (mean, 0.0)
    return tuple(float(v) for v in ((grey - mean) / std).ravel()), (mean, std)


def fingerprint(
    pixels: np.ndarray,
    lines: Iterable[TextLine],
    thumb: tuple[float, ...] | None = None,
    level: tuple[float, float] | None = None,
) -> ScreenFingerprint:
    """The fingerprint of an RGB frame whose OCR lines are ``lines`` (``thumb`` and
    ``level``: its ``standardised`` thumbnail, when already made)."""
    if pixels.ndim != 3 or pixels.shape[2] < 3:
        raise ValueError(f"expected an RGB HxWx3 frame, got shape {pixels.shape}")
    if thumb is None or level is None:
        thumb, level = standardised(grey_thumbnail(pixels))
    return ScreenFingerprint(texts=_body_texts(lines, pixels.shape[0]), thumb=thumb, level=level)
