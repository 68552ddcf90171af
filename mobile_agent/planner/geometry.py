"""The image a model sees and the mapping of its coordinates back to the screen, in one place.

Every dialect answers points in its own space:

- ``screen``: screen pixels (nothing to map);
- ``image``: pixels of the image that was sent (the paper's downscaled JPEG, or the size
  a Qwen-style processor resizes it to with ``smart_resize``: the model sees and answers
  in that size even when we send the full screenshot);
- ``grid``: a 0..N grid over the screen (UI-TARS 1.0 and Qwen3-VL: 0–1000, answered as
  0–999; AutoGLM-Phone: 0–999, divided by 1000 in its own handler);
- ``normalized``: 0–1 fractions of the screen.

``Viewport`` holds one frame's sizes and converts both ways; a test proves the round trip
for every space and screen shape.

Sources: ``smart_resize`` follows the rule published with Qwen2.5-VL's processor and
repeated in bytedance/UI-TARS ``codes/ui_tars/action_parser.py`` (IMAGE_FACTOR 28,
MIN_PIXELS 100*28*28, MAX_PIXELS 16384*28*28, MAX_RATIO 200); Qwen3-VL's processor uses a
patch of 16 merged 2x2, so factor 32. Written here from the rule, not copied.

May import: the standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CoordinateSpace",
    "ImageRule",
    "Viewport",
    "image_shrunk_by_server",
    "smart_resize",
    "viewport_for",
]

MAX_ASPECT_RATIO = 200
QWEN25_FACTOR = 28
QWEN3_FACTOR = 32


def smart_resize(
    height: int,
    width: int,
    *,
    factor: int = QWEN25_FACTOR,
    min_pixels: int = 4 * 28 * 28,
    max_pixels: int = 16384 * 28 * 28,
) -> tuple[int, int]:
    """(height, width) a Qwen-VL-style processor resizes an image to: both sides multiples
    of ``factor``, the area within [min_pixels, max_pixels], the aspect ratio kept as
    closely as those allow."""
    if height < 1 or width < 1:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    if factor < 1 or min_pixels < 1 or max_pixels < min_pixels:
        raise ValueError(
            f"bad resize rule: factor={factor}, min_pixels={min_pixels}, max_pixels={max_pixels}"
        )
    if max(height, width) / min(height, width) > MAX_ASPECT_RATIO:
        raise ValueError(f"aspect ratio above {MAX_ASPECT_RATIO}: {width}x{height}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


SpaceKind = Literal["screen", "image", "grid", "normalized"]


@dataclass(frozen=True)
class CoordinateSpace:
    """How a dialect writes a point. ``grid`` is the divisor of a grid space (1000 for
    0–999/0–1000 grids); ``largest`` the largest value the prompt names (999 or 1000)."""

    kind: SpaceKind
    grid: int = 1000
    largest: int = 999

    def describe(self) -> str:
        if self.kind == "grid":
            return f"0-{self.largest} grid"
        if self.kind == "normalized":
            return "0-1 fractions"
        return f"{self.kind} pixels"


SCREEN = CoordinateSpace("screen")
IMAGE = CoordinateSpace("image")
GRID_1000 = CoordinateSpace("grid", 1000, 999)
NORMALIZED = CoordinateSpace("normalized")


@dataclass(frozen=True)
class ImageRule:
    """How the screenshot is sized for the model.

    ``long_side``: downscale so the longer side is at most this (never upscale); the
    image is sent at that size. ``factor``/``min_pixels``/``max_pixels``: the model's own
    processor resizes with ``smart_resize``; the image is sent at that size too, so the
    server's processor has nothing left to change (when its ``max_pixels`` is at least
    ours: see ``docs/local-serving.md``).
    """

    long_side: int | None = 1280
    factor: int | None = None
    min_pixels: int = 4 * 28 * 28
    max_pixels: int = 16384 * 28 * 28

    def size_for(self, width: int, height: int) -> tuple[int, int]:
        """(width, height) of the image the model sees for a screen of width x height."""
        if self.factor is not None:
            h, w = smart_resize(
                height, width, factor=self.factor, min_pixels=self.min_pixels, max_pixels=self.max_pixels
            )
            return w, h
        if self.long_side is None:
            return width, height
        scale = min(1.0, self.long_side / max(width, height))
        return max(1, round(width * scale)), max(1, round(height * scale))

    def describe(self) -> str:
        if self.factor is not None:
            return f"smart_resize(factor={self.factor}, min_pixels={self.min_pixels}, max_pixels={self.max_pixels})"
        return f"long side <= {self.long_side}" if self.long_side else "full size"


@dataclass(frozen=True)
class Viewport:
    """One frame: the screen size, the size of the image the model sees, and the
    dialect's coordinate space. Converts points both ways."""

    screen_width: int
    screen_height: int
    image_width: int
    image_height: int
    space: CoordinateSpace = IMAGE

    def _extent(self) -> tuple[float, float]:
        kind = self.space.kind
        if kind == "screen":
            return float(self.screen_width), float(self.screen_height)
        if kind == "image":
            return float(self.image_width), float(self.image_height)
        if kind == "grid":
            return float(self.space.grid), float(self.space.grid)
        return 1.0, 1.0

    def to_screen(self, x: float, y: float) -> tuple[int, int]:
        """A model point to screen pixels, clamped onto the screen."""
        if not (math.isfinite(x) and math.isfinite(y)):
            raise ValueError(f"not a point: ({x}, {y})")
        ex, ey = self._extent()
        sx = x / ex * self.screen_width
        sy = y / ey * self.screen_height
        return (
            int(min(self.screen_width - 1, max(0, math.floor(sx)))),
            int(min(self.screen_height - 1, max(0, math.floor(sy)))),
        )

    def from_screen(self, x: float, y: float) -> tuple[float, float]:
        """Screen pixels to the model's space (for prompts, tests and the scripted model):
        the centre of the screen pixel, so ``to_screen`` gives the pixel back."""
        ex, ey = self._extent()
        return (x + 0.5) / self.screen_width * ex, (y + 0.5) / self.screen_height * ey

    def model_point(self, x: float, y: float) -> tuple[float, float]:
        """``from_screen`` written as the model writes it: integers, except 0–1 fractions
        (4 decimals)."""
        mx, my = self.from_screen(x, y)
        if self.space.kind == "normalized":
            return round(mx, 4), round(my, 4)
        return float(math.floor(mx)), float(math.floor(my))


