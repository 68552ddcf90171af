"""Annotated screenshots: where the agent tapped, swiped, and what perception found.

Draws on a copy of the screenshot (screen pixels): candidate boxes numbered as the
planner saw them (orange), the chosen / found box (green), the tap point (a red ring
with a cross), a swipe (a blue arrow).

May import: Pillow, ``mobile_agent.agent.records``.
"""

from __future__ import annotations

import math

from PIL import Image, ImageDraw, ImageFont

from mobile_agent.agent.records import LocationSummary

__all__ = ["annotate"]

_RED = (230, 30, 40)
_GREEN = (20, 190, 70)
_ORANGE = (255, 150, 0)
_BLUE = (30, 110, 255)


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no sized default font
        return ImageFont.load_default()


def annotate(
    image: Image.Image,
    *,
    tap_point: tuple[int, int] | None = None,
    swipe: tuple[int, int, int, int] | None = None,
    location: LocationSummary | None = None,
    chosen_candidate: int | None = None,
) -> Image.Image:
    """A copy of ``image`` with the step's marks drawn on it."""
    out = image.convert("RGB").copy()
    draw = ImageDraw.Draw(out)
    unit = max(2, round(min(out.size) / 180))  # line width that reads at any resolution
    font = _font(unit * 9)

    if location is not None:
        for cand in location.candidates:
            colour = _GREEN if cand.get("index") == chosen_candidate else _ORANGE
            box = cand["box"]
            draw.rectangle(box, outline=colour, width=unit)
            label = str(cand.get("index", "?"))
            # the number sits left of the box when there is room, so it hides none of the target
            lx = box[0] - unit * 9 if box[0] >= unit * 9 else box[0]
            draw.rectangle([lx, box[1], lx + unit * 8, box[1] + unit * 10], fill=colour)
            draw.text((lx + unit, box[1]), label, fill=(255, 255, 255), font=font)
        if location.box is not None:
            draw.rectangle(location.box, outline=_GREEN, width=unit)

    if swipe is not None:
        x1, y1, x2, y2 = swipe
        draw.line([(x1, y1), (x2, y2)], fill=_BLUE, width=unit * 2)
        angle = math.atan2(y2 - y1, x2 - x1)
        head = unit * 12
        for side in (-0.5, 0.5):
            hx = x2 - head * math.cos(angle + side)
            hy = y2 - head * math.sin(angle + side)
            draw.line([(x2, y2), (hx, hy)], fill=_BLUE, width=unit * 2)
        r = unit * 3
        draw.ellipse([x1 - r, y1 - r, x1 + r, y1 + r], fill=_BLUE)

    if tap_point is not None:
        x, y = tap_point
        r = unit * 10
        draw.ellipse([x - r, y - r, x + r, y + r], outline=_RED, width=unit)
        draw.line([(x - r * 1.5, y), (x + r * 1.5, y)], fill=_RED, width=max(1, unit // 2))
        draw.line([(x, y - r * 1.5), (x, y + r * 1.5)], fill=_RED, width=max(1, unit // 2))
        draw.ellipse([x - unit, y - unit, x + unit, y + unit], fill=_RED)
    return out
