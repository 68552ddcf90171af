"""Retention (``server.retention``) with the clock moved forward, on SQLite and PostgreSQL: a
real service runs script tasks on a simulated phone; ``mobile-agent gc --as-of`` (the same
cleanup as the service's timer) deletes exactly what the settings say — finished tasks past
``task_days`` (row, events, folder), then the oldest finished ones while the folders are over
``runs_max_mb``, cached plans unused for ``cache_unused_days``, stale relay files, audit rows
past ``audit_days`` — and never a
running task's row or files. ``--dry-run`` lists the same and deletes nothing. A submission
while the runs folder's disk has less than ``min_free_mb`` free is a 507 naming the setting (and a
schedule's occurrence is skipped, saying so).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from mobile_agent.cli import main as cli_main
from mobile_agent.replay import PlanStore, default_cache_url
from server.retention import folder_bytes
from server.tables import events_table

DAY = 86400.0


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'retention.sqlite3'}"
    url: str = request.getfixturevalue("pg_database")
    return url


def _gc(config: Path, *args: str, capsys: Any) -> list[str]:
    assert cli_main(["--config", str(config), "gc", *args]) == 0
    return capsys.readouterr().out.splitlines()


def _config(tmp_path: Path, live: Any, **retention: float) -> Path:
    lines = [
        "[server]", f'database_url = "{live.settings.server.database_url}"',
        "[server.retention]", *(f"{k} = {v!r}" for k, v in retention.items()),
        "[agent]", f'output_dir = "{live.settings.agent.output_dir}"',
    ]
    path = tmp_path / f"gc-{time.monotonic_ns()}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_the_cleanup_deletes_exactly_what_the_settings_say(service, sim_phones, database_url, tmp_path,
                                                           capsys) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **{"server.database_url": database_url, "server.retention.interval_s": 3600})
    engine = live.state.store.engine
    runs = Path(live.settings.agent.output_dir).resolve()

    def run(script: str) -> dict:
        created = live.client.post("/v1/tasks", json={"script": script})
        assert created.status_code == 202, created.text
        return live.wait_task(created.json()["id"])

    done = [run("Home\nBack") for _ in range(3)]
    assert [t["status"] for t in done] == ["completed"] * 3
    ids = [t["id"] for t in done]
    folders = {t["id"]: runs / f"task-{t['id']}" for t in done}
    assert all(folder_bytes(f) > 0 for f in folders.values())
    long = live.client.post("/v1/tasks", json={"script": "\n".join(["Home", "Wait (0.5)"] * 40)}).json()
    live.wait_task(long["id"], statuses={"running"}, timeout=30)
    relay = runs / ".live"
    relay.mkdir(exist_ok=True)
    for task_id in (ids[0], long["id"]):
        (relay / f"task-{task_id}.jpg").write_bytes(b"\xff\xd8frame")
    plans = PlanStore(default_cache_url(runs))
    with plans.engine.begin() as conn:  # one plan unused for 100 days, one replayed yesterday
        for template, created, used in (("open settings", time.time() - 100 * DAY, None),
                                        ("open clock", time.time() - 100 * DAY, time.time() - DAY)):
            conn.execute(sa.text(
                "INSERT INTO cached_plans (template, instruction, source_run, steps, final, uses, successes, failures,"
                " created_at, namespace, used_at) VALUES (:t, :t, '', '[]', '{}', 0, 0, 0, :c, '', :u)"),
                {"t": template, "c": created, "u": used})

    # 1. thirty days after the first task ended, not yet after the second
    finished = [t["finished_at"] for t in done]
    as_of = (finished[0] + finished[1]) / 2 + 30 * DAY
    config = _config(tmp_path, live, task_days=30.0, runs_max_mb=0.0, cache_unused_days=90.0, relay_max_age_s=3600.0)
    listed = _gc(config, "--dry-run", "--as-of", str(as_of), capsys=capsys)
    assert [line.split(" (")[0].split(":")[0] for line in listed[:-1]] == [
        f"would delete task {ids[0]}", "would delete plan 1", f"would delete relay task-{ids[0]}.jpg"], listed
    assert listed[-1].startswith("would delete 1 tasks, 1 cached plans, 1 relay files")
    assert folders[ids[0]].is_dir() and live.client.get(f"/v1/tasks/{ids[0]}").status_code == 200  # a dry run

    deleted = _gc(config, "--as-of", str(as_of), capsys=capsys)
    assert deleted[-1].startswith("deleted 1 tasks, 1 cached plans, 1 relay files"), deleted
    assert live.client.get(f"/v1/tasks/{ids[0]}").status_code == 404
    assert not folders[ids[0]].exists()
    with engine.connect() as conn:
        left = conn.execute(sa.select(sa.func.count()).select_from(events_table)
                            .where(events_table.c.task_id == ids[0])).scalar_one()
    assert left == 0
    for task_id in ids[1:]:
        assert live.client.get(f"/v1/tasks/{task_id}").status_code == 200 and folders[task_id].is_dir()
    assert [p.template for p in plans.list()] == ["open clock"]
    assert sorted(p.name for p in relay.iterdir()) == [f"task-{long['id']}.jpg"]  # its task still runs

    # 2. a year on: every finished task is due, the running one is never touched; the audit trail's
    # rows of today are past server.retention.audit_days (365) too
    trail = int(live.client.get("/v1/audit").json()["count"])
    assert trail == 4  # the four submissions
    listed = _gc(config, "--dry-run", "--as-of", str(time.time() + 366 * DAY), capsys=capsys)
    assert listed[-1].startswith("would delete 2 tasks"), listed
    assert f"task {long['id']}" not in "\n".join(listed)
    assert f", audit {trail} rows " in listed[-1], listed
    assert live.client.get("/v1/audit").json()["count"] == trail  # a dry run
    deleted = _gc(config, "--as-of", str(time.time() + 366 * DAY), capsys=capsys)
    assert live.client.get("/v1/audit").json()["count"] == 0, deleted
    assert live.client.get(f"/v1/tasks/{long['id']}").json()["status"] == "running"
    assert (runs / f"task-{long['id']}").is_dir() and (relay / f"task-{long['id']}.jpg").is_file()
    assert live.client.get(f"/v1/tasks/{ids[1]}").status_code == 404

    # 3. over the size limit: the oldest finished go first, until the rest fits
    assert live.client.post(f"/v1/tasks/{long['id']}/cancel").status_code == 202
    live.wait_task(long["id"])
    more = [run("Home\nBack") for _ in range(2)]
    sizes = {t["id"]: folder_bytes(runs / f"task-{t['id']}") for t in more}
    sizes[long["id"]] = folder_bytes(runs / f"task-{long['id']}")
    limit_mb = (sizes[more[0]["id"]] + sizes[more[1]["id"]] + 1000) / 1e6  # all but the oldest (the long one)
    config = _config(tmp_path, live, task_days=0.0, runs_max_mb=limit_mb, cache_unused_days=0.0, relay_max_age_s=0.0)
    deleted = _gc(config, capsys=capsys)
    assert [line.split(" (")[0] for line in deleted[:-1]] == [f"deleted task {long['id']}"], deleted
    assert "over server.retention.runs_max_mb" in deleted[0]
    assert [live.client.get(f"/v1/tasks/{t['id']}").status_code for t in more] == [200, 200]
    assert live.client.get(f"/v1/tasks/{long['id']}").status_code == 404


def test_a_nearly_full_disk_refuses_new_tasks_with_507(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    runs_disk = os.statvfs("/")
    free_mb = runs_disk.f_bavail * runs_disk.f_frsize / 1e6
    live = service([phone], **{"server.retention.min_free_mb": free_mb * 10})  # more than there is
    refused = live.client.post("/v1/tasks", json={"script": "Home"})
    assert refused.status_code == 507, refused.text
    assert "server.retention.min_free_mb" in refused.text and "MB free" in refused.text
    runs = str(Path(live.settings.agent.output_dir).resolve())
    assert runs not in refused.text and "agent.output_dir" in refused.text  # the server's paths stay inside
    assert live.client.get("/v1/tasks").json()["count"] == 0  # nothing stored
    # a schedule's occurrences are skipped the same way, and say why
    made = live.client.post("/v1/schedules", json={"name": "every second", "every_s": 1, "task": {"script": "Home"}})
    assert made.status_code == 201, made.text
    history = made.json()["links"]["history"]
    deadline = time.monotonic() + 15
    while not (entries := live.client.get(history).json()["data"]):
        assert time.monotonic() < deadline, "no occurrence"
        time.sleep(0.2)
    assert entries[0]["outcome"] == "skipped" and "server.retention.min_free_mb" in entries[0]["reason"], entries
    assert runs not in entries[0]["reason"]
    assert live.client.get("/v1/tasks").json()["count"] == 0
