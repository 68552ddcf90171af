"""Amazon Music (com.amazon.mp3): playlists, search, artists, a now-playing bar.

Views: {"view": "main", "scroll"} Home: playlists for you ("Relaxing Piano" …) and
recently played songs; {"view": "search", "query", "fields": {"query"}} the Search tab:
the field ("Search songs, artists, playlists") has focus when the tab opens, ENTER shows
matching artists, songs and playlists; {"view": "artist", "artist"} an artist's top
songs; {"view": "playlist", "playlist"} a playlist's tracks. A tap on a song plays it; a
tap on a playlist opens it and plays its first track. The now-playing bar (above the
tabs) shows the track with a play / pause button.

Data: {"searches": [{id, query}], "playing": {title, artist, playlist, playing} | null,
"next_id"}. The recently played order is drawn from the seed.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

import random
from typing import Any

from simphone.apps import App, AppContext, register
from simphone.apps.app_widgets import TAB_BAR_H, add_record, best_first, search_bar, tab_bar
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import TITLE_BAR_H, button, scroll_list, title_bar

# title, artist, album, words
SONGS: list[tuple[str, str, str, str]] = [
    ("Mojito", "Jay Chou", "Mojito", "jay chou pop mandarin"),
    ("Sunny Day", "Jay Chou", "Fantasy", "jay chou pop mandarin"),
    ("Blue and White Porcelain", "Jay Chou", "On the Run", "jay chou pop mandarin"),
    ("Nocturne", "Jay Chou", "November's Chopin", "jay chou pop mandarin"),
    ("Rice Field", "Jay Chou", "Capricorn", "jay chou pop mandarin"),
    ("Secret Agent", "Nova Lane", "Undercover", "agent spy pop"),
    ("Double Agent", "Kid Static", "Signals", "agent electronic"),
    ("Agent of Love", "Luna Park", "Summer Lights", "agent love pop"),
    ("Anti-Hero", "Taylor Swift", "Midnights", "taylor swift pop"),
    ("Shake It Off", "Taylor Swift", "1989", "taylor swift pop dance"),
    ("Hello", "Adele", "25", "adele ballad"),
    ("Morning Light", "Piano Dreams", "Relaxing Piano", "relax relaxing calm piano sleep"),
    ("Quiet Rain", "Piano Dreams", "Relaxing Piano", "relax relaxing calm piano sleep rain"),
    ("Late Night Study", "Lo-Fi Crew", "Chill Lo-Fi Beats", "relax chill lofi study"),
    ("Ocean Waves", "Nature Sounds", "Peaceful Sleep", "relax sleep calm ocean"),
    ("Run the Night", "Pulse", "Workout Hits", "workout energy dance"),
]
# name, colour, icon, words, track titles
PLAYLISTS: list[tuple[str, str, str, str, list[str]]] = [
    ("Relaxing Piano", "blue", "music", "relax relaxing calm piano", ["Morning Light", "Quiet Rain"]),
    ("Chill Lo-Fi Beats", "purple", "music", "relax chill lofi study", ["Late Night Study"]),
    ("Peaceful Sleep", "teal", "moon", "relax sleep calm", ["Ocean Waves", "Quiet Rain"]),
    ("Workout Hits", "orange", "play", "workout energy", ["Run the Night"]),
]
SONG = {s[0]: s for s in SONGS}
PLAYLIST = {p[0]: p for p in PLAYLISTS}
ARTISTS = sorted({s[1] for s in SONGS})
ROW_H = 170
ACCENT = (37, 209, 218)


def search(query: str) -> tuple[list[str], list[str], list[str]]:
    """(artists, song titles, playlist names) matching the query, best first."""
    artists = best_first(query, ARTISTS, lambda a: (a,))
    songs = [s[0] for s in best_first(query, SONGS, lambda s: (s[0], s[1], s[3]))]
    playlists = [p[0] for p in best_first(query, PLAYLISTS, lambda p: (p[0], p[3]))]
    return artists, songs, playlists


@register
class AmazonMusic(App):
    package = "com.amazon.mp3"
    label = "Amazon Music"
    activity = ".client.activity.LauncherActivity"
    icon = "music"
    color = "teal"

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"searches": [], "playing": None, "next_id": 1}

    def render(self, ctx: AppContext, c: Canvas) -> None:
        name = ctx.view["view"]
        if name == "search":
            self._search(ctx, c)
        elif name == "artist":
            self._artist(ctx, c, ctx.view["artist"])
        elif name == "playlist":
            self._playlist(ctx, c, ctx.view["playlist"])
        else:
            self._home(ctx, c)
        if ctx.focused is None:
            bottom = self._tabs(ctx, c)
            self._now_playing(ctx, c, bottom)

    # -- playing ----------------------------------------------------------------------
    def play(self, ctx: AppContext, title: str, playlist: str | None = None) -> None:
        song = SONG[title]
        ctx.data["playing"] = {"title": song[0], "artist": song[1], "playlist": playlist, "playing": True}

    def open_playlist(self, ctx: AppContext, name: str) -> None:
        self.play(ctx, PLAYLIST[name][4][0], name)
        ctx.push({"view": "playlist", "playlist": name})

    def toggle(self, ctx: AppContext) -> None:
        playing = ctx.data["playing"]
        if playing is not None:
            playing["playing"] = not playing["playing"]

    # -- chrome -----------------------------------------------------------------------
    def _tabs(self, ctx: AppContext, c: Canvas) -> float:
        view = ctx.view["view"]
        selected = 1 if view == "search" else 0

        def go_home() -> None:
            while len(ctx.phone.task(self.package)) > 1:
                ctx.finish()

        def go_search() -> None:
            if view != "search":
                ctx.push({"view": "search", "query": None, "fields": {"query": ""}})
            ctx.set_field("query", "")
            ctx.focus("query")

        return tab_bar(c, ctx, [("home", "Home", go_home), ("magnifier", "Search", go_search),
                                ("music", "Library", lambda: None)], selected, accent=ACCENT)

    def _now_playing(self, ctx: AppContext, c: Canvas, bottom: float) -> None:
        playing = ctx.data["playing"]
        if playing is None:
            return
        th = c.theme
        top = bottom - 150
        c.rect((0, top, c.width, bottom), fill=(40, 44, 52) if th.name == "light" else (55, 60, 70))
        c.icon("music", (30, top + 25, 130, top + 125), (255, 255, 255), background=COLORS["teal"],
               description="album art")
        c.text((160, top + 35), playing["title"], size=42, bold=True, color=(255, 255, 255), max_width=c.width - 330)
        c.text((160, top + 90), playing["artist"], size=34, color=(200, 200, 205), max_width=c.width - 330)
        icon = "pause" if playing["playing"] else "play"
        c.icon(icon, (c.width - 130, top + 35, c.width - 50, top + 115), (255, 255, 255),
               description="pause button, pause" if playing["playing"] else "play button, play triangle")
        c.on_tap((c.width - 160, top, c.width, bottom), lambda: self.toggle(ctx))

    def _bottom(self, ctx: AppContext) -> float:
        """Where scrolling content ends: above the tabs and the now-playing bar."""
        if ctx.focused is not None:
            return ctx.content[3]
        return ctx.content[3] - TAB_BAR_H - (150 if ctx.data["playing"] else 0)

    def _song_row(self, ctx: AppContext, c: Canvas, y: float, title: str, playlist: str | None = None) -> float:
        th = c.theme
        song = SONG[title]
        playing = ctx.data["playing"]
        now = playing is not None and playing["title"] == title and playing["playing"]
        c.icon("music", (50, y + 25, 170, y + 145), (255, 255, 255), background=COLORS["teal" if now else "gray"],
               description=f"{title} cover")
        c.text((210, y + 35), title, size=44, bold=now, color=ACCENT if now else th.text, max_width=c.width - 360)
        c.text((210, y + 100), f"{song[1]} · {song[2]}", size=34, color=th.text_secondary, max_width=c.width - 360)
        c.icon("play", (c.width - 120, y + 50, c.width - 50, y + 120), th.text_secondary, description=f"play triangle: play {title}")
        c.on_tap((0, y, c.width, y + ROW_H), lambda: self.play(ctx, title, playlist))
        return y + ROW_H

    def _card(self, ctx: AppContext, c: Canvas, x: float, y: float, name: str) -> None:
        playlist = PLAYLIST[name]
        cover = (x, y, x + 470, y + 260)
        c.rect(cover, fill=COLORS[playlist[1]], radius=30)
        c.icon(playlist[2], (x + 170, y + 65, x + 300, y + 195), (255, 255, 255), description=f"{name} cover")
        c.text((x, y + 280), name, size=40, bold=True, max_width=470)
        c.on_tap((x, y, x + 470, y + 340), lambda: self.open_playlist(ctx, name))

    # -- screens ----------------------------------------------------------------------
    def _home(self, ctx: AppContext, c: Canvas) -> None:
        th = c.theme
        top = ctx.content[1] + TITLE_BAR_H
        recent = [s[0] for s in SONGS if "agent" not in s[3]]  # the agent songs are found by searching
        random.Random(f"music-{ctx.seed}").shuffle(recent)
        recent = recent[:6]

        def draw(y: float) -> None:
            c.text((50, y + 20), "Playlists for you", size=50, bold=True)
            y += 110
            for i, playlist in enumerate(PLAYLISTS):
                self._card(ctx, c, 50 + (i % 2) * 510, y + (i // 2) * 380, playlist[0])
            y += 780
            c.text((50, y + 20), "Recently played", size=50, bold=True)
            c.text((c.width - 50, y + 35), "See all", size=36, color=th.text_secondary, anchor="ra")
            y += 110
            for title in recent:
                y = self._song_row(ctx, c, y, title)

        with c.clip((0, 0, c.width, self._bottom(ctx))):
            scroll_list(c, ctx, top, 1200 + len(recent) * ROW_H, draw)
        title_bar(c, ctx, "Amazon Music", back=False, actions=[("gear", "settings, gear", lambda: None)])

    def on_enter(self, ctx: AppContext, field: str) -> None:
        query = ctx.field("query").strip()
        if field == "query" and query:
            add_record(ctx.data, "searches", query=query)
            ctx.view["query"] = query
            ctx.view["scroll"] = 0
            ctx.focus(None)

    def _search(self, ctx: AppContext, c: Canvas) -> None:
        th = c.theme
        top = ctx.content[1]
        query = ctx.view.get("query")
        artists, songs, playlists = search(query) if query else ([], [], [])

        def draw(y: float) -> None:
            if not query:
                c.text((50, y + 30), "Try an artist, a song or a mood: relax, workout, sleep", size=38,
                       color=th.text_secondary, max_width=c.width - 100)
                return
            if not (artists or songs or playlists):
                c.text((50, y + 30), f"No results for \"{query}\"", size=44, max_width=c.width - 100)
            for artist in artists:
                c.icon("person", (50, y + 20, 180, y + 150), (255, 255, 255), background=COLORS["purple"],
                       circle=True, description=f"{artist} photo")
                c.text((220, y + 40), artist, size=46, bold=True, max_width=c.width - 270)
                c.text((220, y + 105), "Artist", size=34, color=th.text_secondary)
                c.on_tap((0, y, c.width, y + ROW_H), lambda a=artist: ctx.push({"view": "artist", "artist": a}))
                y += ROW_H
            if songs:
                c.text((50, y + 30), "Songs", size=46, bold=True)
                y += 100
                for title in songs:
                    y = self._song_row(ctx, c, y, title)
            if playlists:
                c.text((50, y + 30), "Playlists", size=46, bold=True)
                y += 100
                for name in playlists:
                    c.icon("music", (50, y + 25, 170, y + 145), (255, 255, 255),
                           background=COLORS[PLAYLIST[name][1]], description=f"{name} cover")
                    c.text((210, y + 35), name, size=44, max_width=c.width - 260)
                    c.text((210, y + 100), f"Playlist · {len(PLAYLIST[name][4])} songs", size=34, color=th.text_secondary)
                    c.on_tap((0, y, c.width, y + ROW_H), lambda n=name: self.open_playlist(ctx, n))
                    y += ROW_H

        content = 200 + (len(artists) + len(songs) + len(playlists) + 2) * ROW_H
        with c.clip((0, 0, c.width, self._bottom(ctx))):
            scroll_list(c, ctx, top + 200, content, draw)
        c.rect((0, top, c.width, top + 200), fill=th.background)
        bar = (40, top + 35, c.width - 40, top + 175)
        if ctx.focused == "query" or not query:
            search_bar(c, ctx, bar, "query", "Search songs, artists, playlists")
        else:
            search_bar(c, ctx, bar, "query", "Search songs, artists, playlists", value=query,
                       on_tap=lambda: (ctx.set_field("query", ""), ctx.focus("query")))

    def _artist(self, ctx: AppContext, c: Canvas, artist: str) -> None:
        th = c.theme
        top = ctx.content[1] + TITLE_BAR_H
        titles = [s[0] for s in SONGS if s[1] == artist]

        def draw(y: float) -> None:
            c.icon("person", (390, y + 20, 690, y + 320), (255, 255, 255), background=COLORS["purple"], circle=True,
                   description=f"{artist} photo")
            c.text((540, y + 350), artist, size=64, bold=True, anchor="mt")
            c.text((540, y + 440), f"{len(titles)} songs", size=36, color=th.text_secondary, anchor="mt")
            button(c, (340, y + 510, 740, y + 610), "Shuffle play", lambda: self.play(ctx, titles[0]))
            y += 660
            c.text((50, y), "Top songs", size=46, bold=True)
            y += 90
            for title in titles:
                y = self._song_row(ctx, c, y, title)

        with c.clip((0, 0, c.width, self._bottom(ctx))):
            scroll_list(c, ctx, top, 800 + len(titles) * ROW_H, draw)
        title_bar(c, ctx, "Artist")

    def _playlist(self, ctx: AppContext, c: Canvas, name: str) -> None:
        th = c.theme
        playlist = PLAYLIST[name]
        top = ctx.content[1] + TITLE_BAR_H

        def draw(y: float) -> None:
            c.icon(playlist[2], (340, y + 20, 740, y + 420), (255, 255, 255), background=COLORS[playlist[1]],
                   description=f"{name} cover")
            c.text((540, y + 450), name, size=60, bold=True, anchor="mt")
            c.text((540, y + 535), f"Playlist · {len(playlist[4])} songs", size=36, color=th.text_secondary, anchor="mt")
            y += 620
            for title in playlist[4]:
                y = self._song_row(ctx, c, y, title, name)

        with c.clip((0, 0, c.width, self._bottom(ctx))):
            scroll_list(c, ctx, top, 700 + len(playlist[4]) * ROW_H, draw)
        title_bar(c, ctx, "Playlist")
