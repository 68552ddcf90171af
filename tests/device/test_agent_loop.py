"""The step loop on a simulated phone through the real adb server, planned by a scripted
OpenAI-compatible server through the real openai client: reflection, completion check,
budgets, planner and device failures, cancellation, events, redaction."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from mobile_agent.agent import NO_EFFECT_NOTE, Agent, AgentEvent, RunStatus, load_trajectory
from tests.agent_helpers import DONE, agent_settings, not_done, plan_reply
from tests.llm_fixtures import Reply

pytestmark = pytest.mark.timeout(120)


def _run(settings, instruction="Go to the home screen", **kwargs):
    events: list[AgentEvent] = []

    def listen(event: AgentEvent) -> None:
        if event.kind == "step_finished":  # the screenshot must be on disk when it is announced
            assert Path(event.data["screenshot_path"]).is_file()
            event.data["_seen_on_disk"] = True
        events.append(event)

    result = Agent(settings, on_event=listen, **kwargs).run(instruction)
    return result, events


def test_completed_run_writes_trajectory_events_and_sends_one_downscaled_image(
    adb_server, sim_phone, llm_server, tmp_path
):
    llm_server.script([plan_reply("Back", thought="Go back."), plan_reply("Stop"), DONE])
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    result, events = _run(settings)

    assert result.status is RunStatus.COMPLETED, result.reason
    assert [s.operation_name for s in result.steps] == ["back", "stop"]
    plan_requests = llm_server.chat_requests
    assert len(plan_requests) == 3  # two plans + one completion check
    first = plan_requests[0]
    assert len(first.images()) == 1  # only the current screen, never the history of screens
    assert max(first.image_sizes()[0]) == settings.planner.image_long_side
    assert "Go to the home screen" in first.text()
    assert "Step 1: Back" in plan_requests[1].text()  # the history is a fold over the steps

    header, steps, final = load_trajectory(result.trajectory_dir)
    assert header["schema_version"] == 1
    assert header["device"]["serial"] == sim_phone.serial and header["device"]["width"] == 1080
    assert len(steps) == 2 and final["status"] == "completed"
    assert steps[0]["operation"]["name"] == "back" and steps[0]["thought"] == "Go back."
    assert set(steps[0]["timings"]) == {"capture_ms", "perception_ms", "model_ms", "action_ms", "settle_ms"}
    assert steps[0]["timings"]["model_ms"] > 0 and steps[0]["usage"]["prompt_tokens"] > 0
    assert (result.trajectory_dir / steps[0]["screenshot"]).is_file()
    assert result.report_path.is_file()
    assert result.usage.calls == 3 and result.usage.prompt_tokens > 0
    assert sum(s["usage"]["prompt_tokens"] for s in steps) == result.usage.prompt_tokens  # the check's tokens too

    kinds = [e.kind for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert kinds.count("step_started") == 2 and kinds.count("step_finished") == 2
    for event in events:
        json.dumps(event.to_dict())  # JSON-able for the REST service's SSE
    finished = [e for e in events if e.kind == "step_finished"]
    assert all(e.data.get("_seen_on_disk") for e in finished)
    assert finished[0].data["action"] == "Back" and finished[0].data["thought"] == "Go back."
    assert events[-1].data["status"] == "completed"


def test_no_effect_action_is_caught_by_reflection(adb_server, sim_phone, llm_server, tmp_path):
    # on the home screen, Home changes nothing
    llm_server.script([plan_reply("Home"), plan_reply("Stop"), DONE])
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    result, _ = _run(settings)

    assert result.status is RunStatus.COMPLETED
    assert result.steps[0].screen_changed is False
    assert result.steps[0].reflection_note
    second = llm_server.chat_requests[1]
    assert NO_EFFECT_NOTE.format(action="Home") in second.text()
    assert len(second.images()) == 2  # the previous screenshot, and the current one
    assert len(llm_server.chat_requests[0].images()) == 1


def test_no_reflection_sends_no_note(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([plan_reply("Home"), plan_reply("Stop"), DONE])
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server, reflection=False)
    result, _ = _run(settings)
    assert result.status is RunStatus.COMPLETED
    second = llm_server.chat_requests[1]
    assert result.steps[0].screen_changed is False and result.steps[0].reflection_note is None
    assert NO_EFFECT_NOTE.format(action="Home") not in second.text() and len(second.images()) == 1


def test_premature_stop_is_caught_by_the_completion_check(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script(
        [
            plan_reply("Stop"),
            not_done("the dark mode switch is still off"),
            plan_reply("Back"),
            plan_reply("Stop"),
            DONE,
        ]
    )
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    result, _ = _run(settings, "Turn on the dark mode")

    assert result.status is RunStatus.COMPLETED
    assert [s.operation_name for s in result.steps] == ["stop", "back", "stop"]
    assert result.steps[0].completion == {"done": False, "reason": "the dark mode switch is still off"}
    check = llm_server.chat_requests[1]
    assert "Turn on the dark mode" in check.text() and len(check.images()) == 1
    replan = llm_server.chat_requests[2]
    assert "the dark mode switch is still off" in replan.text()


def test_stop_rejected_beyond_the_check_budget_ends_not_completed(
    adb_server, sim_phone, llm_server, tmp_path
):
    llm_server.script([plan_reply("Stop"), not_done("nothing was done"), plan_reply("Stop"), not_done("still nothing")])
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server, max_completion_checks=1)
    result, _ = _run(settings)
    assert result.status is RunStatus.NOT_COMPLETED
    assert "still nothing" in result.reason
    assert len(llm_server.chat_requests) == 4


def test_planner_429_then_success(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([Reply(status=429, text="slow down"), plan_reply("Stop"), DONE])
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    result, _ = _run(settings)
    assert result.status is RunStatus.COMPLETED
    assert len(llm_server.chat_requests) == 3


def test_planner_500_storm_ends_with_planner_unreachable(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([], default=Reply(status=500, text="boom"))
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    result, _ = _run(settings)
    assert result.status is RunStatus.ERROR
    assert result.error["cause"] == "planner_unreachable"
    assert result.error["attempts"] == settings.planner.max_retries + 1
    assert len(llm_server.chat_requests) == settings.planner.max_retries + 1  # bounded
    # the cause names what happened: the status code and the number of attempts
    assert result.error["status_code"] == 500
    assert "HTTP 500" in result.reason and f"{settings.planner.max_retries + 1} attempts" in result.reason
    _, steps, final = load_trajectory(result.trajectory_dir)
    assert final["status"] == "error" and final["error"]["cause"] == "planner_unreachable"
    # no reply, so no step; the frame the planner never answered about is the end state
    assert steps == [] and final["final_screenshot"] == "step-001.png"
    assert (result.trajectory_dir / "step-001.png").is_file()


def test_garbage_replies_become_feedback_then_exhaust_the_budget(
    adb_server, sim_phone, llm_server, tmp_path
):
    llm_server.script([plan_reply("Teleport (the moon)")], default="I like turtles. Here is a poem about them.")
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server, max_consecutive_failures=3)
    result, _ = _run(settings)
    assert result.status is RunStatus.BUDGET_EXHAUSTED
    assert "3 consecutive" in result.reason
    assert len(result.steps) == 3 and all(s.error for s in result.steps)
    assert result.steps[0].error["type"] == "UnknownOperationError" and "Teleport" in result.steps[0].feedback
    assert all(s.operation is None and s.tap_point is None for s in result.steps)  # nothing done on the phone
    for step, request in zip(result.steps, llm_server.chat_requests[1:], strict=False):
        assert step.feedback and step.feedback in request.text()  # told to the model


def test_identical_actions_without_change_exhaust_the_budget(
    adb_server, sim_phone, llm_server, tmp_path
):
    llm_server.script([], default=plan_reply("Home"))
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server, max_identical_actions=3)
    result, _ = _run(settings)
    assert result.status is RunStatus.BUDGET_EXHAUSTED
    assert len(result.steps) == 3 and "repeated 3 times" in result.reason


def test_step_budget(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([], default=plan_reply("Home"))
    settings = agent_settings(
        adb_server.port, sim_phone.serial, tmp_path, llm_server, max_steps=2, max_identical_actions=10
    )
    result, _ = _run(settings)
    assert result.status is RunStatus.BUDGET_EXHAUSTED
    assert len(result.steps) == 2 and "step budget" in result.reason
    assert (result.trajectory_dir / result.final_screenshot).is_file()


def test_phone_lost_mid_run_ends_with_device_lost_and_keeps_the_trajectory(
    adb_server, sim_phones, llm_server, tmp_path
):
    (handle,) = sim_phones(1)
    calls = {"n": 0}

    def planner(request):
        calls["n"] += 1
        if calls["n"] == 2:
            handle.kill()  # the phone goes away between the model's answer and the action
        return plan_reply("Back")

    llm_server.script([], default=planner)
    settings = agent_settings(adb_server.port, handle.serial, tmp_path, llm_server)
    result, events = _run(settings)
    assert result.status is RunStatus.ERROR, result.reason
    assert result.error["cause"] == "device_lost"
    assert result.error["serial"] == handle.serial
    header, steps, final = load_trajectory(result.trajectory_dir)
    assert final["error"]["cause"] == "device_lost"
    # the step in flight is kept: the model's reply, its tokens, what it asked for, the error
    assert len(steps) == 2 and steps[0]["error"] is None
    lost = steps[1]
    assert lost["operation"]["name"] == "back" and "Action: Back" in lost["raw_reply"]
    assert lost["error"]["cause"] == "device_lost" and lost["ok"] is False and "device_lost" in lost["feedback"]
    assert lost["usage"]["prompt_tokens"] > 0
    assert sum(s["usage"]["prompt_tokens"] for s in steps) == result.usage.prompt_tokens
    assert (result.trajectory_dir / lost["screenshot"]).is_file()
    assert (result.trajectory_dir / "report.html").is_file()
    assert events[-1].kind == "run_finished"


def test_phone_lost_mid_script_keeps_the_line_in_flight(adb_server, sim_phones, tmp_path):
    from mobile_agent.agent import run_script

    (handle,) = sim_phones(1)

    def listen(event: AgentEvent) -> None:
        if event.kind == "step_started" and event.step == 2:
            handle.kill()  # step 2 reuses step 1's settled frame: the phone is gone at the action

    settings = agent_settings(adb_server.port, handle.serial, tmp_path)
    result = run_script(settings, "Home\nBack\nStop\n", on_event=listen)
    assert result.status is RunStatus.ERROR and result.error["cause"] == "device_lost", result.reason
    _, steps, final = load_trajectory(result.trajectory_dir)
    assert [s["operation"]["name"] for s in steps] == ["home", "back"]
    assert steps[1]["error"]["cause"] == "device_lost" and steps[1]["action_text"] == "Back"
    assert final["status"] == "error"


def test_cancel_between_the_model_and_the_action(adb_server, sim_phone, llm_server, tmp_path):
    from mobile_agent.planner import Planner, PlanReply, PlanRequest

    cancel = threading.Event()

    class CancelOnSecondAnswer(Planner):  # the cancel comes once the second answer is in hand
        def plan(self, request: PlanRequest) -> PlanReply:
            reply = super().plan(request)
            if len(llm_server.chat_requests) == 2:
                cancel.set()
            return reply

    llm_server.script([], default=plan_reply("Back"))
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    planner = CancelOnSecondAnswer(settings.planner)
    result = Agent(settings, planner=planner).run("Go back twice", cancel=cancel)
    assert result.status is RunStatus.CANCELLED
    assert result.error is None and "cancel" in result.reason
    # the second reply is kept, its action was never carried out
    second = result.steps[1]
    assert len(result.steps) == 2 and second.operation_name == "back"
    assert not second.ok and second.screen_changed is None and second.error["cause"] == "cancelled"
    _, steps, final = load_trajectory(result.trajectory_dir)
    assert final["status"] == "cancelled" and len(steps) == 2


def test_cancel_while_the_model_thinks_ends_the_run_without_waiting_for_its_answer(
    adb_server, sim_phone, llm_server, tmp_path
):
    # the model answers only once the test lets it, after the run returned: a run that
    # waited for the answer would never return (and the test would time out)
    answer = threading.Event()
    llm_server.script([], default=Reply(text=plan_reply("Back"), hold=answer))
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    cancel = threading.Event()

    def cancel_once_asked() -> None:
        while not llm_server.chat_requests:
            time.sleep(0.02)
        cancel.set()

    threading.Thread(target=cancel_once_asked, daemon=True).start()
    try:
        result = Agent(settings).run("Go back", cancel=cancel)
    finally:
        answer.set()
    assert result.status is RunStatus.CANCELLED, result.reason
    assert result.steps == [] and result.final_screenshot == "step-001.png"
    _, steps, final = load_trajectory(result.trajectory_dir)
    assert final["status"] == "cancelled" and (result.trajectory_dir / "report.html").is_file()


def test_secrets_and_the_api_key_never_reach_the_trajectory(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([plan_reply("Type (hunter2secret)", thought="type hunter2secret"), plan_reply("Stop"), DONE])
    settings = agent_settings(
        adb_server.port, sim_phone.serial, tmp_path, llm_server, secrets=["hunter2secret"], completion_check=True
    )
    events: list[AgentEvent] = []
    result = Agent(settings, on_event=events.append).run("Type hunter2secret in the search box")
    assert llm_server.chat_requests[0].authorization == "Bearer test-key"
    files = [p for p in result.trajectory_dir.iterdir() if p.suffix in (".jsonl", ".html")]
    assert len(files) == 2
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert "hunter2secret" not in text and "test-key" not in text
    assert "[REDACTED]" in (result.trajectory_dir / "trajectory.jsonl").read_text(encoding="utf-8")
    assert all("hunter2secret" not in e.to_json() for e in events)


def test_bad_instruction_is_a_clear_typed_error(adb_server, sim_phone, llm_server, tmp_path):
    from mobile_agent.errors import ConfigError

    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    with pytest.raises(ConfigError, match="instruction"):
        Agent(settings).run("   ")
    assert not list(tmp_path.iterdir())  # nothing written for a rejected call
