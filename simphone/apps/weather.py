"""Weather (com.weather.Weather): a city, today's conditions and a 5-day forecast with
temperatures, deterministic from the phone's seed and date.

Data: {"city", "unit": "C"}; the forecast itself is computed (`forecast(seed, date)`).

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from simphone.apps import App, AppContext, register
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import TITLE_BAR_H, title_bar

CITIES = ["Hangzhou", "Beijing", "San Francisco", "London", "Paris", "Tokyo", "Sydney", "Berlin"]
CONDITIONS = [("Sunny", "sun", "orange"), ("Cloudy", "cloud", "gray"), ("Rain", "rain", "blue"),
              ("Partly cloudy", "cloud", "blue")]


def forecast(seed: int, start: date, days: int = 5) -> list[dict[str, Any]]:
    """Day, condition, high and low (°C) for `days` days from `start`, the same for the same seed and date."""
    out = []
    for i in range(days):
        day = start + timedelta(days=i)
        rng = random.Random(f"{seed}-{day.isoformat()}")
        condition = CONDITIONS[rng.randrange(len(CONDITIONS))]
        low = rng.randint(8, 20)
        out.append({"date": day.isoformat(), "day": "Today" if i == 0 else day.strftime("%a"),
                    "condition": condition[0], "high": low + rng.randint(4, 11), "low": low})
    return out


@register
class Weather(App):
    package = "com.weather.Weather"
    label = "Weather"
    activity = ".app.SplashScreenActivity"
    icon = "sun"
    color = "yellow"

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"city": CITIES[seed % len(CITIES)], "unit": "C"}

    def derived_data(self, seed: int, clock: Any) -> dict[str, Any]:
        """Added to `state()` (not kept): the forecast the screen shows, for validators."""
        return {"forecast": forecast(seed, clock.date())}

    def render(self, ctx: AppContext, c: Canvas) -> None:
        th = c.theme
        days = forecast(ctx.seed, ctx.clock.date())
        icons = {name: (icon, color) for name, icon, color in CONDITIONS}
        y = ctx.content[1] + TITLE_BAR_H + 40
        c.text((540, y), ctx.data["city"], size=64, bold=True, anchor="mt")
        today = days[0]
        icon, color = icons[today["condition"]]
        c.icon(icon, (420, y + 110, 660, y + 350), COLORS[color])
        c.text((540, y + 380), f"{(today['high'] + today['low']) // 2}°", size=140, bold=True, anchor="mt")
        c.text((540, y + 560), f"{today['condition']}  H:{today['high']}° L:{today['low']}°", size=44,
               color=th.text_secondary, anchor="mt")
        y += 680
        c.text((70, y), "5-day forecast", size=44, bold=True)
        y += 80
        for day in days:
            icon, color = icons[day["condition"]]
            c.text((70, y + 60), day["day"], size=44, anchor="lm")
            c.icon(icon, (330, y + 20, 410, y + 100), COLORS[color])
            c.text((450, y + 60), day["condition"], size=40, color=th.text_secondary, anchor="lm")
            c.text((c.width - 70, y + 60), f"{day['high']}° / {day['low']}°", size=44, anchor="rm")
            y += 130
        title_bar(c, ctx, "Weather", back=False)
