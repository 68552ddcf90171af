"""The farm API server's queue stops step by step whatever the step before did: a notification
listener whose stop fails (an injected error after its real stop: no real stop fails on demand)
still leaves the dispatcher's queue loop to be stopped and its notifier's connection to be
closed, and the failure is logged, as the service's own shutdown steps are
(tests/service/test_shutdown_close_errors.py). Real PostgreSQL, the farm's API server on real
uvicorn stopped as a signal stops it (its lifespan's shutdown)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from server.farm.notify import PgListener
from tests.farm_fixtures import start_farm_api

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(180)]


def test_the_farm_queue_stops_when_its_listener_fails_to_stop(pg_database: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    real_stop = PgListener.stop

    def failing_stop(self: PgListener) -> None:
        real_stop(self)
        raise RuntimeError("the listener would not stop")

    monkeypatch.setattr(PgListener, "stop", failing_stop)
    api = start_farm_api(tmp_path, pg_database)
    dispatcher = api.state.scheduler
    task = api.client.post("/v1/tasks", json={"script": "Home"})  # no worker: it stays queued
    assert task.status_code == 202, task.text
    assert api.client.post(f"/v1/tasks/{task.json()['id']}/cancel").status_code == 202  # the notifier connects
    assert dispatcher.notifier._conn is not None and dispatcher._thread.is_alive()
    with caplog.at_level(logging.ERROR, logger="server.farm.service"):
        api.stop()
    assert not api.thread.is_alive()
    # before: the listener's error skipped the rest of FarmDispatcher.stop
    assert not dispatcher._thread.is_alive(), "the queue loop was left running"
    assert dispatcher.notifier._conn is None, "the notifier's connection was left open"
    assert any("notification listener" in r.getMessage() and r.exc_info
               and "would not stop" in str(r.exc_info[1]) for r in caplog.records), [r.getMessage() for r in caplog.records]
