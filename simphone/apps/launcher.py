"""The home screen (com.android.launcher3): pages of app icons with labels, a dock, an app
drawer (swipe up), and the recent-apps screen (the recents key).

Views: {"view": "home", "page": N}, {"view": "drawer", "scroll": y}, {"view": "recents"}.
Page 0 holds a date widget, a search bar and the first 12 apps; further pages hold 20
each; apps installed later are appended at the end. Swipe left / right to change page.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

from typing import Any

from simphone.apps import APPS, App, AppContext, register
from simphone.apps.builtin import LAUNCHER
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import TITLE_BAR_H, button, scroll_list, title_bar

DOCK = ["com.google.android.dialer", "com.google.android.apps.messaging", "com.android.chrome",
        "com.android.camera2"]
COLS = 4
CELL_W = 1080 / COLS
CELL_H = 300
FIRST_PAGE = 12
PAGE = 20


def launcher_apps(ctx: AppContext) -> list[str]:
    """Installed apps with a launcher icon, in install order, dock apps excluded."""
    return [p for p in ctx.phone.installed if p in APPS and APPS[p].on_launcher and p not in DOCK and p != LAUNCHER]


def pages(ctx: AppContext) -> list[list[str]]:
    apps = launcher_apps(ctx)
    out = [apps[:FIRST_PAGE]]
    rest = apps[FIRST_PAGE:]
    while rest:
        out.append(rest[:PAGE])
        rest = rest[PAGE:]
    return out


def app_tile(c: Canvas, ctx: AppContext, package: str, cx: float, top: float, label: bool = True) -> None:
    app = APPS[package]
    box = (cx - 80, top, cx + 80, top + 160)
    tile = COLORS[app.color]
    c.icon(app.icon, box, (255, 255, 255), description=f"{app.label} app icon", background=tile)
    if sum(abs(a - b) for a, b in zip(tile, c.theme.background, strict=True)) < 120:  # a black tile on the dark theme
        c.rect(box, outline=c.theme.divider, radius=(box[2] - box[0]) * 0.22, width=3)
    if label:
        c.text((cx, top + 180), app.label, size=34, anchor="mt", max_width=CELL_W - 16)  # "Amazon Music" whole
    c.on_tap((cx - CELL_W / 2 + 8, top - 10, cx + CELL_W / 2 - 8, top + 240), lambda: ctx.launch(package))


@register
class Launcher(App):
    package = LAUNCHER
    label = "Launcher"
    activity = ".uioverrides.QuickstepLauncher"
    on_launcher = False

    def main_view(self) -> dict[str, Any]:
        return {"view": "home", "page": 0}

    def render(self, ctx: AppContext, c: Canvas) -> None:
        view = ctx.view["view"]
        if view == "drawer":
            self._drawer(ctx, c)
        elif view == "recents":
            self._recents(ctx, c)
        else:
            self._home(ctx, c)

    def _home(self, ctx: AppContext, c: Canvas) -> None:
        left, top, right, bottom = ctx.content
        all_pages = pages(ctx)
        page = min(int(ctx.view.get("page", 0)), len(all_pages) - 1)
        dock_top = bottom - 230
        y = top + (60 if page == 0 else 140)
        if page == 0:
            c.text((70, y), ctx.clock.strftime("%A, %B %-d"), size=56, bold=True)
            y += 130
            bar = (60, y, c.width - 60, y + 130)
            c.rect(bar, fill=c.theme.field_bg, radius=65)
            c.icon("magnifier", (100, y + 30, 170, y + 100), c.theme.text_secondary, description="magnifier")
            c.text((200, y + 65), "Search", size=42, color=c.theme.text_secondary, anchor="lm")
            c.on_tap(bar, lambda: ctx.push({"view": "drawer", "scroll": 0}))
            y += 220
        for i, package in enumerate(all_pages[page]):
            row, col = divmod(i, COLS)
            app_tile(c, ctx, package, CELL_W * col + CELL_W / 2, y + row * CELL_H)
        # page dots
        n = len(all_pages)
        for i in range(n):
            cx = c.width / 2 + (i - (n - 1) / 2) * 50
            c.ellipse((cx - 12, dock_top - 60, cx + 12, dock_top - 36),
                      fill=c.theme.text if i == page else c.theme.divider)
        c.widget((c.width / 2 - 25 * n, dock_top - 70, c.width / 2 + 25 * n, dock_top - 26),
                 f"page {page + 1} of {n}")
        # dock
        c.rect((30, dock_top, c.width - 30, bottom - 20), fill=c.theme.surface, radius=60)
        for i, package in enumerate(p for p in DOCK if p in ctx.phone.installed):
            app_tile(c, ctx, package, CELL_W * i + CELL_W / 2, dock_top + 25, label=False)

        def swipe(dx: float, dy: float) -> bool:
            if abs(dx) >= abs(dy) and abs(dx) > 80:
                new = min(max(0, page + (1 if dx < 0 else -1)), n - 1)
                ctx.view["page"] = new
                return new != page
            if dy < -200:  # swipe up: all apps
                ctx.push({"view": "drawer", "scroll": 0})
                return True
            return False

        c.on_scroll((left, top, right, bottom), swipe)

    def _drawer(self, ctx: AppContext, c: Canvas) -> None:
        apps = sorted((p for p in ctx.phone.installed if p in APPS and APPS[p].on_launcher),
                      key=lambda p: APPS[p].label.lower())
        top = ctx.content[1] + TITLE_BAR_H
        rows = (len(apps) + COLS - 1) // COLS

        def draw(y0: float) -> None:
            for i, package in enumerate(apps):
                row, col = divmod(i, COLS)
                app_tile(c, ctx, package, CELL_W * col + CELL_W / 2, y0 + 30 + row * CELL_H)

        scroll_list(c, ctx, top, rows * CELL_H + 60, draw)
        title_bar(c, ctx, "All apps", back=True)

    def _recents(self, ctx: AppContext, c: Canvas) -> None:
        top = ctx.content[1] + TITLE_BAR_H
        recents = [p for p in ctx.phone.recents if p in APPS]
        y = top + 20
        if not recents:
            c.text((540, top + 400), "No recent items", size=48, color=c.theme.text_secondary, anchor="mm")
        for package in recents[:6]:
            app = APPS[package]
            card = (60, y, c.width - 60, y + 200)
            c.rect(card, fill=c.theme.surface, radius=30)
            c.icon(app.icon, (100, y + 40, 220, y + 160), (255, 255, 255), description=f"{app.label} app icon",
                   background=COLORS[app.color])
            c.text((260, y + 100), app.label, size=48, anchor="lm")
            c.on_tap(card, lambda p=package: ctx.launch(p))
            y += 230
        if recents:
            button(c, (340, ctx.content[3] - 180, 740, ctx.content[3] - 60), "Clear all", lambda: _clear(ctx))
        title_bar(c, ctx, "Recent apps", back=True)


def _clear(ctx: AppContext) -> None:
    for package in list(ctx.phone.recents):
        ctx.phone.force_stop(package)
    ctx.phone.go_home()
