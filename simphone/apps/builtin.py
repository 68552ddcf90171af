"""The built-in app catalogue: every preinstalled package, as a placeholder screen until a
real app registers the same package.

Placeholders are registered first, then every module of the `simphone.apps` package is
imported (each registers its app over the placeholder); `load_builtin_apps()` does this once.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

import importlib
import pkgutil

from simphone.apps import APPS, App, AppContext, register
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import TITLE_BAR_H, title_bar

__all__ = ["CATALOGUE", "LAUNCHER", "PlaceholderApp", "load_builtin_apps"]

LAUNCHER = "com.android.launcher3"

# package, label, activity, icon glyph, tile colour, preinstalled
CATALOGUE: list[tuple[str, str, str, str, str, bool]] = [
    ("com.android.settings", "Settings", ".Settings", "gear", "gray", True),
    ("com.google.android.keep", "Notes", ".activities.BrowseActivity", "pencil", "orange", True),
    ("com.android.chrome", "Chrome", "com.google.android.apps.chrome.Main", "globe", "blue", True),
    ("com.google.android.gm", "Gmail", ".ConversationListActivityGmail", "mail", "red", True),
    ("com.google.android.apps.maps", "Google Maps", "com.google.android.maps.MapsActivity", "pin", "green", True),
    ("com.android.vending", "Play Store", ".AssetBrowserActivity", "play", "teal", True),
    ("com.google.android.youtube", "YouTube", ".HomeActivity", "play", "red", True),
    ("com.zhiliaoapp.musically", "TikTok", "com.ss.android.ugc.aweme.splash.SplashActivity", "music", "black", True),
    ("com.amazon.mp3", "Amazon Music", ".client.activity.LauncherActivity", "music", "teal", True),
    ("com.alibaba.intl.android.apps.poseidon", "Alibaba.com",
     "com.alibaba.intl.android.apps.poseidon.app.activity.ActivityMainMaterial", "cart", "orange", True),
    ("com.google.android.calendar", "Calendar", "com.android.calendar.AllInOneActivity", "calendar", "blue", True),
    ("com.weather.Weather", "Weather", ".app.SplashScreenActivity", "sun", "yellow", True),
    ("com.google.android.deskclock", "Clock", "com.android.deskclock.DeskClock", "clock", "blue", True),
    ("com.android.camera2", "Camera", "com.android.camera.CameraLauncher", "camera", "gray", True),
    ("com.google.android.dialer", "Phone", ".extensions.GoogleDialtactsActivity", "phone", "green", True),
    ("com.google.android.apps.messaging", "Messages", ".ui.ConversationListActivity", "message", "blue", True),
    ("com.google.android.apps.photos", "Photos", ".home.HomeActivity", "photo", "pink", True),
    ("com.google.android.contacts", "Contacts", "com.android.contacts.activities.PeopleActivity", "person", "blue",
     True),
    ("com.google.android.calculator", "Calculator", "com.android.calculator2.Calculator", "calculator", "purple",
     True),
    ("com.google.android.apps.nbu.files", "Files", ".home.HomeActivity", "folder", "blue", True),
]


class PlaceholderApp(App):
    """A screen with the app's name and icon: the stand-in until the real app is written."""

    def render(self, ctx: AppContext, c: Canvas) -> None:
        title_bar(c, ctx, self.label, back=False)
        top = ctx.content[1] + TITLE_BAR_H
        mid = (top + ctx.content[3]) / 2
        c.icon(self.icon, (390, mid - 250, 690, mid + 50), (255, 255, 255), background=COLORS[self.color])
        c.text((540, mid + 120), self.label, size=64, bold=True, anchor="mt")
        c.text((540, mid + 220), "Nothing here yet", size=40, color=c.theme.text_secondary, anchor="mt")


def _placeholder(package: str, label: str, activity: str, icon: str, color: str, preinstalled: bool) -> type[App]:
    attrs = {"package": package, "label": label, "activity": activity, "icon": icon, "color": color,
             "preinstalled": preinstalled}
    return type(f"Placeholder_{label.replace(' ', '').replace('.', '')}", (PlaceholderApp,), attrs)


_loaded = False
REAL_APPS = ["launcher", "settings", "notes", "calendar", "weather"]


def load_builtin_apps() -> None:
    """Register placeholders for the catalogue, then import every module of `simphone.apps`
    (each registers its app(s) over the placeholders) - once. A new app is one new module."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for entry in CATALOGUE:
        if entry[0] not in APPS:
            register(_placeholder(*entry))
    package = importlib.import_module("simphone.apps")
    others = sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.name not in REAL_APPS + ["builtin"])
    for name in REAL_APPS + others:
        importlib.import_module(f"simphone.apps.{name}")
