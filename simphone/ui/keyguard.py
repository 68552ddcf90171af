"""The lock screen (keyguard) of a phone whose profile has one: the clock, the date and
"Swipe up to unlock". It registers no tap target: only a swipe up (handled by the
screen) or `input keyevent 82` dismisses it, as on a phone with a swipe lock. With a PIN
set, those open the PIN entry ("Enter PIN", a dot per digit typed), which takes digits
and Enter (`simphone.navigation`).

May import: the standard library, `simphone.ui` modules. Uses the phone passed in.
"""

from __future__ import annotations

from typing import Any

from simphone.ui.canvas import Canvas

__all__ = ["draw_lock_screen"]


def draw_lock_screen(phone: Any, c: Canvas) -> None:
    th = c.theme
    c.rect((0, 0, c.width, c.height), fill=(16, 24, 40))
    mid = c.width / 2
    top = c.height * 0.22
    c.text((mid, top), phone.clock.strftime("%H:%M"), size=180, color=(240, 240, 245), anchor="mm", bold=True)
    c.text((mid, top + 150), phone.clock.strftime("%A, %B %-d"), size=44, color=(200, 205, 215), anchor="mm")
    c.icon("lock", (mid - 30, c.height - 260, mid + 30, c.height - 200), th.text_secondary, description="lock icon")
    entry = phone.bouncer_entry
    if entry is None:
        c.text((mid, c.height - 140), "Swipe up to unlock", size=40, color=(200, 205, 215), anchor="mm")
        return
    c.text((mid, c.height * 0.5), "Enter PIN", size=52, color=(240, 240, 245), anchor="mm")
    dots = "\u25cf " * len(entry)
    c.text((mid, c.height * 0.5 + 110), dots.strip() or " ", size=44, color=(240, 240, 245), anchor="mm")
