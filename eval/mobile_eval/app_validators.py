"""The validators of the Mobile-Eval tasks, one or a few per app, and the derived parameters.

Each validator reads documented paths of the phone's state (``root`` params say where an
app's state lives, so a task file can follow a schema change without a code change). The
state shapes they expect are listed in ``tasks/STATE_NEEDS.md`` for apps the simulated
phone does not have yet. Texts are compared case-free with spaces folded; "words" checks
need every word present.

Derived parameters (``EvalTask.derived``) are values computed from the state *before* the
run — today's date from the phone's clock, the 5-day forecast — so that an instruction, its
reference solution and its validator can all mention them.

May import: pydantic, mobile_eval.validators, mobile_eval.matching (text folding).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from eval.mobile_eval.matching import fold
from eval.mobile_eval.validators import StateView, Verdict, validator

__all__ = ["DERIVERS", "date_spellings", "derive"]


def has_words(text: Any, words: list[str]) -> bool:
    folded = fold(text)
    return all(fold(w) in folded for w in words)


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _items(state: StateView, path: str) -> list[Any]:
    value = state.get(path)
    if isinstance(value, Mapping):
        return list(value.values())
    return list(value or [])


def _new_items(before: StateView, after: StateView, path: str, key: str = "id") -> list[Mapping[str, Any]]:
    """Items of the list at ``path`` that were not there before (by ``key``, else by value)."""
    old = _items(before, path) if before.has(path) else []
    new = _items(after, path)
    old_keys = {item.get(key) if isinstance(item, Mapping) else repr(item) for item in old}
    return [i for i in new if (i.get(key) if isinstance(i, Mapping) else repr(i)) not in old_keys]


def _kept_items(before: StateView, after: StateView, path: str, key: str = "id") -> tuple[bool, str]:
    """Every item there before is still there, unchanged."""
    old = _items(before, path) if before.has(path) else []
    new = {item.get(key): item for item in _items(after, path) if isinstance(item, Mapping)}
    changed = [item.get(key) for item in old if isinstance(item, Mapping) and new.get(item.get(key)) != item]
    return (not changed, "earlier items untouched" if not changed else f"earlier items changed or deleted: {changed}")


def _text_of(item: Mapping[str, Any], fields: tuple[str, ...]) -> str:
    return " ".join(str(item.get(f) or "") for f in fields)


# --- Settings ---------------------------------------------------------------------------------


class SettingParams(_Params):
    path: str = Field(description="the setting's state path, e.g. settings.dark_mode")
    value: Any = True


@validator("setting_is", SettingParams, reads=("settings.*",))
def setting_is(before: StateView, after: StateView, p: SettingParams) -> Verdict:
    """A setting holds the wanted value after the run."""
    now = after.get(p.path)
    return Verdict.of([(now == p.value, f"{p.path} is {now!r} (wanted {p.value!r}; was {before.get(p.path, None)!r})")])


# --- Notes (and the multi-app tasks that end in a note) ---------------------------------------


class NoteParams(_Params):
    root: str = "apps[com.google.android.keep].notes"
    fields: tuple[str, ...] = ("title", "body")
    words: list[str] = Field(default_factory=list, description="every one must be in the note")
    any_of: list[str] = Field(default_factory=list, description="at least one must be in the note")
    min_chars: int = 0
    saved_field: str | None = Field("saved", description="a field that must be true; None: no such field")


def _note_checks(before: StateView, after: StateView, p: NoteParams) -> tuple[list[tuple[bool, str]], list[str]]:
    new = _new_items(before, after, p.root)
    saved = [n for n in new if p.saved_field is None or n.get(p.saved_field, True)]
    texts = [_text_of(n, p.fields) for n in saved]
    checks = [(bool(saved), f"{len(saved)} new saved note(s) (of {len(new)} new)")]
    return checks, texts


@validator("note_created", NoteParams, reads=("apps[com.google.android.keep].notes[].{id,title,body}",))
def note_created(before: StateView, after: StateView, p: NoteParams) -> Verdict:
    """A new note was saved, holding the wanted text; the earlier notes are untouched."""
    checks, texts = _note_checks(before, after, p)
    fitting = [t for t in texts if has_words(t, p.words) and len(t.strip()) >= p.min_chars
               and (not p.any_of or any(fold(w) in fold(t) for w in p.any_of))]
    want = " ".join(filter(None, [f"words {p.words}" if p.words else "", f"any of {p.any_of}" if p.any_of else "",
                                  f">= {p.min_chars} chars" if p.min_chars else ""])) or "any text"
    checks.append((bool(fitting), f"a new note with {want}: {texts[:3]!r}"))
    checks.append(_kept_items(before, after, p.root))
    return Verdict.of(checks)


class DatedNoteParams(NoteParams):
    clock: str = "clock"


def date_spellings(day: date) -> list[str]:
    """Ways a person writes a date: 2024-01-31, 2024/1/31, 1/31, 31/1, January 31, 31 January, Jan 31."""
    month, short = day.strftime("%B"), day.strftime("%b")
    return [
        day.isoformat(), f"{day.year}/{day.month}/{day.day}", f"{day.year}/{day.month:02d}/{day.day:02d}",
        f"{day.month}/{day.day}", f"{day.day}/{day.month}", f"{day.month:02d}/{day.day:02d}",
        f"{month} {day.day}", f"{day.day} {month}", f"{short} {day.day}", f"{day.day} {short}",
        f"{day.year}年{day.month}月{day.day}日", f"{day.month}月{day.day}日",
    ]


def _clock_date(state: StateView, path: str) -> date:
    return datetime.fromisoformat(str(state.get(path)).replace("Z", "+00:00")).date()


@validator("note_with_date", DatedNoteParams, reads=("clock", "apps[com.google.android.keep].notes[]"))
def note_with_date(before: StateView, after: StateView, p: DatedNoteParams) -> Verdict:
    """A new saved note holds the wanted words and the phone's date (any common spelling)."""
    today = _clock_date(before, p.clock)
    checks, texts = _note_checks(before, after, p)
    spellings = [fold(s) for s in date_spellings(today)]
    fitting = [t for t in texts if has_words(t, p.words) and any(s in fold(t) for s in spellings)]
    checks.append((bool(fitting), f"a new note with {p.words} and the date {today.isoformat()}: {texts[:3]!r}"))
    checks.append(_kept_items(before, after, p.root))
    return Verdict.of(checks)


