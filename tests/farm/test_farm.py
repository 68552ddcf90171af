"""The farm with real processes: PostgreSQL (tests/pg_fixtures.py), two ``mobile-agent worker``
hosts each driving their own simulated phones over the real adb server, an API server
(``farm.enabled``) on real uvicorn that holds no phone. Tasks are scripts (no planner), so a
run's length is known.

What is checked: every host's phones with their properties and state; tasks routed by any /
serial / host / labels / properties run on a matching phone only; a task no phone can ever run
is a 422 at submission; events arrive through the database and resume with Last-Event-ID;
trajectories are served by the API from the shared folder."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.farm_fixtures import phones, start_farm_api, start_worker, until, wait_done, wait_free

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _submit(api, **body) -> dict:
    response = api.client.post("/v1/tasks", json=body)
    assert response.status_code == 202, response.text
    return response.json()


def test_two_hosts_one_queue_routing_and_events(pg_database: str, tmp_path: Path, adb_server, sim_phones) -> None:
    berlin = sim_phones(2, width=540, height=1200)
    (tablet,) = sim_phones(1, profile="pixel-tablet-14")
    workers = [
        start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port,
                     serials=[p.serial for p in berlin], labels={"lab": "berlin"}),
        start_worker(tmp_path, "h2", database=pg_database, adb_port=adb_server.port, serials=[tablet.serial]),
    ]
    api = start_farm_api(tmp_path, pg_database)
    try:
        wait_free(api, [p.serial for p in berlin] + [tablet.serial], workers=workers)
        listed = phones(api)
        assert {listed[p.serial]["host"] for p in berlin} == {"h1"} and listed[tablet.serial]["host"] == "h2"
        assert listed[tablet.serial]["properties"]["profile"] == "tablet"
        assert listed[tablet.serial]["properties"]["android"] == "14"
        assert listed[berlin[0].serial]["properties"]["lab"] == "berlin"
        assert listed[berlin[0].serial]["properties"]["profile"] == "phone"

        script = "Wait (0.2)\nWait (0.2)"
        routed = {
            "tablet": _submit(api, script=script, requires=["profile=tablet", "android>=13"]),
            "h1": _submit(api, script=script, host="h1"),
            "berlin": _submit(api, script=script, labels={"lab": "berlin"}),
            "serial": _submit(api, script=script, device=berlin[1].serial),
        }
        anywhere = [_submit(api, script=script) for _ in range(4)]
        done = {name: wait_done(api.client, t["id"]) for name, t in routed.items()}
        assert all(t["status"] == "completed" for t in done.values()), done
        assert done["tablet"]["device"] == tablet.serial
        assert done["h1"]["device"] in {p.serial for p in berlin}
        assert done["berlin"]["device"] in {p.serial for p in berlin}
        assert done["serial"]["device"] == berlin[1].serial
        finished = [wait_done(api.client, t["id"]) for t in anywhere]
        assert all(t["status"] == "completed" and t["steps"] == 2 for t in finished)

        # refused at submission: no phone could ever run it
        for body, words in (
            ({"requires": ["android>=99"]}, "no phone of the farm matches android>=99"),
            ({"host": "nowhere"}, "host=nowhere"),
            ({"labels": {"lab": "paris"}}, "lab=paris"),
            ({"device": "10.9.9.9:5555"}, "no device"),
            ({"requires": ["android~13"]}, "not a requirement"),
            ({"requires": ["profile>=tablet"]}, "compares version numbers"),
        ):
            refused = api.client.post("/v1/tasks", json={"script": script, **body})
            assert refused.status_code == 422, (body, refused.text)
            assert words in refused.text, refused.text

        # events come from the database, whole, and resume after Last-Event-ID
        task_id = done["tablet"]["id"]
        stream = api.client.get(f"/v1/tasks/{task_id}/events", timeout=20).text
        ids = [int(line[4:]) for line in stream.splitlines() if line.startswith("id: ")]
        assert stream.count("event: step_finished") == 2 and "event: end" in stream
        resumed = api.client.get(f"/v1/tasks/{task_id}/events", headers={"Last-Event-ID": str(ids[2])}, timeout=20).text
        assert [int(line[4:]) for line in resumed.splitlines() if line.startswith("id: ")] == ids[3:]
        # the trajectory, written by the host into the shared folder, served by the API
        archive = api.client.get(f"/v1/tasks/{task_id}/trajectory.zip")
        assert archive.status_code == 200 and archive.content[:2] == b"PK"
        # the dashboard's device screenshot is the host's business: a clear 503, not a 500
        shot = api.client.get(f"/v1/devices/{tablet.serial}/screenshot")
        assert shot.status_code == 503 and "worker host" in shot.text
    finally:
        api.stop()
        for worker in workers:
            worker.stop()
    for worker in workers:
        assert "Traceback" not in worker.text(), worker.text()[-3000:]


def test_a_task_for_a_phone_that_went_away_waits_with_a_reason(pg_database: str, tmp_path: Path, adb_server, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[phone.serial])
    api = start_farm_api(tmp_path, pg_database)
    try:
        wait_free(api, [phone.serial], workers=[worker])
        worker.stop()  # a clean stop: its phones show offline at once
        until(lambda: phones(api)[phone.serial]["state"] == "offline", 10, "phone offline")
        task = _submit(api, script="Wait (0.1)", device=phone.serial)
        got = api.client.get(f"/v1/tasks/{task['id']}").json()
        assert got["status"] == "queued" and "every matching phone is away (1 offline)" in got["waiting_reason"]
        worker.start()  # the phone comes back: the task runs
        assert wait_done(api.client, task["id"])["status"] == "completed"
        assert httpx.get(f"{api.url}/v1/tasks/{task['id']}").json()["waiting_reason"] is None
    finally:
        api.stop()
        worker.stop()


def test_cancel_reaches_the_host_that_runs_the_task(pg_database: str, tmp_path: Path, adb_server, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[phone.serial])
    api = start_farm_api(tmp_path, pg_database)
    try:
        wait_free(api, [phone.serial], workers=[worker])
        long_script = "\n".join(f"Wait ({0.3 + 0.01 * i:.2f})" for i in range(30))
        running = _submit(api, script=long_script)
        waiting = _submit(api, script="Wait (0.1)")
        until(lambda: api.client.get(f"/v1/tasks/{running['id']}").json()["steps"] >= 1, 30, "a step made")
        assert api.client.get(f"/v1/tasks/{waiting['id']}").json()["waiting_reason"] == "waiting for a phone (1 busy)"
        assert api.client.post(f"/v1/tasks/{waiting['id']}/cancel").status_code == 202
        assert api.client.post(f"/v1/tasks/{running['id']}/cancel").status_code == 202
        ended = wait_done(api.client, running["id"], timeout=20)
        assert ended["status"] == "cancelled" and ended["steps"] < 30
        assert phones(api)[phone.serial]["state"] == "free" or until(
            lambda: phones(api)[phone.serial]["state"] == "free", 10, "the phone free again")
        after = _submit(api, script="Wait (0.1)")
        assert wait_done(api.client, after["id"])["status"] == "completed"
        never = api.client.get(f"/v1/tasks/{waiting['id']}").json()
        assert never["status"] == "cancelled" and never["started_at"] is None and never["steps"] == 0
        assert api.client.post(f"/v1/tasks/{running['id']}/cancel").status_code == 409
    finally:
        api.stop()
        worker.stop()
