"""A schedule's occurrence is held to its token's quota as a submission is (server/quota.py),
decided in the transaction that moves the schedule on: under ``server.over_quota = "refuse"``
an occurrence over the limit makes no task and is recorded as skipped with the reason, and
the schedule goes on; under ``"wait"`` it is queued and waits for its turn, saying why. On a
real SQLite file and a real PostgreSQL server (two stores ticking at once, as two API
servers), through a real uvicorn server with a simulated phone, and on the farm: its API
server ticks, a real ``mobile-agent worker`` process with no quota settings runs them."""

from __future__ import annotations

import threading
import time
from itertools import pairwise
from pathlib import Path

import pytest

from server.farm.recurring import Schedules
from server.quota import RUNNING_LIMIT_OPTION, Quota, QuotaExceeded
from server.store import TaskStore
from tests.farm_fixtures import start_farm_api, start_worker, until, wait_done, wait_free

REFUSE, WAIT = Quota(1, "refuse"), Quota(1, "wait")


def _body(owner: str) -> dict:
    return {"instruction": "check", "device": "any", "options": {"owner": owner}}


def _occurrences_are_held_to_the_quota(url: str, tmp_path: Path) -> None:
    store = TaskStore(url, instance="api")
    schedules = Schedules(store.engine)
    try:
        busy = store.create_task("alice's own", "any", {"owner": "alice"}, quota=REFUSE)
        alice = schedules.create("alice's check", None, 60.0, _body("alice"), owner="alice")
        bob = schedules.create("bob's check", None, 60.0, _body("bob"), owner="bob")
        now = bob.next_at  # made after alice's: both are due
        made = schedules.due_tasks(store, now=now, quota=REFUSE)
        assert [t.options["owner"] for t in made] == ["bob"]  # bob is not held back by alice
        (skip,) = schedules.history(alice.id)
        assert (skip.outcome, skip.task_id, skip.due_at, skip.at) == ("skipped", None, alice.next_at, now)
        assert "skipped: the token 'alice' had 1 tasks queued or running" in skip.reason
        after = schedules.get(alice.id)
        assert after.next_at == now + 60 and after.enabled and after.runs == 0 and after.last_task_id is None
        assert schedules.skipped(alice.id) == (1, skip)
        assert store.count_active_of("alice") == 1  # no task was stored for the skipped occurrence

        # the schedule went on: once alice's task has ended, the next occurrence is a task
        store.cancel_queued(busy.id)
        (task,) = [t for t in schedules.due_tasks(store, now=after.next_at, quota=REFUSE) if t.options["owner"] == "alice"]
        assert task.options["schedule_id"] == alice.id and RUNNING_LIMIT_OPTION not in task.options
        queued, skipped = schedules.history(alice.id)
        assert (queued.outcome, queued.task_id, queued.reason) == ("queued", task.id, None) and skipped == skip
        assert schedules.get(alice.id).runs == 1 and schedules.get(alice.id).last_task_id == task.id
        # bob's first occurrence is still queued: his second one is over his own limit
        assert [o.outcome for o in schedules.history(bob.id)] == ["skipped", "queued"]

        # under wait: the occurrence is queued with the limit it is held to, and says why it waits
        assert store.claim(task.id, "phone-1", tmp_path / "run")
        (waiting,) = [t for t in schedules.due_tasks(store, now=after.next_at + 60, quota=WAIT)
                      if t.options["owner"] == "alice"]
        assert waiting.status == "queued" and waiting.options[RUNNING_LIMIT_OPTION] == 1
        latest = schedules.history(alice.id)[0]
        assert latest.outcome == "queued" and latest.task_id == waiting.id
        assert "waits for its token's quota: 'alice' has 1 task running" in latest.reason
        assert store.quota_waiting_reason(waiting) == latest.reason
        with pytest.raises(QuotaExceeded):
            store.claim(waiting.id, "phone-2", tmp_path / "run2")
        assert schedules.delete(alice.id) and schedules.history(alice.id) == []
    finally:
        store.close()


def test_occurrences_are_held_to_the_quota_on_sqlite(tmp_path: Path) -> None:
    _occurrences_are_held_to_the_quota(f"sqlite:///{tmp_path / 'tasks.sqlite3'}", tmp_path)


@pytest.mark.postgres
def test_occurrences_are_held_to_the_quota_on_postgres(pg_database: str, tmp_path: Path) -> None:
    _occurrences_are_held_to_the_quota(pg_database, tmp_path)


