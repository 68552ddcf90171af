"""Mobile-Eval reference tasks through every dialect, end to end: the simulated phone over
the real adb server, the planner through the real openai client against the scripted
server, which answers as a grounding model in each dialect's own format and coordinate
space (tests/grounding_model.py). Success is read from the phone's state."""

from __future__ import annotations

import pytest

from eval.mobile_eval.schema import load_tasks
from mobile_agent.agent import Agent, RunStatus
from tests.agent_helpers import agent_settings
from tests.grounding_model import GroundingModel

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

# (served model name, dialect setting, the dialect the grounding model answers in, its space)
MODELS = [
    ("ui-tars-1.5-7b", "auto", "ui_tars", "image"),
    ("Qwen/Qwen2.5-VL-7B-Instruct", "auto", "mobile_use", "image"),
    ("qwen3-vl:8b", "auto", "mobile_use", "grid"),
    ("autoglm-phone-9b", "auto", "autoglm", "grid"),
    ("gpt-4o", "function_calling", "function_calling", "screen"),
    ("gpt-4o", "auto", "paper", "screen"),
]


def _task(task_id: str):
    return next(t for t in load_tasks() if t.id == task_id)


@pytest.mark.parametrize(
    ("model", "setting", "dialect", "space"), MODELS, ids=[f"{m[2]}-{m[3]}" for m in MODELS]
)
def test_dark_mode_through_each_dialect(
    adb_server, sim_phone, llm_server, tmp_path, model, setting, dialect, space
):
    phone = sim_phone.phone
    task = _task("settings-1")
    llm_server.model = model
    grounding = GroundingModel(
        dialect, space, task.reference_lines(), phone.ground_truth, screen=(phone.width, phone.height)
    )
    llm_server.script([], default=grounding)
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    settings = settings.with_overrides({"planner.model": model, "planner.dialect": setting})

    result = Agent(settings).run(task.instruction)

    assert result.status is RunStatus.COMPLETED, result.reason
    assert phone.dark_mode  # read from the phone
    taps = [s for s in result.steps if s.operation_name == "tap_point"]
    if dialect in ("ui_tars", "mobile_use", "autoglm"):
        assert len(taps) == 2 and all(s.snap is not None for s in taps)
        # the model's point, as mapped, and the tapped one are both kept
        assert all(s.snap["model_point"] and s.snap["point"] == list(s.tap_point) for s in taps)
    else:
        assert not taps
    if dialect == "function_calling":
        assert all(r.json.get("tools") for r in llm_server.chat_requests[:1])


def test_a_hand_over_stops_the_run_and_says_why(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.model = "autoglm-phone-9b"
    llm_server.script(
        ['<think>A login page.</think>\n<answer>do(action="Take_over", message="Please log in")</answer>']
    )
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    settings = settings.with_overrides({"planner.model": "autoglm-phone-9b"})
    result = Agent(settings).run("Log in to the mail app")
    assert result.status is RunStatus.NOT_COMPLETED
    assert "handed over to the user" in result.reason and "Please log in" in result.reason
    assert len(llm_server.chat_requests) == 1  # no completion check, nothing after it


def test_drift_is_snapped_onto_the_meant_element(adb_server, sim_phone, llm_server, tmp_path):
    """3% of the screen height below every target: snapping still taps the right rows."""
    phone = sim_phone.phone
    task = _task("settings-1")
    llm_server.model = "ui-tars-1.5-7b"
    grounding = GroundingModel("ui_tars", "image", task.reference_lines(), phone.ground_truth,
                               screen=(phone.width, phone.height), drift=(0.0, 0.03))  # fmt: skip
    llm_server.script([], default=grounding)
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    settings = settings.with_overrides({"planner.model": "ui-tars-1.5-7b"})
    result = Agent(settings).run(task.instruction)
    assert result.status is RunStatus.COMPLETED, result.reason
    assert phone.dark_mode
    moved = [s for s in result.steps if s.snap and s.snap["moved"]]
    assert moved and all(s.snap["reason"] for s in moved)


@pytest.mark.parametrize(
    ("model", "dialect", "space"),
    [("qwen3-vl:8b", "mobile_use", "grid"), ("autoglm-phone-9b", "autoglm", "grid")],
)
def test_a_note_typed_through_a_grounded_dialect(
    adb_server, sim_phone, llm_server, tmp_path, model, dialect, space
):
    """Mobile-Eval notes-1: an icon without text, typing, Back twice to save."""
    phone = sim_phone.phone
    task = _task("notes-1")
    lines = [line.split("||")[0].strip() for line in task.reference_lines()]
    llm_server.model = model
    llm_server.script(
        [],
        default=GroundingModel(dialect, space, lines, phone.ground_truth, screen=(phone.width, phone.height)),
    )
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    result = Agent(settings.with_overrides({"planner.model": model})).run(task.instruction)
    assert result.status is RunStatus.COMPLETED, result.reason
    notes = phone.state()["apps"]["com.google.android.keep"]["notes"]
    assert any("New note" in (n.get("title", "") + n.get("body", "")) for n in notes), notes
    assert [s.operation_name for s in result.steps] == [
        "open_app",
        "tap_point",
        "type",
        "press_key",
        "press_key",
        "finished",
    ]