def image_shrunk_by_server(prompt_tokens: int, viewport: Viewport, rule: ImageRule) -> str | None:
    """A warning when the server's answer shows it saw a smaller image than we sent.

    A Qwen-style model spends one prompt token per ``factor`` x ``factor`` patch of the
    image it sees. A server whose processor has a lower ``max_pixels`` (vLLM
    ``--mm-processor-kwargs``, SGLang, Ollama's own limits) shrinks our image and the model
    answers in *its* pixels: every tap lands off. Fewer prompt tokens than the image alone
    needs is that case. None when all is well or it cannot be told.
    """
    if rule.factor is None or prompt_tokens <= 0:
        return None
    expected = (viewport.image_width // rule.factor) * (viewport.image_height // rule.factor)
    if prompt_tokens >= 0.9 * expected:
        return None
    return (
        f"the planner server counted {prompt_tokens} prompt tokens for an image of "
        f"{viewport.image_width}x{viewport.image_height}, which alone takes about {expected}: it resized the image "
        f"(its max_pixels is below {viewport.image_width * viewport.image_height}), so the model's coordinates "
        "are off. Raise the server's max_pixels (see docs/local-serving.md) or lower planner.image_max_pixels to match."
    )


def viewport_for(screen_width: int, screen_height: int, rule: ImageRule, space: CoordinateSpace) -> Viewport:
    width, height = rule.size_for(screen_width, screen_height)
    return Viewport(screen_width, screen_height, width, height, space)
