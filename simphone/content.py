"""`content`: the content-provider shell of AOSP, for the providers the simulator has.

Source: AOSP frameworks/base ``cmds/content/src/com/android/commands/content/Content.java``.
``content insert --uri URI --bind COLUMN:TYPE:VALUE...`` (types b s i l f d; ``column:s:``
is an empty string), ``update --uri URI --bind ... [--where W]``, ``delete --uri URI
[--where W]``, ``query --uri URI [--projection a:b] [--where W] [--sort S]``; ``--user ID``
is accepted. Insert, update and delete print nothing; a query prints ``Row: N col=value,
col=value`` per row (``NULL`` for a missing value) or ``No result found.``. A malformed
command prints the usage (here its first line) and ``[ERROR] …`` on stdout; a provider that
does not exist or refuses the values prints ``Error while accessing provider:AUTHORITY`` and
the exception's first line on stderr (the Java stack frames are left out). Both exit 0, as
``Content.main`` returns normally.

Providers:
- ``content://settings/system|secure|global``: rows ``_id, name, value`` (SettingsProvider);
- ``content://com.android.calendar/events``: CalendarContract.Events (``_id, calendar_id,
  title, dtstart, dtend, eventLocation, description, eventTimezone``; dtstart/dtend in
  epoch milliseconds). Inserts are checked as CalendarProvider2's ``validateEventData``
  does: a calendar_id, a dtstart, a dtend or duration and an eventTimezone are required.
  The Calendar app shows the events of the phone's day.

Where clauses: ``col='text'`` or ``col=number``, joined by ``AND`` (the simulator has no SQL;
anything else is refused with an IllegalArgumentException naming the clause).

May import: the standard library, `simphone.commands`, `simphone.phone` (types only).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from simphone.commands import command, ok
from simphone.types import CommandResult

if TYPE_CHECKING:
    from simphone.phone import PhoneModel as Phone

__all__ = ["CALENDAR_PACKAGE", "EVENT_COLUMNS"]

CALENDAR_PACKAGE = "com.google.android.calendar"
EVENT_COLUMNS = ("_id", "calendar_id", "title", "dtstart", "dtend", "eventLocation", "description", "eventTimezone")
_SETTINGS = ("system", "secure", "global")
_USAGE_HEAD = "usage: adb shell content [subcommand] [options]\n\n"
_CLAUSE = re.compile(r"^\s*(\w+)\s*=\s*(?:'((?:[^']|'')*)'|(-?\d+))\s*$")


class _BadCommand(Exception):
    """Content.Parser's IllegalArgumentException: usage + [ERROR] on stdout."""


class _ProviderError(Exception):
    """An exception inside the provider: Error while accessing provider on stderr."""


def _value(binding: str) -> tuple[str, Any]:
    first = binding.find(":")
    second = binding.find(":", first + 1) if first >= 0 else -1
    if not binding or first < 0 or second < 0:
        raise _BadCommand(f"Binding not well formed: {binding}")
    column, kind, text = binding[:first], binding[first + 1:second], binding[second + 1:]
    try:
        if kind == "s":
            return column, text
        if kind.lower() == "b":
            return column, text.lower() == "true"  # Boolean.parseBoolean
        if kind.lower() in ("i", "l"):
            return column, int(text)
        if kind.lower() in ("f", "d"):
            return column, float(text)
    except ValueError:
        raise _BadCommand(f'For input string: "{text}"') from None
    raise _BadCommand(f"Unsupported type: {kind}")


def _parse(args: list[str]) -> tuple[str, str, dict[str, Any], str | None, list[str] | None]:
    if not args or args[0] not in ("insert", "update", "delete", "query"):
        raise _BadCommand(f"Unsupported operation: {args[0] if args else None}")
    op, uri, values, where, projection = args[0], None, {}, None, None
    allowed = {"insert": {"--uri", "--user", "--bind"}, "update": {"--uri", "--user", "--where", "--bind"},
               "delete": {"--uri", "--user", "--where"},
               "query": {"--uri", "--user", "--where", "--sort", "--projection"}}[op]  # fmt: skip
    i = 1
    while i < len(args):
        name = args[i]
        if name not in allowed:
            raise _BadCommand(f"Unsupported argument: {name}")
        value = args[i + 1] if i + 1 < len(args) else ""
        if name == "--bind":
            column, typed = _value(value)
            values[column] = typed
        elif not value or value.startswith("--"):
            raise _BadCommand(f"No value for argument: {name}")
        elif name == "--uri":
            uri = value
        elif name == "--where":
            where = value
        elif name == "--projection":
            projection = re.split(r"\s*:\s*", value)
        i += 2
    if uri is None:
        raise _BadCommand("Content provider URI not specified. Did you specify --uri argument?")
    if op in ("insert", "update") and not values:
        raise _BadCommand("Bindings not specified. Did you specify --bind argument(s)?")
    return op, uri, values, where, projection


