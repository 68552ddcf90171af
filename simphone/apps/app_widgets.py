"""Pieces shared by the content apps (browser, mail, maps, store, music, video, short video,
shopping): a search bar with a magnifier, bottom tab bars, record ids, query matching.

Not an app itself (it registers nothing); the app modules import it.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from simphone.apps import AppContext
from simphone.ui.canvas import Box, Canvas
from simphone.ui.theme import Color
from simphone.ui.widgets import text_field, wrap  # wrap: re-exported for the app modules

__all__ = ["TAB_BAR_H", "add_record", "best_first", "matches", "query_words", "search_bar", "show_results",
           "submit_search", "tab_bar", "wrap"]

T = TypeVar("T")
TAB_BAR_H = 170
STOP_WORDS = {"a", "an", "the", "of", "for", "in", "on", "to", "and", "about", "me", "my", "find", "search",
              "show", "please", "what", "is", "s", "today", "today's", "how", "who", "with", "info", "information", "result", "results", "some"}


def add_record(data: dict[str, Any], key: str, **fields: Any) -> dict[str, Any]:
    """Append `{id, **fields}` to `data[key]` (ids from `data["next_id"]`, never reused); return it."""
    record = {"id": data["next_id"], **fields}
    data["next_id"] += 1
    data[key].append(record)
    return record


def query_words(query: str) -> list[str]:
    """The words of a query that carry meaning: case-folded, stop words dropped, simple plurals cut."""
    words = re.findall(r"[\w']+", query.casefold())
    out = []
    for w in words:
        w = w.replace("'s", "")
        if w in STOP_WORDS:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


def matches(query: str, haystack: Iterable[str]) -> int:
    """How many meaningful words of `query` occur in the texts (0: no match)."""
    text = " ".join(haystack).casefold()
    return sum(1 for w in query_words(query) if w in text)


def best_first(query: str, items: Iterable[T], texts: Callable[[T], Iterable[str]]) -> list[T]:
    """The items whose `texts` match `query`, most matching words first (ties in catalogue order)."""
    scored = [(matches(query, texts(item)), i, item) for i, item in enumerate(items)]
    return [item for score, _, item in sorted(scored, key=lambda t: (-t[0], t[1])) if score > 0]


def show_results(ctx: AppContext, view: dict[str, Any], field: str) -> None:
    """Open `view` (results, a page) over the app's first screen, whose search box is
    emptied for when the user comes back; from any other screen, replace that screen."""
    if ctx.view["view"] == "main":
        ctx.set_field(field, "")
        ctx.push(view)
    else:
        ctx.replace(view)


def submit_search(ctx: AppContext, field: str, name: str = "search") -> None:
    """ENTER in field `field`: when it is the search box `name` and holds a query, record
    it in `searches` and open its results."""
    query = ctx.field(name).strip()
    if field != name or not query:
        return
    ctx.focus(None)
    add_record(ctx.data, "searches", query=query)
    show_results(ctx, {"view": "results", "query": query}, name)


def search_bar(c: Canvas, ctx: AppContext, box: Box, field: str, placeholder: str, *,
               fill: Color | None = None, on_tap: Callable[[], None] | None = None, value: str | None = None) -> None:
    """A rounded search bar with a magnifier at its left. Bound to text field `field` (a tap
    focuses it), or, with `on_tap`, a button that shows `value` (or the placeholder)."""
    th = c.theme
    left, top, right, bottom = box
    h = bottom - top
    c.rect(box, fill=fill or th.field_bg, radius=h / 2)
    c.icon("magnifier", (left + 30, top + h / 2 - 30, left + 90, top + h / 2 + 30), th.text_secondary,
           description="magnifier")
    inner = (left + 100, top + (h - 110) / 2, right - 20, top + (h + 110) / 2)
    if on_tap is None:
        text_field(c, ctx, inner, field, placeholder, size=44, border=False)
        c.on_tap(box, lambda: ctx.focus(field))
        return
    shown = value or placeholder
    c.text((inner[0] + 30, top + h / 2), shown, size=44, anchor="lm", max_width=right - inner[0] - 60,
           color=th.text if value else th.text_secondary)
    c.widget(box, f"{placeholder} search bar", text=value or "")
    c.on_tap(box, on_tap)


def tab_bar(c: Canvas, ctx: AppContext, tabs: list[tuple[str, str, Callable[[], None]]], selected: int,
            accent: Color | None = None) -> float:
    """Bottom navigation tabs (icon above label) at the bottom of the content area; returns its top."""
    th = c.theme
    bottom = ctx.content[3]
    top = bottom - TAB_BAR_H
    c.rect((0, top, c.width, bottom), fill=th.surface)
    c.line([(0, top), (c.width, top)], fill=th.divider, width=2)
    w = c.width / len(tabs)
    for i, (icon, label, action) in enumerate(tabs):
        color = (accent or th.primary) if i == selected else th.text_secondary
        cx = w * i + w / 2
        c.icon(icon, (cx - 35, top + 20, cx + 35, top + 90), color, description=f"{label} tab")
        c.text((cx, top + 110), label, size=32, color=color, anchor="mt", bold=i == selected)
        c.on_tap((w * i, top, w * (i + 1), bottom), action)
    return top
