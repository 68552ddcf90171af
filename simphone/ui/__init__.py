"""The simulated phone's rendering framework (Pillow).

- `theme`: light and dark palettes (`Theme`, `theme_for`).
- `fonts`: font discovery with CJK support and graceful fallback (`font`).
- `icons`: coloured shapes with recognizable glyphs (`draw_icon`, `ICONS`, `COLOR_NAMES`).
- `canvas`: `Canvas`, the drawing surface that records ground truth (every visible text,
  icon and widget with its box in screen pixels), tap targets and scroll areas.
- `widgets`: title bars, list rows, toggles, buttons, text fields, floating buttons.
- `chrome`: the system UI drawn over apps: status bar, navigation bar, keyboard.

Apps draw in *layout units*: a 1080-unit-wide coordinate space; the canvas scales to
the screen's real width, so layouts work at any resolution.

May import: the standard library and Pillow.
"""
