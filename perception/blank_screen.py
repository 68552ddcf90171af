"""Frames whose app area holds nothing: one colour from the status bar to the navigation
bar. Two causes, one look:

- a **protected window**: an app that sets ``WindowManager.LayoutParams.FLAG_SECURE``
  (banking, password managers, DRM video) is blacked out of every capture by
  SurfaceFlinger (AOSP frameworks/native ``libs/gui/aidl/android/gui/SecureLayerMode.aidl``,
  ``Redact``), while SystemUI's bars stay; the accessibility tree still holds it;
- a frame caught **blank or mid-transition**: a window not drawn yet, a splash colour.

Telling them apart needs the phone (a second capture, the tree): the caller's job. Here
only the pixels: ``blank_app_area`` says whether the app area is one colour.

May import: numpy, the standard library, ``perception.*``.
"""

from __future__ import annotations

import numpy as np

from perception.system_bars import app_area

__all__ = ["blank_app_area"]

# levels a pixel may differ from the area's median colour (JPEG / dithering noise) and the
# share of sampled pixels that must be that close: a toast, a caret or one icon breaks it
_NOISE = 10
_SHARE = 0.995


def blank_app_area(image: np.ndarray) -> bool:
    """Whether the app's area (``perception.system_bars.app_area``) of an RGB frame is
    one colour: nothing a locator could find there."""
    height, width = image.shape[:2]
    # most frames show something in their middle: a sparse look at it settles them in ~1 ms
    if not _one_colour(image[int(0.15 * height): int(0.85 * height): 16, ::16]):
        return False
    area = app_area(image)
    top, bottom = int(area.top), int(area.bottom)
    if bottom - top < height // 4:
        return False
    return _one_colour(image[top:bottom:4, ::4])


def _one_colour(region: np.ndarray) -> bool:
    sample = region.reshape(-1, region.shape[-1]).astype(np.int16)
    if len(sample) == 0:
        return False
    median = np.median(sample, axis=0)
    close = np.abs(sample - median).max(axis=1) <= _NOISE
    return bool(close.mean() >= _SHARE)
