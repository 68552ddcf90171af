"""A task still queued when its owner's token is taken out of ``server.tokens`` (or made a viewer)
never runs: it would run with the server's planner key for an owner who may no longer submit
(``server.auth.submit_refusal``, the rule a schedule's occurrence follows since c46c15a). It ends
``error`` (``OwnerRefused``, naming the token) when the server starts with the new tokens; another
principal's task queued beside it runs. Real uvicorn on one database across the restart, the
simulated phone over the real adb server."""

from __future__ import annotations

import time

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

ADMIN = {"Authorization": "Bearer queued-admin-1"}
ALICE = {"Authorization": "Bearer queued-alice-1"}
WITH_ALICE = {"server.api_token": "queued-admin-1",
              "server.tokens": {"alice": {"token": "queued-alice-1", "role": "user"}}}


def _submit(live, headers: dict[str, str], script: str) -> int:
    answer = live.client.post("/v1/tasks", headers=headers, json={"script": script})
    assert answer.status_code == 202, answer.text
    return int(answer.json()["id"])


@pytest.mark.parametrize("then", [{}, {"alice": {"token": "queued-alice-1", "role": "viewer"}}],
                         ids=["revoked", "made-a-viewer"])
def test_a_queued_task_of_a_revoked_token_never_runs(service, sim_phones, then) -> None:
    (phone,) = sim_phones(1)
    live = service([phone], **WITH_ALICE)
    holding = _submit(live, ALICE, "Wait (10)\n" * 12)  # keeps the only phone busy: the next two stay queued
    deadline = time.monotonic() + 120  # a guard for a broken build only
    while live.client.get(f"/v1/tasks/{holding}", headers=ADMIN).json()["status"] != "running":
        assert time.monotonic() < deadline, "the first task never started"
        time.sleep(0.05)
    queued = _submit(live, ALICE, "Home")
    admins = _submit(live, ADMIN, "Home")
    live.stop()  # the running task is interrupted; the other two are still queued

    live = service([phone], **{**WITH_ALICE, "server.tokens": then})  # alice's token taken away
    refused = live.wait_task(queued, timeout=120)
    assert refused["status"] == "error", refused
    assert refused["error"]["type"] == "OwnerRefused" and "alice" in refused["error"]["message"], refused
    assert refused["device"] is None and refused["steps"] == 0, refused  # never leased a phone, never ran
    assert live.wait_task(admins, timeout=120)["status"] == "completed"  # the admin's task runs as before
