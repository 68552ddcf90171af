"""Screen-layout rules around text matches: what a phone screen's layout says about
which match the planner means.

- The status bar (clock, battery, notification icons) is not part of the app's screen:
  a lone "5" the OCR missed in a stepper must not be found in "12:35" up there. It is
  recognised by a clock-like text in the top strip; full-screen apps (games, video)
  have none, and then nothing is cut.
- An app tile whose logo itself spells the app's name above the label gives two exact
  matches stacked in one column: the label below is the one to tap (it taps the tile).

May import: the standard library, ``perception.*``.
"""

from __future__ import annotations

import re

from perception.types import Box, TextLine

__all__ = ["merge_tile_pairs", "names_system_control", "status_bar_bottom", "without_status_bar"]

# The top strip where a status bar can be: 24-32 dp, i.e. up to ~5% of a phone screen's height.
_STATUS_STRIP = 0.055
_CLOCK = re.compile(r"^\D{0,3}\d{1,2}[:.]\d{2}(\s*[AaPp]\.?[Mm]\.?)?\D{0,6}$|^\d{1,3}\s?%$")
_SYSTEM_WORDS = (
    "status bar", "notification", "battery", "clock", "signal", "wi-fi icon", "wifi icon",
    "navigation bar", "quick settings",
)  # fmt: skip


def names_system_control(target: str) -> bool:
    """Whether the request itself is about the system bars (then they stay searchable)."""
    lowered = target.casefold()
    # the clock's or the battery's own text ("09:41", "85%") names the bar's content
    return any(word in lowered for word in _SYSTEM_WORDS) or bool(_CLOCK.match(target.strip()))


def status_bar_bottom(lines: list[TextLine], height: int) -> float:
    """The bottom edge of the status bar, in pixels; 0 when the screen shows none."""
    strip = _STATUS_STRIP * height
    clocks = [ln for ln in lines if ln.box.bottom <= strip and _CLOCK.match(ln.text.strip())]
    if not clocks:
        return 0.0
    # the bar is a little taller than its text: the clock's line box plus half its height
    return min(strip, max(ln.box.bottom + 0.5 * ln.box.height for ln in clocks))


def without_status_bar(lines: list[TextLine], height: int, target: str) -> list[TextLine]:
    """``lines`` less those inside the status bar, unless the target names a system control."""
    if names_system_control(target):
        return lines
    bottom = status_bar_bottom(lines, height)
    if bottom <= 0:
        return lines
    return [ln for ln in lines if (ln.box.top + ln.box.bottom) / 2 > bottom]


def _stacked_in_one_tile(upper: Box, lower: Box) -> bool:
    """``upper`` sits centred over ``lower``, close above it (a logo's lettering over its label)."""
    wide = max(upper.width, lower.width, 1.0)
    tall = max(upper.height, lower.height, 1.0)
    if abs(upper.height - lower.height) <= 0.15 * tall and abs(upper.left - lower.left) <= 0.5 * tall:
        return False  # same size, same left edge: two rows of a list, not lettering over a label
    centred = abs((upper.left + upper.right) / 2 - (lower.left + lower.right) / 2) <= 0.2 * wide + 4
    gap = lower.top - upper.bottom
    return centred and -0.1 * lower.height <= gap <= 2.5 * max(upper.height, lower.height)


def merge_tile_pairs(boxes: list[Box]) -> list[int]:
    """Indexes of ``boxes`` to keep: of two matches stacked in one tile, only the lower
    (the label). Matches in a list or grid are rows apart and all stay."""
    drop: set[int] = set()
    for i, upper in enumerate(boxes):
        for j, lower in enumerate(boxes):
            if i != j and j not in drop and upper.top < lower.top and _stacked_in_one_tile(upper, lower):
                # a third match in the same column means a list, not a tile: keep all
                column = [k for k, b in enumerate(boxes) if k not in (i, j) and
                          (_stacked_in_one_tile(lower, b) or _stacked_in_one_tile(b, upper))]  # fmt: skip
                if not column:
                    drop.add(i)
    return [k for k in range(len(boxes)) if k not in drop]
