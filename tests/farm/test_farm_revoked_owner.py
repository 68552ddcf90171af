"""On a farm, a task still queued when its owner's token is taken out of ``server.tokens`` never
runs: the workers hold no tokens and run what is queued, so the API server ends such a task
(``error``, ``OwnerRefused``) when it starts with the new tokens, before a worker takes it; an
admin's task queued beside it runs. Real PostgreSQL, the farm's API server on real uvicorn
across a restart, a real ``mobile-agent worker`` process, the simulated phone over the real adb
server."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.farm_fixtures import start_farm_api, start_worker, wait_done

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(300)]

TOKENS = {"server.api_token": "farm-rev-admin",
          "server.tokens": {"alice": {"token": "farm-rev-alice", "role": "user"}}}


def _submit(api, token: str) -> int:
    answer = httpx.post(f"{api.url}/v1/tasks", headers={"Authorization": f"Bearer {token}"},
                        json={"script": "Home"}, timeout=30)
    assert answer.status_code == 202, answer.text
    return int(answer.json()["id"])


def test_a_queued_farm_task_of_a_revoked_token_never_runs(pg_database: str, tmp_path: Path,
                                                           adb_server, sim_phones) -> None:
    (phone,) = sim_phones(1)
    api = start_farm_api(tmp_path, pg_database, **TOKENS)  # no worker yet: both tasks stay queued
    try:
        queued = _submit(api, "farm-rev-alice")
        admins = _submit(api, "farm-rev-admin")
    finally:
        api.stop()
    api = start_farm_api(tmp_path, pg_database, **{**TOKENS, "server.tokens": {}})  # alice's token taken away
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[phone.serial])
    admin = httpx.Client(base_url=api.url, headers={"Authorization": "Bearer farm-rev-admin"}, timeout=30)
    try:
        assert wait_done(admin, admins, timeout=120)["status"] == "completed"  # the worker runs the queue
        refused = wait_done(admin, queued, timeout=120)
        assert refused["status"] == "error", refused
        assert refused["error"]["type"] == "OwnerRefused" and "alice" in refused["error"]["message"], refused
        assert refused["device"] is None and refused["steps"] == 0, refused  # no phone ever took it
    finally:
        admin.close()
        worker.stop()
        api.stop()
