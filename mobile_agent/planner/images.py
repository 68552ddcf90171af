"""Screenshots to what a chat model sees: downscaled JPEG data URLs.

May import: numpy, Pillow, ``mobile_agent.pixels``.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from typing import Protocol, TypeAlias

import numpy as np
from PIL import Image

from mobile_agent.pixels import four_byte_source

__all__ = ["EncodedImage", "Framed", "Picture", "encode_image", "frame_pixels", "pixels_of", "rgb_image"]


class Framed(Protocol):
    """A captured frame: ``mobile_agent.device.Screenshot`` (``operations.context.ScreenshotLike``),
    a masked frame: its screen pixels, frozen (an encoding may be remembered by identity)."""

    @property
    def pixels(self) -> np.ndarray: ...


# The one image type of the planner's and the replayer's seams: a captured frame, an array of
# its pixels (HxWx3 or HxWx4) or a PIL image.
Picture: TypeAlias = Framed | np.ndarray | Image.Image


@dataclass(frozen=True)
class EncodedImage:
    data_url: str
    width: int  # of the encoded image, not of the screen
    height: int
    nbytes: int  # JPEG bytes before base64


def frame_pixels(image: Picture) -> np.ndarray:
    """The pixels as they are held: a frame's, the array itself, a PIL image's (as RGB)."""
    if isinstance(image, Image.Image):
        return np.asarray(image.convert("RGB"))
    pixels = image if isinstance(image, np.ndarray) else image.pixels
    if not isinstance(pixels, np.ndarray):  # a caller outside the type checker
        raise TypeError(f"expected a screenshot or an RGB array, got {type(image).__name__}")
    return pixels


def pixels_of(image: Picture) -> np.ndarray:
    """RGB uint8 HxWx3 from a ``Screenshot`` (``.pixels``), a PIL image or an array."""
    pixels = frame_pixels(image)
    if pixels.ndim == 2:
        pixels = np.stack([pixels] * 3, axis=-1)
    if pixels.ndim != 3 or pixels.shape[2] not in (3, 4) or pixels.shape[0] < 1 or pixels.shape[1] < 1:
        raise ValueError(f"expected an HxWx3 image, got shape {pixels.shape}")
    if pixels.shape[2] == 4:
        pixels = pixels[:, :, :3]
    if pixels.dtype != np.uint8:
        pixels = np.clip(pixels, 0, 255).astype(np.uint8)
    result: np.ndarray = pixels
    return result


def rgb_image(image: Picture) -> Image.Image:
    """An RGB PIL image of a screenshot, an array or a PIL image. Four-byte framebuffer
    pixels are unpacked by Pillow from their buffer ("RGBX"/"BGRX", 0.3 ms for 540x1200)
    rather than copied by numpy into a contiguous three-channel array first (3 ms): a frame
    is encoded two or three times (the planner, the trajectory, the report)."""
    if isinstance(image, Image.Image):
        return image if image.mode == "RGB" else image.convert("RGB")
    pixels = pixels_of(image)
    source = four_byte_source(pixels)
    if source is not None:
        buffer, order = source
        return Image.frombytes("RGB", (pixels.shape[1], pixels.shape[0]), buffer.data, "raw", order)
    return Image.fromarray(np.ascontiguousarray(pixels), mode="RGB")


def encode_image(
    image: Picture, long_side: int, quality: int, size: tuple[int, int] | None = None
) -> EncodedImage:
    """A JPEG data URL whose longer side is at most ``long_side`` (never upscaled), or
    exactly ``size`` (width, height) when given: a grounded dialect's image
    (``planner.geometry``), so that the server's processor has nothing left to resize."""
    pil = rgb_image(image)
    scale = long_side / max(pil.size)
    if size is not None:
        if pil.size != size:
            pil = pil.resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0)
    elif scale < 1:
        size = (max(1, round(pil.width * scale)), max(1, round(pil.height * scale)))
        pil = pil.resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0)
    out = io.BytesIO()
    pil.save(out, format="JPEG", quality=int(quality))
    raw = out.getvalue()
    url = "data:image/jpeg;base64," + base64.b64encode(raw).decode("ascii")
    return EncodedImage(data_url=url, width=pil.width, height=pil.height, nbytes=len(raw))
