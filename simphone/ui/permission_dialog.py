"""The system's permission dialog (PermissionController's GrantPermissionsActivity), drawn
over the dimmed app while ``simphone.permissions`` says a request shows: the request
and three buttons, "While using the app" and "Only this time" (granted), "Don’t allow"
(AOSP PermissionController res/values/strings.xml: `grant_dialog_button_allow_foreground`,
`grant_dialog_button_allow_one_time`, `grant_dialog_button_deny`). Modal: the app's
elements and taps are gone under it, a tap outside it does nothing.

May import: the standard library, Pillow, `simphone.ui` modules, `simphone.permissions`.
Uses the `Phone` passed in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PIL import Image

from simphone import permissions
from simphone.ui.canvas import Canvas
from simphone.ui.widgets import button, wrap

if TYPE_CHECKING:
    from simphone.phone import PhoneModel as Phone

__all__ = ["draw_dialog"]

_CHOICES = (("While using the app", True), ("Only this time", True), ("Don’t allow", False))


def draw_dialog(phone: Phone, c: Canvas) -> None:
    asked = phone.permission_request
    if asked is None:
        return
    c.elements.clear()
    c.targets.clear()
    c.scroll_areas.clear()
    c.image.paste(Image.blend(c.image, Image.new("RGB", c.image.size, (0, 0, 0)), 0.55))
    c.on_tap((0, 0, c.width, c.height), lambda: None)
    th = c.theme
    top = c.height / 2 - 410
    c.rect((60, top, c.width - 60, top + 820), fill=th.surface, radius=48)
    c.icon("pin", (c.width / 2 - 40, top + 50, c.width / 2 + 40, top + 130), th.primary, description="location")
    message = permissions.REQUESTS[asked["group"]].format(label=phone.apps[asked["package"]].label)
    for i, line in enumerate(wrap(c, message, 46, c.width - 220)[:2]):  # one TextView, wrapped
        c.text((c.width / 2, top + 200 + i * 62), line, size=46, color=th.text, anchor="mm")
    for i, (text, allow) in enumerate(_CHOICES):
        y = top + 340 + i * 150
        button(c, (120, y, c.width - 120, y + 120), text, lambda allow=allow: phone.answer_permission(allow),
               filled=False)
