"""Did an action change the screen? A perceptual comparison of two frames.

Not a byte compare: the clock, the battery and network-speed indicators of the status
bar tick on their own, and JPEG/scaling noise moves single pixels. Both frames are
downscaled, converted to grey, blurred, the status bar and navigation bar rows are
masked, and the share of pixels whose grey level moved more than ``pixel_delta`` is
the change ratio. The agent compares it with ``settings.agent.change_threshold``.

May import: numpy, OpenCV, ``mobile_agent.pixels``.
"""

from __future__ import annotations

import cv2
import numpy as np

from mobile_agent.pixels import four_byte_source

__all__ = ["change_ratio", "screen_changed"]

# Android's status bar is 24 dp and the navigation bar 48 dp: about 2.6 % and 5.3 % of a
# 2400-pixel-high screen at 420 dpi. The margins are a little wider to cover other sizes.
STATUS_BAR_SHARE = 0.04
NAV_BAR_SHARE = 0.06
_WORK_WIDTH = 270  # a quarter of 1080: enough to see a toggle flip, cheap to compare


def _prepare(pixels: np.ndarray, top: float, bottom: float) -> np.ndarray:
    if pixels.ndim != 3 or pixels.shape[2] < 3 or pixels.dtype != np.uint8:
        raise ValueError(f"expected an RGB uint8 HxWx3 image, got shape {pixels.shape} dtype {pixels.dtype}")
    height, width = pixels.shape[:2]
    cut_top = int(round(height * top))
    cut_bottom = height - int(round(height * bottom))
    source = four_byte_source(pixels)  # a framebuffer's own four-byte rows: no copy first
    if source is not None:
        body, to_grey = source[0][cut_top:cut_bottom], (cv2.COLOR_BGRA2GRAY if source[1] == "BGRX" else cv2.COLOR_RGBA2GRAY)
    else:
        body, to_grey = pixels[cut_top:cut_bottom, :, :3], cv2.COLOR_RGB2GRAY
    scale = min(1.0, _WORK_WIDTH / max(1, width))
    if scale < 1.0:
        size = (max(1, int(round(width * scale))), max(1, int(round(body.shape[0] * scale))))
        body = cv2.resize(body, size, interpolation=cv2.INTER_AREA)
    grey = cv2.cvtColor(np.ascontiguousarray(body), to_grey)
    return cv2.GaussianBlur(grey, (3, 3), 0)


def change_ratio(
    before: np.ndarray,
    after: np.ndarray,
    *,
    pixel_delta: int = 16,
    ignore_top: float = STATUS_BAR_SHARE,
    ignore_bottom: float = NAV_BAR_SHARE,
) -> float:
    """Share (0..1) of the screen body that visibly changed between two RGB frames.

    Frames of different sizes (a rotation) count as fully changed.
    """
    if before.shape[:2] != after.shape[:2]:
        return 1.0
    a = _prepare(before, ignore_top, ignore_bottom)
    b = _prepare(after, ignore_top, ignore_bottom)
    if a.size == 0:
        return 0.0
    moved = cv2.absdiff(a, b) > pixel_delta
    return float(np.count_nonzero(moved)) / float(moved.size)


def screen_changed(before: np.ndarray, after: np.ndarray, threshold: float) -> tuple[bool, float]:
    """(changed, ratio): changed when the ratio exceeds ``threshold``."""
    ratio = change_ratio(before, after)
    return ratio > threshold, ratio
