"""/v1/cache and a task's ``cache`` option, through a real uvicorn: the second run of a
task replays the plan the first one left, with no model call; the plans can be listed,
read and deleted."""

from __future__ import annotations

import pytest

from tests.server_fixtures import TaggedPlanner

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_task_with_cache_replays_and_the_plans_are_served(service, sim_phones, llm_server) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], planner=TaggedPlanner(plans={"t-set": ["Open App (Settings)"]}))
    assert live.client.get("/v1/cache").json() == {"data": [], "count": 0}

    first = live.wait_task(live.submit("[t-set] open the settings", cache=True)["id"])
    assert first["status"] == "completed", first["error"]
    (plan,) = live.client.get("/v1/cache").json()["data"]
    assert plan["instruction"] == "[t-set] open the settings"
    assert [s["action"] for s in plan["steps"]] == ["Open App (Settings)"]

    phone.phone.reset()
    calls = len(llm_server.chat_requests)
    second = live.wait_task(live.submit("[t-set] open the settings", cache=True)["id"])
    assert second["status"] == "completed", second["error"]
    assert len(llm_server.chat_requests) == calls  # replayed: no model call
    assert phone.phone.state()["foreground"] == "com.android.settings"
    assert live.client.get(f"/v1/cache/{plan['id']}").json()["successes"] == 1

    phone.phone.reset()
    third = live.wait_task(live.submit("[t-set] open the settings")["id"])  # no cache: the model plans
    assert third["status"] == "completed"
    assert len(llm_server.chat_requests) > calls

    assert live.client.get("/v1/cache/999").status_code == 404
    assert live.client.get("/v1/cache/0").status_code == 422
    assert live.client.delete(f"/v1/cache/{plan['id']}").json() == {"deleted": 1}
    assert live.client.delete(f"/v1/cache/{plan['id']}").status_code == 404
    assert live.client.delete("/v1/cache").json() == {"deleted": 0}
