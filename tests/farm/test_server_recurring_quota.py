"""Recurring tasks and the per-token quota on the embedded default (real uvicorn, a simulated
phone, SQLite): a schedule's occurrences are ordinary tasks; bad schedules are 422s; the
``mobile-agent schedule`` CLI goes through the REST API; a token over its limit gets a 429
that says why, another token is not held back. And on PostgreSQL: two servers ticking one
schedule make each occurrence once."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from mobile_agent.cli import main as cli_main
from server.farm.recurring import Schedules
from server.store import TaskStore


def _until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, what
        time.sleep(0.1)
    return value


def test_a_schedule_makes_ordinary_tasks_until_deleted(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone])
    created = live.client.post("/v1/schedules", json={"name": "heartbeat check", "every_s": 1,
                                                      "task": {"script": "Home\nWait (0.1)"}})
    assert created.status_code == 201, created.text
    schedule = created.json()
    assert schedule["every_s"] == 1 and 0 <= schedule["next_in_s"] <= 1

    def occurrences() -> list[dict]:
        tasks = live.client.get("/v1/tasks", params={"limit": 200}).json()["data"]
        return [t for t in tasks if t["options"].get("schedule_id") == schedule["id"]]

    _until(lambda: sum(t["status"] == "completed" for t in occurrences()) >= 2, 30, "two completed occurrences")
    got = live.client.get(f"/v1/schedules/{schedule['id']}").json()
    assert got["runs"] >= 2 and got["last_task_id"] in {t["id"] for t in occurrences()}
    assert all(t["steps"] == 2 for t in occurrences() if t["status"] == "completed")
    assert live.client.delete(f"/v1/schedules/{schedule['id']}").status_code == 204
    time.sleep(1.5)  # a tick in flight at the delete may still have made one
    made = len(occurrences())
    time.sleep(2.5)
    assert len(occurrences()) == made  # no more after the delete
    assert live.client.get(f"/v1/schedules/{schedule['id']}").status_code == 404
    assert live.client.delete(f"/v1/schedules/{schedule['id']}").status_code == 404

    for body, words in (
        ({"cron": "every morning"}, "not a cron expression"),
        ({"cron": "* * * * *", "every_s": 5}, "either cron"),
        ({}, "either cron"),
        ({"every_s": 0.1}, "at least 1"),
    ):
        refused = live.client.post("/v1/schedules", json={"name": "bad", "task": {"script": "Home"}, **body})
        assert refused.status_code == 422 and words in refused.text, refused.text
    refused = live.client.post("/v1/schedules", json={"name": "bad", "every_s": 5, "task": {"script": "Fly (away)"}})
    assert refused.status_code == 422  # the task gets a submission's checks
    # routing by properties is the farm's: here a clear refusal, never a 500
    refused = live.client.post("/v1/tasks", json={"script": "Home", "requires": ["android>=13"]})
    assert refused.status_code == 422 and "needs the farm" in refused.text


def test_the_schedule_cli_goes_through_the_rest_api(service, sim_phones, tmp_path: Path, capsys) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone])
    script = tmp_path / "check.txt"
    script.write_text("Home\n")
    assert cli_main(["schedule", "--url", live.url, "add", "nightly", "--cron", "0 3 * * *", "--script", str(script)]) == 0
    added = capsys.readouterr().out
    assert '"cron": "0 3 * * *"' in added
    assert cli_main(["schedule", "--url", live.url, "list"]) == 0
    listed = capsys.readouterr().out
    assert "nightly\tcron 0 3 * * *\truns=0" in listed
    schedule_id = int(listed.split("\t")[0])
    assert cli_main(["schedule", "--url", live.url, "add", "bad", "--cron", "61 * * * *", "--instruction", "x"]) == 2
    assert "not a cron expression" in capsys.readouterr().err
    assert cli_main(["schedule", "--url", live.url, "delete", str(schedule_id)]) == 0
    assert cli_main(["schedule", "--url", live.url, "delete", str(schedule_id)]) == 2


def test_a_token_over_its_quota_gets_a_429_and_others_go_on(service, sim_phones) -> None:
    phones = sim_phones(2, width=540, height=1200)
    live = service(phones, **{"server.api_token": "main-token", "server.tokens": {"alice": "alice-token", "bob": "bob-token"},
                              "server.max_active_per_token": 1})
    long_script = "\n".join(f"Wait ({0.2 + 0.01 * i:.2f})" for i in range(15))

    def post(token: str, script: str = long_script):
        return live.client.post("/v1/tasks", json={"script": script}, headers={"Authorization": f"Bearer {token}"})

    first = post("alice-token")
    assert first.status_code == 202 and first.json()["options"]["owner"] == "alice"
    over = post("alice-token")
    assert over.status_code == 429 and "'alice' has 1 tasks queued or running" in over.text
    assert post("bob-token").status_code == 202  # another token is not held back
    assert post("main-token", "Home").status_code == 202
    assert post("nobody's-token").status_code == 401
    _until(lambda: live.client.get(f"/v1/tasks/{first.json()['id']}").json()["status"] == "completed", 60, "alice's task")
    assert post("alice-token", "Home").status_code == 202  # her first one ended: room again


@pytest.mark.postgres
def test_two_servers_ticking_one_schedule_make_each_occurrence_once(pg_database: str) -> None:
    stores = [TaskStore(pg_database, instance=f"api{i}") for i in range(2)]
    schedules = [Schedules(s.engine) for s in stores]
    try:
        row = schedules[0].create("often", None, 1.0, {"instruction": "check", "device": "any", "options": {}})
        made: list[int] = []
        lock = threading.Lock()

        def tick(n: int) -> None:
            for k in range(8):
                now = row.next_at + k * 1.0 + 0.001
                for task in schedules[n].due_tasks(stores[n], now=now):
                    with lock:
                        made.append(task.id)

        threads = [threading.Thread(target=tick, args=(n,)) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(made) == len(set(made)) == 8  # one task per occurrence, whoever ticked
        assert schedules[1].get(row.id).runs == 8
        assert stores[0].get_task(made[0]).options["schedule_id"] == row.id
    finally:
        for store in stores:
            store.close()


def test_serve_farm_and_worker_refuse_a_database_that_is_not_postgres(tmp_path: Path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'x.sqlite3'}"
    assert cli_main(["serve", "--farm", "--port", "1", "--database", url]) == 3
    assert "needs a PostgreSQL" in capsys.readouterr().err
    assert cli_main(["worker", "--database", url]) == 3
    assert "needs PostgreSQL" in capsys.readouterr().err
