"""End to end: real jobs on the simulated phone through the real adb server, real
perception (RapidOCR), the planner through the real openai client against the scripted
server. Success is read from the phone's state, never from the agent's claim."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mobile_agent.agent import Agent, RunStatus, run_script
from tests.agent_helpers import DONE, agent_settings, plan_reply

ROOT = Path(__file__).resolve().parents[2]
NOTES = "com.google.android.keep"
pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


def _notes(phone) -> list[dict]:
    return phone.state()["apps"][NOTES]["notes"]


def test_dark_mode_turned_on_by_the_planned_agent(adb_server, sim_phone, llm_server, tmp_path):
    phone = sim_phone.phone
    assert not phone.dark_mode
    llm_server.script(
        [
            plan_reply("Open App (Settings)", thought="Dark mode is in the Settings app."),
            plan_reply("Click text (Display & brightness)", thought="The display page has the theme."),
            plan_reply("Click text (Dark mode)"),
            plan_reply("Stop"),
            DONE,
        ]
    )
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    result = Agent(settings).run("Turn on the dark mode")

    assert result.status is RunStatus.COMPLETED, result.reason
    assert phone.dark_mode  # read from the phone, not from the agent
    assert phone.settings_get("global", "airplane_mode_on") in (None, "0")  # nothing else touched
    clicks = [s for s in result.steps if s.operation_name == "click_text"]
    assert all(s.location and s.location.status == "found" and s.tap_point for s in clicks)
    assert all(s.screen_changed for s in result.steps[:3])
    assert clicks[0].timings.perception_ms > 0
    assert (result.trajectory_dir / result.steps[1].annotated).is_file()


def test_dark_mode_by_the_bundled_demo_script(adb_server, sim_phone, tmp_path):
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path)
    script = (ROOT / "scripts" / "demo_dark_mode.txt").read_text(encoding="utf-8")
    result = run_script(settings, script, instruction="Turn on the dark mode")
    assert result.status is RunStatus.COMPLETED, result.reason
    assert sim_phone.phone.dark_mode
    assert [s.operation_name for s in result.steps] == ["open_app", "click_text", "click_text", "stop"]
    assert result.final_screenshot is None  # the Stop step shows the end state


def test_script_step_that_cannot_be_done_ends_not_completed(adb_server, sim_phone, tmp_path):
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path)
    result = run_script(settings, "Open App (Settings)\nClick text (Teleportation options)\nStop\n")
    assert result.status is RunStatus.NOT_COMPLETED
    assert "line 2" in result.reason and "Teleportation options" in result.reason
    assert result.steps[-1].location.status == "not_found"


def test_note_written_and_saved(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script(
        [
            plan_reply("Open App (Notes)"),
            plan_reply("Click icon (orange plus, bottom right)"),
            plan_reply("Type (Shopping list)"),
            plan_reply("Enter"),
            plan_reply("Type (Milk, eggs & bread: 2 $)"),
            plan_reply("Back", thought="Back hides the keyboard."),
            plan_reply("Back", thought="Back again saves the note."),
            plan_reply("Stop"),
            DONE,
        ]
    )
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    result = Agent(settings).run("Write a note titled 'Shopping list' with milk, eggs and bread")
    assert result.status is RunStatus.COMPLETED, result.reason
    notes = _notes(sim_phone.phone)
    assert [(n["title"], n["body"]) for n in notes] == [("Shopping list", "Milk, eggs & bread: 2 $")]


def test_non_ascii_text_typed_through_adb_keyboard(adb_server, sim_phones, tmp_path):
    (handle,) = sim_phones(1, adb_keyboard=True)
    text = "牛奶 café — 東京 ✓"
    settings = agent_settings(adb_server.port, handle.serial, tmp_path)
    # the first Back hides the keyboard, the second leaves the editor and saves
    script = f"Open App (Notes)\nClick icon (orange plus, bottom right)\nType ({text})\nBack\nBack\n"
    result = run_script(settings, script)
    assert result.status is RunStatus.COMPLETED, result.reason
    assert [n["title"] for n in _notes(handle.phone)] == [text]
    assert handle.phone.current_ime != "com.android.adbkeyboard/.AdbIME"  # the user's keyboard restored
    # no Stop: the screen after the last Back is kept as the run's end state
    assert result.final_screenshot == "final.png" and (result.trajectory_dir / "final.png").is_file()
    assert "the screen at the end" in (result.trajectory_dir / "report.html").read_text(encoding="utf-8")


def test_text_with_several_matches_is_resolved_by_choosing_a_candidate(
    adb_server, sim_phone, llm_server, tmp_path
):
    phone = sim_phone.phone
    data = phone.app_data(NOTES)
    for note_id, body in ((1, "from the market"), (2, "from the bakery")):
        data["notes"].append({"id": note_id, "title": "Groceries", "body": body, "created": "", "modified": ""})
    data["next_id"] = 3
    llm_server.script(
        [
            plan_reply("Open App (Notes)"),
            plan_reply("Click text (Groceries)"),
            "2",  # the candidate choice: the second crop
            plan_reply("Stop"),
            DONE,
        ]
    )
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    result = Agent(settings).run("Open the groceries note from the market")
    assert result.status is RunStatus.COMPLETED, result.reason

    click = result.steps[1]
    assert click.location.status == "candidates" and len(click.location.candidates) == 2
    assert click.chosen_candidate == 2
    choose_request = llm_server.chat_requests[2]
    assert len(choose_request.images()) == 2  # one crop per candidate
    boxes = {c["index"]: c["box"] for c in click.location.candidates}
    lower = 2 if boxes[2][1] > boxes[1][1] else 1
    # newest first: the lower card is the older note (id 1)
    expected_id = 1 if lower == 2 else 2
    view = phone.task(NOTES)[-1]
    assert view["view"] == "edit" and view["note_id"] == expected_id
    assert click.tap_point and click.location.candidates[1]["box"][1] <= click.tap_point[1]


def test_script_line_chooses_among_several_matches_with_its_candidate_number(adb_server, sim_phone, tmp_path):
    phone = sim_phone.phone
    data = phone.app_data(NOTES)
    for note_id, body in ((1, "from the market"), (2, "from the bakery")):
        data["notes"].append({"id": note_id, "title": "Groceries", "body": body, "created": "", "modified": ""})
    data["next_id"] = 3
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path)

    unchosen = run_script(settings, "Open App (Notes)\nClick text (Groceries)\n")
    assert unchosen.status is RunStatus.NOT_COMPLETED and "Groceries" in unchosen.reason
    assert phone.task(NOTES)[-1]["view"] == "main"  # nothing tapped

    result = run_script(settings, "Open App (Notes)\nClick text (Groceries) #2\n")
    assert result.status is RunStatus.COMPLETED, result.reason
    click = result.steps[1]
    assert click.location.status == "candidates" and click.chosen_candidate == 2
    boxes = {c["index"]: c["box"] for c in click.location.candidates}
    # candidates are numbered in reading order and the list shows the newest note first
    expected_id = 1 if boxes[2][1] > boxes[1][1] else 2
    view = phone.task(NOTES)[-1]
    assert view["view"] == "edit" and view["note_id"] == expected_id


def test_secret_typed_on_screen_is_masked_in_saved_screenshots(adb_server, sim_phone, tmp_path):
    from PIL import Image

    from mobile_agent.locate import build_locator

    secret = "Hunter2Secret"
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, secrets=[secret])
    script = f"Open App (Notes)\nClick icon (orange plus, bottom right)\nType ({secret})\nBack\n"
    result = run_script(settings, script)
    assert result.status is RunStatus.COMPLETED, result.reason
    view = sim_phone.phone.task(NOTES)[-1]
    assert secret in view["fields"]["title"]

    shown = result.trajectory_dir / result.steps[3].screenshot  # the frame after typing
    pixels = np.asarray(Image.open(shown).convert("RGB"))
    texts = " ".join(line.text for line in build_locator(settings).ocr(pixels))
    assert "New note" in texts  # the rest of the screen is kept
    assert secret.lower() not in texts.lower().replace(" ", "")
    for path in result.trajectory_dir.iterdir():
        if path.suffix in (".jsonl", ".html"):
            assert secret not in path.read_text(encoding="utf-8")


def test_cancel_while_the_model_chooses_a_candidate_taps_nothing(adb_server, sim_phone, llm_server, tmp_path):
    import threading
    import time

    from tests.llm_fixtures import Reply

    data = sim_phone.phone.app_data(NOTES)
    for note_id in (1, 2):
        data["notes"].append({"id": note_id, "title": "Groceries", "body": "", "created": "", "modified": ""})
    data["next_id"] = 3
    answer = threading.Event()  # the choice is answered only after the run returned (see below)
    llm_server.script(
        [plan_reply("Open App (Notes)"), plan_reply("Click text (Groceries)"), Reply(text="1", hold=answer)]
    )
    cancel = threading.Event()

    def cancel_while_choosing() -> None:
        while len(llm_server.chat_requests) < 3:
            time.sleep(0.02)
        cancel.set()

    threading.Thread(target=cancel_while_choosing, daemon=True).start()
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    try:  # a run that waited for the choice would never return
        result = Agent(settings).run("Open a groceries note", cancel=cancel)
    finally:
        answer.set()
    assert result.status is RunStatus.CANCELLED, result.reason
    click = result.steps[1]
    assert click.operation_name == "click_text" and click.error["cause"] == "cancelled"
    assert click.tap_point is None and sim_phone.phone.task(NOTES)[-1]["view"] == "main"  # nothing tapped


def test_candidate_choice_without_an_answer_becomes_feedback(adb_server, sim_phone, llm_server, tmp_path):
    data = sim_phone.phone.app_data(NOTES)
    for note_id in (1, 2):
        data["notes"].append({"id": note_id, "title": "Groceries", "body": "", "created": "", "modified": ""})
    data["next_id"] = 3
    llm_server.script(
        [
            plan_reply("Open App (Notes)"),
            plan_reply("Click text (Groceries)"),
            "The first one looks nice.",  # not a number ...
            "I cannot tell.",  # ... asked again once, still none
            plan_reply("Stop"),
            DONE,
        ]
    )
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    result = Agent(settings).run("Open a groceries note")
    assert result.status is RunStatus.COMPLETED, result.reason
    click = result.steps[1]
    assert not click.ok and click.chosen_candidate is None and click.tap_point is None
    assert "Groceries" in click.feedback
    assert click.feedback in llm_server.chat_requests[4].text()  # the next plan is told
    assert sim_phone.phone.task(NOTES)[-1]["view"] == "main"  # nothing was tapped
