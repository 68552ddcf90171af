"""Pixels as the device layer hands them: a raw framebuffer's RGB is a three-channel view of
its four-byte pixels (``device.screenshot.decode_framebuffer``). Image libraries read that
buffer directly (Pillow's "RGBX"/"BGRX", OpenCV's RGBA/BGRA conversions), faster than numpy
can first copy the view into a contiguous RGB array (3 ms for 540x1200).

May import: numpy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["four_byte_source"]


def four_byte_source(pixels: np.ndarray) -> tuple[np.ndarray, str] | None:
    """The buffer of four-byte pixels that ``pixels`` is a three-channel view of, and its
    order for Pillow ("RGBX", or "BGRX" for a reversed view), when it is one: a raw
    framebuffer as ``device.screenshot.decode_framebuffer`` hands it (RGBA, or BGRA seen
    backwards). None for anything else."""
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] != 3:
        return None
    height, width = pixels.shape[:2]
    step = pixels.strides[2]
    if pixels.strides[:2] != (width * 4, 4) or step not in (1, -1):
        return None
    start = pixels.__array_interface__["data"][0] - (2 if step == -1 else 0)
    size = height * width * 4
    base = pixels.base
    while isinstance(base, np.ndarray):
        # the buffer the view lies in (the device layer reads a frame after its header into a
        # larger one): the (height, width, 4) pixels are that buffer's bytes from the view's start
        if base.dtype == np.uint8 and base.flags.c_contiguous:
            offset = start - base.__array_interface__["data"][0]
            if 0 <= offset and offset + size <= base.nbytes:
                four = np.ndarray((height, width, 4), np.uint8, buffer=base, offset=offset)
                return four, "BGRX" if step == -1 else "RGBX"
        base = base.base
    return None
