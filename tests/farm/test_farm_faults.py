"""Faults of a farm, with real processes: a worker SIGKILLed mid-run, two workers configured
with the same phone, PostgreSQL restarted under running workers and API, the API server
replaced while a task runs. Timings: heartbeats every 0.5 s, a host lost after 3 s
(tests/farm_fixtures.py)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from server.store import TaskStore
from tests.farm_fixtures import (
    FARM_TIMINGS,
    farm_api_process,
    phones,
    start_farm_api,
    start_worker,
    until,
    wait_done,
    wait_free,
)
from tests.ports import free_port

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

# the host timeout, one maintenance period, and slack for a loaded machine
RECOVERY_S = FARM_TIMINGS["host_timeout_s"] + 2 * FARM_TIMINGS["heartbeat_s"] + 6


def _long(n: int, wait: float = 0.3) -> str:
    return "\n".join(f"Wait ({wait + 0.01 * (i % 5):.2f})" for i in range(n))


def _submit(api, **body) -> dict:
    response = api.client.post("/v1/tasks", json=body)
    assert response.status_code == 202, response.text
    return response.json()


def _statuses(api, task_id: int) -> list[str]:
    stream = api.client.get(f"/v1/tasks/{task_id}/events", timeout=30).text
    out = []
    for line in stream.splitlines():
        if line.startswith("data: ") and '"kind":"status"' in line:
            out.append(line.split('"status":"')[1].split('"')[0])
    return out


def _task(api, task_id: int) -> dict:
    return api.client.get(f"/v1/tasks/{task_id}").json()


def test_a_killed_worker_interrupts_or_retries_its_runs_and_its_phones_come_back(
    pg_database: str, tmp_path: Path, adb_server, sim_phones
) -> None:
    h1_phones = sim_phones(2, width=540, height=1200)
    (h2_phone,) = sim_phones(1, width=540, height=1200)
    h1 = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[p.serial for p in h1_phones])
    h2 = start_worker(tmp_path, "h2", database=pg_database, adb_port=adb_server.port, serials=[h2_phone.serial])
    api = start_farm_api(tmp_path, pg_database)
    try:
        wait_free(api, [p.serial for p in h1_phones] + [h2_phone.serial], workers=[h1, h2])
        # h2's phone busy first, so that the "any" task below starts on h1
        other = _submit(api, script=_long(12), device=h2_phone.serial)
        until(lambda: _task(api, other["id"])["status"] == "running", 30, "h2's task running")
        pinned = _submit(api, script=_long(40), device=h1_phones[0].serial)  # no retries: interrupted
        retried = _submit(api, script=_long(6, 0.2), retries=1)  # any phone, one retry
        until(lambda: _task(api, pinned["id"])["steps"] >= 1 and _task(api, retried["id"])["steps"] >= 1, 30,
              "both h1 tasks made a step")
        assert _task(api, retried["id"])["device"] == h1_phones[1].serial
        steps_at_kill = _task(api, pinned["id"])["steps"]
        h1.kill()
        killed_at = time.monotonic()

        ended = until(lambda: (t := _task(api, pinned["id"]))["status"] == "interrupted" and t, RECOVERY_S,
                      "the pinned task interrupted")
        assert time.monotonic() - killed_at < RECOVERY_S
        assert ended["error"]["type"] == "HostLost" and "h1" in ended["error"]["message"]
        until(lambda: all(phones(api)[p.serial]["state"] == "host lost" for p in h1_phones), 10, "h1's phones host lost")
        # the retried task runs again, on the phone that is left (h2's, once its task is done)
        done = wait_done(api.client, retried["id"], timeout=90)
        assert done["status"] == "completed" and done["device"] == h2_phone.serial
        assert _statuses(api, retried["id"]) == ["queued", "running", "queued", "running", "completed"]
        assert wait_done(api.client, other["id"])["status"] == "completed"  # the other host went on

        h1.start()  # back: its phones are free again, nothing of before runs a second time
        wait_free(api, [p.serial for p in h1_phones], workers=[h1])
        fresh = _submit(api, script=_long(2, 0.1), device=h1_phones[0].serial)
        assert wait_done(api.client, fresh["id"])["status"] == "completed"
        time.sleep(2 * FARM_TIMINGS["heartbeat_s"])
        after = _task(api, pinned["id"])
        assert after["status"] == "interrupted" and after["steps"] == ended["steps"] >= steps_at_kill
        assert _statuses(api, pinned["id"]) == ["queued", "running", "interrupted"]
    finally:
        api.stop()
        h1.stop()
        h2.stop()


def test_two_workers_claiming_one_phone_one_wins_the_other_says_why(
    pg_database: str, tmp_path: Path, adb_server, sim_phones
) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    first = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[phone.serial])
    api = start_farm_api(tmp_path, pg_database)
    try:
        wait_free(api, [phone.serial], workers=[first])
        second = start_worker(tmp_path, "h2", database=pg_database, adb_port=adb_server.port, serials=[phone.serial])
        until(lambda: "already driven by host 'h1'" in second.text(), 30, "the second worker says why")
        tasks = [_submit(api, script=_long(2, 0.1)) for _ in range(3)]
        assert all(wait_done(api.client, t["id"])["status"] == "completed" for t in tasks)
        assert phones(api)[phone.serial]["host"] == "h1"
        assert "Traceback" not in second.text()
        # the first one dies: the spare takes the phone over once h1 is lost
        first.kill()
        until(lambda: phones(api)[phone.serial]["host"] == "h2" and phones(api)[phone.serial]["state"] == "free",
              RECOVERY_S + 5, "h2 took the phone over")
        task = _submit(api, script=_long(2, 0.1))
        assert wait_done(api.client, task["id"])["status"] == "completed"
        second.stop()
    finally:
        api.stop()
        first.stop()


def test_postgres_restarted_then_the_api_server_killed_workers_and_streams_go_on(
    postgres_server, pg_database: str, tmp_path: Path, adb_server, sim_phones
) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[phone.serial])
    api = start_farm_api(tmp_path, pg_database)
    try:
        wait_free(api, [phone.serial], workers=[worker])
        task = _submit(api, script=_long(2, 0.1))
        assert wait_done(api.client, task["id"])["status"] == "completed"

        postgres_server.restart()
        later = _submit(api, script=_long(2, 0.1))  # the API's pools reconnect by themselves
        assert wait_done(api.client, later["id"], timeout=60)["status"] == "completed", worker.text()[-3000:]
    except BaseException:
        worker.stop()
        raise
    finally:
        api.stop()
    # the API server SIGKILLed mid-run and started again: the worker goes on; the client
    # resumes its stream with Last-Event-ID and gets every event once
    server = farm_api_process(tmp_path, pg_database, free_port())
    try:
        client = httpx.Client(base_url=server.url, timeout=30)
        running = client.post("/v1/tasks", json={"script": _long(12, 0.3)}).json()
        seen: list[int] = []
        with client.stream("GET", f"/v1/tasks/{running['id']}/events", timeout=30) as response:
            for line in response.iter_lines():
                if line.startswith("id: "):
                    seen.append(int(line[4:]))
                if len(seen) >= 4:
                    break
        server.kill()
        steps_at_kill = _steps_in_db(pg_database, running["id"])
        server.start()  # the same port, the same database
        resumed = client.get(f"/v1/tasks/{running['id']}/events", headers={"Last-Event-ID": str(seen[-1])},
                             timeout=60).text
        rest = [int(line[4:]) for line in resumed.splitlines() if line.startswith("id: ")]
        assert "event: end" in resumed
        everything = client.get(f"/v1/tasks/{running['id']}/events", timeout=20).text
        ids = [int(line[4:]) for line in everything.splitlines() if line.startswith("id: ")]
        assert seen + rest == ids  # nothing lost, nothing twice
        assert everything.count("event: step_finished") == 12
        done = client.get(f"/v1/tasks/{running['id']}").json()
        assert done["status"] == "completed" and done["steps"] == 12 > steps_at_kill
        assert worker.process is not None and worker.process.poll() is None  # it rode both restarts out
        client.close()
    finally:
        server.stop()
        worker.stop()
    assert "the database system is shutting down" in worker.text()  # it did see the Postgres restart


def _steps_in_db(database: str, task_id: int) -> int:
    store = TaskStore(database)
    try:
        row = store.get_task(task_id)
        return row.steps if row is not None else -1
    finally:
        store.close()


def test_a_worker_stopped_with_sigterm_interrupts_its_run_at_once(
    pg_database: str, tmp_path: Path, adb_server, sim_phones
) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[phone.serial])
    api = start_farm_api(tmp_path, pg_database)
    try:
        wait_free(api, [phone.serial], workers=[worker])
        running = _submit(api, script=_long(40), retries=2)
        until(lambda: _task(api, running["id"])["steps"] >= 1, 30, "a step made")
        stopped_at = time.monotonic()
        worker.stop()  # SIGTERM: the run stops at its next step; no heartbeat timeout to wait for
        assert worker.process is not None and worker.process.returncode == 0
        ended = _task(api, running["id"])
        assert ended["status"] == "interrupted" and ended["steps"] < 40
        assert time.monotonic() - stopped_at < FARM_TIMINGS["host_timeout_s"] + 10
        assert phones(api)[phone.serial]["state"] == "offline"  # a clean stop is not a lost host
        time.sleep(FARM_TIMINGS["host_timeout_s"] + 2 * FARM_TIMINGS["heartbeat_s"])
        assert _task(api, running["id"])["status"] == "interrupted"  # and no retry of a stopped run
        assert phones(api)[phone.serial]["state"] == "offline"
    finally:
        api.stop()
        worker.stop()
