"""The task store on a real PostgreSQL server (tests/pg_fixtures.py): claims stay exclusive
across instances, events keep their order and their JSON, a plain ``postgresql://`` URL means
psycopg 3; and ``mobile-agent serve --database postgresql://…`` runs a task end to end on a
simulated phone, then a second server on the same database serves what the first wrote."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from server.store import TaskStore
from tests.ports import free_port
from tests.server_fixtures import serve_process

pytestmark = pytest.mark.postgres


def test_only_one_instance_claims_a_task_on_postgres(pg_database: str, tmp_path: Path) -> None:
    stores = [TaskStore(pg_database, instance=f"i{n}") for n in range(4)]
    try:
        ids = [stores[0].create_task(f"task {i}", "any", {"n": i}).id for i in range(40)]
        wins: dict[int, list[str]] = {i: [] for i in ids}
        lock = threading.Lock()

        def claim_all(store: TaskStore) -> None:
            for task_id in ids:
                if store.claim(task_id, f"phone-{store.instance}", tmp_path / f"t{task_id}"):
                    with lock:
                        wins[task_id].append(store.instance)

        threads = [threading.Thread(target=claim_all, args=(s,)) for s in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert all(len(w) == 1 for w in wins.values()), wins
        for task_id, (winner,) in wins.items():
            row = stores[1].get_task(task_id)
            assert row is not None and row.status == "running" and row.device == f"phone-{winner}"
        assert stores[2].queued_tasks() == []
    finally:
        for store in stores:
            store.close()


def test_events_keep_order_and_json_and_a_plain_url_means_psycopg(pg_database: str, tmp_path: Path) -> None:
    plain = pg_database.replace("postgresql+psycopg://", "postgresql://")
    store = TaskStore(plain, instance="a")
    try:
        assert store.engine.dialect.driver == "psycopg"
        task = store.create_task("unicode ✓ and \"quotes\"", "any", {"max_steps": 3, "nested": {"a": [1, 2]}})
        assert store.claim(task.id, "p1", tmp_path)
        for n in range(5):
            store.add_event(task.id, "step_finished", {"step": n + 1, "path": tmp_path / f"{n}.png", "text": "é" * 3})
        assert store.finish(task.id, "completed", steps=5, result={"reason": "done"})
        events = store.events_after(task.id)
        assert [e.kind for e in events] == ["status", "status"] + ["step_finished"] * 5 + ["status"]
        assert [e.id for e in events] == sorted(e.id for e in events)
        assert events[3].data == {"step": 2, "path": str(tmp_path / "1.png"), "text": "ééé"}
        row = store.get_task(task.id)
        assert row is not None and row.options["nested"] == {"a": [1, 2]} and row.result == {"reason": "done"}
        assert store.count_by_status() == {"completed": 1}
        with store.engine.connect() as conn:  # really on the server, not a file somewhere
            assert conn.execute(sa.text("SELECT current_setting('server_version_num')::int")).scalar_one() >= 120000
    finally:
        store.close()


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


def test_serve_on_postgres_runs_a_task_and_a_restart_serves_it(
    pg_database: str, tmp_path: Path, adb_server, sim_phones
) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    config = tmp_path / "service.toml"
    config.write_text(
        f'[adb]\nserver_port = {adb_server.port}\n\n[server]\ndevices = ["{phone.serial}"]\ndevice_refresh_s = 0.5\n\n'
        f'[agent]\noutput_dir = "{tmp_path / "runs"}"\ncompletion_check = false\nsettle_timeout_s = 0.6\n'
        "settle_interval_s = 0.1\n"
    )
    database = pg_database.replace("postgresql+psycopg://", "postgresql://")
    port, log = free_port(), tmp_path / "serve.log"
    process = serve_process(config, port, log, database=database)
    url = f"http://127.0.0.1:{port}"
    try:
        created = httpx.post(f"{url}/v1/tasks", json={"script": "Home\nWait (0.1)"}, timeout=10)
        assert created.status_code == 202, created.text
        task_id = created.json()["id"]
        deadline = time.monotonic() + 60
        while (task := httpx.get(f"{url}/v1/tasks/{task_id}", timeout=10).json())["status"] in ("queued", "running"):
            assert time.monotonic() < deadline, task
            time.sleep(0.1)
        assert task["status"] == "completed", task["error"]
        assert task["device"] == phone.serial and task["steps"] == 2
    finally:
        _stop(process)
    # the rows are in Postgres: a second server on the same database streams the same events
    process = serve_process(config, port, log, database=database)
    try:
        stream = httpx.get(f"{url}/v1/tasks/{task_id}/events", timeout=20).text
        assert stream.count("event: step_finished") == 2 and "event: end" in stream
        listed = httpx.get(f"{url}/v1/tasks", params={"status": "completed"}, timeout=10).json()
        assert [t["id"] for t in listed["data"]] == [task_id]
    finally:
        _stop(process)


def test_the_per_token_count_reads_the_json_option_on_postgres(pg_database: str, tmp_path: Path) -> None:
    store = TaskStore(pg_database, instance="a")
    try:
        mine = [store.create_task(f"t{i}", "any", {"owner": "alice"}) for i in range(3)]
        store.create_task("theirs", "any", {"owner": "bob"})
        store.create_task("nobody's", "any", {})
        assert store.count_active_of("alice") == 3 and store.count_active_of("bob") == 1
        assert store.claim(mine[0].id, "p1", tmp_path) and store.finish(mine[0].id, "completed")
        assert store.cancel_queued(mine[1].id)
        assert store.count_active_of("alice") == 1 and store.count_active_of("carol") == 0
    finally:
        store.close()
