"""Common widgets drawn on a `Canvas` in layout units: title bar, list rows, switches,
buttons, text fields, floating action buttons, scrolling lists.

Each takes the `AppContext` (`ctx`) when it needs phone state (focus, scroll, theme).

May import: the standard library, `simphone.ui.canvas`, `simphone.ui.icons`, `simphone.ui.theme`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from simphone.ui.canvas import Action, Canvas
from simphone.ui.icons import COLORS
from simphone.ui.theme import Color

if TYPE_CHECKING:
    from simphone.apps import AppContext

__all__ = ["TITLE_BAR_H", "ROW_H", "button", "fab", "list_row", "scroll_list", "switch", "text_field", "title_bar",
           "wrap"]

TITLE_BAR_H = 170
ROW_H = 180


def title_bar(c: Canvas, ctx: AppContext, title: str, back: bool = True,
              actions: list[tuple[str, str, Action]] | None = None, top: float | None = None) -> float:
    """A top app bar: optional back arrow, title, icon actions at the right (icon, description, action).
    Returns its bottom edge."""
    y0 = ctx.content[1] if top is None else top
    th = c.theme
    c.rect((0, y0, c.width, y0 + TITLE_BAR_H), fill=th.background)
    x = 48
    if back:
        box = (30, y0 + 45, 110, y0 + 125)
        c.icon("back", box, th.text, description="back arrow")
        c.on_tap((10, y0 + 20, 140, y0 + 150), ctx.back)
        x = 160
    c.text((x, y0 + TITLE_BAR_H / 2), title, size=60, bold=True, anchor="lm",
           max_width=c.width - x - 150 * len(actions or []) - 40)
    for i, (icon, description, action) in enumerate(reversed(actions or [])):
        right = c.width - 30 - i * 140
        box = (right - 90, y0 + 40, right, y0 + 130)
        c.icon(icon, box, th.text, description=description)
        c.on_tap((right - 120, y0 + 15, right + 20, y0 + 155), action)
    return y0 + TITLE_BAR_H


def switch(c: Canvas, box: tuple[float, float, float, float], on: bool, label: str) -> None:
    """A toggle switch, recorded as widget "<label> switch, on|off"."""
    th = c.theme
    left, top, right, bottom = box
    c.rect(box, fill=th.toggle_on if on else th.toggle_off, radius=(bottom - top) / 2)
    d = bottom - top - 12
    kx = right - 6 - d if on else left + 6
    c.ellipse((kx, top + 6, kx + d, top + 6 + d), fill=(255, 255, 255))
    c.widget(box, f"{label} switch, {'on' if on else 'off'}", text="on" if on else "off")


def list_row(c: Canvas, y: float, title: str, on_tap: Action | None = None, subtitle: str | None = None,
             icon: str | None = None, icon_color: Color | None = None, toggle: bool | None = None,
             chevron: bool = False, height: float = ROW_H) -> float:
    """One row of a list at `y`; returns the next row's `y`."""
    th = c.theme
    x = 50
    if icon is not None:
        c.icon(icon, (50, y + height / 2 - 45, 140, y + height / 2 + 45), icon_color or th.primary)
        x = 190
    right = c.width - 50 - (170 if toggle is not None else 0)
    if subtitle:
        c.text((x, y + height / 2 - 8), title, size=48, anchor="ls", max_width=right - x)
        c.text((x, y + height / 2 + 14), subtitle, size=36, color=th.text_secondary, anchor="lt", max_width=right - x)
    else:
        c.text((x, y + height / 2), title, size=48, anchor="lm", max_width=right - x)
    if toggle is not None:
        switch(c, (c.width - 190, y + height / 2 - 36, c.width - 60, y + height / 2 + 36), toggle, title)
    elif chevron:
        c.line([(c.width - 90, y + height / 2 - 22), (c.width - 68, y + height / 2), (c.width - 90, y + height / 2 + 22)],
               fill=th.text_secondary, width=5)
    c.line([(x, y + height - 1), (c.width, y + height - 1)], fill=th.divider, width=2)
    if on_tap is not None:
        c.on_tap((0, y, c.width, y + height), on_tap)
    return y + height


def button(c: Canvas, box: tuple[float, float, float, float], label: str, on_tap: Action, filled: bool = True) -> None:
    th = c.theme
    if filled:
        c.rect(box, fill=th.primary, radius=(box[3] - box[1]) / 2)
        color = (255, 255, 255) if th.name == "light" else (20, 20, 24)
    else:
        c.rect(box, outline=th.primary, radius=(box[3] - box[1]) / 2, width=3)
        color = th.primary
    c.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), label, size=44, bold=True, color=color, anchor="mm")
    c.widget(box, f"{label} button", text=label)
    c.on_tap(box, on_tap)


