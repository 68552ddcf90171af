"""A schedule follows its owner's team: when the operator moves alice from team ``lab`` to team
``ops`` in ``server.tokens`` (and restarts), the schedule she made while in ``lab`` and every later
occurrence's task are ``ops``'s. Before, each occurrence took the team stored when the schedule
was made, so ``lab`` went on reading, cancelling and replying to her tasks (and caching their
plans), and ``ops`` could not see them. Real uvicorn on one database across the restart, the
simulated phone over the real adb server (review8 #2)."""

from __future__ import annotations

import time

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

ADMIN = {"Authorization": "Bearer move-admin-1"}
ALICE = {"Authorization": "Bearer move-alice-1"}
BOB = {"Authorization": "Bearer move-bob-1"}  # stays in lab
CAROL = {"Authorization": "Bearer move-carol-1"}  # in ops


def _settings(alice_team: str) -> dict:
    return {"server.api_token": "move-admin-1",
            "server.tokens": {"alice": {"token": "move-alice-1", "role": "user", "team": alice_team},
                              "bob": {"token": "move-bob-1", "role": "user", "team": "lab"},
                              "carol": {"token": "move-carol-1", "role": "user", "team": "ops"}}}


def _queued(live, schedule_id: int) -> list[int]:
    answer = live.client.get(f"/v1/schedules/{schedule_id}/history", headers=ADMIN)
    assert answer.status_code == 200, answer.text
    return [o["task_id"] for o in answer.json()["data"] if o["outcome"] == "queued"]


def _wait_for_task(live, schedule_id: int, other_than: set[int]) -> int:
    deadline = time.monotonic() + 120  # a guard for a broken build only: the schedule fires every second
    while True:
        new = [t for t in _queued(live, schedule_id) if t not in other_than]
        if new:
            return new[0]
        assert time.monotonic() < deadline, "no occurrence ran"
        time.sleep(0.2)


def test_a_schedule_and_its_later_tasks_follow_its_owner_to_her_new_team(service, sim_phones) -> None:
    (phone,) = sim_phones(1)
    live = service([phone], **_settings("lab"))
    made = live.client.post("/v1/schedules", headers=ALICE,
                            json={"name": "nightly", "every_s": 1, "task": {"script": "Wait (0.1)"}})
    assert made.status_code == 201, made.text
    schedule_id = made.json()["id"]
    in_lab = _wait_for_task(live, schedule_id, set())
    assert live.client.get(f"/v1/tasks/{in_lab}", headers=BOB).status_code == 200  # lab's while she is in lab
    assert live.client.get(f"/v1/schedules/{schedule_id}", headers=CAROL).status_code == 404
    live.stop()

    live = service([phone], **_settings("ops"))  # the operator moved alice to ops
    try:
        after = _wait_for_task(live, schedule_id, set(_queued(live, schedule_id)))
        task = live.client.get(f"/v1/tasks/{after}", headers=ALICE)
        assert task.status_code == 200 and task.json()["options"]["team"] == "ops", task.text
        assert task.json()["options"]["schedule_id"] == schedule_id
        # lab (bob) no longer reads or acts on what her schedule makes; ops (carol) does
        assert live.client.get(f"/v1/tasks/{after}", headers=BOB).status_code == 404
        assert live.client.post(f"/v1/tasks/{after}/cancel", headers=BOB).status_code == 404
        assert live.client.get(f"/v1/tasks/{after}", headers=CAROL).status_code == 200
        listed = {t["id"] for t in live.client.get("/v1/tasks", headers=BOB, params={"limit": 200}).json()["data"]}
        assert after not in listed
        # the schedule itself is ops's now
        assert live.client.get(f"/v1/schedules/{schedule_id}", headers=BOB).status_code == 404
        assert schedule_id not in {s["id"] for s in live.client.get("/v1/schedules", headers=BOB).json()["data"]}
        assert live.client.delete(f"/v1/schedules/{schedule_id}", headers=BOB).status_code == 404
        seen = live.client.get(f"/v1/schedules/{schedule_id}", headers=CAROL)
        assert seen.status_code == 200 and seen.json()["task"]["options"]["team"] == "ops", seen.text
        # a task made while she was in lab stays lab's (a task's team is the one it was made in)
        assert live.client.get(f"/v1/tasks/{in_lab}", headers=BOB).status_code == 200
        assert live.client.delete(f"/v1/schedules/{schedule_id}", headers=CAROL).status_code == 204
    finally:
        live.stop()
