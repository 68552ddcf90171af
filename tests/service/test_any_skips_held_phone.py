"""A REST task for ``"device": "any"`` takes a free phone that no other interface holds: while
``mobile-agent run`` (or an MCP run) holds one phone's lease (``mobile_agent.device.PhoneLease``,
one phone one run: docs/security.md), the task runs on another free phone at once instead of
waiting up to ten minutes for the held one. Real uvicorn, two simulated phones over the real adb
server."""

from __future__ import annotations

import time

import pytest

from mobile_agent.device import PhoneLease
from mobile_agent.settings import AdbSettings

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def test_an_any_task_skips_the_phone_another_interface_holds(service, sim_phones, adb_server) -> None:
    phones = sim_phones(2)
    live = service(phones)
    held = min(p.serial for p in phones)  # both never leased: the pool's first pick is the first serial
    with PhoneLease(AdbSettings(server_port=adb_server.port), held, "mobile-agent run (pid 1)"):
        task = live.client.post("/v1/tasks", json={"script": "Home", "device": "any"})
        assert task.status_code == 202, task.text
        task_id = task.json()["id"]
        deadline = time.monotonic() + 120  # a guard for a broken build only
        while (device := live.client.get(f"/v1/tasks/{task_id}").json()["device"]) is None:
            assert time.monotonic() < deadline, "the task never got a phone"
            time.sleep(0.05)
        assert device != held, f"the task took {held}, which mobile-agent run holds"
        done = live.wait_task(task_id, timeout=120)
    assert done["status"] == "completed", done
    kinds = [e.kind for e in live.state.store.events_after(task_id)]
    assert "waiting_for_phone" not in kinds
