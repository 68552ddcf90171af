"""Chrome (com.android.chrome): a browser over a small offline web.

Views: {"view": "main"} the new-tab page ("Google" and the "Search or type web address"
field); {"view": "results", "query", "scroll"} a results page: an answer card when the
corpus has one (today's Lakers game with its score, a person's knowledge panel) and the
matching pages; {"view": "page", "url", "scroll"} one page. The address bar of a results
page or a page shows the query or URL; a tap clears it for a new one. ENTER submits: text
that looks like an address ("nba.com/lakers", "https://…") opens that page, anything else
is a search.

Data: {"searches": [{id, query}], "history": [{id, url, title}], "tab": {query, url,
title} | null, "next_id"}. The Lakers score is drawn from the seed and the phone's date.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

import random
import re
from typing import Any

from simphone.apps import App, AppContext, register
from simphone.apps.app_widgets import (
    add_record,
    best_first,
    query_words,
    search_bar,
    show_results,
    wrap,
)
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import scroll_list

BAR_H = 170
RESULT_H = 300

# url, title, snippet, keywords, body paragraphs
PAGES: list[tuple[str, str, str, str, list[str]]] = [
    ("https://www.nba.com/lakers/schedule", "Los Angeles Lakers Schedule and Scores | NBA.com",
     "Official schedule and results of the Los Angeles Lakers: box scores, highlights, tickets.",
     "lakers game today result score nba schedule los angeles basketball",
     ["Los Angeles Lakers schedule.", "Every game of the season with its final score, the box score and "
      "the highlights.", "Tickets for the next home games at Crypto.com Arena."]),
    ("https://www.espn.com/nba/team/_/name/lal", "Lakers Scores, Stats and Highlights - ESPN",
     "Get the latest Los Angeles Lakers news, scores, stats and the game recap.",
     "lakers game today result score espn recap stats nba",
     ["LeBron James and Anthony Davis led the Lakers tonight.", "Game recap, player stats and "
      "post-game reactions."]),
    ("https://en.wikipedia.org/wiki/Taylor_Swift", "Taylor Swift - Wikipedia",
     "Taylor Alison Swift (born December 13, 1989) is an American singer-songwriter.",
     "taylor swift singer songwriter wikipedia biography music",
     ["Taylor Alison Swift (born December 13, 1989) is an American singer-songwriter.",
      "Her albums include Fearless, 1989, Folklore and Midnights.", "She has won 14 Grammy Awards."]),
    ("https://www.taylorswift.com", "Taylor Swift | Official Website",
     "The official website of Taylor Swift: music, tour dates and news.",
     "taylor swift official website tour music eras",
     ["Taylor Swift official website.", "The Eras Tour: dates and tickets."]),
    ("https://www.billboard.com/artist/taylor-swift", "Taylor Swift | Billboard",
     "Taylor Swift chart history, news and biography on Billboard.",
     "taylor swift billboard chart news",
     ["Taylor Swift on the Billboard charts: number one albums and singles."]),
    ("https://en.wikipedia.org/wiki/Stephen_Curry", "Stephen Curry - Wikipedia",
     "Wardell Stephen Curry II (born March 14, 1988) is an American professional basketball player.",
     "stephen curry warriors basketball nba wikipedia",
     ["Stephen Curry plays for the Golden State Warriors.", "He is a four-time NBA champion."]),
    ("https://en.wikipedia.org/wiki/West_Lake", "West Lake - Wikipedia",
     "West Lake is a freshwater lake in Hangzhou, China, a UNESCO World Heritage Site.",
     "hangzhou west lake china travel wikipedia",
     ["West Lake is a freshwater lake in Hangzhou.", "It is surrounded by temples, pagodas and gardens."]),
    ("https://weather.com", "Weather forecast - weather.com",
     "Today's forecast, hourly weather and the 10-day outlook.", "weather forecast today temperature",
     ["Today's weather forecast."]),
    ("https://www.google.com/maps", "Google Maps", "Find local businesses, view maps and get directions.",
     "maps directions navigation", ["Google Maps."]),
]
TEAMS = ["Warriors", "Celtics", "Nuggets", "Suns", "Clippers", "Heat", "Bucks", "Mavericks"]


def lakers_game(seed: int, day: str) -> dict[str, Any]:
    """Today's Lakers game (opponent and final score), the same for the same seed and date."""
    rng = random.Random(f"lakers-{seed}-{day}")
    lakers, other = rng.randint(98, 128), rng.randint(95, 125)
    if lakers == other:
        lakers += 3
    return {"opponent": TEAMS[rng.randrange(len(TEAMS))], "lakers": lakers, "other": other}


def search(query: str) -> list[tuple[str, str, str, str, list[str]]]:
    return best_first(query, PAGES, lambda p: (p[1], p[3]))


def looks_like_url(text: str) -> bool:
    return " " not in text and (text.startswith(("http://", "https://")) or re.fullmatch(r"[\w-]+(\.[\w-]+)+(/\S*)?", text) is not None)


