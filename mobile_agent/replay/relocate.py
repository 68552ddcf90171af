"""Finding a cached step's text target again on the current screen: ``TargetFinder``.

A replayed ``Click text`` never taps a recorded point: perception reads the current
frame and the operation taps where the text is now. Reading the whole screen costs a
full OCR (0.3–1 s on 2 cores), yet most replayed screens are the recorded layout at a
glance with the target where it was. So the band of rows around the recorded tap is
read first (a strip of the screen: a few lines, a fraction of the work). When the
target is found there exactly once and no farther from the recorded point than the
band's half height, it is the candidate the full read would lead the replay to as
well (every other copy on the screen lies outside the band, so farther away), and it
is handed to the operation through the run's locator (``TimedLocator.offer``).
Otherwise — moved, scrolled, covered, several copies, nothing read — the whole screen
is read and decides, as before.

The band is read and matched by perception's facade (``find_text_in_region``: the same
matching rules and settings as a full ``find_text``); ``band`` gives the band's box, for
the other reads of a replayed step's surroundings (``replay.field``).

May import: the standard library, numpy, ``mobile_agent`` (operations, errors) and
``perception.types``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from mobile_agent.errors import UnknownOperationError
from mobile_agent.operations.context import RunLocator
from mobile_agent.operations.coordinates import COORDINATE_REGISTRY
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.operations.registry import parse_action
from perception.types import Box, LocateStatus, Location

__all__ = ["BAND_HALF_SHARE", "TargetFinder", "band", "band_half", "parse_cached", "scaled_action"]

log = logging.getLogger(__name__)

BAND_HALF_SHARE = 0.04  # half the band's height, as a share of the screen's height
_BAND_HALF_MIN_PX = 48


def band(point: tuple[float, float], size: tuple[int, int]) -> Box | None:
    """The full-width band of rows around ``point`` (shares of the screen) on a screen of
    ``size`` (width, height), in screen pixels; None when too thin to read."""
    width, height = size
    y = point[1] * height
    half = band_half(height)
    top, bottom = max(0, int(y - half)), min(height, int(y + half))
    if bottom - top < 16:
        return None
    return Box(0, top, width, bottom)


def band_half(height: int) -> int:
    """Half the band's height on a screen ``height`` pixels high."""
    return max(_BAND_HALF_MIN_PX, int(height * BAND_HALF_SHARE))


def scaled_action(action: str, recorded: tuple[int, int], size: tuple[int, int]) -> str:
    """A cached step at points (``Tap point (540, 1200)``), its points recorded on a screen of
    ``recorded`` (width, height), as the same step on a screen of ``size``."""
    if recorded == size or not recorded[0] or not recorded[1]:
        return action
    parsed = parse_cached(action)
    card = COORDINATE_REGISTRY.get(parsed.name)
    params = parsed.params.model_dump()
    for key in ("x", "x1", "x2"):
        if params.get(key) is not None:
            params[key] = round(params[key] * size[0] / recorded[0])
    for key in ("y", "y1", "y2"):
        if params.get(key) is not None:
            params[key] = round(params[key] * size[1] / recorded[1])
    return card.render(card.params_model.model_validate(params))


def parse_cached(action: str) -> ParsedAction:
    """A cached step's canonical text: one of the paper's operations, or of the coordinate
    operations a grounded dialect answered with (a key, Finished…)."""
    try:
        return parse_action(action)
    except UnknownOperationError:
        return parse_action(action, COORDINATE_REGISTRY)


class TargetFinder:
    """Checks that a replayed step's text target is on the screen, reading the recorded
    band first. ``locator`` is the run's: its ``offer`` for handing what was found to the
    operation, and its untimed locator's ``find_text_in_region`` for the band. ``find_text``
    is the full lookup, the operation's own (``operations.catalog.find_text_on``: the
    accessibility tree where the operation uses it, on a screen the pixels cannot see too);
    the locator's ``find_text`` without it."""

    def __init__(self, locator: RunLocator, find_text: Callable[[np.ndarray, str], Location] | None = None) -> None:
        self._locator = locator
        self._find_text = find_text if find_text is not None else locator.find_text
        self.band_hits = 0  # targets found in their band (no full read), for logs and benchmarks

    def missing(self, action: str, pixels: np.ndarray, point: tuple[float, float] | None, *, read: bool) -> str | None:
        """None when the target of ``action`` is on ``pixels``; else why not. ``point``:
        the recorded tap as shares of the screen; ``read``: the whole frame is already
        read (or being read), so the full lookup costs nothing more."""
        try:
            parsed = parse_cached(action)
            text = str(parsed.params.model_dump().get("text") or "")
        except Exception as exc:  # a cached action that no longer parses: the model decides
            return f"the cached action {action!r} does not parse any more: {exc}"
        if not text:
            return None
        if point is not None and not read:
            found = self._in_band(pixels, text, point)
            if found is not None:
                self.band_hits += 1
                self._locator.offer(pixels, text, found)
                return None
        location = self._find_text(pixels, text)
        if location.status in (LocateStatus.FOUND, LocateStatus.CANDIDATES):
            self._locator.offer(pixels, text, location)  # the operation's lookup of this frame: done
            return None
        return f"the cached step's target {text!r} is not on the current screen"

    def _in_band(self, pixels: np.ndarray, text: str, point: tuple[float, float]) -> Location | None:
        height, width = pixels.shape[:2]
        box = band(point, (width, height))
        if box is None:
            return None
        try:
            location = self._locator.untimed().find_text_in_region(pixels, text, box, "recorded band")
        except Exception as exc:  # noqa: BLE001 - the full read that follows reports a real failure
            log.debug("reading the recorded band failed: %s", exc)
            return None
        if not isinstance(location, Location) or location.status is not LocateStatus.FOUND or location.point is None:
            return None
        x, y = point[0] * width, point[1] * height
        if float(np.hypot(location.point[0] - x, location.point[1] - y)) > band_half(height):
            return None  # another copy outside the band could be nearer: the full read decides
        return location
