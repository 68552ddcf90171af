"""The plan cache (``mobile_agent.replay``): a completed run replays without the model.

Units: instruction templates, fingerprints, the store. End to end on the simulated
phone through the real adb server, real OCR and the scripted planner over HTTP: a run
that worked once replays with no model call, on the same phone and on one of another
size and theme; a screen that is not the recorded one hands over to the model; other
values replay through a template's slots; a cached plan runs with no endpoint at all.
"""

from __future__ import annotations

import numpy as np
import pytest

from mobile_agent.agent import Agent, RunStatus
from mobile_agent.replay import CachedPlan, CachedStep, InstructionTemplate, PlanStore, fingerprint
from mobile_agent.replay.plans import fill_slots, to_slots
from perception.types import Box, TextLine
from tests.agent_helpers import DONE, agent_settings, plan_reply

SETTINGS_APP = "com.android.settings"

# -- units --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instruction", "template", "values"),
    [
        (
            "Send an email to alice@example.com about my new job.",
            "send an email to ⟦0⟧ about my new job",
            ("alice@example.com",),
        ),
        ('Create a note titled "Shopping list"', "create a note titled ⟦0⟧", ("Shopping list",)),
        ("Set an alarm for 7:30 and call it “wake up”", "set an alarm for ⟦0⟧ and call it ⟦1⟧", ("7:30", "wake up")),
        ("Open https://example.org/a?b=1 in Chrome", "open ⟦0⟧ in chrome", ("https://example.org/a?b=1",)),
        ("Turn on   the dark mode", "turn on the dark mode", ()),
        ("Don't turn on 'airplane' mode", "don't turn on ⟦0⟧ mode", ("airplane",)),
    ],
)
def test_instruction_template_takes_out_the_values_a_user_changes(instruction, template, values):
    parsed = InstructionTemplate.of(instruction)
    assert parsed.template == template
    assert parsed.values == values


def test_slots_round_trip_with_other_values():
    recorded = InstructionTemplate.of('Create a note titled "Shopping" about 2012')
    slotted = to_slots("Type (Shopping 2012)", recorded.values)
    assert slotted == "Type (⟦0⟧ ⟦1⟧)"
    assert fill_slots(slotted, InstructionTemplate.of('Create a note titled "Groceries" about 1999').values) == (
        "Type (Groceries 1999)"
    )
    assert fill_slots(slotted, ("only one",)) is None  # a slot without a value: not replayable


