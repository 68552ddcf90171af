"""A test flow run as a REST task stops when the task is cancelled, as an instruction's or a
script's run does (POST /v1/tasks/{id}/cancel): the flow's wait ends, the phone is given back,
and the task is ``cancelled``, not the verdict of a flow that ran on to its end."""

from __future__ import annotations

import time

import pytest

from tests.server_fixtures import service_settings, start_service

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

NEVER = "A line this phone never shows"
FLOW = f"""name: waits for a text that never comes
steps:
  - do: Home
  - wait_for_text: {{text: "{NEVER}", timeout: 30}}
  - do: Open App (Settings)
"""


def test_a_cancelled_flow_task_stops_and_is_cancelled(adb_server, sim_phones, llm_server, tmp_path) -> None:
    (phone,) = sim_phones(1)
    live = start_service(service_settings(tmp_path, adb_server.port, llm_server, [phone.serial]))
    try:
        response = live.client.post("/v1/tasks", json={"flow": FLOW, "device": phone.serial})
        assert response.status_code == 202, response.text
        task_id = response.json()["id"]
        deadline = time.monotonic() + 120  # a guard for a broken build only: step 1 takes a second
        while live.client.get(f"/v1/tasks/{task_id}").json()["steps"] < 1:  # the flow now waits in step 2
            assert time.monotonic() < deadline, "the flow's first step never finished"
            time.sleep(0.1)
        assert live.client.post(f"/v1/tasks/{task_id}/cancel").status_code == 202
        task = live.wait_task(task_id, timeout=120)
        assert task["status"] == "cancelled", task
        # the wait was cut short by the cancel, not ended by its 30 s timeout, and step 3 never ran
        assert "did not appear" not in (task["result"] or {}).get("reason", ""), task["result"]
        assert task["steps"] == 2, task
        assert phone.phone.state()["foreground"] != "com.android.settings"
        assert live.client.get("/v1/devices").json()["data"][0]["busy"] is False
    finally:
        live.stop()
