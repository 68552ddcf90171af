"""A task that waits for a phone another principal's run holds (``waiting_for_phone``: its run
waits for the phone's ``PhoneLease``) shows its owner nothing of that phone until its own run holds
it: ``GET /v1/devices/{serial}/screenshot`` is a 409, as for any held phone, and the task's live
view gives no frame (review8 #13: before, both showed the other run's screen, unmasked, for up to
600 s). Real uvicorn, the simulated phone over the real adb server; the test holds the lease as
another interface's run does."""

from __future__ import annotations

import threading
import time

import pytest

from mobile_agent.device import PhoneLease
from mobile_agent.settings import AdbSettings

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

TOKENS = {"server.api_token": "wait-admin-1",
          "server.tokens": {"alice": {"token": "wait-alice-1", "role": "user"}}}
ALICE = {"Authorization": "Bearer wait-alice-1"}


def test_a_task_waiting_for_a_held_phone_shows_nothing_of_it(service, sim_phones, adb_server) -> None:
    (phone,) = sim_phones(1)
    live = service([phone], **{**TOKENS, "server.live_fps": 10})
    lease = PhoneLease(AdbSettings(server_port=adb_server.port), phone.serial, "MCP session of bob")
    lease.acquire()
    try:
        task = live.client.post("/v1/tasks", headers=ALICE, json={"script": "Home", "device": phone.serial}).json()
        deadline = time.monotonic() + 60  # a guard for a broken build only
        while live.state.store.last_event(task["id"], "waiting_for_phone") is None:
            assert time.monotonic() < deadline, "the task never waited for the phone"
            time.sleep(0.05)
        shot = live.client.get(f"/v1/devices/{phone.serial}/screenshot", headers=ALICE)
        assert shot.status_code == 409, shot.status_code  # (before: 200, bob's screen)

        chunks: list[bytes] = []
        with live.client.stream("GET", f"/v1/tasks/{task['id']}/live", headers=ALICE, params={"fps": 10}) as view:
            assert view.status_code == 200
            def read() -> None:
                for chunk in view.iter_bytes():  # until the view ends (with its task)
                    chunks.append(chunk)

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            start = live.state.live.stats()["captures"]
            while live.state.live.stats()["captures"] < start + 10:  # ten captures of the held phone
                assert time.monotonic() < deadline + 60, "the live view captured nothing"
                time.sleep(0.05)
            assert not any(b"image/jpeg" in c for c in chunks), "a frame of the phone bob's run holds"
            lease.release()  # bob's run ends: alice's task takes the phone and runs
            done = live.wait_task(task["id"], timeout=120)
            assert done["status"] == "completed", done
            reader.join(timeout=60)  # the view ends with its task
            assert not reader.is_alive(), "the live view did not end with its task"
    finally:
        lease.release()
