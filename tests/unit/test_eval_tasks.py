"""Mobile-Eval task data and validators: the 33 tasks of Table 1, and validators judged on
before/after state snapshots (the intended change, and nothing else broken)."""

from __future__ import annotations

import json
from datetime import date

import pytest

from eval.mobile_eval.app_validators import date_spellings, derive
from eval.mobile_eval.errors import TaskDataError
from eval.mobile_eval.records import load_paper_results
from eval.mobile_eval.runner import parse_action_ref
from eval.mobile_eval.schema import EvalTask, load_tasks, select_tasks
from eval.mobile_eval.validators import VALIDATORS, StateView, ValidatorSpec, split_path, validate

TASKS = load_tasks()
KEEP = "com.google.android.keep"


def test_the_33_instructions_of_table_1():
    assert len(TASKS) == 33
    by_app: dict[str, list[int]] = {}
    for task in TASKS:
        by_app.setdefault(task.app, []).append(task.level)
    assert len(by_app) == 11 and all(levels == [1, 2, 3] for levels in by_app.values())
    assert [t.id for t in TASKS if t.app == "Multi-App"] == ["multi-app-1", "multi-app-2", "multi-app-3"]


def test_human_steps_are_table_2s():
    paper = {r.task_id: r.human_steps for r in load_paper_results()}
    assert {t.id: t.human_steps for t in TASKS} == paper


def test_every_reference_line_parses_with_the_operations_parser():
    for task in TASKS:
        values = {**task.params, **dict.fromkeys(task.derived, "x")}
        for line in task.reference_lines(values):
            for alternative in line.split(" || "):
                parse_action_ref(alternative)  # raises on a bad line


def test_instruction_templates_are_filled():
    gmail = select_tasks(TASKS, ids=["gmail-1"])[0]
    assert gmail.render() == "Send an empty email to alex.chen@example.com."
    assert gmail.render({"address": "bo@example.org"}) == "Send an empty email to bo@example.org."
    assert "Type (bo@example.org)" in gmail.reference_script({"address": "bo@example.org"})
    assert gmail.paper_instruction == "Send an empty email to to {address}."
    with pytest.raises(TaskDataError):
        gmail.render({"addresss": "typo@example.org"})
    filled = gmail.validator.filled(gmail.resolved_params({"address": "bo@example.org"}))
    assert filled.params["equals"] == {"to": "bo@example.org"}


def test_derived_values_must_be_given():
    task = select_tasks(TASKS, ids=["multi-app-1"])[0]
    with pytest.raises(TaskDataError):
        task.reference_script()
    assert "Type (Today is May 20, 2024)" in task.reference_script({"today": "May 20, 2024"})


def test_filters_by_app_and_level():
    assert [t.id for t in select_tasks(TASKS, apps=["settings"], levels=[2])] == ["settings-2"]
    assert len(select_tasks(TASKS, apps=["Google Maps", "amazon-music"])) == 6
    assert len(select_tasks(TASKS, levels=[3])) == 11
    with pytest.raises(TaskDataError, match="known: Alibaba.com"):
        select_tasks(TASKS, apps=["Snapchat"])
    with pytest.raises(TaskDataError):
        select_tasks(TASKS, levels=[4])
    with pytest.raises(TaskDataError):
        select_tasks(TASKS, ids=["notes-9"])


def _task(**changes):
    data = json.loads(TASKS[0].model_dump_json())
    data.update(changes)
    return data


@pytest.mark.parametrize("changes, message", [
    ({"id": "alibaba-2"}, "does not end with its level"),
    ({"id": "Alibaba 1"}, "is not '<slug>-<level>'"),
    ({"instruction": "Find {thing}"}, "without a value"),
    ({"validator": {"name": "no_such_validator"}}, "unknown validator"),
    ({"validator": {"name": "setting_is", "params": {"value": True}}}, "bad params"),
    ({"human_steps": 0}, "greater than or equal to 1"),
])
def test_bad_task_data_is_a_clear_error(changes, message):
    with pytest.raises(ValueError, match=message):
        EvalTask.model_validate(_task(**changes))


def test_a_broken_task_file_names_itself(tmp_path, monkeypatch):
    package = tmp_path / "badtasks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "x.json").write_text('{"app": "X", "tasks": [{"id": "x-1"}]}')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TaskDataError, match="x.json"):
        load_tasks("badtasks")


