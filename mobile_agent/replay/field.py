"""The password check of a replayed ``Type``, read around the field instead of the whole screen.

Before a Type the safety check (``agent.guard``) looks for a password word on the screen
("password", "PIN code", …): typing into a password field asks the person first. It
reads the whole screen for that, a full OCR (0.3–1 s on 2 cores), which a replayed Type
on a screen with the recorded layout otherwise never needs. A recorded Type knows where
its field was (``field_point``: where the typed text showed up on the next screen, else
the tap that went before it), so ``FieldCheck`` reads the band of rows around it first,
as ``relocate`` does for a ``Click text`` target, and settles the check from there only
when the band can answer for the whole screen:

- the band's pixels are the recorded band's (``band_signature``: its grey levels at
  96x12, kept with the step) and the recorded screen showed no password word: clear,
  with no OCR at all;
- the band shows a password word: the guard asks, as after a full read;
- the recorded screen showed one anywhere: the whole screen is read (the guard asks
  again whenever the word is still there, near the field or not);
- every text the band shows was on the recorded screen, which showed no password word:
  the field and its surroundings are as recorded and the screen matched the recorded
  one at a glance (a replayed step whose screen needed OCR to match has its full read
  cached: ``FieldCheck`` is not used then), so the band's lines are the answer: clear;
- anything else (a new text near the field, a band that could not be read): the whole
  screen is read and decides, as without the cache.

What it does not see that the full read would: a password word that appears far from
the field while the field's band and the screen's layout at a glance stay as recorded.

May import: numpy, OpenCV, rapidfuzz, the standard library, ``perception.types`` and this package.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import cv2
import numpy as np
from rapidfuzz import fuzz, process

from mobile_agent.replay.fingerprint import ScreenFingerprint, fold_text
from mobile_agent.replay.relocate import BAND_HALF_SHARE, band
from perception.types import Box, TextLine

__all__ = ["FieldCheck", "ScreenLines", "band_signature", "field_point", "same_band", "shrunk_grey", "stored_signature"]

log = logging.getLogger(__name__)

ScreenLines = list[tuple[str, tuple[int, int, int, int]]]  # the guard's screen reading: (text, box)
_SAME_TEXT = 90  # rapidfuzz partial_ratio: a band's line (cut or misread) that is a recorded text
_TYPED_SEEN = 85  # rapidfuzz partial_ratio: a line of the next screen that shows the typed text
_SHRINK = 4  # a frame kept for a Type's band signature: grey, a quarter of each side
_SIGNATURE = (96, 12)  # the band's signature: width, height in cells
_CELL_NOISE = 4.0  # mean grey difference of two signatures of the same band (a caret, scaling)
_CELL_CHANGED = 24  # a cell this much greyer or lighter changed
_CHANGED_SHARE = 0.02  # more cells changed than this: not the recorded band (a caret is a few)


def shrunk_grey(pixels: np.ndarray) -> np.ndarray:
    """The frame in grey at a quarter of each side (what a Type's step keeps of its frame)."""
    grey = cv2.cvtColor(np.ascontiguousarray(pixels[:, :, :3]), cv2.COLOR_RGB2GRAY)
    size = (max(1, grey.shape[1] // _SHRINK), max(1, grey.shape[0] // _SHRINK))
    return cv2.resize(grey, size, interpolation=cv2.INTER_AREA)


def band_signature(small: np.ndarray, field: tuple[float, float]) -> np.ndarray | None:
    """The grey levels of the band of rows around ``field`` (shares) on a ``shrunk_grey``
    frame, at ``_SIGNATURE`` cells: the same band on another screen size gives about the
    same cells. None when the band is too thin."""
    height = small.shape[0]
    top = max(0, int(round((field[1] - BAND_HALF_SHARE) * height)))
    bottom = min(height, int(round((field[1] + BAND_HALF_SHARE) * height)))
    if bottom - top < 4:
        return None
    return cv2.resize(np.ascontiguousarray(small[top:bottom]), _SIGNATURE, interpolation=cv2.INTER_AREA)


def stored_signature(data: bytes | None) -> np.ndarray | None:
    """A signature as a plan stores it (``CachedStep.field_band``: its bytes), or None."""
    if data is None or len(data) != _SIGNATURE[0] * _SIGNATURE[1]:
        return None
    return np.frombuffer(data, dtype=np.uint8).reshape(_SIGNATURE[1], _SIGNATURE[0])


def same_band(a: np.ndarray, b: np.ndarray) -> bool:
    """Two band signatures of the same pixels, give or take a caret: any text changed,
    added or gone in the band changes far more cells."""
    if a.shape != b.shape:
        return False
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16))
    return float(diff.mean()) <= _CELL_NOISE and float((diff > _CELL_CHANGED).mean()) <= _CHANGED_SHARE


def field_point(
    typed: str, after: Sequence[TextLine] | None, size: tuple[int, int], before: tuple[float, float] | None
) -> tuple[float, float] | None:
    """Where a Type's field was, as shares of the screen: the top-most line of the screen
    after it (``after``, its OCR lines on a screen of ``size``) that shows the typed text;
    else ``before``, the tap that went before it (a password field shows dots)."""
    wanted = fold_text(typed)[:30]
    width, height = size
    if len(wanted) >= 2 and after and width and height:
        shown = [line for line in after if _shows(wanted, fold_text(line.text))]
        if shown:
            x, y = min(shown, key=lambda line: line.box.top).box.center
            return (x / width, y / height)
    return before


def _shows(wanted: str, line: str) -> bool:
    return wanted in line or (len(line) >= min(len(wanted), 3) and fuzz.partial_ratio(wanted, line) >= _TYPED_SEEN)


class FieldCheck:
    """The guard's screen reading for one replayed Type (``Guard.check``'s ``read_screen``):
    the band's lines when they settle the password check, None for a full read."""

    def __init__(
        self,
        recorded: ScreenFingerprint,
        field: tuple[float, float],
        read_region: Callable[[np.ndarray, Box], list[TextLine]],
        shows_password: Callable[[list[str]], str | None],
        recorded_band: np.ndarray | None = None,
    ) -> None:
        self.recorded = recorded
        self.field = field
        self.recorded_band = recorded_band  # the field band's ``band_signature`` when recorded
        self._read_region = read_region
        self._shows_password = shows_password
        self.settled: str | None = None  # how the last call settled it: "pixels", "band" (OCR), None (full read)

    def __call__(self, pixels: np.ndarray) -> ScreenLines | None:
        self.settled = None
        if self.recorded_band is not None and self._shows_password(sorted(self.recorded.texts)) is None:
            now = band_signature(shrunk_grey(pixels), self.field)
            if now is not None and same_band(now, self.recorded_band):
                self.settled = "pixels"
                return []  # the recorded band, on a screen recorded clear: nothing to read
        box = band(self.field, (pixels.shape[1], pixels.shape[0]))
        if box is None:
            return None
        try:
            lines = self._read_region(pixels, box)
        except Exception as exc:  # noqa: BLE001 - the full read follows and reports a real failure
            log.debug("reading the field's band failed: %s", exc)
            return None
        texts = [line.text for line in lines]
        if self._shows_password(texts) is None:
            if self._shows_password(sorted(self.recorded.texts)) is not None:
                return None  # the recorded screen showed a password word: the whole screen decides
            new = self._new_texts(texts)
            if new:
                log.debug("the field's band shows texts the recorded screen did not: %s", new)
                return None
        self.settled = "band"
        return [(line.text, (int(line.box.left), int(line.box.top), int(line.box.right), int(line.box.bottom)))
                for line in lines]

    def _new_texts(self, texts: list[str]) -> list[str]:
        recorded = sorted(self.recorded.texts)
        new = []
        for text in texts:
            folded = fold_text(text)
            if len(folded) < 2 or not any(ch.isalpha() for ch in folded) or folded in self.recorded.texts:
                continue  # a counter, a stray glyph (the fingerprint leaves them out too), or a recorded text
            if not recorded or process.extractOne(folded, recorded, scorer=fuzz.partial_ratio,
                                                  score_cutoff=_SAME_TEXT) is None:
                new.append(folded)
        return new