@pytest.mark.postgres
def test_two_servers_ticking_over_the_quota_record_each_occurrence_once(pg_database: str) -> None:
    """The skip is decided where the occurrence is: whoever wins ``next_at`` records it, once."""
    stores = [TaskStore(pg_database, instance=f"api{i}") for i in range(2)]
    schedules = [Schedules(s.engine) for s in stores]
    try:
        stores[0].create_task("carol's own", "any", {"owner": "carol"}, quota=REFUSE)
        row = schedules[0].create("often", None, 1.0, _body("carol"), owner="carol")
        made: list[int] = []
        barrier = threading.Barrier(2)

        def tick(n: int) -> None:
            barrier.wait()
            for k in range(6):
                made.extend(t.id for t in schedules[n].due_tasks(stores[n], now=row.next_at + k + 0.001, quota=REFUSE))

        threads = [threading.Thread(target=tick, args=(n,)) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        history = schedules[1].history(row.id)
        assert made == [] and [o.outcome for o in history] == ["skipped"] * 6
        assert len({o.due_at for o in history}) == 6  # each occurrence recorded once, by whoever won it
        assert stores[1].count_active_of("carol") == 1
    finally:
        for store in stores:
            store.close()


def test_an_occurrence_over_the_quota_is_skipped_and_shown(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **{"server.api_token": "main-token", "server.tokens": {"alice": "alice-token"},
                               "server.max_active_per_token": 1})
    alice = {"Authorization": "Bearer alice-token"}
    long = live.client.post("/v1/tasks", json={"script": "\n".join(["Wait (0.5)"] * 8)}, headers=alice)
    assert long.status_code == 202, long.text
    created = live.client.post("/v1/schedules", headers=alice,
                               json={"name": "every second", "every_s": 1, "task": {"script": "Home"}})
    assert created.status_code == 201, created.text
    schedule = created.json()

    def get() -> dict:
        return live.client.get(f"/v1/schedules/{schedule['id']}").json()

    deadline = time.monotonic() + 30
    while get()["skipped"] < 1:
        assert time.monotonic() < deadline, "no occurrence skipped while alice's task ran"
        time.sleep(0.2)
    shown = get()
    assert shown["last_skipped"]["outcome"] == "skipped" and shown["last_skipped"]["task_id"] is None
    assert "the token 'alice' had 1 tasks queued or running" in shown["last_skipped"]["reason"]
    assert shown["links"]["history"] == f"/v1/schedules/{schedule['id']}/history"

    # alice's task ends; the schedule kept going, and its next occurrence runs
    deadline = time.monotonic() + 60
    while not any(o["outcome"] == "queued" for o in
                  live.client.get(shown["links"]["history"]).json()["data"]):
        assert time.monotonic() < deadline, "no occurrence queued after alice's task ended"
        time.sleep(0.2)
    assert live.client.delete(f"/v1/schedules/{schedule['id']}").status_code == 204
    history = live.client.get(shown["links"]["history"])
    assert history.status_code == 404
    occurrences = [t for t in live.client.get("/v1/tasks", params={"limit": 200}).json()["data"]
                   if t["options"].get("schedule_id") == schedule["id"]]
    assert occurrences and all(t["options"]["owner"] == "alice" for t in occurrences)
    assert live.wait_task(long.json()["id"])["status"] == "completed"


@pytest.mark.postgres
@pytest.mark.slow
def test_on_the_farm_occurrences_over_a_wait_quota_take_turns(pg_database: str, tmp_path: Path, adb_server,
                                                               sim_phones) -> None:
    pair = sim_phones(2, width=540, height=1200)
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port,
                          serials=[p.serial for p in pair])  # no quota settings: they come with each task
    api = start_farm_api(tmp_path, pg_database, **{
        "server.api_token": "main-token", "server.tokens": {"alice": "alice-token"},
        "server.max_active_per_token": 1, "server.over_quota": "wait"})
    try:
        wait_free(api, [p.serial for p in pair], workers=[worker])
        script = "\n".join(["Wait (0.4)"] * 4)  # about 1.6 s: longer than the schedule's interval
        created = api.client.post("/v1/schedules", headers={"Authorization": "Bearer alice-token"},
                                  json={"name": "busy", "every_s": 1, "task": {"script": script}})
        assert created.status_code == 201, created.text
        history = f"/v1/schedules/{created.json()['id']}/history"

        def waited() -> list[dict]:
            entries = api.client.get(history).json()["data"]
            return [o for o in entries if "waits for its token's quota: 'alice'" in (o["reason"] or "")]

        behind = until(waited, 60, "an occurrence queued behind alice's running one")
        assert all(o["outcome"] == "queued" and o["task_id"] for o in behind)  # queued, never skipped
        assert api.client.delete(f"/v1/schedules/{created.json()['id']}").status_code == 204
        ids = [t["id"] for t in api.client.get("/v1/tasks", params={"limit": 200}).json()["data"]
               if t["options"].get("schedule_id") == created.json()["id"]]
        assert len(ids) >= 2
        done = [wait_done(api.client, task_id, timeout=120) for task_id in ids]
        assert {t["status"] for t in done} == {"completed"}
        runs = sorted((t["started_at"], t["finished_at"]) for t in done)
        for (_, finished), (started, _) in pairwise(runs):
            assert started >= finished, f"two of alice's occurrences ran at once on two free phones: {runs}"
    finally:
        api.stop()
        worker.stop()