def fab(c: Canvas, ctx: AppContext, icon: str, color_name: str, description: str, on_tap: Action) -> None:
    """A floating action button (a coloured circle with a white glyph) at the bottom right."""
    bottom = ctx.content[3]
    box = (c.width - 250, bottom - 250, c.width - 70, bottom - 70)
    c.icon(icon, box, (255, 255, 255), description=description, background=COLORS[color_name], circle=True)
    c.on_tap(box, on_tap)


def text_field(c: Canvas, ctx: AppContext, box: tuple[float, float, float, float], field: str, placeholder: str,
               size: float = 48, multiline: bool = False, bold: bool = False, border: bool = True) -> None:
    """An editable text field bound to `ctx.view["fields"][field]`; a tap gives it focus
    (which shows the keyboard)."""
    th = c.theme
    value = ctx.field(field)
    focused = ctx.focused == field
    if border:
        c.rect(box, fill=th.field_bg, radius=24, outline=th.primary if focused else None, width=4)
    pad = 30
    left, top, right, bottom = box
    c.widget(box, f"{placeholder} text field{', focused' if focused else ''}", text=value)
    width = right - left - 2 * pad
    line_h = size * 1.35
    if multiline:
        lines = [w for paragraph in value.split("\n") for w in wrap(c, paragraph, size, width, bold)]
        fit = max(1, int((bottom - top - pad) // line_h))
        if focused and len(lines) > fit:
            lines = lines[-fit:]  # scrolled to the cursor, as an EditText keeps it in view
    else:
        lines = [value.replace("\n", " ")]
        if focused and c.text_size(lines[0], size, bold)[0] > width:
            lines = [_tail(c, lines[0], size, width, bold)]  # scrolled to the cursor: the end shows, the start cut
    y = top + pad
    last_box = (left + pad, y, left + pad, y + size)
    if not value:
        c.text((left + pad, y), placeholder, size=size, color=th.text_secondary, bold=bold)
    else:
        for line in lines:
            if y + line_h > bottom:
                break
            if line:
                last_box = c.text((left + pad, y), line, size=size, bold=bold, max_width=width)
            else:
                last_box = (left + pad, y, left + pad, y + size)
            y += line_h
    if focused:
        x = last_box[2] + 4 if value else left + pad
        cy = last_box[1] if value else top + pad
        c.rect((x, cy, x + 4, cy + size * 1.1), fill=th.primary)
    c.on_tap(box, lambda: ctx.focus(field))


def _tail(c: Canvas, text: str, size: float, width: float, bold: bool) -> str:
    """The end of `text` that fits in `width`: a single-line EditText scrolls its text
    horizontally to keep the cursor in view, the start cut off at the field's edge, with no
    ellipsis (AOSP TextView draws one only for ``android:ellipsize``, which an editable
    field does not use); whole characters are cut here where the phone clips a glyph."""
    low, high = 0, len(text)  # the shortest cut whose rest fits
    while low < high:
        mid = (low + high) // 2
        if c.text_size(text[mid:], size, bold)[0] > width:
            low = mid + 1
        else:
            high = mid
    return text[low:]


def wrap(c: Canvas, text: str, size: float, width: float, bold: bool = False) -> list[str]:
    """`text` broken into lines no wider than `width` (at spaces; a word too long for a line,
    or text without spaces such as CJK, is broken between characters)."""
    lines: list[str] = []
    line = ""
    for ch in text:
        candidate = line + ch
        if line and c.text_size(candidate, size, bold)[0] > width:
            cut = line.rfind(" ")
            if ch != " " and cut > 0:
                lines.append(line[:cut])
                line = line[cut + 1:] + ch
            else:
                lines.append(line)
                line = "" if ch == " " else ch
        else:
            line = candidate
    lines.append(line)
    return lines


def scroll_list(c: Canvas, ctx: AppContext, top: float, content_height: float,
                draw: Callable[[float], None], key: str = "scroll") -> None:
    """A vertically scrolling area from `top` to the bottom of the content area:
    `draw(y0)` draws the content with its top at `y0` (already shifted by the scroll offset
    kept in `ctx.view[key]`); swipes inside the area move it, clamped to the content."""
    bottom = ctx.content[3]
    viewport = bottom - top
    max_scroll = max(0.0, content_height - viewport)
    offset = min(max(0.0, float(ctx.view.get(key, 0))), max_scroll)  # clamped here, never written back
    with c.clip((0, top, c.width, bottom)):
        draw(top - offset)

        def scroll(dx: float, dy: float) -> bool:
            new = min(max(0.0, offset - dy), max_scroll)
            if new == offset:
                return False
            ctx.view[key] = new
            return True

        c.on_scroll((0, top, c.width, bottom), scroll)
