"""Calendar (com.google.android.calendar): today's date (from the phone clock) shown
prominently above the month grid, today circled, and today's events below it (time, title,
place): the events of CalendarContract.Events, written with `content insert --uri
content://com.android.calendar/events` (`simphone.content`).

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

import calendar as pycalendar
from datetime import date, datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from simphone.apps import App, AppContext, register
from simphone.ui.canvas import Canvas
from simphone.ui.widgets import TITLE_BAR_H, title_bar


@register
class Calendar(App):
    package = "com.google.android.calendar"
    label = "Calendar"
    activity = "com.android.calendar.AllInOneActivity"
    icon = "calendar"
    color = "blue"

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"events": [], "next_id": 1}

    def render(self, ctx: AppContext, c: Canvas) -> None:
        today = ctx.clock.date()
        th = c.theme
        y = ctx.content[1] + TITLE_BAR_H + 30
        c.text((70, y), "Today", size=40, color=th.text_secondary)
        c.text((70, y + 70), today.strftime("%A"), size=64, bold=True)
        c.text((70, y + 160), today.strftime("%B %-d, %Y"), size=72, bold=True, color=th.primary)
        y += 320
        c.text((70, y), today.strftime("%B %Y"), size=48, bold=True)
        y += 90
        cell = (c.width - 100) / 7
        for i, name in enumerate(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]):
            c.text((50 + cell * i + cell / 2, y), name, size=34, color=th.text_secondary, anchor="mt")
        y += 80
        for week in pycalendar.Calendar(firstweekday=0).monthdayscalendar(today.year, today.month):
            for i, day in enumerate(week):
                if not day:
                    continue
                cx, cy = 50 + cell * i + cell / 2, y + cell / 2
                if day == today.day:
                    c.ellipse((cx - 55, cy - 55, cx + 55, cy + 55), fill=th.primary)
                    c.text((cx, cy), str(day), size=44, bold=True, anchor="mm",
                           color=(255, 255, 255) if th.name == "light" else (20, 20, 24))
                else:
                    c.text((cx, cy), str(day), size=44, anchor="mm")
            y += cell
        events = sorted(_events_on(ctx.data.get("events", []), today), key=lambda e: e[0])
        if not events:
            c.text((70, y + 40), "No events today", size=40, color=th.text_secondary)
        for start, event in events:
            c.text((70, y + 40), start.strftime("%H:%M"), size=40, color=th.text_secondary)
            c.text((240, y + 40), str(event.get("title") or "(No title)"), size=44, bold=True)
            if event.get("eventLocation"):
                c.text((240, y + 100), str(event["eventLocation"]), size=36, color=th.text_secondary)
            y += 150
        title_bar(c, ctx, "Calendar", back=False, actions=[("magnifier", "search events", lambda: None)])


def _events_on(events: list[dict[str, Any]], day: date) -> list[tuple[datetime, dict[str, Any]]]:
    """(start in the event's own time zone, event) of the events that start on ``day``."""
    out = []
    for event in events:
        try:
            zone: Any = ZoneInfo(str(event.get("eventTimezone") or "UTC"))
        except (ZoneInfoNotFoundError, ValueError):
            zone = timezone.utc
        start = datetime.fromtimestamp(int(event.get("dtstart") or 0) / 1000, zone)
        if start.date() == day:
            out.append((start, event))
    return out
