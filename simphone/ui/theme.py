"""Light and dark palettes of the simulated phone's UI.

May import: the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DARK", "LIGHT", "Color", "Theme", "theme_for"]

Color = tuple[int, int, int]


@dataclass(frozen=True)
class Theme:
    name: str
    background: Color
    surface: Color
    text: Color
    text_secondary: Color
    primary: Color
    divider: Color
    status_bg: Color
    status_fg: Color
    nav_bg: Color
    nav_fg: Color
    toggle_on: Color
    toggle_off: Color
    keyboard_bg: Color
    key_bg: Color
    key_fg: Color
    field_bg: Color


LIGHT = Theme(
    name="light",
    background=(250, 250, 250),
    surface=(255, 255, 255),
    text=(28, 28, 30),
    text_secondary=(110, 110, 118),
    primary=(26, 115, 232),
    divider=(224, 224, 228),
    status_bg=(250, 250, 250),
    status_fg=(28, 28, 30),
    nav_bg=(240, 240, 242),
    nav_fg=(60, 60, 64),
    toggle_on=(26, 115, 232),
    toggle_off=(170, 170, 176),
    keyboard_bg=(222, 225, 230),
    key_bg=(255, 255, 255),
    key_fg=(28, 28, 30),
    field_bg=(238, 240, 244),
)

DARK = Theme(
    name="dark",
    background=(18, 18, 20),
    surface=(32, 33, 36),
    text=(232, 234, 237),
    text_secondary=(154, 160, 166),
    primary=(138, 180, 248),
    divider=(60, 64, 67),
    status_bg=(18, 18, 20),
    status_fg=(232, 234, 237),
    nav_bg=(10, 10, 12),
    nav_fg=(200, 200, 204),
    toggle_on=(138, 180, 248),
    toggle_off=(95, 99, 104),
    keyboard_bg=(40, 42, 46),
    key_bg=(70, 72, 78),
    key_fg=(232, 234, 237),
    field_bg=(48, 50, 54),
)


def theme_for(dark: bool) -> Theme:
    return DARK if dark else LIGHT