def _frame(dark: bool = False, size: tuple[int, int] = (1080, 2400)) -> np.ndarray:
    width, height = size
    frame = np.full((height, width, 3), 30 if dark else 240, np.uint8)
    frame[height // 4 : height // 2, width // 8 : width // 2] = 200 if dark else 40
    return frame


def _lines(texts: list[str], height: int = 2400) -> list[TextLine]:
    return [TextLine(t, Box(10, 200 + 100 * i, 300, 260 + 100 * i), 0.9) for i, t in enumerate(texts)]


def test_fingerprint_matches_the_same_screen_in_another_theme_and_size():
    texts = ["Network & internet", "Connected devices", "Apps", "Display & brightness", "Battery"]
    light = fingerprint(_frame(), _lines(texts))
    dark_small = fingerprint(_frame(dark=True, size=(720, 1600)), _lines(texts, 1600))
    other = fingerprint(_frame(), _lines(["Inbox", "Primary", "Compose", "Sent", "Drafts"]))
    assert light.similarity(dark_small) == pytest.approx(1.0)
    assert light.similarity(other) == 0.0
    # the clock and battery of the status bar, and counters, are not part of the screen
    ticking = fingerprint(_frame(), [TextLine("9:41", Box(10, 5, 100, 40), 0.9), *_lines(texts + ["12:05"])])
    assert ticking.texts == light.texts


def test_fingerprint_without_texts_compares_the_layout_in_either_theme():
    plain = fingerprint(_frame(), [])
    inverted = fingerprint(_frame(dark=True), [])
    moved = np.full((2400, 1080, 3), 240, np.uint8)
    moved[1800:2200, 600:1000] = 40
    assert plain.similarity(inverted) > 0.9
    assert plain.similarity(fingerprint(moved, [])) < 0.5
    again = type(plain).from_dict(plain.to_dict())
    assert again.texts == plain.texts and plain.similarity(again) > 0.99


def test_store_keeps_the_newest_trusted_plan(tmp_path):
    store = PlanStore(f"sqlite:///{tmp_path / 'plans.sqlite3'}")
    screen = fingerprint(_frame(), _lines(["Settings", "Display"]))
    step = CachedStep(action="Open App (Settings)", operation="open_app", fingerprint=screen)
    first = store.save(CachedPlan(template="t", steps=(step,), final=screen, instruction="T"))
    second = store.save(CachedPlan(template="t", steps=(step, step), final=screen, instruction="T"))
    assert store.find("t").id == second and len(store.find("t").steps) == 2
    assert store.find("another") is None
    for _ in range(2):
        store.note_use(second, succeeded=False)
    assert store.find("t").id == first  # failed more than it succeeded (+1): not replayed
    store.note_use(second, succeeded=True)
    assert store.find("t").id == second
    assert [p.id for p in store.list()] == [second, first]
    assert store.delete(first) and not store.delete(first)
    assert store.clear() == 1 and store.list() == []


# -- end to end ---------------------------------------------------------------------

DARK_MODE_REPLIES = [
    plan_reply("Open App (Settings)"),
    plan_reply("Click text (Display & brightness)"),
    plan_reply("Click text (Dark mode)"),
    plan_reply("Stop"),
    DONE,
]


def _cached(settings, **cache):
    return settings.with_overrides({"cache.enabled": True, **{f"cache.{k}": v for k, v in cache.items()}})


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_completed_run_replays_with_no_model_call(adb_server, sim_phone, llm_server, tmp_path):
    settings = _cached(agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server))
    llm_server.script(DARK_MODE_REPLIES)
    first = Agent(settings).run("Turn on the dark mode")
    assert first.status is RunStatus.COMPLETED, first.reason
    assert first.usage.calls == 5
    assert {s.by for s in first.steps} == {"model"}
    plans = PlanStore(f"sqlite:///{tmp_path / 'plan-cache.sqlite3'}").list()
    assert len(plans) == 1 and [s.action for s in plans[0].steps] == [
        "Open App (Settings)",
        "Click text (Display & brightness)",
        "Click text (Dark mode)",
    ]

    sim_phone.phone.reset()
    assert not sim_phone.phone.dark_mode
    requests_before = len(llm_server.chat_requests)
    second = Agent(settings).run("turn on the dark mode")  # the same template
    assert second.status is RunStatus.COMPLETED, second.reason
    assert sim_phone.phone.dark_mode  # read from the phone
    assert len(llm_server.chat_requests) == requests_before  # not one model call
    assert second.usage.calls == 0
    assert [s.by for s in second.steps] == ["replay"] * 4
    clicks = [s for s in second.steps if s.operation_name == "click_text"]
    assert all(s.location and s.location.status == "found" for s in clicks)  # located again, not replayed blind
    assert "cached plan" in second.reason
    (again,) = PlanStore(f"sqlite:///{tmp_path / 'plan-cache.sqlite3'}").list()
    assert (again.uses, again.successes) == (1, 1)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_replay_on_a_phone_of_another_size_and_theme(adb_server, sim_phone, sim_phones, llm_server, tmp_path):
    llm_server.script([plan_reply("Open App (Settings)"), plan_reply("Click text (Display & brightness)"),
                       plan_reply("Stop"), DONE])
    instruction = "Open the display settings"
    settings = _cached(agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server))
    assert Agent(settings).run(instruction).status is RunStatus.COMPLETED

    (small,) = sim_phones(1, width=720, height=1600, density=320)
    small.phone.settings_put("secure", "ui_night_mode", "2")  # dark theme
    other = settings.with_overrides({"adb.serial": small.serial})
    requests_before = len(llm_server.chat_requests)
    result = Agent(other).run(instruction)
    assert result.status is RunStatus.COMPLETED, result.reason
    assert len(llm_server.chat_requests) == requests_before
    state = small.phone.state()
    assert state["current"]["package"] == SETTINGS_APP and state["tasks"][SETTINGS_APP][-1]["page"] == "display"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_screen_unlike_the_recorded_one_hands_over_to_the_model(adb_server, sim_phone, llm_server, tmp_path):
    settings = _cached(agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server))
    llm_server.script(DARK_MODE_REPLIES)
    assert Agent(settings).run("Turn on the dark mode").status is RunStatus.COMPLETED

    sim_phone.phone.reset()
    sim_phone.phone.launch("com.google.android.keep")  # not the home screen the plan starts on
    llm_server.script(DARK_MODE_REPLIES)
    result = Agent(settings).run("Turn on the dark mode")
    assert result.status is RunStatus.COMPLETED, result.reason
    assert sim_phone.phone.dark_mode
    assert result.steps[0].by == "model"  # diverged at once
    assert result.usage.calls == 5
    plans = PlanStore(f"sqlite:///{tmp_path / 'plan-cache.sqlite3'}").list()
    assert len(plans) == 2  # the run that needed the model is a plan too, for that start screen
    assert plans[1].failures == 0  # not the old plan's fault: it was never tried

    sim_phone.phone.reset()  # from the home screen again: the first plan, not the newest
    requests_before = len(llm_server.chat_requests)
    again = Agent(settings).run("Turn on the dark mode")
    assert again.status is RunStatus.COMPLETED, again.reason
    assert len(llm_server.chat_requests) == requests_before
    assert [p.successes for p in PlanStore(f"sqlite:///{tmp_path / 'plan-cache.sqlite3'}").list()] == [0, 1]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_other_values_replay_through_the_templates_slots(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script(
        [
            plan_reply("Open App (Notes)"),
            plan_reply("Click icon (orange plus, bottom right)"),
            plan_reply("Type (Shopping)"),
            plan_reply("Back"),
            plan_reply("Back"),
            plan_reply("Stop"),
            DONE,
        ]
    )
    settings = _cached(agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server))
    assert Agent(settings).run('Create a note titled "Shopping"').status is RunStatus.COMPLETED

    sim_phone.phone.reset()
    requests_before = len(llm_server.chat_requests)
    result = Agent(settings).run('Create a note titled "Groceries"')
    assert result.status is RunStatus.COMPLETED, result.reason
    assert len(llm_server.chat_requests) == requests_before
    notes = sim_phone.phone.state()["apps"]["com.google.android.keep"]["notes"]
    assert [n["title"] for n in notes][-1] == "Groceries"
    assert "Type (Groceries)" in [s.action_text for s in result.steps]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_cached_plan_runs_without_any_endpoint(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script(DARK_MODE_REPLIES)
    with_model = _cached(agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server))
    assert Agent(with_model).run("Turn on the dark mode").status is RunStatus.COMPLETED
    sim_phone.phone.reset()

    no_model = _cached(agent_settings(adb_server.port, sim_phone.serial, tmp_path))
    result = Agent(no_model).run("Turn on the dark mode")
    assert result.status is RunStatus.COMPLETED, result.reason
    assert sim_phone.phone.dark_mode

    # nothing cached for this one and no endpoint: a clear error before any step
    failed = Agent(no_model).run("Turn on the airplane mode")
    assert failed.status is RunStatus.ERROR
    assert "no planner endpoint configured" in failed.error["message"]
    assert failed.steps == []


