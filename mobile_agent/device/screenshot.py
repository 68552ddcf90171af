"""``Screenshot`` (frozen, screen pixels) and the decoders of ``screencap`` output.

May import: numpy, Pillow, the standard library and ``mobile_agent.errors``.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from mobile_agent.errors import ScreenshotError

__all__ = ["Screenshot", "decode_framebuffer", "decode_png"]

# android PixelFormat: RGBA_8888=1, RGBX_8888=2, RGB_888=3, RGB_565=4, BGRA_8888=5
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_FORMAT_NAMES = {1: "RGBA_8888", 2: "RGBX_8888", 3: "RGB_888", 4: "RGB_565", 5: "BGRA_8888"}


@dataclass(frozen=True)
class Screenshot:
    """One captured frame.

    ``pixels``: RGB uint8, shape (height, width, 3), in **screen pixels** (the device's
    current orientation), read-only; it may be a view into the raw RGBA buffer.
    ``captured_at``: ``time.time()`` when the capture finished.
    """

    pixels: np.ndarray = field(repr=False)
    captured_at: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        px = self.pixels
        if not isinstance(px, np.ndarray) or px.dtype != np.uint8 or px.ndim != 3 or px.shape[2] != 3:
            raise ScreenshotError(f"screenshot pixels must be RGB uint8 HxWx3, got {getattr(px, 'shape', type(px))}")
        if px.shape[0] == 0 or px.shape[1] == 0:
            raise ScreenshotError("empty screenshot")
        if px.flags.writeable:
            px = px.view()
            px.flags.writeable = False
            object.__setattr__(self, "pixels", px)

    @property
    def width(self) -> int:
        return int(self.pixels.shape[1])

    @property
    def height(self) -> int:
        return int(self.pixels.shape[0])

    def to_pil(self) -> Image.Image:
        return Image.fromarray(np.ascontiguousarray(self.pixels), mode="RGB")

    def to_png(self) -> bytes:
        out = io.BytesIO()
        self.to_pil().save(out, format="PNG", compress_level=1)
        return out.getvalue()

    def to_jpeg(self, long_side: int | None = None, quality: int = 80) -> bytes:
        """JPEG bytes, downscaled so that the longer side is at most ``long_side``."""
        image = self.to_pil()
        if long_side is not None:
            if long_side < 1:
                raise ValueError(f"long_side must be positive, got {long_side}")
            scale = long_side / max(image.size)
            if scale < 1:
                size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
                image = image.resize(size, Image.Resampling.BILINEAR)
        out = io.BytesIO()
        image.save(out, format="JPEG", quality=int(quality))
        return out.getvalue()

    def thumbnail(self, step: int = 8) -> np.ndarray:
        """Every ``step``-th pixel as int16 grey (cheap frame comparison)."""
        px = self.pixels[::step, ::step]
        grey: np.ndarray = (px[..., 0].astype(np.int16) + px[..., 1] + px[..., 2]) // 3
        return grey


def decode_framebuffer(width: int, height: int, fmt: int, data: np.ndarray, serial: str | None = None) -> np.ndarray:
    """RGB HxWx3 pixels from raw ``screencap`` bytes (a view when the format allows)."""
    name = _FORMAT_NAMES.get(fmt)
    if name is None:
        raise ScreenshotError(f"unsupported framebuffer format {fmt}", serial=serial, format=fmt)
    if width <= 0 or height <= 0:
        raise ScreenshotError(f"framebuffer of size {width}x{height}", serial=serial)
    bpp = {4: 2, 3: 3}.get(fmt, 4)
    expected = width * height * bpp
    if data.size != expected:
        raise ScreenshotError(
            f"truncated framebuffer: got {data.size} bytes, expected {expected} ({width}x{height} {name})",
            serial=serial,
            received=int(data.size),
            expected=expected,
        )
    if bpp == 4:
        rgba = data.reshape(height, width, 4)
        return rgba[:, :, 2::-1] if fmt == 5 else rgba[:, :, :3]
    if bpp == 3:
        return data.reshape(height, width, 3)
    v = data.view("<u2").reshape(height, width).astype(np.uint16)
    rgb = np.empty((height, width, 3), np.uint8)
    rgb[..., 0] = ((v >> 11) & 0x1F) * 255 // 31
    rgb[..., 1] = ((v >> 5) & 0x3F) * 255 // 63
    rgb[..., 2] = (v & 0x1F) * 255 // 31
    return rgb


def decode_png(data: bytes, serial: str | None = None) -> np.ndarray:
    """RGB pixels of a ``screencap -p`` PNG; raises instead of returning a black frame."""
    start = data.find(_PNG_SIGNATURE, 0, 4096)  # multi-display phones print a warning first
    if start > 0:
        data = data[start:]
    if start < 0:
        raise ScreenshotError(
            f"screencap -p returned no PNG ({len(data)} bytes: {data[:60]!r})", serial=serial, received=len(data)
        )
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            rgb = np.asarray(image.convert("RGB"))
    except (OSError, ValueError, SyntaxError) as exc:
        raise ScreenshotError(f"undecodable screencap PNG ({len(data)} bytes): {exc}", serial=serial) from exc
    return rgb
