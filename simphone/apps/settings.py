"""Settings (com.android.settings): the main list and its pages.

Views: {"view": "main"} (scrolling list, with the Airplane mode switch on it),
{"view": "search", "fields": {"query"}} (the magnifier: matching settings as you type),
{"view": "page", "page": KEY} for each row (Wi-Fi, Bluetooth, Display & brightness,
Notifications & status bar, About phone ... ). State lives in the phone's settings tables:
global airplane_mode_on / wifi_on / bluetooth_on, secure ui_night_mode (2 = dark),
system status_bar_network_speed (1 = the speed shows in the status bar).

Large screens, as AOSP's Settings lays them out (activity embedding, Android 12L+): a
window at least 720dp wide whose smallest width is at least 600dp shows the homepage and
the open page side by side, the homepage on `SPLIT_RATIO` of the width, its open entry
highlighted, the first entry's page on the right until another is chosen (a tablet). A
large screen narrower than that (a foldable's inner screen: 690dp) keeps one pane. Either
way a large screen draws at its density (a row is as many dp as on a phone), not stretched
to its width: more rows show, none bigger.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

from typing import Any

from simphone.apps import App, AppContext, register
from simphone.ui.canvas import Canvas
from simphone.ui.chrome import UNIT_DENSITY, is_large_screen
from simphone.ui.icons import COLORS
from simphone.ui.widgets import ROW_H, TITLE_BAR_H, list_row, scroll_list, text_field, title_bar

# key, title, icon, colour, subtitle
MAIN_ROWS: list[tuple[str, str, str, str, str]] = [
    ("wifi", "Wi-Fi", "wifi", "blue", ""),
    ("bluetooth", "Bluetooth", "bluetooth", "blue", ""),
    ("mobile", "Mobile network", "signal", "green", "SIM 1"),
    ("airplane", "Airplane mode", "airplane", "orange", ""),
    ("sharing", "Connection & sharing", "link", "teal", "Hotspot, VPN, Casting"),
    ("personalizations", "Personalizations", "palette", "purple", "Wallpapers, icons, fonts"),
    ("home_lock", "Home screen & Lock screen", "home", "pink", "Layout, lock screen style"),
    ("display", "Display & brightness", "sun", "yellow", "Dark mode, brightness"),
    ("sound", "Sound & vibration", "speaker", "green", "Volume, ringtone"),
    ("notifications", "Notifications & status bar", "bell", "red", "Status bar icons, network speed"),
    ("security", "Password & security", "lock", "blue", "Screen lock, fingerprint"),
    ("privacy", "Privacy", "shield", "teal", "Permissions, data"),
    ("location", "Location", "pin", "green", "On"),
    ("battery", "Battery", "battery", "green", ""),
    ("apps", "Apps", "grid", "blue", "Default apps, permissions"),
    ("storage", "Storage", "folder", "orange", "43% used"),
    ("accessibility", "Accessibility", "person", "purple", "Screen reader, display"),
    ("system", "System", "info", "gray", "Languages, time, backup"),
    ("about", "About phone", "info", "blue", ""),
]
TITLES = {key: title for key, title, *_ in MAIN_ROWS}
# what the search finds besides the main rows: (title, page it opens)
SEARCHABLE = [("Dark mode", "display"), ("Light mode", "display"), ("Brightness level", "display"),
              ("Real-time network speed", "notifications"), ("Show battery percentage", "notifications"),
              ("Battery Saver", "battery"), ("Android version", "about"), ("Device name", "about"),
              ("Pair new device", "bluetooth")]
PAGE_ACTIVITIES = {"wifi": ".wifi.WifiSettings", "bluetooth": ".bluetooth.BluetoothSettings",
                   "display": ".DisplaySettings"}


# AOSP packages/apps/Settings, src/com/android/settings/activityembedding/ActivityEmbeddingUtils.java:
# MIN_CURRENT_SCREEN_SPLIT_WIDTH_DP = 720, MIN_SMALLEST_SCREEN_SPLIT_WIDTH_DP = 600; the homepage's
# share of the width is R.dimen.config_activity_embed_split_ratio (0.3636 in AOSP's res/values/dimens.xml).
# Large screens: Android's sw600dp (developer.android.com/guide/topics/large-screens/activity-embedding).
SPLIT_MIN_WIDTH_DP = 720
SPLIT_MIN_SMALLEST_WIDTH_DP = 600
SPLIT_RATIO = 0.3636
FIRST_PAGE = MAIN_ROWS[0][0]  # what the right pane shows until an entry is chosen


def layout_of(phone: Any) -> str:
    """"phone", "large" (one pane at the screen's density) or "two_pane"."""
    if not is_large_screen(phone):  # smallest width under SPLIT_MIN_SMALLEST_WIDTH_DP (600dp)
        return "phone"
    return "two_pane" if phone.width * 160 / phone.density >= SPLIT_MIN_WIDTH_DP else "large"


class _Pane(AppContext):
    """The app's context inside one pane: the pane's own box and the view it shows (the
    homepage beside the page on top of it)."""

    def __init__(self, ctx: AppContext, content: tuple[float, float, float, float],
                 view: dict[str, Any] | None = None) -> None:
        super().__init__(ctx.phone, ctx.package, content, ctx.theme)
        self._shown = view

    @property
    def view(self) -> dict[str, Any]:
        return self._shown if self._shown is not None else super().view


# Settings that are on until someone turns them off (Android shows the battery percentage
# by default; the status bar draws it unless the setting is "0").
ON_BY_DEFAULT = {("system", "status_bar_show_battery_percent")}


def _on(ctx: AppContext, ns: str, key: str) -> bool:
    value = ctx.setting(ns, key)
    return value == "1" or (value is None and (ns, key) in ON_BY_DEFAULT)


def _flip(ctx: AppContext, ns: str, key: str) -> None:
    ctx.put_setting(ns, key, "0" if _on(ctx, ns, key) else "1")


@register
class Settings(App):
    package = "com.android.settings"
    label = "Settings"
    activity = ".Settings"
    icon = "gear"
    color = "gray"

    def view_activity(self, view: dict) -> str:
        if view.get("view") == "page":
            return PAGE_ACTIVITIES.get(view.get("page", ""), ".SubSettings")
        return self.activity

    def activity_view(self, activity: str) -> dict | None:
        short = activity.removeprefix(self.package)
        for page, name in PAGE_ACTIVITIES.items():
            if short == name:
                return {"view": "page", "page": page}
        if short == ".SubSettings":
            return None  # needs extras naming the fragment
        return super().activity_view(activity)

    def on_intent(self, ctx: AppContext, action: str, data: str | None, extras: dict[str, str]) -> dict | None:
        pages = {"android.settings.WIFI_SETTINGS": "wifi", "android.settings.BLUETOOTH_SETTINGS": "bluetooth",
                 "android.settings.DISPLAY_SETTINGS": "display", "android.settings.DEVICE_INFO_SETTINGS": "about",
                 "android.settings.AIRPLANE_MODE_SETTINGS": "main"}
        page = pages.get(action, "main")
        return {"view": "main"} if page == "main" else {"view": "page", "page": page}

    def render(self, ctx: AppContext, c: Canvas) -> None:
        layout = layout_of(ctx.phone)
        if layout == "phone" or ctx.view["view"] == "search":
            self._one_pane(ctx, c)
            return
        box = c.px(ctx.content)
        scale = ctx.phone.density / UNIT_DENSITY
        if layout == "large":
            with c.pane(box, scale):
                self._one_pane(_Pane(ctx, (0, 0, c.width, c.height)), c)
            return
        stack = ctx.phone.task(ctx.package)
        home, top = stack[0], stack[-1]
        on_page = top.get("view") == "page"
        page = top.get("page", FIRST_PAGE) if on_page else FIRST_PAGE
        split = box[0] + round((box[2] - box[0]) * SPLIT_RATIO)
        with c.pane((box[0], box[1], split, box[3]), scale):
            self._main(_Pane(ctx, (0, 0, c.width, c.height), view=home), c, selected=page)
        with c.pane((split, box[1], box[2], box[3]), scale):
            shown = _Pane(ctx, (0, 0, c.width, c.height), view=top if on_page else home)
            self._page(shown, c, page, back=False, key="scroll" if on_page else "first_page_scroll")
        c.line([(split / c.scale, ctx.content[1]), (split / c.scale, ctx.content[3])], c.theme.divider, width=2)

    def _one_pane(self, ctx: AppContext, c: Canvas) -> None:
        if ctx.view["view"] == "page":
            self._page(ctx, c, ctx.view.get("page", ""))
        elif ctx.view["view"] == "search":
            self._search(ctx, c)
        else:
            self._main(ctx, c)

    def _subtitle(self, ctx: AppContext, key: str, default: str) -> str:
        if key == "wifi":
            return "HomeNet-5G" if _on(ctx, "global", "wifi_on") else "Off"
        if key == "bluetooth":
            return "On" if _on(ctx, "global", "bluetooth_on") else "Off"
        if key == "battery":
            return f"{ctx.phone.battery['level']}%"
        if key == "about":
            return ctx.phone.model
        if key == "display":
            return "Dark mode" if ctx.phone.dark_mode else "Light mode"
        return default

    def _main(self, ctx: AppContext, c: Canvas, selected: str | None = None) -> None:
        """The homepage; `selected`: beside a page (two panes), the entry it shows is
        highlighted and an entry opens in place of the page."""
        top = ctx.content[1] + TITLE_BAR_H

        def open_page(key: str) -> None:
            if selected is not None and ctx.phone.task(ctx.package)[-1].get("view") == "page":
                ctx.replace({"view": "page", "page": key})
            else:
                ctx.push({"view": "page", "page": key})

        def draw(y: float) -> None:
            for key, title, icon, color, subtitle in MAIN_ROWS:
                if key == selected:
                    c.rect((16, y + 6, c.width - 16, y + ROW_H - 6), fill=c.theme.surface, radius=40)
                if key == "airplane":
                    y = list_row(c, y, title, on_tap=lambda: ctx.phone.set_airplane_mode(not ctx.phone.airplane_mode),
                                 icon=icon, icon_color=COLORS[color], toggle=ctx.phone.airplane_mode)
                else:
                    y = list_row(c, y, title, on_tap=lambda k=key: open_page(k),
                                 subtitle=self._subtitle(ctx, key, subtitle) or None, icon=icon,
                                 icon_color=COLORS[color], chevron=True)

        scroll_list(c, ctx, top, len(MAIN_ROWS) * ROW_H + 40, draw)
        title_bar(c, ctx, "Settings", back=False, actions=[("magnifier", "search", lambda: self.open_search(ctx))])

    def open_search(self, ctx: AppContext) -> None:
        ctx.push({"view": "search", "fields": {"query": ""}})
        ctx.focus("query")

    def _search(self, ctx: AppContext, c: Canvas) -> None:
        """A search field (focused when opened) and the settings whose title holds every typed word."""
        y0 = ctx.content[1]
        words = ctx.field("query").casefold().split()
        found = [(title, key) for key, title, *_ in MAIN_ROWS] + SEARCHABLE
        hits = [(t, k) for t, k in found if words and all(w in t.casefold() for w in words)]
        top = y0 + TITLE_BAR_H + 20

        def draw(y: float) -> None:
            for title, key in hits:
                y = list_row(c, y, title, subtitle=TITLES.get(key, "Settings") if title != TITLES.get(key) else None,
                             on_tap=lambda k=key: ctx.replace({"view": "page", "page": k}))

        if words and not hits:
            c.text((540, top + 200), "No results", size=44, color=c.theme.text_secondary, anchor="mm")
        scroll_list(c, ctx, top, len(hits) * ROW_H + 40, draw)
        c.rect((0, y0, c.width, y0 + TITLE_BAR_H + 20), fill=c.theme.background)
        c.icon("back", (30, y0 + 45, 110, y0 + 125), c.theme.text, description="back arrow")
        c.on_tap((10, y0 + 20, 140, y0 + 150), ctx.back)
        text_field(c, ctx, (150, y0 + 25, c.width - 40, y0 + 145), "query", "Search settings", size=44)

    def _page(self, ctx: AppContext, c: Canvas, page: str, back: bool = True, key: str = "scroll") -> None:
        top = ctx.content[1] + TITLE_BAR_H
        rows = self._page_rows(ctx, c, page)

        def draw(y: float) -> None:
            for row in rows:
                y = row(y)

        scroll_list(c, ctx, top, (len(rows) + 1) * ROW_H + 40, draw, key=key)
        title_bar(c, ctx, TITLES.get(page, "Settings"), back=back)

    def _page_rows(self, ctx: AppContext, c: Canvas, page: str) -> list:
        def toggle(title: str, ns: str, key: str):
            return lambda y: list_row(c, y, title, on_tap=lambda: _flip(ctx, ns, key), toggle=_on(ctx, ns, key))

        def info(title: str, subtitle: str | None = None):
            return lambda y: list_row(c, y, title, subtitle=subtitle)

        if page == "wifi":
            rows = [toggle("Wi-Fi", "global", "wifi_on")]
            if _on(ctx, "global", "wifi_on"):
                rows.append(info("HomeNet-5G", "Connected"))
                rows += [info(name, "Saved" if i == 0 else None) for i, name in
                         enumerate(["HomeNet-2.4G", "CoffeeShop_Free", "Office-Guest", "DIRECT-42-Printer"])]
            return rows
        if page == "bluetooth":
            rows = [toggle("Bluetooth", "global", "bluetooth_on")]
            if _on(ctx, "global", "bluetooth_on"):
                rows += [info("Device name", ctx.phone.name), info("Pair new device")]
            return rows
        if page == "display":
            return [lambda y: self._modes(ctx, c, y), info("Brightness level", "Adaptive"),
                    toggle("Auto-rotate screen", "system", "accelerometer_rotation"), info("Screen timeout", "1 minute")]
        if page == "notifications":
            return [toggle("Real-time network speed", "system", "status_bar_network_speed"),
                    toggle("Show battery percentage", "system", "status_bar_show_battery_percent"),
                    info("Notification shade"), info("Lock screen notifications")]
        if page == "airplane":
            return [lambda y: list_row(c, y, "Airplane mode", toggle=ctx.phone.airplane_mode,
                                       on_tap=lambda: ctx.phone.set_airplane_mode(not ctx.phone.airplane_mode))]
        if page == "about":
            return [info("Device name", ctx.phone.name), info("Model", ctx.phone.model),
                    info("Android version", "13"), info("Build number", "TQ3A.230901.001")]
        if page == "battery":
            return [info("Battery level", f"{ctx.phone.battery['level']}%"),
                    toggle("Battery Saver", "global", "low_power")]
        return [info(f"{TITLES.get(page, page)} options"), info("Advanced")]

    def _modes(self, ctx: AppContext, c: Canvas, y: float) -> float:
        """Two cards: Light mode / Dark mode (selecting one sets secure ui_night_mode 1 / 2)."""
        height = ROW_H * 2
        dark = ctx.phone.dark_mode
        for i, (name, icon, night) in enumerate((("Light mode", "sun", "1"), ("Dark mode", "moon", "2"))):
            left = 60 + i * 500
            card = (left, y + 30, left + 460, y + height - 30)
            selected = dark == (night == "2")
            c.rect(card, fill=c.theme.surface, radius=30, outline=c.theme.primary if selected else c.theme.divider,
                   width=6 if selected else 2)
            c.icon(icon, (left + 170, y + 70, left + 290, y + 190), COLORS["orange" if night == "1" else "blue"])
            c.text((left + 230, y + 230), name, size=44, anchor="mt")
            c.widget(card, f"{name} option, {'selected' if selected else 'not selected'}", text=name)
            c.on_tap(card, lambda n=night: ctx.put_setting("secure", "ui_night_mode", n))
        return y + height
