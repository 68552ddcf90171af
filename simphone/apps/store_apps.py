"""The apps the Play Store offers (WhatsApp, Instagram ...): not preinstalled; once
`Phone.install(package)` ran they open to a simple first screen of their own.

`STORE_APPS` is the Play Store's catalogue: package, name, developer, icon glyph, tile
colour, rating, downloads, search words, one-line description.

Data of an installed one: {"accepted_terms": bool} (the welcome page's "Agree and continue").

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

from typing import Any

from simphone.apps import App, AppContext, register
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import TITLE_BAR_H, button, list_row, title_bar

__all__ = ["STORE_APPS", "StoreApp"]

# package, name, developer, icon, colour, rating, downloads, words, description
STORE_APPS: list[tuple[str, str, str, str, str, float, str, str, str]] = [
    ("com.whatsapp", "WhatsApp Messenger", "WhatsApp LLC", "phone", "green", 4.3, "5B+",
     "whatsapp messenger chat message call", "Simple. Reliable. Private messaging and calling for free."),
    ("com.whatsapp.w4b", "WhatsApp Business", "WhatsApp LLC", "message", "teal", 4.2, "500M+",
     "whatsapp business chat customers", "Talk to your customers with WhatsApp Business."),
    ("com.instagram.android", "Instagram", "Instagram", "camera", "pink", 4.1, "5B+",
     "instagram photo video reels social", "Create and share photos, stories and reels with friends."),
    ("com.instagram.barcelona", "Threads", "Instagram", "message", "black", 3.9, "100M+",
     "threads instagram social text", "Share ideas and join conversations."),
    ("org.telegram.messenger", "Telegram", "Telegram FZ-LLC", "paper_plane", "blue", 4.2, "1B+",
     "telegram messenger chat message", "Pure instant messaging: simple, fast, secure."),
    ("com.spotify.music", "Spotify: Music and Podcasts", "Spotify AB", "music", "green", 4.3, "1B+",
     "spotify music podcast songs relax", "Listen to songs, podcasts and playlists for free."),
    ("com.facebook.katana", "Facebook", "Meta Platforms, Inc.", "person", "blue", 4.0, "5B+",
     "facebook social friends", "Connect with friends, family and people who share your interests."),
]


class StoreApp(App):
    """A downloadable app's own screen: a welcome page and a few rows of its main list."""

    preinstalled = False
    rows: tuple[str, ...] = ()

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"accepted_terms": False}

    def render(self, ctx: AppContext, c: Canvas) -> None:
        th = c.theme
        top = ctx.content[1]
        if not ctx.data["accepted_terms"]:
            mid = (top + ctx.content[3]) / 2
            c.icon(self.icon, (390, mid - 400, 690, mid - 100), (255, 255, 255), background=COLORS[self.color],
                   description=f"{self.label} logo")
            c.text((540, mid), f"Welcome to {self.label}", size=56, bold=True, anchor="mt", max_width=c.width - 100)
            c.text((540, mid + 100), "Read our Privacy Policy. Tap \"Agree and continue\"", size=34,
                   color=th.text_secondary, anchor="mt", max_width=c.width - 100)
            button(c, (240, mid + 220, 840, mid + 340), "Agree and continue",
                   lambda: ctx.data.update(accepted_terms=True))
            return
        y = top + TITLE_BAR_H
        for row in self.rows:
            y = list_row(c, y, row, icon="person", icon_color=COLORS[self.color])
        title_bar(c, ctx, self.label, back=False, actions=[("magnifier", "search, magnifier", lambda: None)])


LAUNCHER_LABELS = {"com.whatsapp": "WhatsApp", "com.spotify.music": "Spotify"}
_ROWS = {
    "com.whatsapp": ("Maria Lopez", "Alex Chen", "Family group", "Work team"),
    "com.instagram.android": ("alex.chen posted a photo", "maria_l started a story", "Suggested for you"),
}

for _package, _name, _dev, _icon, _color, *_ in STORE_APPS:
    register(type(f"StoreApp_{_package.replace('.', '_')}", (StoreApp,), {
        "package": _package, "label": LAUNCHER_LABELS.get(_package, _name), "icon": _icon, "color": _color,
        "rows": _ROWS.get(_package, ("Home", "Discover", "Settings"))}))
