"""A user's task may name only a model the operator lets it (``planner.model``, or one of
``server.planner_models``): the server's API key pays for it (review8 #14: before, any user's
task ran on ``o1-pro``, 202). An admin's task may name any. Real uvicorn, the simulated phone
over the real adb server."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(180)

ADMIN = {"Authorization": "Bearer model-admin-1"}
BOB = {"Authorization": "Bearer model-bob-1"}


def test_a_users_task_names_only_an_allowed_model(service, sim_phone) -> None:
    live = service([sim_phone], **{"server.api_token": "model-admin-1", "server.planner_models": ["gpt-4o-mini"],
                                   "server.tokens": {"bob": {"token": "model-bob-1", "role": "user"}}})

    def post(headers: dict[str, str], model: str) -> int:
        answer = live.client.post("/v1/tasks", headers=headers, json={"script": "Home", "model": model})
        if answer.status_code == 202:
            live.client.post(f"/v1/tasks/{answer.json()['id']}/cancel", headers=headers)
        else:
            (detail,) = answer.json()["detail"]
            assert detail["type"] == "model_not_allowed" and detail["loc"][-1] == "model", detail
        return answer.status_code

    assert post(BOB, "o1-pro") == 422  # (before: 202)
    assert post(BOB, "gpt-4o-mini") == 202 and post(BOB, "gpt-4o") == 202  # listed, and planner.model
    assert post(ADMIN, "o1-pro") == 202
