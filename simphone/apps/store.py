"""Play Store (com.android.vending): search apps, install them, open them.

Views: {"view": "main", "scroll"} the "Search apps & games" bar and recommended apps;
{"view": "results", "query", "scroll"} the best match as a large card with its "Install"
button (or "Open" once installed), then similar apps (a tap opens their page);
{"view": "app", "package"} an app's page with "Install" / "Uninstall" + "Open" and its
description. Installing is instant (the phone has no download to wait for): the package
joins the phone's `installed` list and the launcher.

Data: {"searches": [{id, query}], "installs": [{id, package}], "next_id"}.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

from typing import Any

from simphone.apps import App, AppContext, register
from simphone.apps.app_widgets import (
    add_record,
    best_first,
    search_bar,
    submit_search,
    tab_bar,
    wrap,
)
from simphone.apps.store_apps import STORE_APPS
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import TITLE_BAR_H, button, scroll_list, title_bar

BY_PACKAGE = {a[0]: a for a in STORE_APPS}
ROW_H = 200
GREEN = (1, 135, 95)


def search(query: str) -> list[str]:
    return [a[0] for a in best_first(query, STORE_APPS, lambda a: (a[1], a[7]))]


@register
class PlayStore(App):
    package = "com.android.vending"
    label = "Play Store"
    activity = ".AssetBrowserActivity"
    icon = "play"
    color = "teal"
    schemes = ("market",)

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"searches": [], "installs": [], "next_id": 1}

    def on_intent(self, ctx: AppContext, action: str, data: str | None, extras: dict[str, str]) -> dict | None:
        if data and data.startswith("market://details?id="):
            package = data.split("id=", 1)[1].split("&", 1)[0]
            if package in BY_PACKAGE:
                return {"view": "app", "package": package}
        return self.main_view()

    def view_activity(self, view: dict[str, Any]) -> str:
        return "com.google.android.finsky.activities.MainActivity" if view.get("view") != "main" else self.activity

    def render(self, ctx: AppContext, c: Canvas) -> None:
        view = ctx.view
        if view["view"] == "results":
            self._results(ctx, c, view["query"])
        elif view["view"] == "app":
            self._app_page(ctx, c, view["package"])
        else:
            self._main(ctx, c)

    # -- actions ----------------------------------------------------------------------
    def on_enter(self, ctx: AppContext, field: str) -> None:
        submit_search(ctx, field)

    def install(self, ctx: AppContext, package: str) -> None:
        if package not in ctx.phone.installed:
            ctx.phone.install(package)
            add_record(ctx.data, "installs", package=package)

    def _install_button(self, ctx: AppContext, c: Canvas, box: tuple[float, float, float, float], package: str) -> None:
        if package in ctx.phone.installed:
            button(c, box, "Open", lambda: ctx.launch(package))
        else:
            button(c, box, "Install", lambda: self.install(ctx, package))

    # -- screens ----------------------------------------------------------------------
    def _icon(self, c: Canvas, app: tuple, box: tuple[float, float, float, float]) -> None:
        c.icon(app[3], box, (255, 255, 255), background=COLORS[app[4]], description=f"{app[1]} icon")

    def _row(self, ctx: AppContext, c: Canvas, y: float, app: tuple) -> float:
        th = c.theme
        self._icon(c, app, (50, y + 30, 190, y + 170))
        c.text((230, y + 45), app[1], size=44, max_width=c.width - 280)
        c.text((230, y + 110), f"{app[2]} · {app[5]} ★", size=36, color=th.text_secondary, max_width=c.width - 280)
        if app[0] in ctx.phone.installed:
            c.text((c.width - 50, y + 110), "Installed", size=34, color=GREEN, anchor="ra")
        c.on_tap((0, y, c.width, y + ROW_H), lambda: ctx.push({"view": "app", "package": app[0]}))
        return y + ROW_H

    def _main(self, ctx: AppContext, c: Canvas) -> None:
        top = ctx.content[1]
        tabs_top = ctx.content[3] - 170

        def draw(y: float) -> None:
            c.text((50, y + 30), "Recommended for you", size=48, bold=True)
            y += 110
            for app in STORE_APPS:
                y = self._row(ctx, c, y, app)

        with c.clip((0, 0, c.width, tabs_top)):
            scroll_list(c, ctx, top + 200, len(STORE_APPS) * ROW_H + 400, draw)
        c.rect((0, top, c.width, top + 200), fill=c.theme.background)
        search_bar(c, ctx, (40, top + 35, c.width - 40, top + 175), "search", "Search apps & games")
        if ctx.focused is None:
            tab_bar(c, ctx, [("star", "For you", lambda: None), ("grid", "Apps", lambda: None),
                             ("play", "Games", lambda: None), ("download", "Updates", lambda: None)], 0, accent=GREEN)

    def _results(self, ctx: AppContext, c: Canvas, query: str) -> None:
        th = c.theme
        top = ctx.content[1]
        found = search(query)

        def draw(y: float) -> None:
            if not found:
                c.text((50, y + 60), f"No results for \"{query}\"", size=44, max_width=c.width - 100)
                return
            best = BY_PACKAGE[found[0]]
            self._icon(c, best, (50, y + 30, 250, y + 230))
            c.text((290, y + 40), best[1], size=50, bold=True, max_width=c.width - 330)
            c.text((290, y + 115), best[2], size=38, color=GREEN, max_width=c.width - 330)
            c.text((290, y + 175), f"{best[5]} ★   {best[6]} downloads", size=36, color=th.text_secondary)
            c.on_tap((0, y, c.width, y + 250), lambda: ctx.push({"view": "app", "package": best[0]}))
            self._install_button(ctx, c, (50, y + 280, c.width - 50, y + 390), best[0])
            y += 450
            if len(found) > 1:
                c.text((50, y), "Similar apps", size=44, bold=True)
                y += 80
                for package in found[1:]:
                    y = self._row(ctx, c, y, BY_PACKAGE[package])

        scroll_list(c, ctx, top + 200, 600 + len(found) * ROW_H, draw)
        c.rect((0, top, c.width, top + 200), fill=th.background)
        bar = (150, top + 35, c.width - 40, top + 175)
        if ctx.focused == "search":
            search_bar(c, ctx, bar, "search", "Search apps & games")
        else:
            search_bar(c, ctx, bar, "search", "Search apps & games", value=query,
                       on_tap=lambda: (ctx.set_field("search", ""), ctx.focus("search")))
        c.icon("back", (35, top + 65, 115, top + 145), th.text, description="back arrow")
        c.on_tap((10, top + 30, 140, top + 180), ctx.back)

    def _app_page(self, ctx: AppContext, c: Canvas, package: str) -> None:
        th = c.theme
        app = BY_PACKAGE[package]
        installed = package in ctx.phone.installed
        y = ctx.content[1] + TITLE_BAR_H + 20
        self._icon(c, app, (50, y, 270, y + 220))
        c.text((310, y + 20), app[1], size=52, bold=True, max_width=c.width - 350)
        c.text((310, y + 100), app[2], size=38, color=GREEN, max_width=c.width - 350)
        c.text((310, y + 160), "Installed" if installed else "Contains ads · In-app purchases", size=32,
               color=th.text_secondary)
        y += 270
        for i, (big, small) in enumerate(((f"{app[5]} ★", "reviews"), (app[6], "Downloads"), ("E", "Everyone"))):
            cx = 180 + i * 360
            c.text((cx, y), big, size=42, bold=True, anchor="mt")
            c.text((cx, y + 60), small, size=32, color=th.text_secondary, anchor="mt")
        y += 150
        if installed:
            button(c, (50, y, 520, y + 110), "Uninstall", lambda: ctx.phone.uninstall(package), filled=False)
            button(c, (560, y, c.width - 50, y + 110), "Open", lambda: ctx.launch(package))
        else:
            self._install_button(ctx, c, (50, y, c.width - 50, y + 110), package)
        y += 180
        c.text((50, y), "About this app", size=46, bold=True)
        y += 80
        for line in wrap(c, app[8], 40, c.width - 100):
            c.text((50, y), line, size=40, color=th.text_secondary)
            y += 58
        title_bar(c, ctx, "", actions=[("magnifier", "search, magnifier", lambda: ctx.back()), ("more", "more options, three dots", lambda: None)])
