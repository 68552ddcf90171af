"""A schedule stops making tasks when its owner's token is revoked (taken out of ``server.tokens``)
or made a viewer: each occurrence is a task of that owner, submitted as that owner could no longer
submit it. The occurrence is skipped and its history says why; an admin can still read and delete
the schedule. Real uvicorn on one database, before and after the token's removal (a restart
with the new configuration), the simulated phone over the real adb server."""

from __future__ import annotations

import time

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

ADMIN = {"Authorization": "Bearer sched-admin-1"}
ALICE = {"Authorization": "Bearer sched-alice-1"}
WITH_ALICE = {"server.api_token": "sched-admin-1",
              "server.tokens": {"alice": {"token": "sched-alice-1", "role": "user"}}}


def _history(live, schedule_id: int) -> list[dict]:
    answer = live.client.get(f"/v1/schedules/{schedule_id}/history", headers=ADMIN)
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def _wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + 120  # a guard for a broken build only: the schedule fires every second
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


@pytest.mark.parametrize("then", [{}, {"alice": {"token": "sched-alice-1", "role": "viewer"}}],
                         ids=["revoked", "made-a-viewer"])
def test_a_schedule_of_a_revoked_token_makes_no_more_tasks(service, sim_phones, then) -> None:
    (phone,) = sim_phones(1)
    live = service([phone], **WITH_ALICE)
    made = live.client.post("/v1/schedules", headers=ALICE,
                            json={"name": "alice's", "every_s": 1, "task": {"script": "Wait (0.1)"}})
    assert made.status_code == 201, made.text
    schedule_id = made.json()["id"]
    _wait_for(lambda: any(o["outcome"] == "queued" for o in _history(live, schedule_id)), "no occurrence ran")
    live.stop()

    live = service([phone], **{**WITH_ALICE, "server.tokens": then})  # alice's token taken away
    tasks_before = {t["id"] for t in live.client.get("/v1/tasks", headers=ADMIN, params={"limit": 200}).json()["data"]}
    _wait_for(lambda: any(o["outcome"] == "skipped" for o in _history(live, schedule_id)), "no occurrence skipped")
    skipped = next(o for o in _history(live, schedule_id) if o["outcome"] == "skipped")
    assert "alice" in skipped["reason"] and skipped["task_id"] is None, skipped
    tasks_after = {t["id"] for t in live.client.get("/v1/tasks", headers=ADMIN, params={"limit": 200}).json()["data"]}
    made_since = [i for i in tasks_after - tasks_before
                  if live.client.get(f"/v1/tasks/{i}", headers=ADMIN).json()["options"].get("schedule_id") == schedule_id]
    assert made_since == [], made_since
    assert live.client.delete(f"/v1/schedules/{schedule_id}", headers=ADMIN).status_code == 204