class ForecastNoteParams(NoteParams):
    forecast: str = "apps[com.weather.Weather].forecast"
    temperature_fields: tuple[str, ...] = ("high", "low")
    days: int = 5
    min_temperatures: int = 3


def _forecast_temperatures(state: StateView, p: ForecastNoteParams) -> list[int]:
    temps: list[int] = []
    for day in _items(state, p.forecast)[: p.days]:
        temps += [int(round(float(day[f]))) for f in p.temperature_fields if isinstance(day, Mapping) and f in day]
    return temps


@validator("note_with_forecast", ForecastNoteParams, reads=("apps[com.weather.Weather].forecast[].{high,low}", "apps[com.google.android.keep].notes[]"))
def note_with_forecast(before: StateView, after: StateView, p: ForecastNoteParams) -> Verdict:
    """A new saved note analyses the 5-day forecast: it quotes several of its temperatures."""
    temps = set(_forecast_temperatures(before, p))
    checks, texts = _note_checks(before, after, p)
    quoted = [sorted(temps & {int(n) for n in re.findall(r"-?\d+", t)}) for t in texts]
    best = max(quoted, key=len, default=[])
    ok = len(best) >= min(p.min_temperatures, len(temps)) and bool(temps)
    checks.append((ok and any(has_words(t, p.words) for t in texts),
                   f"a new note quoting >= {p.min_temperatures} forecast temperatures {sorted(temps)}: {best}"))
    checks.append(_kept_items(before, after, p.root))
    return Verdict.of(checks)


class SearchAndNoteParams(NoteParams):
    searches: str = "apps[com.android.chrome].searches"
    search_field: str = "query"
    search_words: list[str] = Field(default_factory=list)


@validator("searched_then_noted", SearchAndNoteParams, reads=("apps[com.android.chrome].searches[].query", "apps[com.google.android.keep].notes[]"))
def searched_then_noted(before: StateView, after: StateView, p: SearchAndNoteParams) -> Verdict:
    """A web search with the words happened, then a new saved note with the note words."""
    searched = [s for s in _new_items(before, after, p.searches) if has_words(s.get(p.search_field), p.search_words)]
    verdict = note_created(before, after, p)
    return Verdict(bool(searched) and verdict.success,
                   (f"{'✓' if searched else '✗'} searched for {p.search_words}",) + verdict.reasons)


# --- Apps whose state is described in tasks/STATE_NEEDS.md ------------------------------------


class NewRecordParams(_Params):
    root: str = Field(description="the list of records, e.g. apps.chrome.searches")
    where: dict[str, list[str]] = Field(default_factory=dict, description="field -> words it must hold")
    where_any: dict[str, list[str]] = Field(default_factory=dict, description="field -> one of these words")
    equals: dict[str, Any] = Field(default_factory=dict, description="field -> exact value")
    empty: list[str] = Field(default_factory=list, description="fields that must be empty")
    count: int = Field(1, ge=1, description="at least this many new records must fit")
    describe: str = "record"


