"""Google Maps (com.google.android.apps.maps): search places, directions and navigation,
around Hangzhou.

Views: {"view": "main"} the map with the "Search here" bar and category chips;
{"view": "list", "query", "category", "scroll"} results nearest first (the first has a
"Directions" button; a tap on any other opens its page); {"view": "place", "place"} a
place page ("Directions", "Save", "Share"); {"view": "route", "place", "mode"} the route
from "Your location" with travel modes and "Start"; {"view": "navigate", "place"}
turn-by-turn navigation with "Exit". A search naming one place best ("Hangzhou West
Lake") opens its page; a category ("gas station", "coffee") lists the nearby ones. BACK
from navigation shows the route again while navigation goes on; only "Exit" ends it.

Data: {"searches": [{id, query}], "navigation": {active, destination, category, mode},
"saved": [place ids], "next_id"}. Distances of the category places are drawn from the seed.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

import random
from typing import Any

from simphone.apps import App, AppContext, register
from simphone.apps.app_widgets import add_record, matches, query_words, search_bar, show_results
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import TITLE_BAR_H, button, scroll_list, title_bar

# id, name, category, address, names it is searched by, map position (0..1)
PLACES: list[tuple[str, str, str, str, str, tuple[float, float]]] = [
    ("west_lake", "West Lake", "scenic spot", "Xihu District, Hangzhou, Zhejiang",
     "hangzhou west lake xihu scenic", (0.30, 0.45)),
    ("leifeng", "Leifeng Pagoda", "scenic spot", "15 Nanshan Rd, Xihu District, Hangzhou",
     "leifeng pagoda hangzhou", (0.35, 0.62)),
    ("lingyin", "Lingyin Temple", "temple", "1 Fayun Lane, Xihu District, Hangzhou",
     "lingyin temple hangzhou", (0.10, 0.40)),
    ("east_station", "Hangzhou East Railway Station", "train station", "Tiancheng Rd, Shangcheng District",
     "hangzhou east railway station train", (0.85, 0.30)),
    ("hefang", "Hefang Street", "shopping street", "Hefang St, Shangcheng District, Hangzhou",
     "hefang street hangzhou shopping", (0.50, 0.55)),
    ("sinopec", "Sinopec Gas Station (Wensan Rd)", "gas station", "Wensan Rd, Xihu District",
     "sinopec gas station petrol fuel", (0.55, 0.25)),
    ("petrochina", "PetroChina Gas Station (Tianmushan Rd)", "gas station", "Tianmushan Rd, Xihu District",
     "petrochina gas station petrol fuel", (0.40, 0.20)),
    ("shell", "Shell Gas Station (Gudun Rd)", "gas station", "Gudun Rd, Xihu District",
     "shell gas station petrol fuel", (0.62, 0.12)),
    ("grandma", "Grandma's Home Restaurant", "restaurant", "3 Hubin Rd, Shangcheng District",
     "grandma's home restaurant food dinner lunch", (0.47, 0.42)),
    ("green_tea", "Green Tea Restaurant", "restaurant", "83 Longjing Rd, Xihu District",
     "green tea restaurant food dinner lunch", (0.22, 0.58)),
    ("starbucks", "Starbucks (Hubin)", "coffee shop", "Hubin Rd, Shangcheng District",
     "starbucks coffee cafe", (0.52, 0.40)),
    ("hyatt", "Grand Hyatt Hangzhou", "hotel", "28 Hubin Rd, Shangcheng District", "grand hyatt hotel",
     (0.50, 0.36)),
]
BY_ID = {p[0]: p for p in PLACES}
CATEGORIES = {"gas station": ("gas", "petrol", "fuel"), "restaurant": ("restaurant", "food", "dinner", "lunch"),
              "coffee shop": ("coffee", "cafe"), "hotel": ("hotel",)}
CHIPS = [("Restaurants", "restaurant"), ("Gas", "gas station"), ("Coffee", "coffee shop"), ("Hotels", "hotel")]
HERE = (0.5, 0.33)
MODES = [("drive", "Drive", 1.6), ("transit", "Transit", 3.5), ("walk", "Walk", 12.0)]  # minutes per km
MINUTES_PER_KM = {key: per_km for key, _, per_km in MODES}
ROW_H = 230


def distance_km(seed: int, place_id: str) -> float:
    """How far a place is from "Your location", the same for the same seed."""
    place = BY_ID[place_id]
    straight = ((place[5][0] - HERE[0]) ** 2 + (place[5][1] - HERE[1]) ** 2) ** 0.5 * 12
    return round(straight * random.Random(f"maps-{seed}-{place_id}").uniform(1.1, 1.6) + 0.3, 1)


def category_of(query: str) -> str | None:
    words = query_words(query)
    for category, keys in CATEGORIES.items():
        if any(w in keys or w == category for w in words) or query.casefold().strip() == category:
            return category
    return None


def name_score(query: str, place_id: str) -> int:
    place = BY_ID[place_id]
    return matches(query, (place[1], place[4]))


def find(seed: int, query: str) -> tuple[str | None, list[str]]:
    """(category or None, place ids): the place a query names in full, else a category's places
    nearest first, else the places the query names ("Green Tea Restaurant" is that place, not
    the nearest restaurant, as in Maps)."""
    exact = [p[0] for p in PLACES if p[1].casefold() == query.casefold().strip()]
    if exact:
        return None, exact
    category = category_of(query)
    if category is not None:
        ids = [p[0] for p in PLACES if p[2] == category]
        return category, sorted(ids, key=lambda i: distance_km(seed, i))
    scored = sorted(((name_score(query, p[0]), i, p[0]) for i, p in enumerate(PLACES)), key=lambda t: (-t[0], t[1]))
    return None, [pid for score, _, pid in scored if score > 0]


@register
class Maps(App):
    package = "com.google.android.apps.maps"
    label = "Google Maps"
    activity = "com.google.android.maps.MapsActivity"
    icon = "pin"
    color = "green"

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"searches": [], "navigation": {"active": False, "destination": None, "category": None, "mode": None},
                "saved": [], "next_id": 1}

    def render(self, ctx: AppContext, c: Canvas) -> None:
        view = ctx.view
        name = view["view"]
        if name == "list":
            self._list(ctx, c, view)
        elif name == "place":
            self._place(ctx, c, view["place"])
        elif name == "route":
            self._route(ctx, c, view)
        elif name == "navigate":
            self._navigate(ctx, c, view["place"])
        else:
            self._main(ctx, c)

    # -- search -----------------------------------------------------------------------
    def on_enter(self, ctx: AppContext, field: str) -> None:
        query = ctx.field("search").strip()
        if field == "search" and query:
            ctx.focus(None)
            self.search(ctx, query)

    def search(self, ctx: AppContext, query: str) -> None:
        add_record(ctx.data, "searches", query=query)
        category, ids = find(ctx.seed, query)
        if category is None and ids and (len(ids) == 1 or name_score(query, ids[0]) > name_score(query, ids[1])):
            view = {"view": "place", "place": ids[0]}
        else:
            view = {"view": "list", "query": query, "category": category}
        show_results(ctx, view, "search")

    # -- map --------------------------------------------------------------------------
    def _map(self, c: Canvas, box: tuple[float, float, float, float], pins: list[str], route_to: str | None = None) -> None:
        left, top, right, bottom = box
        dark = c.theme.name == "dark"
        c.rect(box, fill=(36, 40, 44) if dark else (236, 240, 228))
        w, h = right - left, bottom - top

        # places land below the floating search bar (170 units, and a pin is 80 tall) on any map height
        clear = max(0.25 * h, 260)

        def at(pos: tuple[float, float]) -> tuple[float, float]:
            return (left + (0.05 + 0.9 * pos[0]) * w, top + clear + pos[1] * (0.95 * h - clear))

        lake = BY_ID["west_lake"][5]
        cx, cy = at(lake)
        c.ellipse((cx - w * 0.12, cy - h * 0.1, cx + w * 0.1, cy + h * 0.12), fill=(58, 90, 120) if dark else (170, 210, 240))
        road = (90, 94, 100) if dark else (255, 255, 255)
        for y in (0.15, 0.35, 0.7, 0.9):
            c.line([(left, top + y * h), (right, top + y * h + 20)], fill=road, width=16)
        for x in (0.2, 0.45, 0.7, 0.9):
            c.line([(left + x * w, top), (left + x * w - 30, bottom)], fill=road, width=16)
        if route_to is not None:
            hx, hy = at(HERE)
            tx, ty = at(BY_ID[route_to][5])
            c.line([(hx, hy), (hx, ty), (tx, ty)], fill=COLORS["blue"], width=14)
        for pid in pins:
            px, py = at(BY_ID[pid][5])
            c.icon("pin", (px - 40, py - 80, px + 40, py), COLORS["red"], description=f"red map pin: {BY_ID[pid][1]}")
        hx, hy = at(HERE)
        c.ellipse((hx - 30, hy - 30, hx + 30, hy + 30), fill=(255, 255, 255))
        c.ellipse((hx - 22, hy - 22, hx + 22, hy + 22), fill=COLORS["blue"])
        c.widget((hx - 30, hy - 30, hx + 30, hy + 30), "your location, blue dot")

    def _main(self, ctx: AppContext, c: Canvas) -> None:
        th = c.theme
        top, bottom = ctx.content[1], ctx.content[3]
        self._map(c, (0, top, c.width, bottom), [])
        search_bar(c, ctx, (40, top + 30, c.width - 40, top + 170), "search", "Search here", fill=th.surface)
        if ctx.focused is None:
            x = 40
            for label, category in CHIPS:
                w = c.text_size(label, 38)[0] + 80
                box = (x, top + 200, x + w, top + 290)
                c.rect(box, fill=th.surface, radius=45, outline=th.divider)
                c.text((x + 40, top + 245), label, size=38, anchor="lm")
                c.on_tap(box, lambda q=category: self.search(ctx, q))
                x += w + 24
            sheet = bottom - 260
            c.rect((0, sheet, c.width, bottom), fill=th.surface, radius=40)
            c.text((60, sheet + 50), "Latest in Hangzhou", size=44, bold=True)
            c.text((60, sheet + 130), "Explore nearby places: food, sights, gas", size=36, color=th.text_secondary)

    # -- results ----------------------------------------------------------------------
    def _list(self, ctx: AppContext, c: Canvas, view: dict[str, Any]) -> None:
        th = c.theme
        query = view["query"]
        _, ids = find(ctx.seed, query)
        top = ctx.content[1]
        map_bottom = top + 700
        self._map(c, (0, top, c.width, map_bottom), ids)

        def draw(y: float) -> None:
            if not ids:
                c.text((60, y + 60), f"No results for {query}", size=44, max_width=c.width - 120)
            for i, pid in enumerate(ids):
                place = BY_ID[pid]
                c.text((60, y + 30), place[1], size=46, bold=True, max_width=c.width - 120)
                c.text((60, y + 100), f"{place[2].capitalize()} · {distance_km(ctx.seed, pid)} km", size=36,
                       color=th.text_secondary, max_width=c.width - 120)
                c.text((60, y + 150), place[3], size=34, color=th.text_secondary, max_width=c.width - 120)
                c.on_tap((0, y, c.width, y + ROW_H), lambda p=pid: ctx.push({"view": "place", "place": p}))
                if i == 0:
                    c.text((60, y + 205), "Closest" if view.get("category") else "Best match", size=34,
                           color=COLORS["green"])
                    button(c, (60, y + 270, 440, y + 370), "Directions",
                           lambda p=pid: ctx.push({"view": "route", "place": p, "mode": "drive"}))
                    y += 150
                c.line([(40, y + ROW_H - 2), (c.width - 40, y + ROW_H - 2)], fill=th.divider, width=2)
                y += ROW_H

        scroll_list(c, ctx, map_bottom, len(ids) * ROW_H + 400, draw)
        bar = (40, top + 30, c.width - 40, top + 170)
        if ctx.focused == "search":
            search_bar(c, ctx, bar, "search", "Search here", fill=th.surface)
        else:
            search_bar(c, ctx, bar, "search", "Search here", fill=th.surface,
                       on_tap=lambda: (ctx.set_field("search", ""), ctx.focus("search")), value=query)

    def _place(self, ctx: AppContext, c: Canvas, pid: str) -> None:
        th = c.theme
        place = BY_ID[pid]
        top = ctx.content[1] + TITLE_BAR_H
        self._map(c, (0, top, c.width, top + 600), [pid])
        y = top + 640
        c.text((60, y), place[1], size=60, bold=True, max_width=c.width - 120)
        rating = 4.0 + random.Random(f"rating-{pid}").randint(0, 9) / 10
        c.text((60, y + 100), f"{rating:.1f} ★  ·  {place[2].capitalize()}", size=40, color=th.text_secondary)
        c.text((60, y + 170), place[3], size=38, color=th.text_secondary, max_width=c.width - 120)
        c.text((60, y + 240), f"{distance_km(ctx.seed, pid)} km from your location", size=38, color=th.text_secondary)
        saved = pid in ctx.data["saved"]
        button(c, (60, y + 340, 420, y + 450), "Directions", lambda: ctx.push({"view": "route", "place": pid, "mode": "drive"}))
        button(c, (450, y + 340, 730, y + 450), "Saved" if saved else "Save", lambda: self._save(ctx, pid), filled=False)
        button(c, (760, y + 340, 1020, y + 450), "Share", lambda: None, filled=False)
        title_bar(c, ctx, "", actions=[("share", "share icon", lambda: None)])

    def _save(self, ctx: AppContext, pid: str) -> None:
        saved = ctx.data["saved"]
        if pid in saved:
            saved.remove(pid)
        else:
            saved.append(pid)

    # -- directions -------------------------------------------------------------------
    def _route(self, ctx: AppContext, c: Canvas, view: dict[str, Any]) -> None:
        th = c.theme
        pid, mode = view["place"], view.get("mode", "drive")
        place = BY_ID[pid]
        km = distance_km(ctx.seed, pid)
        top = ctx.content[1] + TITLE_BAR_H
        c.text((60, top + 10), "Your location", size=40, max_width=c.width - 120)
        c.text((60, top + 80), place[1], size=40, bold=True, max_width=c.width - 120)
        y = top + 160
        for i, (key, name, per_km) in enumerate(MODES):
            box = (40 + i * 340, y, 360 + i * 340, y + 100)
            selected = key == mode
            c.rect(box, fill=(210, 227, 252) if selected and th.name == "light" else th.field_bg, radius=50)
            c.text(((box[0] + box[2]) / 2, y + 50), f"{name} {round(km * per_km)} min", size=36, anchor="mm",
                   bold=selected)
            c.on_tap(box, lambda k=key: ctx.view.update(mode=k))
        map_top = y + 130
        self._map(c, (0, map_top, c.width, ctx.content[3] - 300), [pid], route_to=pid)
        sheet = ctx.content[3] - 300
        c.rect((0, sheet, c.width, ctx.content[3]), fill=th.surface)
        minutes = round(km * MINUTES_PER_KM[mode])
        c.text((60, sheet + 40), f"{minutes} min ({km} km)", size=52, bold=True, color=COLORS["green"])
        c.text((60, sheet + 120), "Fastest route now", size=36, color=th.text_secondary)
        nav = ctx.data["navigation"]
        going = nav["active"] and nav["destination"] == place[1]
        button(c, (60, sheet + 190, 400, sheet + 280), "Resume" if going else "Start", lambda: self.start(ctx, pid, mode))
        button(c, (430, sheet + 190, 720, sheet + 280), "Steps", lambda: None, filled=False)
        title_bar(c, ctx, "Directions")

    def start(self, ctx: AppContext, pid: str, mode: str) -> None:
        place = BY_ID[pid]
        ctx.data["navigation"] = {"active": True, "destination": place[1], "category": place[2], "mode": mode}
        ctx.push({"view": "navigate", "place": pid})

    def _navigate(self, ctx: AppContext, c: Canvas, pid: str) -> None:
        th = c.theme
        place = BY_ID[pid]
        top, bottom = ctx.content[1], ctx.content[3]
        self._map(c, (0, top, c.width, bottom), [pid], route_to=pid)
        c.rect((0, top, c.width, top + 260), fill=(15, 110, 70))
        c.icon("location", (40, top + 60, 160, top + 180), (255, 255, 255), description="white turn arrow")
        c.text((200, top + 70), "Head north", size=60, bold=True, color=(255, 255, 255))
        c.text((200, top + 160), f"toward {place[1]}", size=40, color=(255, 255, 255), max_width=c.width - 240)
        nav = ctx.data["navigation"]
        if not nav["active"]:
            return
        c.rect((0, bottom - 240, c.width, bottom), fill=th.surface)
        km = distance_km(ctx.seed, pid)
        per_km = MINUTES_PER_KM[nav.get("mode") or "drive"]
        c.text((60, bottom - 200), f"{round(km * per_km)} min", size=56, bold=True, color=COLORS["green"])
        c.text((60, bottom - 110), f"{km} km · Navigating to {place[1]}", size=36, color=th.text_secondary,
               max_width=c.width - 400)
        button(c, (c.width - 320, bottom - 190, c.width - 60, bottom - 80), "Exit", lambda: self.stop(ctx))

    def stop(self, ctx: AppContext) -> None:
        ctx.data["navigation"]["active"] = False
        ctx.finish()
