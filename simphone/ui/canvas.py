"""`Canvas`: the drawing surface of one frame, recording what it draws.

Apps draw in layout units (the screen is 1080 units wide; `canvas.height` units high);
the canvas converts to screen pixels. Everything drawn with `text`, `icon` and `widget`
is recorded as a ground-truth element {kind, text, description, box, clickable} with its
box in screen pixels, clipped to the current clip rectangle (elements wholly outside it
are not visible and not recorded). `on_tap` regions and `on_scroll` areas are recorded
the same way; the phone hit-tests them (the last registered wins, so later layers such
as the status bar and the keyboard sit on top).

`pane(box_px, scale)` draws into a region of the screen with its own units (a large
screen's two panes, drawn at the phone's density rather than stretched to its width):
inside it (0, 0) is the region's top-left corner.

May import: the standard library, Pillow, `simphone.ui.fonts`, `simphone.ui.icons`,
`simphone.ui.theme`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw

from simphone.ui.fonts import font
from simphone.ui.icons import ICONS, color_name, draw_icon
from simphone.ui.theme import Color, Theme

__all__ = ["LAYOUT_WIDTH", "Canvas", "ScrollArea", "TapTarget"]

LAYOUT_WIDTH = 1080
Box = tuple[float, float, float, float]
Action = Callable[[], None]


@dataclass
class TapTarget:
    box: tuple[int, int, int, int]  # screen pixels
    on_tap: Action
    on_long_press: Action | None = None


@dataclass
class ScrollArea:
    box: tuple[int, int, int, int]  # screen pixels
    on_scroll: Callable[[float, float], bool]  # (dx, dy) in layout units -> moved?


class Canvas:
    def __init__(self, width_px: int, height_px: int, theme: Theme) -> None:
        self.width_px = width_px
        self.height_px = height_px
        self.scale = width_px / LAYOUT_WIDTH
        self.width = LAYOUT_WIDTH
        self.height = height_px / self.scale
        self.theme = theme
        self.image = Image.new("RGB", (width_px, height_px), theme.background)
        self.draw = ImageDraw.Draw(self.image)
        self.elements: list[dict[str, Any]] = []
        self.targets: list[TapTarget] = []
        self.scroll_areas: list[ScrollArea] = []
        self._clips: list[tuple[int, int, int, int]] = [(0, 0, width_px, height_px)]
        self._origin = (0, 0)  # screen pixels of the layout's (0, 0): a pane's corner
        self._root_scale = self.scale

    # -- coordinates ----------------------------------------------------------------
    def px(self, box: Box) -> tuple[int, int, int, int]:
        s, (ox, oy) = self.scale, self._origin
        return (round(ox + box[0] * s), round(oy + box[1] * s), round(ox + box[2] * s), round(oy + box[3] * s))

    @contextmanager
    def pane(self, box_px: tuple[int, int, int, int], scale: float):
        """Draw inside `box_px` (screen pixels) at `scale` pixels per unit: `width` and
        `height` are the pane's, (0, 0) its top-left corner; records are clipped to it and
        scrolls inside it are given in its units."""
        saved = (self.scale, self.width, self.height, self._origin)
        self.scale, self._origin = scale, (box_px[0], box_px[1])
        self.width, self.height = (box_px[2] - box_px[0]) / scale, (box_px[3] - box_px[1]) / scale
        self._clips.append(tuple(self._clipped(box_px) or [0, 0, 0, 0]))  # type: ignore[arg-type]
        try:
            yield
        finally:
            self._clips.pop()
            self.scale, self.width, self.height, self._origin = saved

    def _clipped(self, box_px: tuple[int, int, int, int]) -> list[int] | None:
        cl, ct, cr, cb = self._clips[-1]
        left, top, right, bottom = max(box_px[0], cl), max(box_px[1], ct), min(box_px[2], cr), min(box_px[3], cb)
        if right - left < 2 or bottom - top < 2:
            return None
        return [left, top, right, bottom]

    @contextmanager
    def clip(self, box: Box):
        """Record only what lies inside `box` (layout units); drawing outside it still
        happens, so draw clipped content first and the layers that cover it after."""
        inner = self._clipped(self.px(box)) or [0, 0, 0, 0]
        self._clips.append(tuple(inner))  # type: ignore[arg-type]
        try:
            yield
        finally:
            self._clips.pop()

    def visible(self, box: Box) -> bool:
        return self._clipped(self.px(box)) is not None

    # -- drawing ----------------------------------------------------------------------
    def rect(self, box: Box, fill: Color | None = None, radius: float = 0, outline: Color | None = None,
             width: float = 2) -> None:
        b = self.px(box)
        w = max(1, round(width * self.scale))
        if radius:
            self.draw.rounded_rectangle(b, radius=round(radius * self.scale), fill=fill, outline=outline, width=w)
        else:
            self.draw.rectangle(b, fill=fill, outline=outline, width=w)

    def ellipse(self, box: Box, fill: Color | None = None, outline: Color | None = None, width: float = 2) -> None:
        self.draw.ellipse(self.px(box), fill=fill, outline=outline, width=max(1, round(width * self.scale)))

    def line(self, points: list[tuple[float, float]], fill: Color, width: float = 2) -> None:
        s, (ox, oy) = self.scale, self._origin
        self.draw.line([(ox + x * s, oy + y * s) for x, y in points], fill=fill, width=max(1, round(width * s)))

    def text_size(self, text: str, size: float, bold: bool = False) -> tuple[float, float]:
        f = font(max(1, round(size * self.scale)), bold, text)
        left, top, right, bottom = self.draw.textbbox((0, 0), text, font=f)
        return (right / self.scale, bottom / self.scale)

    def text(self, xy: tuple[float, float], text: str, size: float = 44, color: Color | None = None,
             bold: bool = False, anchor: str = "la", max_width: float | None = None, record: bool = True) -> Box:
        """Draw one line of text at `xy` (Pillow anchor); returns its box in layout units.
        Text wider than `max_width` is cut with an ellipsis, as Android's TextView does."""
        if max_width is not None and self.text_size(text, size, bold)[0] > max_width:
            while text and self.text_size(text + "…", size, bold)[0] > max_width:
                text = text[:-1]
            text = text + "…"
        f = font(max(1, round(size * self.scale)), bold, text)
        s, (ox, oy) = self.scale, self._origin
        pos = (ox + xy[0] * s, oy + xy[1] * s)
        self.draw.text(pos, text, font=f, fill=color or self.theme.text, anchor=anchor)
        left, top, right, bottom = self.draw.textbbox(pos, text, font=f, anchor=anchor)
        box = ((left - ox) / s, (top - oy) / s, (right - ox) / s, (bottom - oy) / s)
        if record and text.strip():
            self.record("text", box, text=text)
        return box

    def icon(self, name: str, box: Box, color: Color, description: str | None = None,
             background: Color | None = None, circle: bool = False) -> None:
        """Draw glyph `name` in `box`, optionally on a rounded or circular background;
        recorded as e.g. "red heart" (colour of the glyph, or of the background when there is one)."""
        if background is not None:
            if circle:
                self.ellipse(box, fill=background)
            else:
                self.rect(box, fill=background, radius=(box[2] - box[0]) * 0.22)
            pad = (box[2] - box[0]) * 0.22
            inner = (box[0] + pad, box[1] + pad, box[2] - pad, box[3] - pad)
        else:
            inner = box
        draw_icon(self.draw, name, self.px(inner), color)
        if description is None:
            shown = background if background is not None else color
            description = f"{color_name(shown)} {ICONS[name]}"
        self.record("icon", box, description=description)

    # -- records ----------------------------------------------------------------------
    def record(self, kind: str, box: Box, text: str = "", description: str = "") -> None:
        clipped = self._clipped(self.px(box))
        if clipped is None:
            return
        self.elements.append({"kind": kind, "text": text, "description": description, "box": clipped,
                              "clickable": False})

    def widget(self, box: Box, description: str, text: str = "") -> None:
        self.record("widget", box, text=text, description=description)

    def on_tap(self, box: Box, action: Action, on_long_press: Action | None = None) -> None:
        clipped = self._clipped(self.px(box))
        if clipped is not None:
            self.targets.append(TapTarget(tuple(clipped), action, on_long_press))  # type: ignore[arg-type]

    def on_scroll(self, box: Box, handler: Callable[[float, float], bool]) -> None:
        clipped = self._clipped(self.px(box))
        if clipped is None:
            return
        factor = self._root_scale / self.scale  # the screen gives the finger's move in the root's units
        scaled = handler if factor == 1 else (lambda dx, dy: handler(dx * factor, dy * factor))
        self.scroll_areas.append(ScrollArea(tuple(clipped), scaled))  # type: ignore[arg-type]

    # -- hit testing ------------------------------------------------------------------
    def target_at(self, x: float, y: float) -> TapTarget | None:
        for t in reversed(self.targets):
            if t.box[0] <= x < t.box[2] and t.box[1] <= y < t.box[3]:
                return t
        return None

    def scroll_area_at(self, x: float, y: float) -> ScrollArea | None:
        for a in reversed(self.scroll_areas):
            if a.box[0] <= x < a.box[2] and a.box[1] <= y < a.box[3]:
                return a
        return None

    def finish(self) -> list[dict[str, Any]]:
        """Mark the clickable elements (centre under a tap target) and return the ground truth."""
        for el in self.elements:
            left, top, right, bottom = el["box"]
            el["clickable"] = self.target_at((left + right) / 2, (top + bottom) / 2) is not None
        return self.elements