def _matches(row: dict[str, Any], where: str | None) -> bool:
    if not where:
        return True
    for clause in re.split(r"\s+AND\s+", where.strip(), flags=re.IGNORECASE):
        match = _CLAUSE.match(clause)
        if match is None:
            raise _ProviderError(f"java.lang.IllegalArgumentException: the simulator reads only col='text' or "
                                 f"col=number clauses joined by AND, not {where!r}")  # fmt: skip
        column, text, number = match.groups()
        wanted: Any = int(number) if number is not None else text.replace("''", "'")
        if row.get(column) != wanted and str(row.get(column)) != str(wanted):
            return False
    return True


def _settings_rows(phone: Phone, namespace: str) -> list[dict[str, Any]]:
    return [{"_id": i, "name": k, "value": v} for i, (k, v) in enumerate(sorted(phone.settings_table(namespace).items()), 1)]


def _events(phone: Phone) -> dict[str, Any]:
    data = phone.app_data(CALENDAR_PACKAGE)
    data.setdefault("events", [])
    data.setdefault("next_id", 1)
    return data


def _insert_event(phone: Phone, values: dict[str, Any]) -> None:
    # CalendarProvider2.validateEventData's checks, with its messages
    if "calendar_id" not in values:
        raise _ProviderError("java.lang.IllegalArgumentException: New events must include a calendar_id.")
    if values.get("dtstart") is None:
        raise _ProviderError("java.lang.IllegalArgumentException: DTSTART cannot be empty.")
    if values.get("dtend") is None and values.get("duration") is None:
        raise _ProviderError("java.lang.IllegalArgumentException: DTEND and DURATION cannot both be null for an event.")
    if not values.get("eventTimezone"):
        raise _ProviderError("java.lang.IllegalArgumentException: EVENT_TIMEZONE cannot be empty.")
    data = _events(phone)
    data["events"].append({**{c: None for c in EVENT_COLUMNS}, **values, "_id": data["next_id"]})
    data["next_id"] += 1


def _run(phone: Phone, op: str, uri: str, values: dict[str, Any], where: str | None,
         projection: list[str] | None) -> str:  # fmt: skip
    match = re.fullmatch(r"content://([^/]+)(?:/(.*))?", uri)
    authority, path = (match[1], match[2] or "") if match else (uri, "")
    if authority == "settings" and path in _SETTINGS:
        rows = _settings_rows(phone, path)
        if op in ("insert", "update"):
            names = [values.get("name")] if op == "insert" else [r["name"] for r in rows if _matches(r, where)]
            for name in names:
                if name:
                    phone.settings_put(path, str(name), None if values.get("value") is None else str(values["value"]))
        elif op == "delete":
            for row in rows:
                if _matches(row, where):
                    phone.settings_put(path, row["name"], None)
    elif authority == "com.android.calendar" and path == "events":
        rows = list(_events(phone)["events"])
        if op == "insert":
            _insert_event(phone, values)
        elif op == "update":
            for row in rows:
                if _matches(row, where):
                    row.update(values)
        elif op == "delete":
            _events(phone)["events"] = [r for r in rows if not _matches(r, where)]
    else:
        raise _ProviderError(f"java.lang.IllegalStateException: Could not find provider: {authority}")
    if op != "query":
        return ""
    chosen = [r for r in rows if _matches(r, where)]
    if not chosen:
        return "No result found.\n"
    columns = projection or list(chosen[0])
    return "".join(f"Row: {i} " + ", ".join(f"{c}={'NULL' if r.get(c) is None else r[c]}" for c in columns) + "\n"
                   for i, r in enumerate(chosen))  # fmt: skip


@command("content")
def _content(phone: Phone, args: list[str]) -> CommandResult:
    try:
        op, uri, values, where, projection = _parse(args)
    except _BadCommand as exc:
        return ok(f"{_USAGE_HEAD}[ERROR] {exc}\n")
    with phone.lock:
        try:
            return ok(_run(phone, op, uri, values, where, projection))
        except _ProviderError as exc:
            authority = re.sub(r"^content://([^/]+).*$", r"\1", uri)
            return CommandResult(stderr=f"Error while accessing provider:{authority}\n{exc}\n".encode())
