"""On a farm, a task with a ``callback_url`` that ends without ever running hears
``task_finished`` once, as on the embedded service: cancelled while queued (the farm API's cancel
route), or refused when the API server starts without its owner's token (``OwnerRefused``). No
worker runs, so both stay queued until then. Real PostgreSQL, the farm's API server on real
uvicorn across a restart, a signed webhook receiver on loopback."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.farm_fixtures import start_farm_api
from tests.webhook_receiver import WebhookReceiver

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(300)]

SECRET = "farm-unrun-secret"
SETTINGS = {"server.api_token": "farm-unrun-admin", "server.webhook_secret": SECRET,
            "server.webhook_allow": ["127.0.0.1"],
            "server.tokens": {"alice": {"token": "farm-unrun-alice", "role": "user"}}}


def _submit(api, token: str, url: str) -> int:
    answer = httpx.post(f"{api.url}/v1/tasks", headers={"Authorization": f"Bearer {token}"},
                        json={"script": "Home", "callback_url": url}, timeout=30)
    assert answer.status_code == 202, answer.text
    return int(answer.json()["id"])


def test_farm_tasks_ended_unrun_tell_their_callback_url_once(pg_database: str, tmp_path: Path) -> None:
    hook = WebhookReceiver(SECRET)
    api = start_farm_api(tmp_path, pg_database, **SETTINGS)  # no worker: every task stays queued
    try:
        refused = _submit(api, "farm-unrun-alice", hook.url)
        cancelled = _submit(api, "farm-unrun-admin", hook.url)
        answer = api.client.post(f"/v1/tasks/{cancelled}/cancel")
        assert answer.status_code == 202 and answer.json()["status"] == "cancelled", answer.text
        told = hook.wait_finished(cancelled)
        assert told["status"] == "cancelled" and told["result"] == {"reason": "cancelled while queued"}, told
        stored = api.client.get(f"/v1/tasks/{cancelled}").json()  # what was told is what PostgreSQL holds
        assert (stored["status"], stored["result"]) == ("cancelled", told["result"]), stored
        assert answer.json()["result"] == told["result"], answer.json()
        api.stop()
        api = start_farm_api(tmp_path, pg_database, **{**SETTINGS, "server.tokens": {}})  # alice's token taken away
        told = hook.wait_finished(refused)
        assert told["status"] == "error" and told["error"]["type"] == "OwnerRefused", told
        assert "alice" in told["error"]["message"], told
        assert api.client.get(f"/v1/tasks/{refused}").json()["status"] == "error"
        later = _submit(api, "farm-unrun-admin", hook.url)  # cancelled after both: its webhook comes last
        assert api.client.post(f"/v1/tasks/{later}/cancel").status_code == 202
        hook.wait_finished(later)
        assert len(hook.finished(cancelled)) == 1 and len(hook.finished(refused)) == 1, hook.bodies
        assert hook.unsigned == 0
    finally:
        api.stop()
        hook.close()
