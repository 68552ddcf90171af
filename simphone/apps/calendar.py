"""Calendar (com.google.android.calendar): today's date (from the phone clock) shown
prominently above the month grid, today circled.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

import calendar as pycalendar

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
        c.text((70, y + 40), "No events today", size=40, color=th.text_secondary)
        title_bar(c, ctx, "Calendar", back=False, actions=[("magnifier", "search events", lambda: None)])
