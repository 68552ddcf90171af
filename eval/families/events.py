"""Families that start from pre-filled calendar events: the phone gets today's event (and a
distractor tomorrow) through Android's content-provider shell before the task begins.

The set-up is what a real phone takes over adb: ``cmd simphone clock`` for the day (the
simulator's clock), then ``content insert --uri content://com.android.calendar/events
--bind calendar_id:i:1 --bind title:s:… --bind dtstart:l:… --bind dtend:l:… --bind
eventTimezone:s:UTC`` (AOSP ``cmds/content``; CalendarContract.Events columns, times in
epoch milliseconds). The agent has to read the event in Calendar and carry it into another
app; the reference solution knows it from the parameters.

May import: eval.families.family, the standard library.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone

from eval.families.family import Family, Params

__all__ = ["EVENT_TITLES", "event_families"]

EVENT_TITLES = ["Dentist appointment", "Team lunch", "Piano lesson", "Project review", "Yoga class",
                "Parent meeting", "Car service", "Book club", "Haircut", "Tennis match"]  # fmt: skip
EVENTS_URI = "content://com.android.calendar/events"


def _millis(day: str, hour: int) -> int:
    start = datetime.strptime(day, "%Y-%m-%d").replace(hour=hour, tzinfo=timezone.utc)
    return int(start.timestamp() * 1000)


def _insert(day: str, hour: int, title: str, place: str = "") -> list[str]:
    binds = ["calendar_id:i:1", f"title:s:{title}", f"dtstart:l:{_millis(day, hour)}",
             f"dtend:l:{_millis(day, hour) + 3_600_000}", "eventTimezone:s:UTC"]  # fmt: skip
    if place:
        binds.append(f"eventLocation:s:{place}")
    return ["content", "insert", "--uri", EVENTS_URI] + [a for b in binds for a in ("--bind", b)]


def _params(places: Sequence[str]) -> Callable[[random.Random], Params]:
    def params(rng: random.Random) -> Params:
        day = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 27):02d}"
        title, other = rng.sample(EVENT_TITLES, 2)
        place, other_place = rng.sample(list(places), 2)
        return {"day": day, "title": title, "hour": str(rng.randint(10, 18)), "place": place,
                "other": other, "other_place": other_place}  # fmt: skip
    return params


def _setup(p: Params) -> list[list[str]]:
    """The day, today's event, and tomorrow's (which the Calendar does not show today)."""
    tomorrow = (datetime.strptime(p["day"], "%Y-%m-%d") + timedelta(days=1)).strftime("%Y-%m-%d")
    return [["cmd", "simphone", "clock", f"{p['day']}T09:41:00"], _insert(p["day"], int(p["hour"]), p["title"], p["place"]),
            _insert(tomorrow, int(p["hour"]), p["other"], p["other_place"])]  # fmt: skip


def event_families(*, places: Sequence[str], address: Callable[[random.Random], str], new_note: list[str],
                   mail_send: list[str], notes_path: str, mail_path: str) -> list[Family]:  # fmt: skip
    """The event families, with the catalogue's pools and steps (no import cycle)."""
    with_place = _params(places)

    def with_address(rng: random.Random) -> Params:
        return {**with_place(rng), "address": address(rng)}

    look = ["Open App (Calendar)", "Exit || Home"]
    return [
        Family("calendar-event-note", "Multi-App", ("Calendar", "Notes"), 3,
               ("Look at today's event in Calendar and write it down in a new note.",
                "What is on my calendar today? Save it in Notes."),
               with_place,
               lambda p: look + new_note + ["Type ({title} at {hour}:00)", "Back",
                                            "Back || Click icon (check mark, top right)"],
               lambda p: {"name": "note_created", "params": {"words": ["{title}"]}},
               changes=(notes_path,), setup=_setup),
        Family("calendar-event-mail", "Multi-App", ("Calendar", "Gmail"), 3,
               ("Email {address} what is on my calendar today.",
                "Check today's event in Calendar and tell {address} about it by email."),
               with_address,
               lambda p: look + mail_send + ["Click text (Compose email)", "Type (Today I have {title} at {hour}:00.)",
                                             "Click icon (paper plane, top right)"],
               lambda p: {"name": "new_record", "params": {"root": mail_path, "describe": "sent mail",
                                                            "equals": {"to": "{address}"},
                                                            "where": {"body": ["{title}"]}}},
               changes=(mail_path,), setup=_setup),
        Family("calendar-event-navigate", "Multi-App", ("Calendar", "Google Maps"), 3,
               ("Start navigation to the place of my event today.",
                "Where is today's calendar event? Take me there with Google Maps."),
               with_place,
               lambda p: look + ["Open App (Google Maps)", "Click text (Search here)", "Type ({place})", "Enter",
                                 "Click text (Directions)", "Click text (Start)"],
               lambda p: {"name": "current_is", "params": {"path": "apps[com.google.android.apps.maps].navigation",
                                                            "describe": "navigation",
                                                            "where": {"destination": ["{place}"]},
                                                            "equals": {"active": True}}},
               setup=_setup),
    ]
