"""The farm API server's queue stops step by step whatever the step before did: a notification
listener whose stop fails (an injected error after its real stop: no real stop fails on demand)
still leaves the queue loop to be stopped and the notifier's connection to be closed, and the
failure is logged, as the service's own shutdown steps are
(tests/service/test_shutdown_close_errors.py). What is open is read where an operator reads it:
PostgreSQL's ``pg_stat_activity`` (the notifier's connection last ran ``pg_notify``; the queue
loop's connections run procrastinate's functions). Real PostgreSQL, the farm's API server on real
uvicorn stopped as a signal stops it (its lifespan's shutdown)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from server.farm.notify import PgListener
from server.farm.queue import conninfo
from tests.farm_fixtures import start_farm_api

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(180)]


def _open_connections(database: str) -> dict[str, int]:
    """This database's other client connections by what they last ran: the notifier's
    (``pg_notify``), the queue loop's (procrastinate), the rest."""
    import psycopg

    with psycopg.connect(conninfo(database), autocommit=True) as conn:
        rows = conn.execute("SELECT query FROM pg_stat_activity WHERE datname = current_database() "
                            "AND pid <> pg_backend_pid()").fetchall()
    found = {"notifier": 0, "queue": 0, "other": 0}
    for (query,) in rows:
        kind = "notifier" if "pg_notify" in (query or "") else "queue" if "procrastinate" in (query or "") else "other"
        found[kind] += 1
    return found


def test_the_farm_queue_stops_when_its_listener_fails_to_stop(pg_database: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    real_stop = PgListener.stop

    def failing_stop(self: PgListener) -> None:
        real_stop(self)
        raise RuntimeError("the listener would not stop")

    monkeypatch.setattr(PgListener, "stop", failing_stop)
    api = start_farm_api(tmp_path, pg_database)
    task = api.client.post("/v1/tasks", json={"script": "Home"})  # no worker: it stays queued
    assert task.status_code == 202, task.text
    assert api.client.post(f"/v1/tasks/{task.json()['id']}/cancel").status_code == 202  # the notifier connects
    before = _open_connections(pg_database)
    assert before["notifier"] == 1 and before["queue"] >= 1, before
    with caplog.at_level(logging.ERROR, logger="server.farm.service"):
        api.stop()
    assert not api.thread.is_alive()
    # before: the listener's error skipped the rest of FarmDispatcher.stop
    deadline = time.monotonic() + 30  # a closed connection leaves pg_stat_activity when its backend exits
    while (after := _open_connections(pg_database))["queue"] + after["notifier"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert after["queue"] == 0, f"the queue loop was left running: {after}"
    assert after["notifier"] == 0, f"the notifier's connection was left open: {after}"
    assert any("notification listener" in r.getMessage() and r.exc_info
               and "would not stop" in str(r.exc_info[1]) for r in caplog.records), [r.getMessage() for r in caplog.records]
