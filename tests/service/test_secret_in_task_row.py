"""A value of ``agent.secrets`` that a user writes into an instruction is kept in the task's row
(its run needs it) but leaves the service redacted, as the run's own records are: the task as
its team reads it (one task, the list), the schedule that holds it, the audit trail (review8
#6). Real uvicorn serving the app, the simulated phone over the real adb server."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(180)

VALUE = "Quokka7731Zz"
ADMIN = {"Authorization": "Bearer row-admin-1"}
ALICE = {"Authorization": "Bearer row-alice-1"}
VIC = {"Authorization": "Bearer row-vic-1"}  # a viewer of alice's team
SETTINGS = {
    "server.api_token": "row-admin-1",
    "server.tokens": {"alice": {"token": "row-alice-1", "role": "user", "team": "lab"},
                      "vic": {"token": "row-vic-1", "role": "viewer", "team": "lab"}},
    "agent.secrets": [VALUE],
}


def test_a_secret_written_into_an_instruction_leaves_the_service_redacted(service, sim_phone) -> None:
    live = service([sim_phone], **SETTINGS)
    submitted = live.client.post("/v1/tasks", headers=ALICE, json={"instruction": f"sign in with {VALUE} please"})
    assert submitted.status_code == 202, submitted.text
    task_id = submitted.json()["id"]
    scheduled = live.client.post("/v1/schedules", headers=ALICE, json={
        "name": "nightly", "every_s": 86400, "task": {"script": f"Type ({VALUE})\nStop"}})
    assert scheduled.status_code == 201, scheduled.text

    read = {
        "the submission's answer": submitted,
        "the task, by its viewer": live.client.get(f"/v1/tasks/{task_id}", headers=VIC),
        "the task list, by its owner": live.client.get("/v1/tasks", headers=ALICE),
        "the schedule's answer": scheduled,
        "the schedule, by its viewer": live.client.get(f"/v1/schedules/{scheduled.json()['id']}", headers=VIC),
        "the audit trail": live.client.get("/v1/audit", headers=ADMIN),
    }
    assert all(r.status_code in (200, 201, 202) for r in read.values()), {k: r.text for k, r in read.items()}
    assert "sign in with" in read["the audit trail"].text and "Type (" in read["the schedule, by its viewer"].text
    shown = [where for where, answer in read.items() if VALUE in answer.text]
    assert not shown, f"the secret's value is shown in {shown}"  # (before: in every one)
    task = live.client.get(f"/v1/tasks/{task_id}", headers=VIC).json()
    assert task["instruction"].startswith("sign in with ") and task["instruction"].endswith(" please"), task
    assert live.client.post(f"/v1/tasks/{task_id}/cancel", headers=ALICE).status_code == 202
