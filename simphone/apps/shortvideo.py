"""TikTok (com.zhiliaoapp.musically): a vertical feed of short videos.

Views: {"view": "main", "index"} the For You feed showing video number `index` (0 first;
the feed repeats after the last); a swipe up (Page down) shows the next video, a swipe
down the previous one. On the right: the author's avatar, the white heart (like; red once
liked, a second tap takes the like back), the white speech bubble (comments) and share;
at the bottom left the author, the caption with its hashtags and the sound. A tap on the
video pauses / plays it. {"view": "comments", "video", "fields": {"comment"}} the comment
sheet over the video with the "Add comment..." field; ENTER or the red "Post" arrow posts.

Data: {"liked": [{id, video_id, tags}], "comments": [{id, video_id, tags, text}],
"next_id"}. The feed order is the catalogue rotated by the seed: seed 0 shows the cat
videos 3rd, 4th, 6th and 10th.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

from typing import Any

from simphone.apps import App, AppContext, register
from simphone.apps.app_widgets import add_record, wrap
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import text_field

# id, author, caption, tags, background colour, glyph, sound, likes, comment count
VIDEOS: list[tuple[str, str, str, list[str], tuple[int, int, int], str, str, str, str]] = [
    ("v-dance", "@dancequeen", "New routine, who's trying it?", ["dance", "fyp"], (92, 36, 120), "music",
     "original sound - dancequeen", "98.2K", "1,204"),
    ("v-dumplings", "@chef.lin", "15-second dumplings", ["food", "cooking", "recipe"], (150, 70, 20), "star",
     "Cooking Beats - Kitchen", "45.1K", "880"),
    ("v-mochi", "@mochi.the.cat", "Mochi found a box again", ["cat", "pet", "cute"], (70, 90, 110), "cat",
     "Cute Paws - Meow Mix", "312K", "5,630"),
    ("v-kitten", "@kitten_daily", "Sleepy kitten yawns", ["cat", "pet", "kitten"], (110, 80, 60), "cat",
     "Lullaby - Soft Piano", "1.2M", "12.4K"),
    ("v-westlake", "@walk.east", "Sunset at West Lake", ["travel", "hangzhou"], (200, 110, 40), "sun",
     "Golden Hour - Chill", "20.3K", "310"),
    ("v-tabletop", "@orange.cat.club", "He knocked it off the table. Again.", ["cat", "pet", "funny"],
     (60, 60, 70), "cat", "Oops - Funny Sounds", "540K", "9,870"),
    ("v-zoomies", "@goldenbuddy", "Zoomies at the park", ["dog", "pet", "puppy"], (40, 110, 60), "dog",
     "Happy Day - Upbeat", "230K", "3,120"),
    ("v-prank", "@prankster", "Wait for the end", ["funny", "comedy"], (30, 60, 120), "play",
     "original sound - prankster", "77K", "2,045"),
    ("v-hoops", "@hoops.daily", "Half-court shot on the first try", ["basketball", "nba", "sports"],
     (120, 40, 40), "star", "Game Time - Sports", "150K", "1,876"),
    ("v-luna", "@luna.meows", "Luna learns to high-five", ["cat", "pet", "cute"], (90, 60, 100), "cat",
     "Cute Paws - Meow Mix", "88K", "1,010"),
]
BY_ID = {v[0]: v for v in VIDEOS}
OTHERS = ["So cute!!", "I watched this 10 times", "Where is this?", "Need this energy today"]
WHITE = (255, 255, 255)
PINK = (254, 44, 85)


def feed(seed: int) -> list[str]:
    """The For You feed's video ids for a seed (the catalogue rotated by the seed)."""
    k = seed % len(VIDEOS)
    return [v[0] for v in VIDEOS[k:] + VIDEOS[:k]]


