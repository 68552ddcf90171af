"""Function calling: a step is the operation the tool call names, not the text around it.
The model writes its Observation and Thought as text and calls one function; the progress
line, the history sent back to the model and a hand-over's ``asking.operation`` carry the
operation (``Open App (Settings)``). Before, they carried the reply's text
(``[step 1] Observation: a phone screen.``). Through `mobile-agent run` (a subprocess) and
a REST task, the scripted OpenAI-compatible server answering with real ``tool_calls``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agent_helpers import cli_env, run_cli
from tests.llm_server import Reply

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]
TEXT = "Observation: a phone screen.\nThought: the next step of the plan."


def _call(name: str, **arguments: Any) -> Reply:
    return Reply(text=TEXT, tool_calls=((name, json.dumps(arguments)),))


def test_run_records_the_called_operation(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([_call("open_app", app="Settings"), _call("click_text", text="Display & brightness"),
                       _call("stop")])
    env = cli_env(adb_server.port, MOBILE_AGENT_PLANNER__DIALECT="function_calling")
    proc = run_cli("--serial", sim_phone.serial, "--base-url", llm_server.base_url, "--api-key", "k", "--model", "gpt-4o",
                   "--no-completion-check", "-o", str(tmp_path / "runs"), "-i", "Open the display settings", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all(r.json.get("tools") for r in llm_server.chat_requests)  # function calling indeed
    out = proc.stdout
    assert "[step 1] Open App (Settings)" in out and "[step 2] Click text (Display & brightness)" in out, out
    assert "[step 1] Observation" not in out
    history = llm_server.chat_requests[2].text()
    assert "Step 1: Open App (Settings) ->" in history and "Step 2: Click text (Display & brightness) ->" in history
    assert "Step 1: Observation" not in history
    state = sim_phone.adb_state()
    assert state["foreground"] == "com.android.settings" and "display" in json.dumps(state["current"]).lower()


def test_a_hand_over_asks_with_the_called_operation(sim_phone, service):
    live = service([sim_phone], planner=lambda request: _call("ask_user", question="What is the code?"),
                   **{"planner.dialect": "function_calling"})
    task = live.submit("Log in to the mail app")
    waiting = live.wait_task(task["id"], statuses={"waiting_for_user"})
    assert waiting["asking"]["operation"] == "Ask user (What is the code?)", waiting["asking"]
    assert live.client.post(f"/v1/tasks/{task['id']}/cancel").status_code == 202
    assert live.wait_task(task["id"], timeout=20)["status"] == "cancelled"