# -- the CLI ------------------------------------------------------------------------


def _cli(*args, cwd):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "mobile_agent.cli", *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd)


def test_cache_cli_lists_shows_and_clears_plans(tmp_path, capsys, monkeypatch):
    from mobile_agent.cli import main

    store = PlanStore(f"sqlite:///{tmp_path / 'plan-cache.sqlite3'}")
    screen = fingerprint(_frame(), _lines(["Network & internet", "Display & brightness"]))
    steps = (CachedStep("Open App (Settings)", "open_app", screen), CachedStep("Click text (Display & brightness)",
                                                                                "click_text", screen))
    first = store.save(CachedPlan(template="turn on the dark mode", steps=steps, final=screen,
                                  instruction="Turn on the dark mode"))
    second = store.save(CachedPlan(template="open ⟦0⟧", steps=steps[:1], final=screen, instruction='Open "Settings"'))

    listed = _cli("cache", "--output", str(tmp_path), "list", cwd=tmp_path)  # the command as a process
    assert listed.returncode == 0, listed.stderr
    assert "Turn on the dark mode" in listed.stdout and 'Open "Settings"' in listed.stdout

    def cache(*args: str) -> tuple[int, str, str]:  # the rest through main(), in this process
        code = main(["cache", "--output", str(tmp_path), *args])
        out, err = capsys.readouterr()
        return code, out, err

    monkeypatch.chdir(tmp_path)
    code, out, _ = cache("show", str(first))
    assert code == 0 and "2. Click text (Display & brightness)" in out
    code, _, err = cache("show", "999")
    assert code == 1 and "no plan 999" in err
    assert cache("clear", str(second))[0] == 0
    assert [p.id for p in store.list()] == [first]
    code, out, _ = cache("clear")
    assert code == 0 and "deleted 1 plans" in out
    assert store.list() == []


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_run_cli_with_cache_replays_the_second_time(adb_server, sim_phone, llm_server, tmp_path):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    env.update({"MOBILE_AGENT_ADB__SERVER_PORT": str(adb_server.port), "PYTHONUNBUFFERED": "1",
                "MOBILE_AGENT_PLANNER__BASE_URL": llm_server.base_url, "MOBILE_AGENT_PLANNER__API_KEY": "sk-test"})
    command = [sys.executable, "-m", "mobile_agent.cli", "run", "-s", sim_phone.serial, "-o", str(tmp_path),
               "-i", "Turn on the dark mode"]
    llm_server.script(DARK_MODE_REPLIES)
    plain = subprocess.run([*command, "--no-cache"], env=env, capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert not (tmp_path / "plan-cache.sqlite3").exists()  # --no-cache: nothing learnt

    sim_phone.phone.reset()
    llm_server.script(DARK_MODE_REPLIES)
    first = subprocess.run([*command, "--cache"], env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "replayed" not in first.stdout

    sim_phone.phone.reset()
    requests_before = len(llm_server.chat_requests)
    second = subprocess.run([*command, "--cache"], env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.count("(replayed, no model call)") == 4
    assert len(llm_server.chat_requests) == requests_before
    assert sim_phone.phone.dark_mode


def test_cached_coordinate_operations_parse_again():
    from mobile_agent.replay.replayer import parse_cached

    assert parse_cached("Press key (back)").name == "press_key"
    assert parse_cached("Click text (Display)").name == "click_text"
