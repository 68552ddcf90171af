'''Apps of the simulated phone, and how to write one.

An app is a subclass of `App` registered with `@register`:

    from simphone.apps import App, AppContext, register
    from simphone.ui.canvas import Canvas
    from simphone.ui.widgets import title_bar, list_row, scroll_list, TITLE_BAR_H

    @register
    class Music(App):
        package = "com.amazon.mp3"
        label = "Amazon Music"
        activity = ".client.activity.LauncherActivity"
        icon = "music"            # a glyph of simphone.ui.icons
        color = "teal"            # a colour of simphone.ui.icons.COLORS (launcher tile)

        def initial_data(self, seed: int) -> dict:
            return {"playing": None, "liked": []}          # JSON-able; state()["apps"][package]

        def render(self, ctx: AppContext, c: Canvas) -> None:
            if ctx.view["view"] == "main":
                top = ctx.content[1] + TITLE_BAR_H
                songs = ctx.data["songs"]
                def rows(y):
                    for song in songs:
                        y = list_row(c, y, song, on_tap=lambda s=song: ctx.push({"view": "song", "song": s}))
                scroll_list(c, ctx, top, len(songs) * 180, rows)   # content first ...
                title_bar(c, ctx, "Amazon Music", back=False)     # ... bars that cover it after

Rules:
- State lives in two JSON-able places only: `ctx.data` (the app's data, kept across
  launches, reset with the phone) and `ctx.view` (the current screen of the app's back
  stack: a dict with at least "view"; may hold "scroll", "fields" and anything else).
  Never keep state on the App instance: one instance serves every phone.
- `render` draws the whole content area `ctx.content` (layout units: 1080 wide) and
  registers tap targets (`c.on_tap`) and scroll areas (`scroll_list`, `c.on_scroll`);
  closures given to them change `ctx.data` / `ctx.view` or navigate (`ctx.push`,
  `ctx.back`, `ctx.launch`). The phone re-renders whenever state changed.
- Text fields (`simphone.ui.widgets.text_field`) keep their text in
  `ctx.view["fields"][name]`; `on_enter(ctx, field)` handles ENTER (default: nothing, or
  a newline for multiline fields you list in `multiline_fields`).
- `on_back(ctx) -> bool`: return True when the app handled BACK itself (e.g. saving a
  note); otherwise the phone pops the view, and from the app's first view goes home.
- `on_intent(ctx, action, data, extras) -> dict | None`: the first view for
  `am start -a ACTION -d DATA` (return None to refuse); `schemes` lists the URI schemes the
  app opens (`("http", "https")` for a browser).
- `view_activity(view) -> str`: the activity name shown by `dumpsys window` for a view
  (default: `activity`); `activity_view(activity) -> dict | None`: the view `am start -n`
  opens for an activity name (default: the main view for `activity`, None otherwise).
- `secure_window = True`: the app's window is FLAG_SECURE; `screencap` and `screenshot()`
  show its content area black, as AOSP's SurfaceFlinger redacts it (`simphone.apps.vault`).
- `preinstalled = False` apps are not installed until `Phone.install(package)` (the
  Play Store's job); they then appear on the launcher.
- Where: one module per app in this package (`simphone/apps/music.py`); `Phone()` imports
  every module here (`simphone.apps.builtin.load_builtin_apps`), so a new module is all it
  takes. Replacing a placeholder: register a class with the same `package` (the catalogue
  of `simphone.apps.builtin` lists the preinstalled packages, labels, icons).

May import: the standard library, `simphone.ui`. Never `simphone.phone` at import time.
'''

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from simphone.ui.canvas import Canvas
from simphone.ui.theme import Theme

if TYPE_CHECKING:
    from simphone.phone import PhoneModel as Phone

__all__ = ["APPS", "App", "AppContext", "register"]


class App:
    package: ClassVar[str] = ""
    label: ClassVar[str] = ""
    activity: ClassVar[str] = ".MainActivity"
    icon: ClassVar[str] = "grid"
    color: ClassVar[str] = "blue"
    preinstalled: ClassVar[bool] = True
    on_launcher: ClassVar[bool] = True
    # the window sets FLAG_SECURE: captures show its content area black (simphone.apps.vault)
    secure_window: ClassVar[bool] = False
    schemes: ClassVar[tuple[str, ...]] = ()
    multiline_fields: ClassVar[tuple[str, ...]] = ()

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {}

    def main_view(self) -> dict[str, Any]:
        return {"view": "main"}

    def render(self, ctx: AppContext, c: Canvas) -> None:
        raise NotImplementedError

    def on_back(self, ctx: AppContext) -> bool:
        return False

    def on_enter(self, ctx: AppContext, field: str) -> None:
        if field in self.multiline_fields:
            ctx.set_field(field, ctx.field(field) + "\n")

    def on_intent(self, ctx: AppContext, action: str, data: str | None, extras: dict[str, str]) -> dict[str, Any] | None:
        view = self.main_view()
        if data:
            view["data"] = data
        return view

    def view_activity(self, view: dict[str, Any]) -> str:
        return self.activity

    def activity_view(self, activity: str) -> dict[str, Any] | None:
        """The first view for `am start -n package/activity` (short `.Main` or full name);
        None when the app has no such activity. Default: the main activity only."""
        full = self.package + self.activity if self.activity.startswith(".") else self.activity
        return self.main_view() if activity in (self.activity, full) else None


APPS: dict[str, App] = {}


def register(cls: type[App]) -> type[App]:
    if not cls.package or not cls.label:
        raise TypeError(f"{cls.__name__}: an app needs a package and a label")
    APPS[cls.package] = cls()
    return cls


class AppContext:
    """What an app sees of the phone while rendering or handling input."""

    def __init__(self, phone: Phone, package: str, content: tuple[float, float, float, float], theme: Theme) -> None:
        self.phone = phone
        self.package = package
        self.content = content  # layout units: left, top, right, bottom
        self.theme = theme

    # -- state ------------------------------------------------------------------------
    @property
    def data(self) -> dict[str, Any]:
        return self.phone.app_data(self.package)

    @property
    def view(self) -> dict[str, Any]:
        return self.phone.task(self.package)[-1]

    @property
    def clock(self) -> datetime:
        return self.phone.clock

    @property
    def seed(self) -> int:
        return self.phone.seed

    def setting(self, namespace: str, key: str, default: str | None = None) -> str | None:
        return self.phone.settings_get(namespace, key, default)

    def put_setting(self, namespace: str, key: str, value: str) -> None:
        self.phone.settings_put(namespace, key, value)

    # -- navigation -------------------------------------------------------------------
    def push(self, view: dict[str, Any]) -> None:
        self.phone.push_view(self.package, view)

    def replace(self, view: dict[str, Any]) -> None:
        self.phone.pop_view(self.package)
        self.phone.push_view(self.package, view)

    def back(self) -> None:
        self.phone.press_back()

    def finish(self) -> None:
        """Leave the current view without asking the app (after it saved what it needed)."""
        self.phone.pop_view(self.package)

    def launch(self, package: str) -> None:
        self.phone.launch(package)

    # -- text input -------------------------------------------------------------------
    @property
    def focused(self) -> str | None:
        return self.phone.focused_field()

    def focus(self, field: str | None) -> None:
        self.phone.set_focus(field)

    def field(self, name: str) -> str:
        return str(self.view.get("fields", {}).get(name, ""))

    def set_field(self, name: str, value: str) -> None:
        self.view.setdefault("fields", {})[name] = value
