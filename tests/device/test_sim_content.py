"""`adb shell content` on the simulated phone through the real adb CLI: AOSP cmds/content's
syntax and output (insert/update/delete silent, `Row: N col=value, …` or `No result found.`,
usage + `[ERROR] …` on stdout, `Error while accessing provider:…` on stderr, exit 0 either
way) for SettingsProvider and CalendarContract.Events; the Calendar app shows the day's
events; the reset clears them; a family's set-up that the provider refuses stops the task."""

from __future__ import annotations

import json
import shlex

import pytest

from eval.mobile_eval.environment import PhoneEnvironment
from eval.mobile_eval.errors import DeviceStateError
from mobile_agent.device import open_device
from mobile_agent.settings import AdbSettings

EVENTS = "content://com.android.calendar/events"
DAY_15H = 1718895600000  # 2024-06-20 15:00 UTC


def _content(adb_server, serial: str, *args: str):
    """The adb CLI joins its arguments into one shell line: each is quoted, as a person
    typing it would (AOSP's own example escapes the where clause's quotes)."""
    return adb_server.run("-s", serial, "shell", "content", *(shlex.quote(a) for a in args))


def _event(adb_server, serial: str, title: str, start: int, *extra: str):
    return _content(adb_server, serial, "insert", "--uri", EVENTS, "--bind", "calendar_id:i:1",
                    "--bind", f"title:s:{title}", "--bind", f"dtstart:l:{start}",
                    "--bind", f"dtend:l:{start + 3_600_000}", "--bind", "eventTimezone:s:UTC", *extra)  # fmt: skip


def test_settings_through_the_content_provider(sim_phone, adb_server):
    serial = sim_phone.serial
    put = _content(adb_server, serial, "insert", "--uri", "content://settings/system",
                   "--bind", "name:s:status_bar_show_battery_percent", "--bind", "value:i:1")  # fmt: skip
    assert (put.returncode, put.stdout, put.stderr) == (0, "", "")
    assert sim_phone.phone.settings_get("system", "status_bar_show_battery_percent") == "1"
    row = _content(adb_server, serial, "query", "--uri", "content://settings/system", "--projection", "name:value",
                   "--where", "name='status_bar_show_battery_percent'")  # fmt: skip
    assert row.stdout == "Row: 0 name=status_bar_show_battery_percent, value=1\n"
    _content(adb_server, serial, "delete", "--uri", "content://settings/system", "--where",
             "name='status_bar_show_battery_percent'")  # fmt: skip
    none = _content(adb_server, serial, "query", "--uri", "content://settings/system", "--where",
                    "name='status_bar_show_battery_percent'")  # fmt: skip
    assert none.stdout == "No result found.\n"


def test_calendar_events_are_inserted_queried_and_shown_on_their_day(sim_phone, adb_server):
    serial = sim_phone.serial
    assert adb_server.run("-s", serial, "shell", "cmd", "simphone", "clock", "2024-06-20T09:41:00").returncode == 0
    assert _event(adb_server, serial, "Dentist appointment", DAY_15H, "--bind", "eventLocation:s:West Lake").stdout == ""
    assert _event(adb_server, serial, "Book club", DAY_15H + 86_400_000).returncode == 0  # tomorrow
    rows = _content(adb_server, serial, "query", "--uri", EVENTS, "--projection", "_id:title:dtstart:eventLocation")
    assert rows.stdout == (f"Row: 0 _id=1, title=Dentist appointment, dtstart={DAY_15H}, eventLocation=West Lake\n"
                           f"Row: 1 _id=2, title=Book club, dtstart={DAY_15H + 86_400_000}, eventLocation=NULL\n")
    sim_phone.device.app_start("com.google.android.calendar")
    shown = {e["text"] for e in json.loads(sim_phone.device.shell(["cmd", "simphone", "ground-truth"]))}
    assert {"Dentist appointment", "15:00", "West Lake"} <= shown and "Book club" not in shown
    assert "No events today" not in shown
    _content(adb_server, serial, "update", "--uri", EVENTS, "--bind", "title:s:Dentist (moved)", "--where", "_id=1")
    assert sim_phone.phone.app_data("com.google.android.calendar")["events"][0]["title"] == "Dentist (moved)"
    adb_server.run("-s", serial, "shell", "cmd", "simphone", "reset")
    assert _content(adb_server, serial, "query", "--uri", EVENTS).stdout == "No result found.\n"


def test_bad_commands_and_refused_values(sim_phone, adb_server):
    serial = sim_phone.serial
    no_uri = _content(adb_server, serial, "insert", "--bind", "name:s:x")
    assert no_uri.returncode == 0 and no_uri.stdout.startswith("usage: adb shell content [subcommand] [options]\n")
    assert no_uri.stdout.endswith("[ERROR] Content provider URI not specified. Did you specify --uri argument?\n")
    bad_bind = _content(adb_server, serial, "insert", "--uri", EVENTS, "--bind", "title")
    assert bad_bind.stdout.endswith("[ERROR] Binding not well formed: title\n")
    bad_type = _content(adb_server, serial, "insert", "--uri", EVENTS, "--bind", "title:x:y")
    assert bad_type.stdout.endswith("[ERROR] Unsupported type: x\n")
    unknown = _content(adb_server, serial, "query", "--uri", "content://com.android.contacts/raw_contacts")
    assert (unknown.returncode, unknown.stdout) == (0, "")
    assert unknown.stderr == ("Error while accessing provider:com.android.contacts\n"
                              "java.lang.IllegalStateException: Could not find provider: com.android.contacts\n")
    no_zone = _content(adb_server, serial, "insert", "--uri", EVENTS, "--bind", "calendar_id:i:1",
                       "--bind", "dtstart:l:1", "--bind", "dtend:l:2")  # fmt: skip
    assert no_zone.stderr.endswith("java.lang.IllegalArgumentException: EVENT_TIMEZONE cannot be empty.\n")
    assert sim_phone.phone.app_data("com.google.android.calendar")["events"] == []  # refused: nothing written
    environment = PhoneEnvironment(open_device(AdbSettings(server_port=adb_server.port), serial))
    with pytest.raises(DeviceStateError, match="EVENT_TIMEZONE"):
        environment.set_up([["content", "insert", "--uri", EVENTS, "--bind", "calendar_id:i:1", "--bind", "dtstart:l:1",
                             "--bind", "dtend:l:2"]])  # fmt: skip
