"""The plan cache on a phone that is not the one the plan was recorded on (issue 15's
perturbed repeats): a list scrolled differently, one more item, a dialog that was not
there (seen before the replayed tap: the model has that step at once). Each
perturbation is made over the real adb server as ``eval.mobile_eval.perturb`` makes it
for the benchmark; the planner is the scripted model server over HTTP; success
is read from the phone's state. The replay either finds its targets again where they
moved to, or hands over to the model, which finishes.
"""

from __future__ import annotations

import pytest

from eval.mobile_eval.perturb import PERTURBATIONS
from mobile_agent.agent import Agent, RunStatus
from mobile_agent.replay import PlanStore
from tests.agent_helpers import DONE, agent_settings, plan_reply

SETTINGS_APP = "com.android.settings"
MAPS = "com.google.android.apps.maps"


def _cached(settings):
    return settings.with_overrides({"cache.enabled": True})


def _perturb(sim_phone, name: str) -> None:
    PERTURBATIONS[name].apply(lambda argv: sim_phone.device.shell(argv))


def _record(settings, llm_server, instruction: str, actions: list[str]) -> None:
    llm_server.script([*(plan_reply(a) for a in actions), plan_reply("Stop"), DONE])
    assert Agent(settings).run(instruction).status is RunStatus.COMPLETED


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_list_scrolled_differently_replays_with_its_targets_found_where_they_moved(
    adb_server, sim_phone, llm_server, tmp_path
):
    settings = _cached(agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server))
    actions = ["Open App (Settings)", "Click text (Display & brightness)", "Click text (Dark mode)"]
    _record(settings, llm_server, "Turn on the dark mode", actions)
    recorded = PlanStore(f"sqlite:///{tmp_path / 'plan-cache.sqlite3'}").list()[0]

    sim_phone.phone.reset()
    _perturb(sim_phone, "scrolled")
    requests_before = len(llm_server.chat_requests)
    result = Agent(settings).run("Turn on the dark mode")
    assert result.status is RunStatus.COMPLETED, result.reason
    assert len(llm_server.chat_requests) == requests_before  # no model: every target was found again
    assert sim_phone.phone.dark_mode
    click = next(s for s in result.steps if s.action_text == "Click text (Display & brightness)")
    assert click.by == "replay" and click.location is not None and click.location.status == "found"
    recorded_y = recorded.steps[1].point[1] * sim_phone.phone.height
    assert click.tap_point[1] < recorded_y - 200  # the row moved up with the scroll: tapped where it is now
    assert "recorded band" not in click.location.backend  # not in its band: the whole screen was read

    sim_phone.phone.reset()  # unperturbed: the target is in its recorded band, one strip read
    again = Agent(settings).run("Turn on the dark mode")
    assert again.status is RunStatus.COMPLETED, again.reason
    click = next(s for s in again.steps if s.action_text == "Click text (Display & brightness)")
    assert click.location is not None and "recorded band" in click.location.backend
    assert abs(click.tap_point[1] - recorded_y) < 60


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_one_more_note_than_recorded_still_creates_the_note(adb_server, sim_phone, llm_server, tmp_path):
    settings = _cached(agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server))
    actions = ["Open App (Notes)", "Click icon (orange plus, bottom right)", "Type (Shopping)", "Back", "Back"]
    _record(settings, llm_server, 'Create a note titled "Shopping"', actions)

    sim_phone.phone.reset()
    _perturb(sim_phone, "extra_note")
    assert [n["title"] for n in sim_phone.phone.state()["apps"]["com.google.android.keep"]["notes"]] == ["Buy milk"]
    llm_server.script([*(plan_reply(a) for a in actions), plan_reply("Stop"), DONE])  # if the replay hands over
    result = Agent(settings).run('Create a note titled "Shopping"')
    assert result.status is RunStatus.COMPLETED, result.reason
    notes = sim_phone.phone.state()["apps"]["com.google.android.keep"]["notes"]
    assert [n["title"] for n in notes] == ["Buy milk", "Shopping"]  # the new one, and nothing else changed


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_dialog_that_was_not_there_goes_to_the_model_and_the_replay_goes_on(
    adb_server, sim_phone, llm_server, tmp_path
):
    settings = _cached(agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server))
    _record(settings, llm_server, "Open the search in Google Maps", ["Open App (Google Maps)", "Click text (Search here)"])

    sim_phone.phone.reset()
    _perturb(sim_phone, "location_dialog")  # Maps asks for the location when it opens
    llm_server.script([plan_reply("Click text (While using the app)"), plan_reply("Click text (Search here)"),
                       plan_reply("Stop"), DONE])
    requests_before = len(llm_server.chat_requests)
    result = Agent(settings).run("Open the search in Google Maps")
    assert result.status is RunStatus.COMPLETED, result.reason
    # the dialog's scrim was seen before the replayed tap beside it: the model had that
    # step, and the replay went on from the recorded screen it left
    assert [(s.by, s.action_text) for s in result.steps] == [
        ("replay", "Open App (Google Maps)"),
        ("model", "Click text (While using the app)"),
        ("replay", "Click text (Search here)"),
        ("replay", "Stop"),
    ]
    assert len(llm_server.chat_requests) == requests_before + 1
    state = sim_phone.phone.state()
    assert state["revoked"] == {MAPS: []} and state["permission_request"] is None
    assert state["foreground"] == MAPS and state["focus"] == "search"
    *_, recorded = PlanStore(f"sqlite:///{tmp_path / 'plan-cache.sqlite3'}").list()
    assert (recorded.uses, recorded.successes, recorded.failures) == (1, 1, 0)

    sim_phone.phone.reset()  # the model's step leaves the dialog there (a tap beside it): over for good
    _perturb(sim_phone, "location_dialog")
    llm_server.script([plan_reply("Click text (Search here)"), plan_reply("Click text (While using the app)"),
                       plan_reply("Click text (Search here)"), plan_reply("Stop"), DONE])
    again = Agent(settings).run("Open the search in Google Maps")
    assert again.status is RunStatus.COMPLETED, again.reason
    assert [s.by for s in again.steps] == ["replay"] + ["model"] * 4
    assert again.steps[1].screen_changed is False and sim_phone.phone.state()["focus"] == "search"
