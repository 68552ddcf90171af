"""Icons as coloured shapes with recognizable glyphs, drawn with Pillow primitives.

`draw_icon(draw, name, box, color)` draws the glyph `name` inside `box` (screen pixels);
`ICONS[name]` is what it shows in words ("heart", "gear", "magnifier" ...), and
`color_name(rgb)` the nearest everyday colour word, so a ground-truth description like
"red heart" or "blue gear" names something actually on the screen.

May import: the standard library and Pillow.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PIL import ImageDraw

__all__ = ["COLORS", "ICONS", "color_name", "draw_icon"]

Color = tuple[int, int, int]
Box = tuple[float, float, float, float]

COLORS: dict[str, Color] = {
    "red": (229, 57, 53),
    "orange": (251, 140, 0),
    "yellow": (253, 216, 53),
    "green": (67, 160, 71),
    "teal": (0, 137, 123),
    "blue": (30, 136, 229),
    "purple": (142, 36, 170),
    "pink": (236, 64, 122),
    "brown": (121, 85, 72),
    "gray": (117, 117, 117),
    "black": (33, 33, 33),
    "white": (250, 250, 250),
}


def color_name(rgb: Color) -> str:
    """The nearest colour word of COLORS (by RGB distance)."""
    return min(COLORS, key=lambda n: sum((a - b) ** 2 for a, b in zip(COLORS[n], rgb, strict=True)))


Glyph = Callable[[ImageDraw.ImageDraw, Callable[[float, float], tuple[float, float]], float, Color], None]
_GLYPHS: dict[str, Glyph] = {}
ICONS: dict[str, str] = {}


def _glyph(name: str, description: str) -> Callable[[Glyph], Glyph]:
    def register(fn: Glyph) -> Glyph:
        _GLYPHS[name] = fn
        ICONS[name] = description
        return fn

    return register


def draw_icon(draw: ImageDraw.ImageDraw, name: str, box: Box, color: Color) -> None:
    """Draw glyph `name` in `box`; a name without a glyph draws its first letter in a ring."""
    left, top, right, bottom = box
    size = min(right - left, bottom - top)
    ox = left + (right - left - size) / 2
    oy = top + (bottom - top - size) / 2

    def p(x: float, y: float) -> tuple[float, float]:  # unit square -> pixels
        return (ox + x * size, oy + y * size)

    glyph = _GLYPHS.get(name)
    if glyph is None:
        raise KeyError(f"unknown icon {name!r}; known: {', '.join(sorted(_GLYPHS))}")
    glyph(draw, p, size, color)


def _contrast(c: Color) -> Color:
    """A colour that shows on `c` (for holes cut into a glyph)."""
    return (70, 70, 70) if sum(c) > 450 else (255, 255, 255)


def _w(size: float, f: float = 0.09) -> int:
    return max(1, round(size * f))


@_glyph("heart", "heart")
def _heart(d, p, s, c):
    d.ellipse([p(0.08, 0.15), p(0.52, 0.59)], fill=c)
    d.ellipse([p(0.48, 0.15), p(0.92, 0.59)], fill=c)
    d.polygon([p(0.11, 0.46), p(0.89, 0.46), p(0.5, 0.9)], fill=c)


@_glyph("gear", "gear")
def _gear(d, p, s, c):
    for i in range(8):
        a = i * math.pi / 4
        pts = []
        for da, r in ((-0.2, 0.3), (-0.14, 0.46), (0.14, 0.46), (0.2, 0.3)):
            pts.append(p(0.5 + r * math.cos(a + da), 0.5 + r * math.sin(a + da)))
        d.polygon(pts, fill=c)
    d.ellipse([p(0.18, 0.18), p(0.82, 0.82)], fill=c)
    d.ellipse([p(0.36, 0.36), p(0.64, 0.64)], fill=_contrast(c))


@_glyph("magnifier", "magnifier")
def _magnifier(d, p, s, c):
    d.ellipse([p(0.12, 0.12), p(0.62, 0.62)], outline=c, width=_w(s, 0.1))
    d.line([p(0.56, 0.56), p(0.88, 0.88)], fill=c, width=_w(s, 0.13))


@_glyph("plus", "plus")
def _plus(d, p, s, c):
    d.rectangle([p(0.44, 0.15), p(0.56, 0.85)], fill=c)
    d.rectangle([p(0.15, 0.44), p(0.85, 0.56)], fill=c)


@_glyph("paper_plane", "paper plane")
def _plane(d, p, s, c):
    d.polygon([p(0.08, 0.45), p(0.92, 0.1), p(0.6, 0.92), p(0.45, 0.58)], fill=c)
    d.line([p(0.45, 0.58), p(0.92, 0.1)], fill=(255, 255, 255), width=_w(s, 0.04))


@_glyph("thumbs_up", "thumbs up")
def _thumb(d, p, s, c):
    d.rectangle([p(0.1, 0.45), p(0.26, 0.9)], fill=c)
    d.polygon([p(0.32, 0.45), p(0.5, 0.1), p(0.6, 0.14), p(0.56, 0.4), p(0.9, 0.42), p(0.84, 0.9), p(0.32, 0.9)],
              fill=c)


@_glyph("check", "check mark")
def _check(d, p, s, c):
    d.line([p(0.15, 0.52), p(0.4, 0.77), p(0.87, 0.25)], fill=c, width=_w(s, 0.12), joint="curve")


@_glyph("back", "back arrow")
def _back(d, p, s, c):
    d.line([p(0.2, 0.5), p(0.85, 0.5)], fill=c, width=_w(s, 0.1))
    d.line([p(0.48, 0.2), p(0.18, 0.5), p(0.48, 0.8)], fill=c, width=_w(s, 0.1), joint="curve")


@_glyph("close", "cross")
def _close(d, p, s, c):
    d.line([p(0.2, 0.2), p(0.8, 0.8)], fill=c, width=_w(s, 0.1))
    d.line([p(0.8, 0.2), p(0.2, 0.8)], fill=c, width=_w(s, 0.1))


@_glyph("trash", "trash can")
def _trash(d, p, s, c):
    d.rectangle([p(0.22, 0.3), p(0.78, 0.88)], outline=c, width=_w(s))
    d.rectangle([p(0.14, 0.2), p(0.86, 0.28)], fill=c)
    d.rectangle([p(0.4, 0.1), p(0.6, 0.2)], fill=c)


@_glyph("star", "star")
def _star(d, p, s, c):
    pts = []
    for i in range(10):
        r = 0.45 if i % 2 == 0 else 0.19
        a = -math.pi / 2 + i * math.pi / 5
        pts.append(p(0.5 + r * math.cos(a), 0.52 + r * math.sin(a)))
    d.polygon(pts, fill=c)


@_glyph("nav_back", "back triangle")
def _nav_back(d, p, s, c):
    d.polygon([p(0.25, 0.5), p(0.75, 0.18), p(0.75, 0.82)], outline=c, width=_w(s, 0.08))


@_glyph("nav_home", "home circle")
def _nav_home(d, p, s, c):
    d.ellipse([p(0.2, 0.2), p(0.8, 0.8)], outline=c, width=_w(s, 0.08))


@_glyph("nav_recents", "recents square")
def _nav_recents(d, p, s, c):
    d.rectangle([p(0.22, 0.22), p(0.78, 0.78)], outline=c, width=_w(s, 0.08))


@_glyph("home", "house")
def _home(d, p, s, c):
    d.polygon([p(0.5, 0.1), p(0.92, 0.48), p(0.08, 0.48)], fill=c)
    d.rectangle([p(0.2, 0.46), p(0.8, 0.9)], fill=c)


@_glyph("bell", "bell")
def _bell(d, p, s, c):
    d.pieslice([p(0.2, 0.15), p(0.8, 0.95)], 180, 360, fill=c)
    d.rectangle([p(0.2, 0.54), p(0.8, 0.74)], fill=c)
    d.rectangle([p(0.12, 0.72), p(0.88, 0.78)], fill=c)
    d.ellipse([p(0.42, 0.8), p(0.58, 0.94)], fill=c)


@_glyph("wifi", "wifi")
def _wifi(d, p, s, c):
    for r, w in ((0.45, 0.08), (0.31, 0.08), (0.17, 0.08)):
        d.arc([p(0.5 - r, 0.85 - r), p(0.5 + r, 0.85 + r)], 225, 315, fill=c, width=_w(s, w))
    d.ellipse([p(0.43, 0.76), p(0.57, 0.9)], fill=c)


@_glyph("bluetooth", "bluetooth")
def _bt(d, p, s, c):
    d.line([p(0.28, 0.3), p(0.7, 0.68), p(0.5, 0.86), p(0.5, 0.14), p(0.7, 0.32), p(0.28, 0.7)],
           fill=c, width=_w(s, 0.08))


@_glyph("airplane", "airplane")
def _airplane(d, p, s, c):
    d.rectangle([p(0.45, 0.08), p(0.55, 0.88)], fill=c)
    d.polygon([p(0.5, 0.35), p(0.92, 0.58), p(0.92, 0.66), p(0.5, 0.52), p(0.08, 0.66), p(0.08, 0.58)], fill=c)
    d.polygon([p(0.5, 0.76), p(0.68, 0.88), p(0.68, 0.93), p(0.5, 0.86), p(0.32, 0.93), p(0.32, 0.88)], fill=c)


@_glyph("signal", "signal bars")
def _signal(d, p, s, c):
    d.polygon([p(0.1, 0.9), p(0.9, 0.9), p(0.9, 0.1)], fill=c)


@_glyph("battery", "battery")
def _battery(d, p, s, c):
    d.rectangle([p(0.3, 0.16), p(0.7, 0.92)], outline=c, width=_w(s, 0.07))
    d.rectangle([p(0.42, 0.08), p(0.58, 0.16)], fill=c)


@_glyph("moon", "moon")
def _moon(d, p, s, c):
    outer = [p(0.5 + 0.4 * math.cos(math.radians(a)), 0.5 + 0.4 * math.sin(math.radians(a))) for a in range(60, 301, 10)]
    inner = [p(0.68 + 0.3 * math.cos(math.radians(a)), 0.42 + 0.3 * math.sin(math.radians(a)))
             for a in range(250, 89, -10)]
    d.polygon(outer + inner, fill=c)


@_glyph("sun", "sun")
def _sun(d, p, s, c):
    d.ellipse([p(0.28, 0.28), p(0.72, 0.72)], fill=c)
    for i in range(8):
        a = i * math.pi / 4
        d.line([p(0.5 + 0.3 * math.cos(a), 0.5 + 0.3 * math.sin(a)), p(0.5 + 0.46 * math.cos(a), 0.5 + 0.46 * math.sin(a))],
               fill=c, width=_w(s, 0.07))


@_glyph("cloud", "cloud")
def _cloud(d, p, s, c):
    d.ellipse([p(0.1, 0.42), p(0.45, 0.8)], fill=c)
    d.ellipse([p(0.28, 0.22), p(0.72, 0.7)], fill=c)
    d.ellipse([p(0.55, 0.4), p(0.9, 0.8)], fill=c)
    d.rectangle([p(0.28, 0.6), p(0.72, 0.8)], fill=c)


@_glyph("rain", "rain cloud")
def _rain(d, p, s, c):
    _cloud(d, lambda x, y: p(x, y * 0.75 - 0.05), s, c)
    for x in (0.3, 0.5, 0.7):
        d.line([p(x, 0.7), p(x - 0.06, 0.92)], fill=c, width=_w(s, 0.06))


@_glyph("pencil", "pencil")
def _pencil(d, p, s, c):
    d.polygon([p(0.7, 0.1), p(0.9, 0.3), p(0.35, 0.85), p(0.15, 0.65)], fill=c)
    d.polygon([p(0.15, 0.65), p(0.35, 0.85), p(0.08, 0.92)], fill=c)


@_glyph("menu", "three lines menu")
def _menu(d, p, s, c):
    for y in (0.25, 0.5, 0.75):
        d.rectangle([p(0.15, y - 0.05), p(0.85, y + 0.05)], fill=c)


@_glyph("more", "three dots")
def _more(d, p, s, c):
    for y in (0.2, 0.5, 0.8):
        d.ellipse([p(0.41, y - 0.09), p(0.59, y + 0.09)], fill=c)


@_glyph("share", "share")
def _share(d, p, s, c):
    d.line([p(0.25, 0.5), p(0.75, 0.2)], fill=c, width=_w(s, 0.06))
    d.line([p(0.25, 0.5), p(0.75, 0.8)], fill=c, width=_w(s, 0.06))
    for x, y in ((0.25, 0.5), (0.75, 0.2), (0.75, 0.8)):
        d.ellipse([p(x - 0.12, y - 0.12), p(x + 0.12, y + 0.12)], fill=c)


@_glyph("play", "play triangle")
def _play(d, p, s, c):
    d.polygon([p(0.28, 0.15), p(0.85, 0.5), p(0.28, 0.85)], fill=c)


@_glyph("pause", "pause")
def _pause(d, p, s, c):
    d.rectangle([p(0.25, 0.15), p(0.42, 0.85)], fill=c)
    d.rectangle([p(0.58, 0.15), p(0.75, 0.85)], fill=c)


@_glyph("camera", "camera")
def _camera(d, p, s, c):
    d.rounded_rectangle([p(0.08, 0.28), p(0.92, 0.85)], radius=s * 0.08, fill=c)
    d.rectangle([p(0.32, 0.16), p(0.68, 0.3)], fill=c)
    d.ellipse([p(0.32, 0.38), p(0.68, 0.74)], fill=_contrast(c))
    d.ellipse([p(0.4, 0.46), p(0.6, 0.66)], fill=c)


@_glyph("phone", "telephone handset")
def _phone(d, p, s, c):
    d.line([p(0.25, 0.15), p(0.18, 0.35), p(0.35, 0.65), p(0.65, 0.82), p(0.85, 0.75)], fill=c, width=_w(s, 0.18),
           joint="curve")


@_glyph("message", "speech bubble")
def _message(d, p, s, c):
    d.rounded_rectangle([p(0.1, 0.15), p(0.9, 0.7)], radius=s * 0.12, fill=c)
    d.polygon([p(0.25, 0.65), p(0.45, 0.65), p(0.2, 0.9)], fill=c)


@_glyph("mail", "envelope")
def _mail(d, p, s, c):
    d.rectangle([p(0.1, 0.22), p(0.9, 0.78)], outline=c, width=_w(s, 0.08))
    d.line([p(0.1, 0.24), p(0.5, 0.55), p(0.9, 0.24)], fill=c, width=_w(s, 0.08))


@_glyph("pin", "map pin")
def _pin(d, p, s, c):
    d.ellipse([p(0.22, 0.08), p(0.78, 0.64)], fill=c)
    d.polygon([p(0.26, 0.46), p(0.74, 0.46), p(0.5, 0.94)], fill=c)
    d.ellipse([p(0.4, 0.26), p(0.6, 0.46)], fill=(255, 255, 255))


@_glyph("calendar", "calendar")
def _calendar(d, p, s, c):
    d.rectangle([p(0.12, 0.2), p(0.88, 0.88)], outline=c, width=_w(s, 0.07))
    d.rectangle([p(0.12, 0.2), p(0.88, 0.38)], fill=c)
    for x in (0.3, 0.5, 0.7):
        for y in (0.52, 0.72):
            d.rectangle([p(x - 0.05, y - 0.05), p(x + 0.05, y + 0.05)], fill=c)


@_glyph("clock", "clock")
def _clock(d, p, s, c):
    d.ellipse([p(0.1, 0.1), p(0.9, 0.9)], outline=c, width=_w(s, 0.08))
    d.line([p(0.5, 0.25), p(0.5, 0.5), p(0.7, 0.62)], fill=c, width=_w(s, 0.08))


@_glyph("person", "person")
def _person(d, p, s, c):
    d.ellipse([p(0.32, 0.1), p(0.68, 0.46)], fill=c)
    d.pieslice([p(0.14, 0.52), p(0.86, 1.2)], 180, 360, fill=c)


@_glyph("photo", "picture")
def _photo(d, p, s, c):
    d.rectangle([p(0.1, 0.18), p(0.9, 0.82)], outline=c, width=_w(s, 0.07))
    d.polygon([p(0.16, 0.76), p(0.4, 0.45), p(0.58, 0.66), p(0.7, 0.54), p(0.84, 0.76)], fill=c)
    d.ellipse([p(0.62, 0.28), p(0.76, 0.42)], fill=c)


@_glyph("calculator", "calculator")
def _calculator(d, p, s, c):
    d.rectangle([p(0.2, 0.1), p(0.8, 0.9)], outline=c, width=_w(s, 0.07))
    d.rectangle([p(0.3, 0.2), p(0.7, 0.35)], fill=c)
    for x in (0.35, 0.5, 0.65):
        for y in (0.5, 0.62, 0.76):
            d.rectangle([p(x - 0.04, y - 0.04), p(x + 0.04, y + 0.04)], fill=c)


@_glyph("globe", "globe")
def _globe(d, p, s, c):
    d.ellipse([p(0.1, 0.1), p(0.9, 0.9)], outline=c, width=_w(s, 0.07))
    d.ellipse([p(0.32, 0.1), p(0.68, 0.9)], outline=c, width=_w(s, 0.06))
    d.line([p(0.1, 0.5), p(0.9, 0.5)], fill=c, width=_w(s, 0.06))


@_glyph("music", "music note")
def _music(d, p, s, c):
    d.ellipse([p(0.15, 0.62), p(0.45, 0.88)], fill=c)
    d.rectangle([p(0.38, 0.15), p(0.46, 0.76)], fill=c)
    d.polygon([p(0.38, 0.12), p(0.82, 0.2), p(0.82, 0.36), p(0.46, 0.28)], fill=c)


@_glyph("cart", "shopping cart")
def _cart(d, p, s, c):
    d.line([p(0.05, 0.18), p(0.2, 0.18), p(0.3, 0.64), p(0.82, 0.64), p(0.9, 0.3), p(0.24, 0.3)], fill=c,
           width=_w(s, 0.07))
    d.ellipse([p(0.28, 0.72), p(0.42, 0.86)], fill=c)
    d.ellipse([p(0.68, 0.72), p(0.82, 0.86)], fill=c)


@_glyph("folder", "folder")
def _folder(d, p, s, c):
    d.polygon([p(0.08, 0.22), p(0.4, 0.22), p(0.48, 0.32), p(0.92, 0.32), p(0.92, 0.82), p(0.08, 0.82)], fill=c)


@_glyph("lock", "padlock")
def _lock(d, p, s, c):
    d.arc([p(0.3, 0.1), p(0.7, 0.6)], 180, 360, fill=c, width=_w(s, 0.08))
    d.rectangle([p(0.3, 0.33), p(0.34, 0.45)], fill=c)
    d.rectangle([p(0.66, 0.33), p(0.7, 0.45)], fill=c)
    d.rectangle([p(0.2, 0.45), p(0.8, 0.9)], fill=c)


@_glyph("info", "info circle")
def _info(d, p, s, c):
    d.ellipse([p(0.1, 0.1), p(0.9, 0.9)], outline=c, width=_w(s, 0.08))
    d.rectangle([p(0.45, 0.42), p(0.55, 0.74)], fill=c)
    d.ellipse([p(0.44, 0.24), p(0.56, 0.36)], fill=c)


@_glyph("display", "brightness")
def _display(d, p, s, c):
    _sun(d, p, s, c)


@_glyph("speaker", "speaker")
def _speaker(d, p, s, c):
    d.polygon([p(0.12, 0.38), p(0.3, 0.38), p(0.55, 0.15), p(0.55, 0.85), p(0.3, 0.62), p(0.12, 0.62)], fill=c)
    d.arc([p(0.45, 0.28), p(0.75, 0.72)], 300, 60, fill=c, width=_w(s, 0.07))


@_glyph("grid", "grid of squares")
def _grid(d, p, s, c):
    for x in (0.15, 0.55):
        for y in (0.15, 0.55):
            d.rectangle([p(x, y), p(x + 0.3, y + 0.3)], fill=c)


@_glyph("link", "two linked rings")
def _link(d, p, s, c):
    d.ellipse([p(0.08, 0.3), p(0.55, 0.7)], outline=c, width=_w(s, 0.08))
    d.ellipse([p(0.45, 0.3), p(0.92, 0.7)], outline=c, width=_w(s, 0.08))


@_glyph("shield", "shield")
def _shield(d, p, s, c):
    d.polygon([p(0.5, 0.08), p(0.86, 0.22), p(0.8, 0.62), p(0.5, 0.92), p(0.2, 0.62), p(0.14, 0.22)], fill=c)


@_glyph("palette", "palette")
def _palette(d, p, s, c):
    d.ellipse([p(0.1, 0.12), p(0.9, 0.88)], fill=c)
    for x, y in ((0.32, 0.35), (0.52, 0.26), (0.7, 0.4), (0.3, 0.58)):
        d.ellipse([p(x - 0.07, y - 0.07), p(x + 0.07, y + 0.07)], fill=(255, 255, 255))


@_glyph("mic", "microphone")
def _mic(d, p, s, c):
    d.rounded_rectangle([p(0.38, 0.08), p(0.62, 0.6)], radius=s * 0.12, fill=c)
    d.arc([p(0.24, 0.3), p(0.76, 0.72)], 0, 180, fill=c, width=_w(s, 0.06))
    d.line([p(0.5, 0.72), p(0.5, 0.9)], fill=c, width=_w(s, 0.06))


@_glyph("video", "video camera")
def _video(d, p, s, c):
    d.rounded_rectangle([p(0.08, 0.28), p(0.66, 0.72)], radius=s * 0.06, fill=c)
    d.polygon([p(0.68, 0.5), p(0.92, 0.3), p(0.92, 0.7)], fill=c)


@_glyph("download", "download arrow")
def _download(d, p, s, c):
    d.rectangle([p(0.44, 0.1), p(0.56, 0.55)], fill=c)
    d.polygon([p(0.25, 0.48), p(0.75, 0.48), p(0.5, 0.75)], fill=c)
    d.rectangle([p(0.15, 0.82), p(0.85, 0.9)], fill=c)


@_glyph("refresh", "circular arrow")
def _refresh(d, p, s, c):
    d.arc([p(0.15, 0.15), p(0.85, 0.85)], 30, 330, fill=c, width=_w(s, 0.08))
    d.polygon([p(0.72, 0.12), p(0.92, 0.36), p(0.66, 0.4)], fill=c)


@_glyph("location", "location arrow")
def _location(d, p, s, c):
    d.polygon([p(0.1, 0.45), p(0.9, 0.1), p(0.55, 0.9), p(0.48, 0.52)], fill=c)


@_glyph("cat", "cat face")
def _cat(d, p, s, c):
    d.polygon([p(0.14, 0.5), p(0.2, 0.08), p(0.45, 0.32)], fill=c)
    d.polygon([p(0.86, 0.5), p(0.8, 0.08), p(0.55, 0.32)], fill=c)
    d.ellipse([p(0.12, 0.25), p(0.88, 0.9)], fill=c)
    hole = _contrast(c)
    d.ellipse([p(0.3, 0.45), p(0.4, 0.57)], fill=hole)
    d.ellipse([p(0.6, 0.45), p(0.7, 0.57)], fill=hole)
    d.polygon([p(0.45, 0.66), p(0.55, 0.66), p(0.5, 0.72)], fill=hole)


@_glyph("dog", "dog face")
def _dog(d, p, s, c):
    d.ellipse([p(0.2, 0.15), p(0.8, 0.88)], fill=c)
    d.polygon([p(0.26, 0.2), p(0.06, 0.3), p(0.1, 0.72), p(0.28, 0.6)], fill=c)  # floppy ears
    d.polygon([p(0.74, 0.2), p(0.94, 0.3), p(0.9, 0.72), p(0.72, 0.6)], fill=c)
    hole = _contrast(c)
    d.ellipse([p(0.34, 0.4), p(0.44, 0.5)], fill=hole)
    d.ellipse([p(0.56, 0.4), p(0.66, 0.5)], fill=hole)
    d.ellipse([p(0.42, 0.6), p(0.58, 0.72)], fill=hole)


@_glyph("cap", "baseball cap")
def _cap(d, p, s, c):
    d.chord([p(0.1, 0.2), p(0.72, 0.9)], 180, 360, fill=c)
    d.polygon([p(0.5, 0.47), p(0.96, 0.53), p(0.96, 0.62), p(0.5, 0.6)], fill=c)
    d.ellipse([p(0.37, 0.15), p(0.45, 0.23)], fill=c)
    d.line([p(0.41, 0.22), p(0.41, 0.55)], fill=_contrast(c), width=_w(s, 0.03))
