"""Alibaba.com (com.alibaba.intl.android.apps.poseidon): search products, product pages,
a cart.

Views: {"view": "main", "scroll"} Home: the orange header with the "Search" bar,
categories and recommended products; {"view": "results", "query", "scroll"} matching
products (a tap opens one); {"view": "product", "product", "added"} a product page with
price, minimum order, supplier and the "Add to cart" / "Chat now" buttons at the bottom;
{"view": "cart"} the cart (the cart icon at the top right, or the Cart tab).
"Add to cart" adds the minimum order quantity; adding the same product again adds to its
line.

Data: {"searches": [{id, query}], "viewed": [{id, product_id, title}] (product pages
opened), "cart": [{id, product_id, title, price, quantity}], "next_id"}.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

from typing import Any

from simphone.apps import App, AppContext, register
from simphone.apps.app_widgets import (
    TAB_BAR_H,
    add_record,
    best_first,
    search_bar,
    submit_search,
    tab_bar,
    wrap,
)
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import TITLE_BAR_H, button, scroll_list, title_bar

ORANGE = (255, 106, 0)
# id, title, unit price (US$), price range shown, minimum order, supplier, words, colour, glyph
PRODUCTS: list[tuple[str, str, float, str, int, str, str, str, str]] = [
    ("cap-baseball", "Baseball Cap", 1.85, "US$1.20-2.50", 50, "Guangzhou Sunrise Headwear Co., Ltd.",
     "cap caps hat baseball custom embroidered cotton", "blue", "cap"),
    ("cap-trucker", "Trucker Mesh Cap", 1.40, "US$0.90-1.80", 100, "Yiwu Bright Caps Factory",
     "cap caps hat trucker mesh", "red", "cap"),
    ("cap-snapback", "Snapback Hip Hop Cap", 2.10, "US$1.60-2.90", 50, "Shenzhen Top Headwear Ltd.",
     "cap caps hat snapback flat", "black", "cap"),
    ("hat-bucket", "Bucket Hat", 1.60, "US$1.10-2.20", 100, "Ningbo Summer Hats Co., Ltd.",
     "hat bucket fisherman sun", "green", "sun"),
    ("hat-beanie", "Knitted Beanie", 1.30, "US$0.80-1.70", 200, "Hebei Warm Knit Co., Ltd.",
     "hat beanie winter knitted", "purple", "moon"),
    ("earbuds", "Wireless Earbuds", 6.50, "US$4.90-8.20", 10, "Shenzhen Sound Tech Co., Ltd.",
     "earbuds headphones bluetooth wireless audio", "gray", "speaker"),
    ("phone-case", "Silicone Phone Case", 0.75, "US$0.45-1.10", 100, "Dongguan Case Maker Ltd.",
     "phone case silicone cover", "pink", "phone"),
    ("yoga-mat", "Yoga Mat", 3.80, "US$2.90-4.60", 50, "Zhejiang Fitness Goods Co.",
     "yoga mat fitness exercise", "teal", "person"),
    ("bottle", "Stainless Steel Water Bottle", 2.40, "US$1.80-3.20", 100, "Yongkang Drinkware Factory",
     "water bottle stainless steel", "blue", "cloud"),
    ("lamp", "LED Desk Lamp", 5.20, "US$3.90-6.80", 20, "Zhongshan Lighting Co., Ltd.",
     "led desk lamp light", "yellow", "sun"),
    ("tshirt", "Cotton T-Shirt", 2.20, "US$1.50-3.00", 100, "Guangzhou Apparel Co., Ltd.",
     "t-shirt tshirt shirt cotton apparel", "orange", "person"),
]
BY_ID = {p[0]: p for p in PRODUCTS}
CATEGORIES = [("Apparel", "person", "orange"), ("Electronics", "phone", "blue"), ("Home", "home", "green"),
              ("Sports", "star", "red"), ("Beauty", "heart", "pink")]
ROW_H = 300


def search(query: str) -> list[str]:
    return [p[0] for p in best_first(query, PRODUCTS, lambda p: (p[1], p[6]))]


@register
class Alibaba(App):
    package = "com.alibaba.intl.android.apps.poseidon"
    label = "Alibaba.com"
    activity = "com.alibaba.intl.android.apps.poseidon.app.activity.ActivityMainMaterial"
    icon = "cart"
    color = "orange"

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"searches": [], "viewed": [], "cart": [], "next_id": 1}

    def render(self, ctx: AppContext, c: Canvas) -> None:
        name = ctx.view["view"]
        if name == "results":
            self._results(ctx, c, ctx.view["query"])
        elif name == "product":
            self._product(ctx, c, ctx.view["product"])
        elif name == "cart":
            self._cart(ctx, c)
        else:
            self._home(ctx, c)

    # -- actions ----------------------------------------------------------------------
    def on_enter(self, ctx: AppContext, field: str) -> None:
        submit_search(ctx, field)

    def open_product(self, ctx: AppContext, pid: str) -> None:
        add_record(ctx.data, "viewed", product_id=pid, title=BY_ID[pid][1])
        ctx.push({"view": "product", "product": pid})

    def add_to_cart(self, ctx: AppContext, pid: str) -> None:
        product = BY_ID[pid]
        line = next((item for item in ctx.data["cart"] if item["product_id"] == pid), None)
        if line is None:
            add_record(ctx.data, "cart", product_id=pid, title=product[1], price=product[2], quantity=product[4])
        else:
            line["quantity"] += product[4]
        ctx.view["added"] = True

    def open_cart(self, ctx: AppContext) -> None:
        if ctx.view["view"] != "cart":
            ctx.push({"view": "cart"})

    # -- pieces -----------------------------------------------------------------------
    def _picture(self, c: Canvas, box: tuple[float, float, float, float], product: tuple) -> None:
        c.rect(box, fill=(244, 244, 246) if c.theme.name == "light" else (50, 50, 54), radius=20)
        w = box[2] - box[0]
        inner = (box[0] + w * 0.22, box[1] + (box[3] - box[1]) / 2 - w * 0.28, box[2] - w * 0.22,
                 box[1] + (box[3] - box[1]) / 2 + w * 0.28)
        c.icon(product[8], inner, COLORS[product[7]], description=f"{product[1]} picture")

    @staticmethod
    def _bar_fill(c: Canvas) -> tuple[int, int, int]:
        return (255, 255, 255) if c.theme.name == "light" else c.theme.field_bg

    def _header(self, ctx: AppContext, c: Canvas, query: str | None) -> float:
        top = ctx.content[1]
        c.rect((0, top, c.width, top + 200), fill=ORANGE)
        x0 = 40
        if query is not None:
            c.icon("back", (30, top + 60, 110, top + 140), (255, 255, 255), description="back arrow")
            c.on_tap((10, top + 30, 140, top + 170), ctx.back)
            x0 = 150
        bar = (x0, top + 35, c.width - 150, top + 165)
        if ctx.focused == "search" or query is None:
            search_bar(c, ctx, bar, "search", "Search", fill=self._bar_fill(c))
        else:
            search_bar(c, ctx, bar, "search", "Search", fill=self._bar_fill(c), value=query,
                       on_tap=lambda: (ctx.set_field("search", ""), ctx.focus("search")))
        c.icon("cart", (c.width - 120, top + 55, c.width - 30, top + 145), (255, 255, 255), description="cart, white shopping cart")
        count = len(ctx.data["cart"])
        if count:
            c.ellipse((c.width - 60, top + 35, c.width - 10, top + 85), fill=COLORS["red"])
            c.text((c.width - 35, top + 60), str(count), size=30, bold=True, color=(255, 255, 255), anchor="mm")
        c.on_tap((c.width - 140, top + 20, c.width, top + 180), lambda: self.open_cart(ctx))
        return top + 200

    # -- screens ----------------------------------------------------------------------
    def _home(self, ctx: AppContext, c: Canvas) -> None:
        th = c.theme
        top = ctx.content[1] + 200
        recommended = [p for p in PRODUCTS if not p[0].startswith(("cap-", "hat-"))]  # caps are found by searching
        bottom = ctx.content[3] - (TAB_BAR_H if ctx.focused is None else 0)

        def draw(y: float) -> None:
            for i, (name, icon, color) in enumerate(CATEGORIES):
                cx = 110 + i * 215
                c.icon(icon, (cx - 60, y + 30, cx + 60, y + 150), (255, 255, 255), background=COLORS[color],
                       circle=True, description=f"{name} category")
                c.text((cx, y + 170), name, size=32, anchor="mt")
            y += 260
            c.text((40, y), "Recommended for you", size=48, bold=True)
            y += 90
            for i, product in enumerate(recommended):
                col, row = i % 2, i // 2
                x, yy = 30 + col * 520, y + row * 640
                self._picture(c, (x, yy, x + 500, yy + 400), product)
                c.text((x + 10, yy + 420), product[1], size=38, max_width=480)
                c.text((x + 10, yy + 480), product[3], size=40, bold=True, color=ORANGE)
                c.text((x + 10, yy + 545), f"Min. order: {product[4]} pieces", size=30, color=th.text_secondary)
                c.on_tap((x, yy, x + 500, yy + 600), lambda p=product[0]: self.open_product(ctx, p))

        with c.clip((0, 0, c.width, bottom)):
            scroll_list(c, ctx, top, 400 + (len(recommended) + 1) // 2 * 640, draw)
        self._header(ctx, c, None)
        if ctx.focused is None:
            tab_bar(c, ctx, [("home", "Home", lambda: None), ("message", "Messenger", lambda: None),
                             ("cart", "Cart", lambda: self.open_cart(ctx)), ("person", "My Alibaba", lambda: None)],
                    0, accent=ORANGE)

    def _results(self, ctx: AppContext, c: Canvas, query: str) -> None:
        th = c.theme
        top = ctx.content[1] + 200
        found = search(query)

        def draw(y: float) -> None:
            if not found:
                c.text((40, y + 60), f"No products found for \"{query}\"", size=44, max_width=c.width - 80)
            for pid in found:
                product = BY_ID[pid]
                self._picture(c, (30, y + 20, 290, y + 280), product)
                c.text((320, y + 30), product[1], size=44, bold=True, max_width=c.width - 360)
                c.text((320, y + 100), product[3], size=42, bold=True, color=ORANGE)
                c.text((320, y + 165), f"Min. order: {product[4]} pieces", size=32, color=th.text_secondary)
                c.text((320, y + 215), product[5], size=30, color=th.text_secondary, max_width=c.width - 360)
                c.line([(30, y + ROW_H - 2), (c.width - 30, y + ROW_H - 2)], fill=th.divider, width=2)
                c.on_tap((0, y, c.width, y + ROW_H), lambda p=pid: self.open_product(ctx, p))
                y += ROW_H

        scroll_list(c, ctx, top, max(1, len(found)) * ROW_H + 100, draw)
        self._header(ctx, c, query)

    def _product(self, ctx: AppContext, c: Canvas, pid: str) -> None:
        th = c.theme
        product = BY_ID[pid]
        top = ctx.content[1] + TITLE_BAR_H
        bottom = ctx.content[3]

        def draw(y: float) -> None:
            self._picture(c, (0, y, c.width, y + 800), product)
            y += 830
            c.text((40, y), product[3], size=60, bold=True, color=ORANGE)
            c.text((40, y + 90), f"Min. order: {product[4]} pieces", size=36, color=th.text_secondary)
            y += 170
            for line in wrap(c, product[1], 52, c.width - 80, bold=True):
                c.text((40, y), line, size=52, bold=True)
                y += 72
            y += 20
            c.text((40, y), "Supplier", size=34, color=th.text_secondary)
            c.text((40, y + 50), product[5], size=38, max_width=c.width - 80)
            c.text((40, y + 120), "Ready to ship · Free samples available", size=34, color=COLORS["green"])

        scroll_list(c, ctx, top, 1500, draw)
        bar = bottom - 180
        c.rect((0, bar, c.width, bottom), fill=th.surface)
        c.line([(0, bar), (c.width, bar)], fill=th.divider, width=2)
        button(c, (40, bar + 35, 500, bar + 145), "Chat now", lambda: None, filled=False)
        box = (530, bar + 35, c.width - 40, bar + 145)
        c.rect(box, fill=ORANGE, radius=55)
        c.text(((box[0] + box[2]) / 2, bar + 90), "Add to cart", size=44, bold=True, color=(255, 255, 255), anchor="mm")
        c.widget(box, "Add to cart button", text="Add to cart")
        c.on_tap(box, lambda: self.add_to_cart(ctx, pid))
        if ctx.view.get("added"):
            toast = (240, bar - 160, c.width - 240, bar - 60)
            c.rect(toast, fill=(50, 50, 54), radius=50)
            c.text((540, bar - 110), "Added to cart", size=38, color=(255, 255, 255), anchor="mm")
        title_bar(c, ctx, "", actions=[("share", "share icon", lambda: None), ("cart", "cart, shopping cart", lambda: self.open_cart(ctx))])

    def _cart(self, ctx: AppContext, c: Canvas) -> None:
        th = c.theme
        top = ctx.content[1] + TITLE_BAR_H
        items = ctx.data["cart"]
        bottom = ctx.content[3]

        def draw(y: float) -> None:
            if not items:
                c.text((540, y + 300), "Your cart is empty", size=46, color=th.text_secondary, anchor="mm")
            for item in items:
                self._picture(c, (30, y + 20, 250, y + 240), BY_ID[item["product_id"]])
                c.text((280, y + 30), item["title"], size=44, bold=True, max_width=c.width - 320)
                c.text((280, y + 100), f"US${item['price']:.2f} / piece", size=38, color=ORANGE)
                c.text((280, y + 165), f"Quantity: {item['quantity']} pieces", size=34, color=th.text_secondary)
                y += 270

        scroll_list(c, ctx, top, len(items) * 270 + 300, draw)
        total = sum(i["price"] * i["quantity"] for i in items)
        c.rect((0, bottom - 180, c.width, bottom), fill=th.surface)
        c.text((40, bottom - 90), f"Total: US${total:.2f}", size=46, bold=True, anchor="lm")
        button(c, (c.width - 420, bottom - 145, c.width - 40, bottom - 35), "Check out", lambda: None)
        title_bar(c, ctx, f"Cart ({len(items)})")
