"""Tenancy on the farm: the owner of a task is stored in PostgreSQL like the rest, the worker
that runs it needs no trust of its own, and an older farm database gains the owner columns in
place (docs/security.md). Real PostgreSQL, a real ``mobile-agent worker`` process, the farm's
API server on real uvicorn, an admin and two users."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from server.store import TaskStore
from tests.farm_fixtures import start_farm_api, start_worker, wait_done, wait_free

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

TOKENS = {"server.api_token": "farm-admin", "server.tokens": {
    "alice": {"token": "farm-alice", "role": "user", "team": "lab"},
    "bob": {"token": "farm-bob", "role": "user"},
}}


def test_the_farm_stores_each_tasks_owner_and_shows_it_only_to_them(pg_database: str, tmp_path: Path,
                                                                      adb_server, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[phone.serial])
    api = start_farm_api(tmp_path, pg_database, **TOKENS)
    clients = {who: httpx.Client(base_url=api.url, headers={"Authorization": f"Bearer farm-{who}"}, timeout=30)
               for who in ("admin", "alice", "bob")}
    try:
        wait_free(api, [phone.serial], workers=[worker])
        submitted = clients["alice"].post("/v1/tasks", json={"script": "Wait (0.1)\nHome"})
        assert submitted.status_code == 202, submitted.text
        task_id = submitted.json()["id"]
        done = wait_done(clients["alice"], task_id)
        assert done["status"] == "completed", done  # the worker ran it, trusting only the row
        assert clients["bob"].get(f"/v1/tasks/{task_id}").status_code == 404
        assert clients["bob"].post(f"/v1/tasks/{task_id}/cancel").status_code == 404
        assert clients["bob"].get(f"/v1/tasks/{task_id}/trajectory.zip").status_code == 404
        assert clients["alice"].get(f"/v1/tasks/{task_id}/trajectory.zip").status_code == 200
        assert [t["id"] for t in clients["bob"].get("/v1/tasks").json()["data"]] == []
        assert [t["id"] for t in clients["alice"].get("/v1/tasks").json()["data"]] == [task_id]
        assert [t["id"] for t in clients["admin"].get("/v1/tasks").json()["data"]] == [task_id]
        devices = clients["bob"].get("/v1/devices").json()["data"]
        assert devices[0]["host"] is None and clients["admin"].get("/v1/devices").json()["data"][0]["host"] == "h1"
        assert clients["alice"].post("/v1/devices/connect", json={"address": "127.0.0.1:9"}).status_code == 403

        engine = sa.create_engine(pg_database.replace("postgresql://", "postgresql+psycopg://", 1))
        try:
            with engine.connect() as conn:
                row = conn.execute(sa.text("SELECT owner, team, options FROM tasks WHERE id = :id"),
                                   {"id": task_id}).one()
                audit = conn.execute(sa.text("SELECT actor, action, resource FROM audit ORDER BY id")).all()
        finally:
            engine.dispose()
        assert (row.owner, row.team) == ("alice", "lab") and row.options["owner"] == "alice"
        assert ("alice", "task.submit", f"task {task_id}") in [tuple(a) for a in audit]
    finally:
        for client in clients.values():
            client.close()
        api.stop()
        worker.stop()


def test_an_older_farm_database_gains_the_owner_columns_in_place(pg_database: str) -> None:
    url = pg_database.replace("postgresql://", "postgresql+psycopg://", 1)
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:  # the tasks table as the version before owners wrote it
            conn.execute(sa.text(
                "CREATE TABLE tasks (id SERIAL PRIMARY KEY, instruction TEXT NOT NULL, device_request VARCHAR(200) "
                "NOT NULL, device VARCHAR(200), status VARCHAR(32) NOT NULL, options JSON NOT NULL, error JSON, "
                "result JSON, steps INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER "
                "NOT NULL, cost_usd FLOAT NOT NULL, trajectory_dir TEXT, instance VARCHAR(100), cancel_requested "
                "BOOLEAN NOT NULL, created_at FLOAT NOT NULL, started_at FLOAT, finished_at FLOAT)"))
            conn.execute(sa.text(
                "INSERT INTO tasks (instruction, device_request, status, options, steps, prompt_tokens, "
                "completion_tokens, cost_usd, cancel_requested, created_at) VALUES ('old', 'any', 'completed', "
                "'{\"owner\": \"alice\"}', 0, 0, 0, 0, false, 1.0)"))
    finally:
        engine.dispose()
    stores = [TaskStore(pg_database, instance=f"api-{i}") for i in range(2)]  # two servers start at once on it
    try:
        (old,) = stores[0].list_tasks()[0]
        assert old.instruction == "old" and old.owner is None  # stored before owners: only admins see it
        new = stores[1].create_task("new", "any", {"owner": "bob"})
        assert stores[0].list_tasks(visible_to=("bob", None))[0] == [stores[0].get_task(new.id)]
        assert stores[0].list_tasks(visible_to=("alice", "lab"))[1] == 0
        # with their indexes: every user's list and every quota count filter on them
        indexed = {tuple(i["column_names"]) for i in sa.inspect(stores[0].engine).get_indexes("tasks")}
        assert {("owner",), ("team",)} <= indexed, indexed
    finally:
        for store in stores:
            store.close()


def test_a_shared_plan_cache_on_postgresql_keeps_each_namespace_apart(pg_database: str) -> None:
    """The farm's plan cache (cache.database_url on its PostgreSQL): an older table gains the
    namespace column in place (its plans become the local user's), and each namespace finds only
    its own plans."""
    from mobile_agent.replay import CachedPlan, PlanStore
    from mobile_agent.replay.fingerprint import ScreenFingerprint

    url = pg_database.replace("postgresql://", "postgresql+psycopg://", 1)
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:  # the table as the version before namespaces wrote it
            conn.execute(sa.text(
                "CREATE TABLE cached_plans (id SERIAL PRIMARY KEY, template TEXT NOT NULL, instruction TEXT NOT NULL, "
                "source_run TEXT NOT NULL, steps TEXT NOT NULL, final TEXT NOT NULL, uses INTEGER NOT NULL, "
                "successes INTEGER NOT NULL, failures INTEGER NOT NULL, created_at FLOAT NOT NULL)"))
            conn.execute(sa.text(
                "INSERT INTO cached_plans (template, instruction, source_run, steps, final, uses, successes, failures, "
                "created_at) VALUES ('open settings', 'open settings', 'r0', '[]', '{\"texts\": []}', 0, 0, 0, 1.0)"))
    finally:
        engine.dispose()
    final = ScreenFingerprint(frozenset({"Settings"}), (0.0,) * 4)
    local, alice, lab = PlanStore(url), PlanStore(url, "token:alice"), PlanStore(url, "team:lab")
    assert [p.source_run for p in local.find_all("open settings")] == ["r0"]  # the old plan: the local user's
    assert alice.find_all("open settings") == [] and lab.find_all("open settings") == []
    mine = alice.save(CachedPlan(template="open settings", steps=(), final=final, source_run="r1"))
    assert [p.id for p in alice.find_all("open settings")] == [mine]
    assert lab.find_all("open settings") == [] and lab.get(mine) is None and not lab.delete(mine)
    assert lab.clear() == 0 and alice.get(mine) is not None
    assert {p.source_run for p in PlanStore(url, None).list()} == {"r0", "r1"}  # an admin's view: every namespace
    engine = sa.create_engine(url)
    try:  # the older table gained the indexes every lookup uses, as a new one has them
        indexed = {c for i in sa.inspect(engine).get_indexes("cached_plans") for c in i["column_names"] if c}
    finally:
        engine.dispose()
    assert indexed == {"template", "namespace"}
