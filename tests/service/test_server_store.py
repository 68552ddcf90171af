"""The task store on a real SQLite file: claims are exclusive across instances, restarts
interrupt only this instance's runs, events keep their order; graceful shutdown and the
serve command's refusal to listen beyond localhost without a token."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from mobile_agent.cli import main as cli_main
from mobile_agent.errors import ConfigError
from mobile_agent.settings import load_settings
from server.app import create_app
from server.store import TaskStore
from tests.server_fixtures import TaggedPlanner, waits


def _url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.sqlite3'}"


def test_only_one_instance_claims_a_task(tmp_path: Path) -> None:
    stores = [TaskStore(_url(tmp_path), instance=f"i{n}") for n in range(4)]
    try:
        ids = [stores[0].create_task(f"task {i}", "any", {}).id for i in range(30)]
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
            assert row.status == "running" and row.instance == winner and row.device == f"phone-{winner}"
        assert stores[2].queued_tasks() == []
        assert stores[3].cancel_queued(ids[0]) is False  # running, not queued
    finally:
        for store in stores:
            store.close()


def test_restart_interrupts_only_this_instances_runs_and_keeps_events(tmp_path: Path) -> None:
    mine, theirs = TaskStore(_url(tmp_path), instance="a"), TaskStore(_url(tmp_path), instance="b")
    try:
        a = mine.create_task("mine", "any", {"max_steps": 3})
        b = theirs.create_task("theirs", "any", {})
        queued = mine.create_task("still queued", "any", {})
        assert mine.claim(a.id, "p1", tmp_path) and theirs.claim(b.id, "p2", tmp_path)
        for n in range(5):
            mine.add_event(a.id, "step_finished", {"step": n + 1, "path": tmp_path / f"{n}.png"})
        assert mine.interrupt_running(instance="a") == [a.id]
        assert mine.get_task(a.id).status == "interrupted"
        assert mine.get_task(a.id).error["type"] == "Interrupted"
        assert mine.get_task(b.id).status == "running"
        assert mine.get_task(queued.id).status == "queued"
        events = mine.events_after(a.id)
        assert [e.kind for e in events] == ["status", "status"] + ["step_finished"] * 5 + ["status"]
        assert [e.data.get("step") for e in events if e.kind == "step_finished"] == [1, 2, 3, 4, 5]
        assert events[3].data["path"] == str(tmp_path / "1.png")  # stored as JSON text
        assert [e.id for e in events] == sorted(e.id for e in events)
        assert mine.events_after(a.id, events[-2].id) == [events[-1]]
        assert mine.step_event(a.id, 2).data["step"] == 2 and mine.step_event(a.id, 5).data["step"] == 5
        assert mine.step_event(a.id, 6) is None and mine.step_event(a.id, 0) is None
        assert mine.finish(a.id, "completed") is False  # an interrupted run stays interrupted
        rows, total = mine.list_tasks(status="running")
        assert total == 1 and rows[0].id == b.id
        assert mine.count_by_status() == {"interrupted": 1, "running": 1, "queued": 1}
    finally:
        mine.close()
        theirs.close()


def test_stopping_the_service_interrupts_its_runs(service, sim_phones, tmp_path: Path) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    planner = TaggedPlanner(plans={"t-stop": waits(20)}, delay_s={"t-stop": 0.3})
    live = service([phone], planner=planner)
    task = live.submit("[t-stop] runs while the service stops", max_steps=20)
    live.wait_task(task["id"], statuses={"running"})
    live.stop()
    store = TaskStore(live.settings.server.database_url)
    try:
        row = store.get_task(task["id"])
        assert row.status == "interrupted" and row.finished_at is not None
    finally:
        store.close()


def test_serve_refuses_to_listen_beyond_localhost_without_a_token(monkeypatch, capsys) -> None:
    monkeypatch.delenv("MOBILE_AGENT_SERVER__API_TOKEN", raising=False)
    assert cli_main(["serve", "--host", "0.0.0.0", "--port", "1"]) == 3
    assert "api_token" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["serve", "--port", "not-a-port"])


def test_a_database_url_the_store_cannot_serve_is_a_config_error(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("MOBILE_AGENT_SERVER__API_TOKEN", raising=False)
    for url, words in (
        ("sqlite://", "in-memory"),
        ("sqlite:///:memory:", "in-memory"),
        ("not a url", "not a database URL"),
        ("nosuchdb://x/y", "no driver"),
        ("postgresql+nosuchdriver://u:hunter2@127.0.0.1/db", "no driver"),
        (f"sqlite:///{tmp_path / 'a-file.txt' / 'below-a-file.sqlite3'}", "cannot"),
    ):
        if "a-file.txt" in url:
            (tmp_path / "a-file.txt").write_text("a file, not a folder")
        with pytest.raises(ConfigError) as info:
            TaskStore(url)
        assert words in info.value.message and info.value.fields["setting"] == "server.database_url", url
        assert "hunter2" not in info.value.message
        with pytest.raises(ConfigError):  # at once, not in the lifespan after uvicorn started
            create_app(load_settings(overrides={"server.database_url": url}))
    # a file the database cannot open (a folder in its place)
    (tmp_path / "folder.sqlite3").mkdir()
    with pytest.raises(ConfigError) as info:
        TaskStore(f"sqlite:///{tmp_path / 'folder.sqlite3'}")
    assert "cannot open the database" in info.value.message
    assert cli_main(["serve", "--port", "1", "--database-url", "sqlite://"]) == 3
    assert "in-memory" in capsys.readouterr().err
