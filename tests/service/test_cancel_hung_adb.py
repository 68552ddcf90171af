"""``POST /v1/tasks/{id}/cancel`` ends a run whose adb call hangs: the task is ``cancelled``
soon after (``adb_protocol.CANCEL_GRACE_S``), not after ``adb.command_timeout_s`` (here an hour).

Real parts: uvicorn serving the app, a private real adb server (its own port and HOME), the
simulated phone connected to it. The adb server is then stopped (``tests.adb_wedge``: SIGSTOP,
its kernel still accepts connections, nothing reads them) while the task runs its script."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mobile_agent.device import connect
from mobile_agent.settings import AdbSettings
from tests.adb_wedge import adb_server_pid, calls_waiting, private_adb_settings
from tests.server_fixtures import service_settings, start_service


@pytest.fixture
def private_adb(monkeypatch: pytest.MonkeyPatch) -> Iterator[AdbSettings]:
    with private_adb_settings(monkeypatch, "adb-wedge-", 3600) as settings:
        yield settings


@pytest.mark.timeout(180)
def test_a_cancel_ends_a_task_whose_adb_call_hangs(tmp_path: Path, sim_phones: Any, private_adb: AdbSettings,
                                                  llm_server: Any) -> None:
    (phone,) = sim_phones(1)
    assert "connected to" in connect(phone.serial, private_adb)  # starts the private server too
    port = private_adb.server_port
    settings = service_settings(tmp_path, port, llm_server, [phone.serial], **{
        "adb.command_timeout_s": 3600,
        "server.device_refresh_s": 3600,  # no refresh of the phones meanwhile: the run's call is the one waiting
    })
    live = start_service(settings)
    server = adb_server_pid(port)
    stopped = False
    try:
        created = live.client.post("/v1/tasks", json={"script": "Home\n" * 40, "device": phone.serial})
        assert created.status_code == 202, created.text
        task_id = created.json()["id"]
        live.wait_task(task_id, statuses={"running"}, timeout=60)
        while (task := live.client.get(f"/v1/tasks/{task_id}").json())["steps"] < 1:  # the run is in its steps
            assert task["status"] == "running", task
            time.sleep(0.05)
        os.kill(server, signal.SIGSTOP)
        stopped = True
        while calls_waiting(port) == 0:  # a call of the run in flight, never answered
            assert live.client.get(f"/v1/tasks/{task_id}").json()["status"] == "running"
            time.sleep(0.05)
        cancelled = live.client.post(f"/v1/tasks/{task_id}/cancel")
        assert cancelled.status_code == 202, cancelled.text
        # a bound for a broken build only: without the cancel reaching the call it waits an hour
        done = live.wait_task(task_id, timeout=60)
        assert done["status"] == "cancelled", done
    finally:
        if stopped:
            os.kill(server, signal.SIGCONT)
        live.stop()
