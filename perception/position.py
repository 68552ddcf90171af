"""The icon position filter: "top", "bottom", "left", "right", "center" and two-word
combinations ("top left", "bottom center", "upper-right corner").

Screen regions, tested on the box centre (as in the Mobile-Agent reference code: halves,
so that "top" forgives a planner's loose sense of where a thing is):

- vertical: ``top`` = upper half, ``bottom`` = lower half, ``center`` = the middle band
  from 1/4 to 3/4 of the height;
- horizontal: ``left`` = left half, ``right`` = right half, ``center`` = 1/4 to 3/4 of the width;
- a single word constrains one axis only ("top" = the whole upper half, any column),
  except ``center`` alone, which means the middle band on both axes.

Synonyms: upper/lower, middle/centre, "corner" and "side" are ignored.

May import: the standard library, ``perception.types``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from perception.types import Box

__all__ = ["POSITION_WORDS", "PositionFilter", "UnknownPositionError", "parse_position"]

_VERTICAL = {"top": 0, "upper": 0, "bottom": 2, "lower": 2}
_HORIZONTAL = {"left": 0, "right": 2}
_CENTER = {"center", "centre", "middle", "central"}
_IGNORED = {"corner", "side", "of", "the", "screen", "at", "on", "in", "part", "area", "edge"}
POSITION_WORDS = ("top", "bottom", "left", "right", "center")


class UnknownPositionError(ValueError):
    pass


@dataclass(frozen=True)
class PositionFilter:
    row: int | None  # 0 top half, 1 middle band, 2 bottom half; None = any
    column: int | None  # 0 left half, 1 middle band, 2 right half; None = any
    text: str

    def accepts(self, box: Box, width: int, height: int, area: tuple[float, float] | None = None) -> bool:
        """Is the box centre in the named region? ``area`` = (top, bottom) rows of the app's
        content (between the system bars): "top" means the top of what the app draws."""
        cx, cy = self.place(box, width, height, area)
        return _in_band(cy, self.row) and _in_band(cx, self.column)

    def place(self, box: Box, width: int, height: int, area: tuple[float, float] | None = None) -> tuple[float, float]:
        """The box centre as (x, y) fractions of the screen width and of the app's area."""
        top, bottom = area if area is not None else (0.0, float(height))
        cx = (box.left + box.right) / 2 / width
        cy = ((box.top + box.bottom) / 2 - top) / max(1.0, bottom - top)
        return cx, cy

    def closeness(self, box: Box, width: int, height: int, area: tuple[float, float] | None = None) -> float:
        """0..1, how far toward the named edge the box sits ("top right": the toolbar's right
        end scores 1): ranks candidates a planner would tell apart only by where they are."""
        cx, cy = self.place(box, width, height, area)
        parts = []
        for value, band in ((cy, self.row), (cx, self.column)):
            if band == 0:
                parts.append(1.0 - value)
            elif band == 2:
                parts.append(value)
            elif band == 1:
                parts.append(1.0 - 2 * abs(value - 0.5))
        return float(sum(parts) / len(parts)) if parts else 0.0


_BANDS = {0: (0.0, 0.5), 1: (0.25, 0.75), 2: (0.5, 1.0)}


def _in_band(value: float, band: int | None) -> bool:
    if band is None:
        return True
    low, high = _BANDS[band]
    return low <= value <= high


def parse_position(position: str | None) -> PositionFilter | None:
    """A filter for ``position``; None for no position; ``UnknownPositionError`` if unreadable."""
    if position is None or not position.strip():
        return None
    words = [w for w in re.split(r"[\s,_\-/]+", position.strip().lower()) if w and w not in _IGNORED]
    words = [w for part in words for w in _split_glued(part)]
    row: int | None = None
    column: int | None = None
    centers = 0
    for word in words:
        if word in _VERTICAL:
            row = _VERTICAL[word] if row is None else _conflict(position)
        elif word in _HORIZONTAL:
            column = _HORIZONTAL[word] if column is None else _conflict(position)
        elif word in _CENTER:
            centers += 1
        else:
            raise UnknownPositionError(
                f"unknown position {position!r}: use top, bottom, left, right, center or two of them (top left)"
            )
    if centers:
        if row is None and column is None:
            row, column = 1, 1
        elif row is None:
            row = 1
        elif column is None:
            column = 1
        else:
            _conflict(position)
    if row is None and column is None:
        return None
    return PositionFilter(row, column, position.strip())


def _split_glued(word: str) -> list[str]:
    """'topleft' -> ['top', 'left']."""
    known = [*_VERTICAL, *_HORIZONTAL, *_CENTER]
    for first in known:
        rest = word[len(first):]
        if word.startswith(first) and rest in known:
            return [first, rest]
    return [word]


def _conflict(position: str) -> int:
    raise UnknownPositionError(f"contradictory position {position!r}")