# --- validators -------------------------------------------------------------------------------


def phone_state(**changes):
    state = {
        "clock": "2024-05-20T09:30:00", "theme": "light", "airplane_mode": False, "wifi": True,
        "bluetooth": False, "network_speed_shown": False, "installed": ["com.android.vending"],
        "apps": {KEEP: {"notes": [{"id": 1, "title": "Groceries", "body": "milk"}], "next_id": 2},
                 "com.weather.Weather": {"city": "Hangzhou", "forecast": [
                     {"day": d, "high": h, "low": lo} for d, h, lo in
                     [("Mon", 25, 17), ("Tue", 27, 18), ("Wed", 22, 15), ("Thu", 21, 14), ("Fri", 24, 16)]]}},
    }
    for path, value in changes.items():
        node = state
        *parents, last = split_path(path)
        for part in parents:
            node = node[part]
        node[last] = value
    return state


def note(i, title, body=""):
    return {"id": i, "title": title, "body": body}


def spec_of(task_id):
    task = select_tasks(TASKS, ids=[task_id])[0]
    return task.validator.filled(task.params)


def test_dark_mode_on_and_nothing_else():
    before = phone_state()
    assert validate(spec_of("settings-1"), before, phone_state(theme="dark")).success
    assert not validate(spec_of("settings-1"), before, phone_state()).success
    both = validate(spec_of("settings-1"), before, phone_state(theme="dark", airplane_mode=True))
    assert not both.success
    assert any("airplane_mode changed: False → True" in r for r in both.reasons)


def test_note_exists_with_the_text_and_old_notes_untouched():
    before = phone_state()
    old = note(1, "Groceries", "milk")
    ok = phone_state(**{f"apps[{KEEP}].notes": [old, note(2, "Hello, this is a note")]})
    assert validate(spec_of("notes-2"), before, ok).success
    in_body = phone_state(**{f"apps[{KEEP}].notes": [old, note(2, "", "hello,  this is a NOTE")]})
    assert validate(spec_of("notes-2"), before, in_body).success
    wrong_text = phone_state(**{f"apps[{KEEP}].notes": [old, note(2, "Hello")]})
    assert not validate(spec_of("notes-2"), before, wrong_text).success
    edited_old = phone_state(**{f"apps[{KEEP}].notes": [note(1, "Hello, this is a note", "milk")]})
    assert not validate(spec_of("notes-2"), before, edited_old).success  # no new note; the old one changed
    deleted_old = phone_state(**{f"apps[{KEEP}].notes": [note(2, "Hello, this is a note")]})
    verdict = validate(spec_of("notes-2"), before, deleted_old)
    assert not verdict.success and any("earlier items changed or deleted: [1]" in r for r in verdict.reasons)


def test_note_with_todays_date_in_any_spelling():
    before = phone_state()
    for text in ("Today is May 20, 2024", "today is 2024-05-20", "Today is 20 May", "Today is 5/20"):
        after = phone_state(**{f"apps[{KEEP}].notes": [note(1, "Groceries", "milk"), note(2, text)]})
        assert validate(spec_of("multi-app-1"), before, after).success, text
    wrong = phone_state(**{f"apps[{KEEP}].notes": [note(1, "Groceries", "milk"), note(2, "Today is May 21")]})
    assert not validate(spec_of("multi-app-1"), before, wrong).success
    assert "May 20" in date_spellings(date(2024, 5, 20))


def test_temperature_analysis_quotes_the_forecast():
    before = phone_state()
    assert derive(["forecast"], before) == {"forecast": "Mon 17-25, Tue 18-27, Wed 15-22, Thu 14-21, Fri 16-24"}
    good = "Temperature: highs 25, 27 and 22 °C, cooling to 21 on Thursday."
    after = phone_state(**{f"apps[{KEEP}].notes": [note(1, "Groceries", "milk"), note(2, "Weather", good)]})
    assert validate(spec_of("multi-app-2"), before, after).success
    vague = phone_state(**{f"apps[{KEEP}].notes": [note(1, "Groceries", "milk"), note(2, "Temperature is nice")]})
    assert not validate(spec_of("multi-app-2"), before, vague).success