@register
class TikTok(App):
    package = "com.zhiliaoapp.musically"
    label = "TikTok"
    activity = "com.ss.android.ugc.aweme.splash.SplashActivity"
    icon = "music"
    color = "black"

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"liked": [], "comments": [], "next_id": 1}

    def main_view(self) -> dict[str, Any]:
        return {"view": "main", "index": 0}

    def view_activity(self, view: dict[str, Any]) -> str:
        return "com.ss.android.ugc.aweme.main.MainActivity"

    def current(self, ctx: AppContext) -> str:
        ids = feed(ctx.seed)
        if ctx.view["view"] == "comments":
            return ctx.view["video"]
        return ids[int(ctx.view.get("index", 0)) % len(ids)]

    def render(self, ctx: AppContext, c: Canvas) -> None:
        vid = self.current(ctx)
        sheet = ctx.view["view"] == "comments"
        self._video(ctx, c, vid, interactive=not sheet)
        if sheet:
            self._comments(ctx, c, vid)

    # -- actions ----------------------------------------------------------------------
    def like(self, ctx: AppContext, vid: str) -> None:
        liked = ctx.data["liked"]
        mine = [r for r in liked if r["video_id"] == vid]
        if mine:
            liked.remove(mine[0])
        else:
            add_record(ctx.data, "liked", video_id=vid, tags=list(BY_ID[vid][3]))

    def _swipe(self, ctx: AppContext, dx: float, dy: float) -> bool:
        if abs(dy) < 100 or abs(dy) < abs(dx):
            return False
        index = int(ctx.view.get("index", 0))
        if dy < 0:
            ctx.view["index"] = index + 1
        elif index > 0:
            ctx.view["index"] = index - 1
        else:
            return False
        ctx.view.pop("paused", None)
        return True

    def post(self, ctx: AppContext) -> None:
        text = ctx.field("comment").strip()
        if not text:
            return
        vid = ctx.view["video"]
        add_record(ctx.data, "comments", video_id=vid, tags=list(BY_ID[vid][3]), text=text)
        ctx.set_field("comment", "")
        ctx.focus(None)

    def on_enter(self, ctx: AppContext, field: str) -> None:
        if field == "comment":
            self.post(ctx)

    # -- screens ----------------------------------------------------------------------
    def _video(self, ctx: AppContext, c: Canvas, vid: str, interactive: bool) -> None:
        video = BY_ID[vid]
        left, top, right, bottom = ctx.content
        c.rect((left, top, right, bottom), fill=(0, 0, 0))
        frame = (0, top + 150, c.width, bottom - 40)
        c.rect(frame, fill=video[4])
        cy = (frame[1] + frame[3]) / 2 - 100
        c.icon(video[5], (340, cy - 200, 740, cy + 200), tuple(min(255, v + 70) for v in video[4]),
               description="video picture")
        paused = bool(ctx.view.get("paused"))
        if paused:
            c.icon("play", (470, cy - 70, 610, cy + 70), WHITE, description="paused, white play triangle")
        # top tabs
        c.text((400, top + 75), "Following", size=44, color=(200, 200, 200), anchor="mm")
        c.text((680, top + 75), "For You", size=46, bold=True, color=WHITE, anchor="mm")
        c.rect((640, top + 115, 720, top + 122), fill=WHITE)
        c.icon("magnifier", (c.width - 110, top + 40, c.width - 40, top + 110), WHITE, description="search, white magnifier")
        if not interactive:
            return
        c.on_scroll((0, top, c.width, bottom), lambda dx, dy: self._swipe(ctx, dx, dy))
        c.on_tap((0, top + 150, c.width - 200, bottom - 450), lambda: ctx.view.update(paused=not paused))
        # right rail
        x = c.width - 100
        y = bottom - 1050
        c.icon("person", (x - 60, y, x + 60, y + 120), WHITE, background=COLORS["gray"], circle=True,
               description=f"{video[1]} avatar")
        liked = any(r["video_id"] == vid for r in ctx.data["liked"])
        y += 190
        c.icon("heart", (x - 60, y, x + 60, y + 110), PINK if liked else WHITE,
               description="red heart, liked" if liked else "white heart")
        c.text((x, y + 125), video[7], size=34, bold=True, color=WHITE, anchor="mt")
        c.on_tap((x - 90, y - 20, x + 90, y + 170), lambda: self.like(ctx, vid))
        y += 230
        c.icon("message", (x - 55, y, x + 55, y + 110), WHITE, description="white speech bubble")
        c.text((x, y + 125), video[8], size=34, bold=True, color=WHITE, anchor="mt")
        c.on_tap((x - 90, y - 20, x + 90, y + 170),
                 lambda: ctx.push({"view": "comments", "video": vid, "fields": {"comment": ""}}))
        y += 230
        c.icon("share", (x - 50, y, x + 50, y + 100), WHITE, description="white share arrow")
        c.text((x, y + 115), "Share", size=34, bold=True, color=WHITE, anchor="mt")
        c.on_tap((x - 90, y - 20, x + 90, y + 160), lambda: None)
        # caption
        y = bottom - 400
        c.text((40, y), video[1], size=46, bold=True, color=WHITE)
        caption = f"{video[2]} " + " ".join(f"#{t}" for t in video[3])
        for i, line in enumerate(wrap(c, caption, 40, c.width - 260)[:3]):
            c.text((40, y + 75 + i * 58), line, size=40, color=WHITE)
        c.icon("music", (40, bottom - 130, 90, bottom - 80), WHITE, description="sound, music note")
        c.text((110, bottom - 105), video[6], size=36, color=WHITE, anchor="lm", max_width=c.width - 300)

    def _comments(self, ctx: AppContext, c: Canvas, vid: str) -> None:
        th = c.theme
        _, top, _, bottom = ctx.content
        sheet = max(top + 200, bottom - 1300)
        c.on_tap((0, top, c.width, sheet), ctx.back)
        c.rect((0, sheet, c.width, bottom), fill=th.surface, radius=40)
        mine = [r["text"] for r in reversed(ctx.data["comments"]) if r["video_id"] == vid]
        c.text((540, sheet + 60), f"{BY_ID[vid][8]} comments", size=40, bold=True, anchor="mm")
        c.icon("close", (c.width - 110, sheet + 25, c.width - 40, sheet + 95), th.text, description="close, cross")
        c.on_tap((c.width - 140, sheet, c.width, sheet + 120), ctx.back)
        y = sheet + 140
        for author, text in [("You", t) for t in mine] + [(f"@viewer{i + 1}", t) for i, t in enumerate(OTHERS)]:
            if y > bottom - 300:
                break
            c.icon("person", (40, y, 130, y + 90), WHITE, background=COLORS["blue" if author == "You" else "gray"],
                   circle=True, description="avatar")
            c.text((160, y), author, size=34, color=th.text_secondary)
            c.text((160, y + 45), text, size=40, max_width=c.width - 200)
            y += 150
        bar = bottom - 160
        c.line([(0, bar), (c.width, bar)], fill=th.divider, width=2)
        text_field(c, ctx, (40, bar + 25, c.width - 170, bar + 135), "comment", "Add comment...", size=40)
        c.icon("paper_plane", (c.width - 130, bar + 40, c.width - 50, bar + 120),
               PINK if ctx.field("comment").strip() else th.text_secondary, description="post comment, paper plane")
        c.on_tap((c.width - 160, bar + 10, c.width, bar + 150), lambda: self.post(ctx))
