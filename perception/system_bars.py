"""Where the app's content lives on a phone screenshot: between Android's status bar and
navigation bar.

Icon targets live in the app's area: a notification glyph in the status bar, or the
navigation bar's back triangle, must not win "a white X, top right" or "back arrow,
bottom left". Both bars are found from the pixels, starting from their sizes in the
Android platform (status bar 24 dp, up to ~52 dp with a display cutout; navigation bar
48 dp: AOSP ``frameworks/base/core/res/res/values/dimens.xml``, ``status_bar_height`` and
``navigation_bar_height``), with dp estimated from the screen's short side (phones are 360-411 dp
wide held upright; a landscape screen's width is not its dp):

- status bar: the strongest change of the per-row median colour (icons and the clock
  leave the median alone) between 20 and 52 dp; weak or absent (a black status bar over a
  black toolbar) -> 24 dp, or (upright only) below the clock when a text line starts in those
  24 dp (a taller bar beside a display cutout);
- navigation bar: a uniform band of 40-60 dp at the bottom whose colour differs from the
  content above it (by 15 levels, or 8 where both sides are dark: a dark theme's bar over
  black content), with no text line in it (an app's bottom tabs have labels); absent ->
  the content reaches the bottom edge.

Descriptions that name a system control ("back", "home", "recents", "battery", "Wi-Fi",
"notification", "signal", "clock") keep the bars.

May import: numpy, the standard library, ``perception.types``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from perception.types import Box

__all__ = ["AppArea", "app_area", "names_system_control"]

_DP_PER_WIDTH = 1 / 400  # dp per pixel of the short side (width held upright), for a phone ~400 dp wide
# words that name what each bar draws: a description with one keeps that bar
_NAVIGATION_WORDS = {"back", "home", "recents", "recent", "overview", "navigation", "nav", "triangle"}
# a triangle qualified by these is a player's glyph, not the navigation bar's Back
_MEDIA_WORDS = {"play", "video", "media", "player"}
_STATUS_WORDS = {
    "battery", "wifi", "wi", "signal", "notification", "notifications", "clock", "time", "bluetooth",
    "airplane", "status", "cellular", "network",
}  # fmt: skip


@dataclass(frozen=True)
class AppArea:
    """Rows ``top``..``bottom`` (image pixels) hold the app; above is the status bar, below
    the navigation bar (``bottom`` = image height when none was seen)."""

    top: float
    bottom: float

    def holds(self, box: Box) -> bool:
        cy = (box.top + box.bottom) / 2
        return self.top <= cy <= self.bottom

    def for_description(self, description: str, height: int) -> AppArea:
        """The area a target of ``description`` may lie in: a bar comes back in when the
        description names one of its controls ("battery" the status bar, "back" the
        navigation bar)."""
        words = set(re.findall(r"[a-z]+", description.lower()))
        top = 0.0 if words & _STATUS_WORDS else self.top
        navigation = words & _NAVIGATION_WORDS
        if words & _MEDIA_WORDS:  # a play triangle is a media control, not the bar's Back
            navigation -= {"triangle"}
        bottom = float(height) if navigation else self.bottom
        return AppArea(top, bottom)


def names_system_control(description: str) -> bool:
    """Does the description name something a system bar draws ("back", "battery", ...)?"""
    return bool(set(re.findall(r"[a-z]+", description.lower())) & (_STATUS_WORDS | _NAVIGATION_WORDS))


def _row_medians(image: np.ndarray, start: int, stop: int) -> np.ndarray:
    # every 4th column is plenty for a median and keeps this under a millisecond
    return np.median(image[start:stop, ::4].astype(np.int16), axis=1)


def app_area(image: np.ndarray, text_boxes: Sequence[Box] = ()) -> AppArea:
    height, width = image.shape[:2]
    # a landscape screen (a video player) is as many dp across its short side as upright
    dp = min(width, height) * _DP_PER_WIDTH
    # --- status bar
    low, high = int(20 * dp), min(height // 4, int(45 * dp))
    medians = _row_medians(image, 0, high + 2)
    change = np.abs(medians[2:] - medians[:-2]).max(axis=1)  # change across row y+1
    top = 24 * dp
    strong = np.nonzero(change[low:high] >= 30)[0]
    if len(strong):  # the first strong edge: a toolbar below has edges of its own
        top = max(top, low + int(strong[0]) + 1)
    elif height > width:
        # no edge: the bar has the toolbar's colour, and may be taller than 24 dp (a display
        # cutout's, up to 52): its clock, a text line starting in the first 24 dp, is in it,
        # and so is the row of glyphs beside it. Upright only: held sideways the cutout is at
        # a short edge, beside the bar, which stays 24 dp; a text line there is the toolbar's
        # title (a capture with no status bar at all: its toolbar starts at the top edge)
        clock = [t.bottom for t in text_boxes if t.top < top and t.bottom <= 52 * dp and t.height <= 20 * dp]
        top = max([top, *clock])
    # --- navigation bar
    bottom = float(height)
    start = max(0, height - int(60 * dp) - 2)
    medians = _row_medians(image, start, height)
    change = np.abs(medians[2:] - medians[:-2]).max(axis=1)
    lo, hi = height - int(60 * dp) - start, height - int(40 * dp) - start
    if hi > lo:
        y = lo + int(np.argmax(change[lo:hi]))  # the boundary is between rows start+y and start+y+2
        band = medians[y + 3:]  # past the anti-aliased boundary row
        uniform = len(band) > 0 and float(np.percentile(np.abs(band - np.median(band, axis=0)).max(axis=1), 90)) <= 12
        boundary = start + y + 1
        texted = any(t.bottom > boundary + 4 and t.top < height for t in text_boxes)
        # a dark theme's bar over black content differs by ~10 levels only: between two dark
        # colours a smaller step is as visible as 15 levels between two light ones
        dark = float(max(medians[y].max(), medians[min(len(medians) - 1, y + 2)].max())) < 64
        if change[y] >= (8 if dark else 15) and uniform and not texted:
            bottom = float(boundary)
    return AppArea(float(top), bottom)