def normalize_url(text: str) -> str:
    return text if text.startswith(("http://", "https://")) else f"https://{text}"


def find_page(url: str) -> tuple[str, str, str, str, list[str]] | None:
    bare = url.split("://", 1)[-1].removeprefix("www.").rstrip("/")
    for page in PAGES:
        if page[0].split("://", 1)[-1].removeprefix("www.").rstrip("/") == bare:
            return page
    return None


@register
class Chrome(App):
    package = "com.android.chrome"
    label = "Chrome"
    activity = "com.google.android.apps.chrome.Main"
    icon = "globe"
    color = "blue"
    schemes = ("http", "https")

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"searches": [], "history": [], "tab": None, "next_id": 1}

    def on_intent(self, ctx: AppContext, action: str, data: str | None, extras: dict[str, str]) -> dict | None:
        if data and data.startswith(("http://", "https://")):
            page = find_page(data)
            self._visit(ctx, data, page[1] if page else data)
            return {"view": "page", "url": data}
        return self.main_view()

    def render(self, ctx: AppContext, c: Canvas) -> None:
        view = ctx.view
        if view["view"] == "results":
            self._results(ctx, c, view["query"])
        elif view["view"] == "page":
            self._page(ctx, c, view["url"])
        else:
            self._new_tab(ctx, c)

    # -- input ------------------------------------------------------------------------
    def on_enter(self, ctx: AppContext, field: str) -> None:
        text = ctx.field("address").strip()
        if field != "address" or not text:
            return
        ctx.focus(None)
        if looks_like_url(text):
            url = normalize_url(text)
            page = find_page(url)
            self._visit(ctx, url, page[1] if page else url)
            show_results(ctx, {"view": "page", "url": url}, "address")
        else:
            add_record(ctx.data, "searches", query=text)
            ctx.data["tab"] = {"query": text, "url": None, "title": f"{text} - Google Search"}
            show_results(ctx, {"view": "results", "query": text}, "address")


    def _visit(self, ctx: AppContext, url: str, title: str) -> None:
        add_record(ctx.data, "history", url=url, title=title)
        ctx.data["tab"] = {"query": None, "url": url, "title": title}

    def _open(self, ctx: AppContext, page: tuple[str, str, str, str, list[str]]) -> None:
        self._visit(ctx, page[0], page[1])
        ctx.push({"view": "page", "url": page[0]})

    # -- screens ----------------------------------------------------------------------
    def _address_bar(self, ctx: AppContext, c: Canvas, shown: str) -> None:
        top = ctx.content[1]
        c.rect((0, top, c.width, top + BAR_H), fill=c.theme.background)
        box = (40, top + 25, c.width - 150, top + BAR_H - 25)
        if ctx.focused == "address":
            search_bar(c, ctx, box, "address", "Search or type web address")
        else:
            def edit() -> None:
                ctx.set_field("address", "")
                ctx.focus("address")
            search_bar(c, ctx, box, "address", "Search or type web address", on_tap=edit, value=shown)
        c.icon("more", (c.width - 110, top + 45, c.width - 30, top + 125), c.theme.text, description="more options, three dots")
        c.on_tap((c.width - 130, top + 20, c.width, top + 150), lambda: None)
        c.line([(0, top + BAR_H - 1), (c.width, top + BAR_H - 1)], fill=c.theme.divider, width=2)

    def _new_tab(self, ctx: AppContext, c: Canvas) -> None:
        th = c.theme
        top = ctx.content[1]
        colors = ["blue", "red", "yellow", "blue", "green", "red"]
        x = 540 - c.text_size("Google", 130, True)[0] / 2
        boxes = []
        for ch, color in zip("Google", colors, strict=True):
            box = c.text((x, top + 260), ch, size=130, bold=True, color=COLORS[color], record=False)
            boxes.append(box)
            x = box[2] + 2
        c.record("text", (boxes[0][0], boxes[0][1], boxes[-1][2], boxes[-1][3]), text="Google")
        search_bar(c, ctx, (60, top + 480, c.width - 60, top + 620), "address", "Search or type web address")
        shortcuts = [("YouTube", "play", "red", "https://www.youtube.com"), ("Wikipedia", "globe", "gray",
                     "https://en.wikipedia.org/wiki/Taylor_Swift"), ("NBA", "star", "blue",
                     "https://www.nba.com/lakers/schedule"), ("Weather", "sun", "orange", "https://weather.com")]
        if ctx.focused is None:
            for i, (name, icon, color, url) in enumerate(shortcuts):
                cx = 160 + i * 253
                c.icon(icon, (cx - 60, top + 720, cx + 60, top + 840), (255, 255, 255), background=COLORS[color],
                       circle=True, description=f"{name} shortcut")
                c.text((cx, top + 870), name, size=36, anchor="mt", color=th.text_secondary)
                c.on_tap((cx - 120, top + 700, cx + 120, top + 930),
                         lambda u=url: (self._visit(ctx, u, u), ctx.push({"view": "page", "url": u})))

    def _results(self, ctx: AppContext, c: Canvas, query: str) -> None:
        th = c.theme
        top = ctx.content[1] + BAR_H
        found = search(query)
        words = set(query_words(query))
        card = self._answer_card(ctx, words)

        def draw(y: float) -> None:
            y += 30
            if card is not None:
                y = card(c, y)
            if not found:
                lines = wrap(c, f"Your search - {query} - did not match any documents.", 40, c.width - 120)
                for line in lines:
                    c.text((60, y + 40), line, size=40)
                    y += 60
                c.text((60, y + 80), "Try different keywords.", size=40, color=th.text_secondary)
            for page in found:
                url, title, snippet = page[0], page[1], page[2]
                c.text((60, y + 20), url.split("://", 1)[1].split("/", 1)[0], size=34, color=th.text_secondary)
                c.text((60, y + 75), title, size=46, color=COLORS["blue"], max_width=c.width - 120)
                for i, line in enumerate(wrap(c, snippet, 36, c.width - 120)[:2]):
                    c.text((60, y + 155 + i * 50), line, size=36, color=th.text_secondary)
                c.on_tap((0, y, c.width, y + RESULT_H - 20), lambda p=page: self._open(ctx, p))
                c.line([(40, y + RESULT_H - 10), (c.width - 40, y + RESULT_H - 10)], fill=th.divider, width=2)
                y += RESULT_H

        height = 60 + (card_height(words)) + max(1, len(found)) * RESULT_H + 100
        scroll_list(c, ctx, top, height, draw)
        self._address_bar(ctx, c, query)

    def _answer_card(self, ctx: AppContext, words: set[str]):
        th = ctx.theme
        kind = answer_kind(words)
        if kind == "lakers":
            game = lakers_game(ctx.seed, ctx.clock.date().isoformat())
            day = ctx.clock.strftime("%B %-d, %Y")

            def lakers(c: Canvas, y: float) -> float:
                c.rect((40, y, c.width - 40, y + 520), fill=th.surface, radius=30, outline=th.divider)
                c.text((80, y + 40), f"NBA · Final · Today, {day}", size=36, color=th.text_secondary)
                c.text((80, y + 130), "Lakers", size=56, bold=True)
                c.text((c.width - 80, y + 130), str(game["lakers"]), size=80, bold=True, anchor="ra")
                c.text((80, y + 260), game["opponent"], size=56, bold=True)
                c.text((c.width - 80, y + 260), str(game["other"]), size=80, bold=True, anchor="ra")
                won = game["lakers"] > game["other"]
                c.text((80, y + 400), f"Lakers {'win' if won else 'lose'} {game['lakers']}-{game['other']} "
                       f"against the {game['opponent']}", size=40, max_width=c.width - 160)
                return y + 560
            return lakers
        if kind == "taylor swift":
            def taylor(c: Canvas, y: float) -> float:
                c.rect((40, y, c.width - 40, y + 520), fill=th.surface, radius=30, outline=th.divider)
                c.text((80, y + 40), "Taylor Swift", size=64, bold=True)
                c.text((80, y + 130), "American singer-songwriter", size=40, color=th.text_secondary)
                facts = ["Born: December 13, 1989 (age 34)", "in West Reading, Pennsylvania",
                         "Albums: 1989, Folklore, Midnights", "Awards: 14 Grammy Awards"]
                for i, fact in enumerate(facts):  # each on its own line: nothing cut by an ellipsis
                    c.text((80, y + 215 + i * 65), fact, size=36, max_width=c.width - 160)
                return y + 560
            return taylor
        return None

    def _page(self, ctx: AppContext, c: Canvas, url: str) -> None:
        th = c.theme
        top = ctx.content[1] + BAR_H
        page = find_page(url)

        def draw(y: float) -> None:
            if page is None:
                c.text((60, y + 200), "This site can't be reached", size=52, bold=True, max_width=c.width - 120)
                c.text((60, y + 300), f"{url.split('://', 1)[-1]} took too long to respond.", size=38,
                       color=th.text_secondary, max_width=c.width - 120)
                return
            c.text((60, y + 40), page[1], size=50, bold=True, max_width=c.width - 120)
            y += 160
            for para in page[4]:
                for line in wrap(c, para, 40, c.width - 120):
                    c.text((60, y), line, size=40)
                    y += 60
                y += 30

        scroll_list(c, ctx, top, 1200, draw)
        self._address_bar(ctx, c, url.split("://", 1)[-1])


def answer_kind(words: set[str]) -> str | None:
    """Which answer card a query's words call for (drawn above the results), if any."""
    if "laker" in words:
        return "lakers"
    if {"taylor", "swift"} <= words:
        return "taylor swift"
    return None


def card_height(words: set[str]) -> float:
    return 560 if answer_kind(words) else 0