def test_mail_sent_to_the_address():
    gm = "com.google.android.gm"
    before = phone_state(**{f"apps[{gm}]": {"sent": []}})
    sent = {"id": 7, "to": ["alex.chen@example.com"], "subject": "", "body": ""}
    assert validate(spec_of("gmail-1"), before, phone_state(**{f"apps[{gm}]": {"sent": [sent]}})).success
    other = dict(sent, to=["someone@example.com"])
    assert not validate(spec_of("gmail-1"), before, phone_state(**{f"apps[{gm}]": {"sent": [other]}})).success
    not_empty = dict(sent, body="hi")
    assert not validate(spec_of("gmail-1"), before, phone_state(**{f"apps[{gm}]": {"sent": [not_empty]}})).success
    work = dict(sent, body="I started a new job!")
    assert validate(spec_of("gmail-2"), before, phone_state(**{f"apps[{gm}]": {"sent": [work]}})).success


def test_counts_and_alternatives():
    tt = "com.zhiliaoapp.musically"
    before = phone_state(**{f"apps[{tt}]": {"liked": [], "comments": []}})
    likes = [{"id": i, "video_id": i, "tags": ["pet", "cat"]} for i in range(2)]
    two = phone_state(**{f"apps[{tt}]": {"liked": likes, "comments": []}})
    assert validate(spec_of("tiktok-1"), before, two).success
    assert not validate(spec_of("tiktok-3"), before, two).success
    three = phone_state(**{f"apps[{tt}]": {"liked": likes + [{"id": 5, "video_id": 5, "tags": ["cat"]}], "comments": []}})
    assert validate(spec_of("tiktok-3"), before, three).success
    yt = "com.google.android.youtube"
    before = phone_state(**{f"apps[{yt}]": {"liked": [], "comments": [], "searches": []}})
    liked = phone_state(**{f"apps[{yt}]": {"liked": [{"id": 1, "video_title": "Stephen Curry Top Plays"}],
                                           "comments": [], "searches": []}})
    assert validate(spec_of("youtube-3"), before, liked).success


def test_an_app_that_is_not_there_fails_with_a_reason_not_an_exception():
    verdict = validate(spec_of("chrome-1"), phone_state(), phone_state())
    assert not verdict.success
    assert "state has no 'apps[com.android.chrome].searches'" in verdict.reasons[0]


def test_installs_are_read_from_the_installed_list():
    before = phone_state()
    after = phone_state(installed=["com.android.vending", "com.whatsapp"])
    assert validate(spec_of("google-play-1"), before, after).success
    assert not validate(spec_of("google-play-1"), after, after).success  # it was there already


def test_state_paths():
    assert split_path("apps[com.x.y].notes.0.title") == ["apps", "com.x.y", "notes", "0", "title"]
    view = StateView({"apps": {"com.x.y": {"notes": [{"title": "t"}]}}})
    assert view.get("apps[com.x.y].notes.0.title") == "t"
    assert view.get("apps[com.x.y].notes.5", None) is None
    assert not view.has("apps.other")


def test_every_validator_is_documented():
    assert all(v.description for v in VALIDATORS.values())
    with pytest.raises(ValueError):
        ValidatorSpec(name="all_of", params={"checks": [{"name": "nope"}]})


def test_every_task_guards_what_it_must_not_touch():
    # "nothing else broke": a task that is not about notes, mail, installs or the quick
    # settings fails when the run changed them on the way
    chrome = "com.android.chrome"
    before = phone_state(**{f"apps[{chrome}]": {"searches": []}})
    search = {f"apps[{chrome}]": {"searches": [{"id": 1, "query": "Lakers game today"}]}}
    assert validate(spec_of("chrome-1"), before, phone_state(**search)).success
    for broken in ({f"apps[{KEEP}].notes": []}, {"wifi": False}, {"installed": []}):
        verdict = validate(spec_of("chrome-1"), before, phone_state(**search, **broken))
        assert not verdict.success, broken
        assert any(r.startswith("✗") and "changed" in r for r in verdict.reasons)
    guarded = {task.id: set(task.validator.unchanged) for task in TASKS}
    assert all({"theme", "installed"} <= paths for task_id, paths in guarded.items()
               if not task_id.startswith(("settings-", "google-play-")))
    assert "airplane_mode" not in guarded["settings-2"] and "wifi" not in guarded["settings-2"]  # it turns them off
