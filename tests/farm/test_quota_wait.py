"""``server.over_quota = "wait"``: a token over ``server.max_active_per_token`` is not refused;
its extra tasks stay queued, saying why in ``waiting_reason``, and start as its running ones
end, never more than the limit at once (the claim decides it in the database: server/quota.py),
while another token's tasks go on. On the embedded default (SQLite, real uvicorn) and on the
farm (PostgreSQL, a real ``mobile-agent worker`` process with its own simulated phones, and no
quota settings of its own: the limit is stored with each task at submission)."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.quota import RUNNING_LIMIT_OPTION, Quota, QuotaExceeded
from server.store import TaskStore
from tests.farm_fixtures import start_farm_api, start_worker, until, wait_done, wait_free

TOKENS = {"server.api_token": "main-token", "server.tokens": {"alice": "alice-token", "bob": "bob-token"}}
SCRIPT = "\n".join(["Wait (0.4)"] * 4)  # about 1.6 s on a phone


def _post(client: httpx.Client, token: str) -> dict[str, Any]:
    answer = client.post("/v1/tasks", json={"script": SCRIPT}, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 202, answer.text  # never a 429 in this mode
    return answer.json()


def _check_turns(client: httpx.Client) -> None:
    alice = [_post(client, "alice-token") for _ in range(3)]
    until(lambda: client.get(f"/v1/tasks/{alice[0]['id']}").json()["status"] == "running", 60, "alice's first runs")
    waiting = client.get(f"/v1/tasks/{alice[1]['id']}").json()
    assert waiting["status"] == "queued", waiting
    assert "waits for its token's quota: 'alice' has 1 task running" in waiting["waiting_reason"]
    bob = _post(client, "bob-token")  # the second phone is free: bob is not held back by alice
    done = [wait_done(client, t["id"], timeout=90) for t in [*alice, bob]]
    assert [t["status"] for t in done] == ["completed"] * 4
    runs = sorted((t["started_at"], t["finished_at"]) for t in done[:3])
    for (_, finished), (started, _) in pairwise(runs):
        assert started >= finished, f"two of alice's tasks ran at once: {runs}"  # the limit held
    assert done[3]["started_at"] < runs[-1][1]  # bob's ran while alice's were still being worked off
    assert client.get(f"/v1/tasks/{alice[2]['id']}").json()["waiting_reason"] is None


def test_over_quota_tasks_wait_their_turn_on_the_embedded_default(service, sim_phones) -> None:
    live = service(sim_phones(2, width=540, height=1200),
                   **TOKENS, **{"server.max_active_per_token": 1, "server.over_quota": "wait"})
    _check_turns(live.client)


@pytest.mark.postgres
@pytest.mark.slow
def test_over_quota_tasks_wait_their_turn_on_the_farm(pg_database: str, tmp_path: Path, adb_server,
                                                       sim_phones) -> None:
    quota = {"max_active_per_token": 1, "over_quota": "wait"}
    pair = sim_phones(2, width=540, height=1200)
    # the worker is given no quota settings: the limit comes with each task, from the API server
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port,
                          serials=[p.serial for p in pair])
    api = start_farm_api(tmp_path, pg_database, **TOKENS, **{f"server.{k}": v for k, v in quota.items()})
    try:
        wait_free(api, [p.serial for p in pair], workers=[worker])
        _check_turns(api.client)
    finally:
        api.stop()
        worker.stop()


def _claims_follow_the_stored_limit(url: str, tmp_path: Path) -> None:
    """Tasks stored by an API server under ``wait`` are claimed by another process that knows
    no quota (a worker with default settings): the limit stored with each task holds anyway."""
    api, worker = TaskStore(url, instance="api"), TaskStore(url, instance="worker")
    try:
        first, second = (api.create_task(f"alice {k}", "any", {"owner": "alice"}, quota=Quota(1, "wait"))
                         for k in range(2))
        free = api.create_task("no limit", "any", {"owner": "alice"})  # as under refuse, or with no quota
        assert first.options[RUNNING_LIMIT_OPTION] == 1 and RUNNING_LIMIT_OPTION not in free.options
        assert worker.claim(first.id, "phone-1", tmp_path / "1")
        with pytest.raises(QuotaExceeded) as refused:
            worker.claim(second.id, "phone-2", tmp_path / "2")
        assert (refused.value.owner, refused.value.active, refused.value.limit) == ("alice", 1, 1)
        assert worker.get_task(second.id).status == "queued"  # refused, not lost
        assert worker.claim(free.id, "phone-2", tmp_path / "3")  # stored with no limit: none applies
        worker.finish(first.id, "completed")
        worker.finish(free.id, "completed")
        assert worker.claim(second.id, "phone-1", tmp_path / "4")  # its turn once alice's run ended
    finally:
        api.close()
        worker.close()


def test_a_claim_reads_the_limit_stored_with_the_task_on_sqlite(tmp_path: Path) -> None:
    _claims_follow_the_stored_limit(f"sqlite:///{tmp_path / 'tasks.sqlite3'}", tmp_path)


@pytest.mark.postgres
def test_a_claim_reads_the_limit_stored_with_the_task_on_postgres(pg_database: str, tmp_path: Path) -> None:
    _claims_follow_the_stored_limit(pg_database, tmp_path)
