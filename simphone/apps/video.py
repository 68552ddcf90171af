"""YouTube (com.google.android.youtube): home feed, search, a video's page, comments.

Views: {"view": "main", "scroll"} Home (the magnifier at the top right searches);
{"view": "search", "fields": {"query"}} the "Search YouTube" field, focused; ENTER
shows {"view": "results", "query", "scroll"}; {"view": "video", "video", "scroll"} a
video's page: player, title, channel with "Subscribe", the thumbs-up like button with
its count, and the "Comments" card; {"view": "comments", "video", "fields": {"comment"}}
the comments with the "Add a comment..." field at the bottom and a paper-plane send icon
at its right (ENTER sends too).

Data: {"searches": [{id, query}], "liked": [{id, video_id, video_title}], "comments":
[{id, video_id, video_title, text}], "subscriptions": [channel], "next_id"}. A second tap
on the thumbs up takes the like back (the record goes). The home feed's order is drawn
from the seed.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

import random
from typing import Any

from simphone.apps import App, AppContext, register
from simphone.apps.app_widgets import add_record, best_first, search_bar, tab_bar, wrap
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import TITLE_BAR_H, scroll_list, text_field, title_bar

# id, title, channel, views, age, duration, words, thumbnail colour, likes, comment count
VIDEOS: list[tuple[str, str, str, str, str, str, str, str, str, str]] = [
    ("curry-top", "Stephen Curry Top Plays", "NBA", "12M views", "2 years ago", "10:24",
     "stephen curry warriors basketball nba highlights", "blue", "215K", "8.1K"),
    ("curry-shots", "Stephen Curry's Best Shots of the Season", "House of Highlights", "4.2M views",
     "8 months ago", "12:03", "stephen curry warriors basketball three pointers", "orange", "96K", "3.4K"),
    ("curry-workout", "Stephen Curry Shooting Workout", "Golden State Warriors", "2.7M views", "1 year ago", "6:45",
     "stephen curry warriors basketball workout training", "yellow", "61K", "1.9K"),
    ("lakers-warriors", "Lakers vs Warriors Full Game Highlights", "NBA", "3.1M views", "3 days ago", "9:58",
     "lakers warriors basketball nba highlights game", "purple", "40K", "5.2K"),
    ("taylor-antihero", "Taylor Swift - Anti-Hero (Official Music Video)", "Taylor Swift", "210M views",
     "1 year ago", "5:09", "taylor swift anti-hero music video", "pink", "3.9M", "210K"),
    ("cats", "Funny Cats Compilation 2024", "Pet Planet", "8.8M views", "5 months ago", "14:11",
     "funny cat cats pet compilation", "teal", "120K", "6.6K"),
    ("pasta", "Easy 15-Minute Pasta", "Home Kitchen", "1.3M views", "2 weeks ago", "8:20",
     "pasta cooking recipe food easy", "red", "33K", "900"),
    ("lofi", "lofi hip hop radio - beats to relax/study to", "Lofi Girl", "1B views", "3 years ago", "LIVE",
     "lofi relax study music chill", "brown", "15M", "1M"),
    ("west-lake", "Hangzhou West Lake Walking Tour 4K", "Walk East", "640K views", "1 year ago", "58:12",
     "hangzhou west lake china travel walking tour", "green", "12K", "480"),
]
BY_ID = {v[0]: v for v in VIDEOS}
# earlier viewers' comments: author, text
OTHERS = [("@hoopsfan23", "The greatest shooter of all time, no debate."), ("@dubnation", "Night night!"),
          ("@coach_k", "Watching this before every practice."), ("@sarah.m", "The handles at 3:12 are unreal")]
CARD_H = 860
ROW_H = 300
RED = (255, 0, 0)


def search(query: str) -> list[str]:
    return [v[0] for v in best_first(query, VIDEOS, lambda v: (v[1], v[2], v[6]))]


@register
class YouTube(App):
    package = "com.google.android.youtube"
    label = "YouTube"
    activity = ".HomeActivity"
    icon = "play"
    color = "red"

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"searches": [], "liked": [], "comments": [], "subscriptions": [], "next_id": 1}

    def view_activity(self, view: dict[str, Any]) -> str:
        return "com.google.android.apps.youtube.app.watchwhile.WatchWhileActivity" if view.get("view") in (
            "video", "comments") else self.activity

    def render(self, ctx: AppContext, c: Canvas) -> None:
        name = ctx.view["view"]
        if name == "search":
            self._search(ctx, c)
        elif name == "results":
            self._results(ctx, c, ctx.view["query"])
        elif name == "video":
            self._video(ctx, c, ctx.view["video"])
        elif name == "comments":
            self._comments(ctx, c, ctx.view["video"])
        else:
            self._home(ctx, c)

    # -- actions ----------------------------------------------------------------------
    def open_search(self, ctx: AppContext) -> None:
        ctx.push({"view": "search", "fields": {"query": ""}})
        ctx.focus("query")

    def on_enter(self, ctx: AppContext, field: str) -> None:
        if field == "query":
            query = ctx.field("query").strip()
            if query:
                add_record(ctx.data, "searches", query=query)
                ctx.replace({"view": "results", "query": query})
        elif field == "comment":
            self.post(ctx)

    def like(self, ctx: AppContext, vid: str) -> None:
        liked = ctx.data["liked"]
        mine = [r for r in liked if r["video_id"] == vid]
        if mine:
            liked.remove(mine[0])
        else:
            add_record(ctx.data, "liked", video_id=vid, video_title=BY_ID[vid][1])

    def subscribe(self, ctx: AppContext, channel: str) -> None:
        subs = ctx.data["subscriptions"]
        if channel in subs:
            subs.remove(channel)
        else:
            subs.append(channel)

    def post(self, ctx: AppContext) -> None:
        text = ctx.field("comment").strip()
        if not text:
            return
        vid = ctx.view["video"]
        add_record(ctx.data, "comments", video_id=vid, video_title=BY_ID[vid][1], text=text)
        ctx.set_field("comment", "")
        ctx.focus(None)

    # -- pieces -----------------------------------------------------------------------
    def _thumbnail(self, c: Canvas, box: tuple[float, float, float, float], video: tuple) -> None:
        c.rect(box, fill=COLORS[video[7]], radius=20)
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        s = (box[3] - box[1]) * 0.18
        c.icon("play", (cx - s, cy - s, cx + s, cy + s), (255, 255, 255), description=f"play triangle: {video[1]} thumbnail")
        w = c.text_size(video[5], 30, True)[0]
        c.rect((box[2] - w - 40, box[3] - 65, box[2] - 15, box[3] - 15), fill=(20, 20, 20), radius=8)
        c.text((box[2] - 27, box[3] - 40), video[5], size=30, bold=True, color=(255, 255, 255), anchor="rm")

    def _card(self, ctx: AppContext, c: Canvas, y: float, vid: str) -> float:
        th = c.theme
        video = BY_ID[vid]
        self._thumbnail(c, (0, y, c.width, y + 600), video)
        c.icon("person", (30, y + 630, 130, y + 730), (255, 255, 255), background=COLORS["gray"], circle=True,
               description=f"{video[2]} channel")
        lines = wrap(c, video[1], 42, c.width - 200, bold=True)[:2]
        for i, line in enumerate(lines):
            c.text((160, y + 630 + i * 58), line, size=42, bold=True)
        c.text((160, y + 640 + len(lines) * 58), f"{video[2]} · {video[3]} · {video[4]}", size=34,
               color=th.text_secondary, max_width=c.width - 200)
        c.on_tap((0, y, c.width, y + CARD_H - 40), lambda: ctx.push({"view": "video", "video": vid}))
        return y + CARD_H

    def _row(self, ctx: AppContext, c: Canvas, y: float, vid: str) -> float:
        th = c.theme
        video = BY_ID[vid]
        self._thumbnail(c, (30, y + 20, 500, y + 280), video)
        lines = wrap(c, video[1], 40, c.width - 580)[:3]
        for i, line in enumerate(lines):
            c.text((530, y + 25 + i * 55), line, size=40)
        c.text((530, y + 35 + len(lines) * 55), video[2], size=32, color=th.text_secondary, max_width=c.width - 580)
        c.text((530, y + 80 + len(lines) * 55), f"{video[3]} · {video[4]}", size=32, color=th.text_secondary,
               max_width=c.width - 580)
        c.on_tap((0, y, c.width, y + ROW_H), lambda: ctx.push({"view": "video", "video": vid}))
        return y + ROW_H

    def _logo_bar(self, ctx: AppContext, c: Canvas) -> None:
        top = ctx.content[1]
        title_bar(c, ctx, "", back=False, actions=[("bell", "notifications, bell", lambda: None),
                                                   ("magnifier", "search, magnifier", lambda: self.open_search(ctx))])
        c.rect((40, top + 55, 150, top + 125), fill=RED, radius=18)
        c.line([(82, top + 72), (82, top + 108), (114, top + 90), (82, top + 72)], fill=(255, 255, 255), width=8)
        c.text((165, top + 90), "YouTube", size=56, bold=True, anchor="lm")

    # -- screens ----------------------------------------------------------------------
    def _home(self, ctx: AppContext, c: Canvas) -> None:
        top = ctx.content[1] + TITLE_BAR_H
        feed = [v[0] for v in VIDEOS if "curry" not in v[0]]  # Curry's videos are found by searching
        random.Random(f"youtube-{ctx.seed}").shuffle(feed)
        bottom = ctx.content[3] - 170

        def draw(y: float) -> None:
            for vid in feed:
                y = self._card(ctx, c, y, vid)

        with c.clip((0, 0, c.width, bottom)):
            scroll_list(c, ctx, top, len(feed) * CARD_H, draw)
        self._logo_bar(ctx, c)
        tab_bar(c, ctx, [("home", "Home", lambda: None), ("play", "Shorts", lambda: None),
                         ("video", "Subscriptions", lambda: None), ("folder", "Library", lambda: None)], 0,
                accent=c.theme.text)

    def _search(self, ctx: AppContext, c: Canvas) -> None:
        th = c.theme
        top = ctx.content[1]
        c.icon("back", (30, top + 45, 110, top + 125), th.text, description="back arrow")
        c.on_tap((10, top + 20, 140, top + 150), ctx.back)
        search_bar(c, ctx, (150, top + 25, c.width - 40, top + 145), "query", "Search YouTube")
        y = top + 200
        for past in reversed(ctx.data["searches"][-5:]):
            c.icon("clock", (50, y + 20, 110, y + 80), th.text_secondary, description="past search, clock")
            c.text((150, y + 50), past["query"], size=42, anchor="lm", max_width=c.width - 200)
            c.on_tap((0, y, c.width, y + 100), lambda q=past["query"]: (ctx.set_field("query", q), self.on_enter(ctx, "query")))
            y += 100

    def _results(self, ctx: AppContext, c: Canvas, query: str) -> None:
        th = c.theme
        top = ctx.content[1]
        found = search(query)

        def draw(y: float) -> None:
            if not found:
                c.text((50, y + 60), f"No results for \"{query}\"", size=44, max_width=c.width - 100)
            for vid in found:
                y = self._row(ctx, c, y, vid)

        scroll_list(c, ctx, top + 170, max(1, len(found)) * ROW_H + 100, draw)
        c.rect((0, top, c.width, top + 170), fill=th.background)
        c.icon("back", (30, top + 45, 110, top + 125), th.text, description="back arrow")
        c.on_tap((10, top + 20, 140, top + 150), ctx.back)
        search_bar(c, ctx, (150, top + 25, c.width - 40, top + 145), "query", "Search YouTube", value=query,
                   on_tap=lambda: self.open_search(ctx))

    def _video(self, ctx: AppContext, c: Canvas, vid: str) -> None:
        th = c.theme
        video = BY_ID[vid]
        top = ctx.content[1]
        liked = any(r["video_id"] == vid for r in ctx.data["liked"])
        subscribed = video[2] in ctx.data["subscriptions"]
        mine = [r for r in ctx.data["comments"] if r["video_id"] == vid]

        def draw(y: float) -> None:
            lines = wrap(c, video[1], 48, c.width - 80, bold=True)[:2]
            for i, line in enumerate(lines):
                c.text((40, y + 30 + i * 64), line, size=48, bold=True)
            y += 40 + len(lines) * 64
            c.text((40, y), f"{video[3]}  {video[4]}", size=34, color=th.text_secondary)
            y += 80
            c.icon("person", (40, y, 140, y + 100), (255, 255, 255), background=COLORS["gray"], circle=True,
                   description=f"{video[2]} channel")
            c.text((170, y + 50), video[2], size=42, bold=True, anchor="lm", max_width=520)
            sub = (c.width - 330, y + 5, c.width - 40, y + 95)
            c.rect(sub, fill=th.field_bg if subscribed else th.text, radius=45)
            c.text(((sub[0] + sub[2]) / 2, y + 50), "Subscribed" if subscribed else "Subscribe", size=38, bold=True,
                   anchor="mm", color=th.text if subscribed else th.background)
            c.widget(sub, "Subscribed button" if subscribed else "Subscribe button",
                     text="Subscribed" if subscribed else "Subscribe")
            c.on_tap(sub, lambda: self.subscribe(ctx, video[2]))
            y += 140
            like = (40, y, 360, y + 100)
            c.rect(like, fill=th.field_bg, radius=50)
            c.icon("thumbs_up", (75, y + 20, 135, y + 80), th.primary if liked else th.text,
                   description="thumbs up, liked" if liked else "thumbs up")
            c.text((160, y + 50), video[8] if not liked else f"{video[8]}+1", size=38, anchor="lm", bold=liked)
            c.on_tap(like, lambda: self.like(ctx, vid))
            for left, right, icon, name in ((390, 650, "share", "Share"), (680, c.width - 40, "download", "Download")):
                box = (left, y, right, y + 100)  # each pill as wide as its word needs
                c.rect(box, fill=th.field_bg, radius=50)
                c.icon(icon, (box[0] + 30, y + 20, box[0] + 90, y + 80), th.text, description=f"{name.lower()}, {icon.replace('_', ' ')} icon")
                c.text((box[0] + 110, y + 50), name, size=38, anchor="lm")
                c.on_tap(box, lambda: None)
            y += 150
            card = (30, y, c.width - 30, y + 260)
            c.rect(card, fill=th.field_bg, radius=30)
            label = c.text((70, y + 30), "Comments", size=42, bold=True)
            c.text((label[2] + 30, y + 36), video[9], size=38, color=th.text_secondary)
            author, text = ("You", mine[-1]["text"]) if mine else OTHERS[0]
            c.text((70, y + 110), author, size=32, color=th.text_secondary)
            c.text((70, y + 160), text, size=38, max_width=c.width - 140)
            c.on_tap(card, lambda: ctx.push({"view": "comments", "video": vid, "fields": {"comment": ""}}))
            y += 300
            c.text((40, y), "Up next", size=42, bold=True)
            y += 70
            for other in [v[0] for v in VIDEOS if v[0] != vid][:3]:
                y = self._row(ctx, c, y, other)

        scroll_list(c, ctx, top + 610, 1700, draw)
        self._thumbnail(c, (0, top, c.width, top + 610), video)

    def _comments(self, ctx: AppContext, c: Canvas, vid: str) -> None:
        th = c.theme
        top = ctx.content[1] + TITLE_BAR_H
        bottom = ctx.content[3]
        mine = [("You", r["text"]) for r in reversed(ctx.data["comments"]) if r["video_id"] == vid]
        everyone = mine + OTHERS

        def draw(y: float) -> None:
            for author, text in everyone:
                c.icon("person", (40, y + 20, 130, y + 110), (255, 255, 255),
                       background=COLORS["blue" if author == "You" else "gray"], circle=True, description="avatar")
                c.text((160, y + 20), author, size=34, color=th.text_secondary)
                lines = wrap(c, text, 40, c.width - 200)[:3]
                for i, line in enumerate(lines):
                    c.text((160, y + 70 + i * 55), line, size=40)
                y += 110 + len(lines) * 55

        scroll_list(c, ctx, top, len(everyone) * 220 + 200, draw)
        bar = bottom - 170
        c.rect((0, bar, c.width, bottom), fill=th.surface)
        c.line([(0, bar), (c.width, bar)], fill=th.divider, width=2)
        c.icon("person", (30, bar + 40, 120, bar + 130), (255, 255, 255), background=COLORS["blue"], circle=True,
               description="your avatar")
        text_field(c, ctx, (150, bar + 25, c.width - 160, bar + 145), "comment", "Add a comment...", size=40)
        c.icon("paper_plane", (c.width - 125, bar + 45, c.width - 45, bar + 125),
               th.primary if ctx.field("comment").strip() else th.text_secondary, description="send, paper plane")
        c.on_tap((c.width - 150, bar + 20, c.width, bar + 150), lambda: self.post(ctx))
        title_bar(c, ctx, "Comments", actions=[("close", "close, cross", ctx.back)])
