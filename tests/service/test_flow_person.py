"""A test flow run as a REST task asks its person as an instruction's task does (docs/person.md):
a ``run:`` step whose agent asks (a question, a confirmation) makes the task
``waiting_for_user``, ``POST /v1/tasks/{id}/reply`` answers it, and the flow goes on. Real
uvicorn, the simulated phone over the real adb server, the scripted LLM server."""

from __future__ import annotations

import pytest

from tests.server_fixtures import TaggedPlanner

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

FLOW = """name: the person opens the notes
steps:
  - run: "[t-ask] open my notes"
  - do: Home
"""


def test_a_flow_tasks_run_step_asks_the_person_through_rest(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], planner=TaggedPlanner(plans={"t-ask": ["Ask user (Please open the Notes app)"]}))
    created = live.client.post("/v1/tasks", json={"flow": FLOW, "device": phone.serial})
    assert created.status_code == 202, created.text
    task_id = created.json()["id"]
    waiting = live.wait_task(task_id, statuses={"waiting_for_user", "completed", "not_completed", "error"}, timeout=120)
    assert waiting["status"] == "waiting_for_user", waiting["result"]
    assert waiting["asking"]["kind"] == "question" and "open the Notes app" in waiting["asking"]["question"]
    assert live.client.post(f"/v1/tasks/{task_id}/reply", json={"action": "done", "text": "opened"}).status_code == 202
    done = live.wait_task(task_id, timeout=120)
    assert done["status"] == "completed", done["result"]
    statuses = [e.data["status"] for e in live.state.store.events_after(task_id) if e.kind == "status"]
    assert statuses == ["queued", "running", "waiting_for_user", "running", "completed"]


def test_a_flow_task_waiting_for_its_person_can_be_cancelled(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], planner=TaggedPlanner(plans={"t-ask": ["Ask user (Please open the Notes app)"]}))
    task_id = live.client.post("/v1/tasks", json={"flow": FLOW, "device": phone.serial}).json()["id"]
    live.wait_task(task_id, statuses={"waiting_for_user"}, timeout=120)
    assert live.client.post(f"/v1/tasks/{task_id}/cancel").status_code == 202
    done = live.wait_task(task_id, timeout=120)
    assert done["status"] == "cancelled", done["result"]
    assert done["steps"] == 1  # the run: step, cut short; the do: step never ran
