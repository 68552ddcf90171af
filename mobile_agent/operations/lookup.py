"""The one text and icon lookup of every operation and interface: ``find_text_on`` and
``find_icon_on`` (and ``snap_on``, a grounded model's tap) give the locator the phone's
accessibility tree when the ``perception.accessibility`` setting is on, or when the frame's
app area is blank (a FLAG_SECURE window captures black on a real phone: then only the tree
can place a tap).

Its own module (not ``catalog``'s) so that an operation module the catalog registers
(``open_app``'s home-screen search) can look up through it too without an import circle.

May import: numpy, ``perception`` (blank_screen, snapping, types), ``mobile_agent.operations.context``,
``mobile_agent.settings``.
"""

from __future__ import annotations

import numpy as np

from mobile_agent.operations.context import DeviceLike, Locator
from mobile_agent.settings import Settings
from perception.blank_screen import blank_app_area
from perception.snapping import Snap
from perception.types import Location

__all__ = ["find_icon_on", "find_text_on", "snap_on"]


def _tree_for(device: DeviceLike, pixels: np.ndarray, settings: Settings) -> str | None:
    """The phone's accessibility tree (``uiautomator dump`` XML, or None: vision decides) for
    locating on ``pixels``: when the ``perception.accessibility`` setting is on, and whatever the
    setting when the frame's app area is blank (a FLAG_SECURE window captures black on a real
    phone: ``perception.blank_screen``), as then only the tree can place a tap."""
    if settings.perception.accessibility or blank_app_area(pixels):
        return device.accessibility_xml()
    return None


def find_text_on(device: DeviceLike, locator: Locator, pixels: np.ndarray, text: str, settings: Settings) -> Location:
    """Where ``text`` is on ``pixels`` (the phone's screen now), with the accessibility tree
    when that setting is on (perception trusts it only where it agrees with the pixels), or
    when the frame is blank (perception then locates by the tree alone): the one text
    lookup of every operation and interface."""
    return locator.find_text(pixels, text, _tree_for(device, pixels, settings))


def find_icon_on(
    device: DeviceLike, locator: Locator, pixels: np.ndarray, icon: str, position: str | None, settings: Settings
) -> Location:
    """Where the icon ``icon`` is, as ``find_text_on`` (a node whose content-desc agrees wins)."""
    return locator.find_icon(pixels, icon, position, _tree_for(device, pixels, settings))


def snap_on(
    device: DeviceLike,
    locator: Locator,
    pixels: np.ndarray,
    point: tuple[int, int],
    settings: Settings,
    *,
    max_distance: float,
    drift_tolerance: float,
) -> Snap:
    """A grounded model's tap ``point`` snapped to what is on ``pixels`` (``perception.snapping``),
    with the accessibility tree's controls when that setting is on or the frame is blank, as
    every text and icon lookup has them."""
    return locator.snap(point, pixels, max_distance=max_distance, drift_tolerance=drift_tolerance,
                        hierarchy=_tree_for(device, pixels, settings))  # fmt: skip
