"""A farm worker passes over, for ``"device": "any"``, a phone another interface's run holds
(``mobile-agent run``, an MCP run, the pytest plugin: their ``PhoneLease``), as the embedded
service's ``DevicePool(held=)`` does: the held phone serves only tasks asked for by its serial,
so an "any" task waits for the worker's other phone instead of waiting on the held one. Real
PostgreSQL, a real ``mobile-agent worker`` process with two simulated phones over the real adb
server, the farm's API server on real uvicorn."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.device import PhoneLease
from mobile_agent.settings import AdbSettings
from tests.farm_fixtures import phones, start_farm_api, start_worker, until, wait_done, wait_free

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(300)]


def test_a_farm_any_task_skips_the_phone_another_interface_holds(pg_database: str, tmp_path: Path,
                                                                  adb_server, sim_phones) -> None:
    held, other = sorted(p.serial for p in sim_phones(2))
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[held, other])
    # the API server's own adb settings name another adb server, as on a host of its own: its
    # process cannot learn from its locks that the worker's phone is held (it is never dialled)
    api = start_farm_api(tmp_path, pg_database, **{"adb.server_port": adb_server.port + 1})
    try:
        wait_free(api, [held, other], workers=[worker])
        with PhoneLease(AdbSettings(server_port=adb_server.port), held, "mobile-agent run (pid 1)"):
            # the worker has seen the lease (its log says so) before any task exists: no race with its tick
            until(lambda: f"phone {held} is held by mobile-agent run (pid 1)" in worker.text(), 60,
                  "the worker never noticed the held phone")
            # the farm's device list says busy as the embedded one does (109afa4), from the worker's
            # row (written before that log line), not from a probe of the API host's own locks
            listed = phones(api)
            assert listed[held]["busy"] is True and listed[held]["state"] == "busy", listed[held]
            assert listed[held]["current_task"] is None, listed[held]
            assert listed[other]["busy"] is False, listed[other]
            busy = api.client.post("/v1/tasks", json={"script": "Wait (5)", "device": other})
            assert busy.status_code == 202, busy.text
            until(lambda: api.client.get(f"/v1/tasks/{busy.json()['id']}").json()["status"] == "running", 60,
                  "the task on the free phone never started")
            task = api.client.post("/v1/tasks", json={"script": "Home", "device": "any"})  # only the held phone is idle
            assert task.status_code == 202, task.text
            done = wait_done(api.client, task.json()["id"], timeout=120)
            assert done["device"] == other and done["status"] == "completed", done
            assert wait_done(api.client, busy.json()["id"], timeout=120)["status"] == "completed"
        until(lambda: f"phone {held} is no longer held" in worker.text(), 60, "the worker never saw the lease end")
        assert phones(api)[held]["busy"] is False and phones(api)[held]["state"] == "free", phones(api)[held]
        kinds = [e.kind for e in api.state.store.events_after(task.json()["id"])]
        assert "waiting_for_phone" not in kinds, kinds
    finally:
        worker.stop()
        api.stop()
