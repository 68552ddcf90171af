"""Bitwarden Password Manager (com.x8bit.bitwarden): a screen that cannot be captured.

Bitwarden's Android app keeps "Allow screen capture" off by default, so its window sets
``WindowManager.LayoutParams.FLAG_SECURE``: "treat the content of the window as secure,
preventing it from appearing in screenshots or from being viewed on non-secure displays"
(the flag's AOSP javadoc, frameworks/base core/java/android/view/WindowManager.java).
SurfaceFlinger blacks such a layer out of every capture: AOSP frameworks/native
``libs/gui/aidl/android/gui/SecureLayerMode.aidl`` (``Redact``: "blacking out the
layer", the default of ``screencap``; seen at omnirom/android_frameworks_native@28ecf16),
while the status and navigation bars, drawn by SystemUI in layers of their own, stay.
The accessibility tree still holds the window (``uiautomator dump`` reads it).

Here: ``secure_window = True`` makes `simphone.screen` capture the content area black in
``screencap`` (raw and PNG) and ``screenshot()``; ground truth and ``uiautomator dump``
show it as drawn.

Not preinstalled: ``Phone.install("com.x8bit.bitwarden")`` puts it on the launcher.

Views: {"view": "main"} the vault's items; {"view": "item", "item": name} one login, with
"Copy password" (copies it to the clipboard state: ``data["copied"]``).

Data: {"items": [{"name", "username"}], "copied": name | None}.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

from typing import Any

from simphone.apps import App, AppContext, register
from simphone.ui.canvas import Canvas
from simphone.ui.widgets import TITLE_BAR_H, button, list_row, title_bar

_ITEMS = (("Bank of Springfield", "homer@example.com"), ("Netflix", "marge@example.com"),
          ("Power plant intranet", "hsimpson"))  # fmt: skip


@register
class Vault(App):
    package = "com.x8bit.bitwarden"
    label = "Bitwarden"
    activity = "com.x8bit.bitwarden.MainActivity"
    icon = "lock"
    color = "blue"
    preinstalled = False
    secure_window = True  # FLAG_SECURE: captures black (module docstring)

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"items": [{"name": n, "username": u} for n, u in _ITEMS], "copied": None}

    def render(self, ctx: AppContext, c: Canvas) -> None:
        if ctx.view["view"] == "item":
            self._item(ctx, c)
            return
        y = ctx.content[1] + TITLE_BAR_H
        for item in ctx.data["items"]:
            y = list_row(c, y, item["name"], subtitle=item["username"], icon="lock",
                         on_tap=lambda name=item["name"]: ctx.push({"view": "item", "item": name}))  # fmt: skip
        title_bar(c, ctx, "My vault", back=False)

    def _item(self, ctx: AppContext, c: Canvas) -> None:
        name = ctx.view["item"]
        (item,) = [i for i in ctx.data["items"] if i["name"] == name]
        y = ctx.content[1] + TITLE_BAR_H + 40
        c.text((60, y), "Username", size=36, color=c.theme.text_secondary, anchor="lt")
        c.text((60, y + 50), item["username"], size=48, anchor="lt")
        c.text((60, y + 160), "Password", size=36, color=c.theme.text_secondary, anchor="lt")
        c.text((60, y + 210), "••••••••••", size=48, anchor="lt")
        button(c, (60, y + 340, 620, y + 460), "Copy password", lambda: ctx.data.update(copied=name))
        title_bar(c, ctx, name)