def _fits(record: Mapping[str, Any], p: NewRecordParams) -> bool:
    if not isinstance(record, Mapping):
        return False
    for f, words in p.where.items():
        value = record.get(f)
        text = " ".join(map(str, value)) if isinstance(value, list) else value
        if not has_words(text, words):
            return False
    for f, words in p.where_any.items():
        value = record.get(f)
        text = fold(" ".join(map(str, value)) if isinstance(value, list) else value)
        if not any(fold(w) in text for w in words):
            return False
    for f, value in p.equals.items():
        got = record.get(f)
        if isinstance(got, list) and not isinstance(value, list):
            if fold(value) not in [fold(g) for g in got]:
                return False
        elif (fold(got) != fold(value)) if isinstance(value, str) else got != value:
            return False
    return all(not str(record.get(f) or "").strip() for f in p.empty)


@validator("new_record", NewRecordParams)
def new_record(before: StateView, after: StateView, p: NewRecordParams) -> Verdict:
    """At least ``count`` records were added to a list and fit the conditions; none removed."""
    new = _new_items(before, after, p.root)
    fitting = [r for r in new if _fits(r, p)]
    conditions = {**p.where, **{f"{k} (any)": v for k, v in p.where_any.items()}, **p.equals,
                  **({"empty": p.empty} if p.empty else {})}
    return Verdict.of([
        (len(fitting) >= p.count, f">= {p.count} new {p.describe}(s) with {conditions}: {len(fitting)} of {len(new)} new"),
        _kept_items(before, after, p.root),
    ])


class CurrentParams(_Params):
    path: str = Field(description="an object in the state, e.g. apps.maps.navigation")
    where: dict[str, list[str]] = Field(default_factory=dict)
    where_any: dict[str, list[str]] = Field(default_factory=dict)
    equals: dict[str, Any] = Field(default_factory=dict)
    describe: str = "state"


@validator("current_is", CurrentParams)
def current_is(before: StateView, after: StateView, p: CurrentParams) -> Verdict:
    """An object of the state (now playing, the navigation) fits the conditions after the run."""
    obj = after.get(p.path)
    ok = _fits(obj, NewRecordParams(root=p.path, where=p.where, where_any=p.where_any, equals=p.equals))
    wanted = {**p.where, **p.where_any, **p.equals}
    return Verdict.of([(ok, f"{p.describe} at {p.path} fits {wanted}: {obj!r}"[:300])])


class InstalledParams(_Params):
    root: str = "installed"
    package: str


@validator("app_installed", InstalledParams, reads=("installed[]",))
def app_installed(before: StateView, after: StateView, p: InstalledParams) -> Verdict:
    """A package that was not installed before is installed after."""
    was = p.package in [str(x) for x in _items(before, p.root)]
    now = p.package in [str(x) for x in _items(after, p.root)]
    return Verdict.of([(not was, f"{p.package} not installed before"), (now, f"{p.package} installed after")])


class CheckSpec(_Params):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known(self) -> CheckSpec:
        from eval.mobile_eval.validators import VALIDATORS

        if self.name not in VALIDATORS:
            raise ValueError(f"unknown validator {self.name!r}")
        VALIDATORS[self.name].params_model.model_validate(self.params)
        return self


class CombinedParams(_Params):
    checks: list[CheckSpec] = Field(min_length=1)


def _run_checks(before: StateView, after: StateView, p: CombinedParams) -> list[Verdict]:
    from eval.mobile_eval.validators import VALIDATORS, MissingPath

    verdicts = []
    for check in p.checks:
        registered = VALIDATORS[check.name]
        try:
            verdicts.append(registered.fn(before, after, registered.params_model.model_validate(check.params)))
        except MissingPath as exc:
            verdicts.append(Verdict(False, (f"✗ the phone's state has no {exc.path!r} (is the app implemented?)",)))
    return verdicts


@validator("all_of", CombinedParams)
def all_of(before: StateView, after: StateView, p: CombinedParams) -> Verdict:
    """Every listed check passes."""
    verdicts = _run_checks(before, after, p)
    return Verdict(all(v.success for v in verdicts), tuple(r for v in verdicts for r in v.reasons))


@validator("any_of", CombinedParams)
def any_of(before: StateView, after: StateView, p: CombinedParams) -> Verdict:
    """At least one listed check passes (several ways to do what was asked)."""
    verdicts = _run_checks(before, after, p)
    return Verdict(any(v.success for v in verdicts), tuple(r for v in verdicts for r in v.reasons))


# --- derived parameters --------------------------------------------------------------------------


def _derive_today(state: StateView) -> str:
    return _clock_date(state, "clock").strftime("%B %-d, %Y")


def _derive_forecast(state: StateView) -> str:
    p = ForecastNoteParams()
    days = _items(state, p.forecast)[: p.days]
    parts = [f"{d.get('day', i + 1)} {round(float(d['low']))}-{round(float(d['high']))}" for i, d in enumerate(days)]
    return ", ".join(parts)


DERIVERS: dict[str, Callable[[StateView], str]] = {
    "today": _derive_today,
    "forecast": _derive_forecast,
}


def derive(names: list[str], state: Mapping[str, Any]) -> dict[str, str]:
    """Derived parameter values from the state before the run."""
    view = StateView(state)
    return {name: DERIVERS[name](view) for name in names}
