"""Postgres LISTEN/NOTIFY between the workers that write events and the API that streams them.

A worker sends ``NOTIFY mobile_agent_events, '<task id>'`` after each event it writes; the API
listens on one connection and wakes that task's event streams (``server.state.EventHub``).
A notification is only a wake-up: the streams read the events table, and still re-read it every
couple of seconds, so a notification lost in a reconnect costs latency, never an event.
Both sides reconnect by themselves when Postgres restarts.

May import: psycopg, the standard library.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["CHANNEL", "PgListener", "PgNotifier"]

log = logging.getLogger(__name__)

CHANNEL = "mobile_agent_events"


class PgNotifier:
    """Sends wake-ups; never raises (a lost wake-up costs the poll interval)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._conn: Any = None
        self._lock = threading.Lock()

    def notify(self, task_id: int) -> None:
        import psycopg

        with self._lock:
            for _attempt in range(2):
                try:
                    if self._conn is None or self._conn.closed:
                        self._conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=5)
                    self._conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(task_id)))
                    return
                except psycopg.Error as exc:
                    log.debug("notify failed (%s), reconnecting", exc)
                    self._close()

    def _close(self) -> None:
        try:
            if self._conn is not None:
                self._conn.close()
        except Exception:  # closing a broken connection
            pass
        self._conn = None

    def close(self) -> None:
        with self._lock:
            self._close()


class PgListener:
    """A thread that LISTENs and calls ``on_task(task_id)`` for each notification."""

    def __init__(self, dsn: str, on_task: Callable[[int], None]) -> None:
        self.dsn = dsn
        self.on_task = on_task
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.connected = threading.Event()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="pg-listener", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _run(self) -> None:
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self.dsn, autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.connected.set()
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=1.0):
                            if note.payload.isdigit():
                                self.on_task(int(note.payload))
            except psycopg.Error as exc:
                self.connected.clear()
                log.info("event listener lost its connection (%s); reconnecting", exc)
                self._stop.wait(1.0)
            except Exception:  # a bug in a callback must not end the listener
                log.exception("event listener failed; restarting")
                time.sleep(1.0)
