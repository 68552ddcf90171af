"""A claim that waits behind the finish of the run before it starts after that run ended.

``TaskStore.claim`` took its ``started_at`` before waiting for the store's write lock, and
``finish`` its ``finished_at`` the same way: a phone's next task claimed while another thread
of the process was finishing the one before got a start earlier than that finish. Under
``server.over_quota = "wait"`` (one running task per token) the record then says two of the
token's tasks ran at once (tests/farm/test_quota_wait.py's check). No clock here: the write
lock is replaced by one that says when a thread waits for it."""

from __future__ import annotations

import threading
from pathlib import Path
from types import TracebackType

from server.store import TaskStore


class _Gate:
    """The store's write lock, held by the test while a claim waits for it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.waiting = threading.Event()
        self.holder: int | None = None

    def __enter__(self) -> _Gate:
        if self.holder == threading.get_ident():
            return self  # the test's own call while it holds the lock
        self.waiting.set()
        self.lock.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self.holder != threading.get_ident():
            self.lock.release()


def test_a_claim_that_waited_for_the_finish_before_it_starts_after_it(tmp_path: Path) -> None:
    store = TaskStore(f"sqlite:///{tmp_path / 'tasks.sqlite3'}")
    try:
        first = store.create_task("one", "any", {"owner": "alice"})
        second = store.create_task("two", "any", {"owner": "alice"})
        assert store.claim(first.id, "phone-1", tmp_path / "1")
        gate = _Gate()
        store._write_lock = gate  # type: ignore[assignment]  # the test's lock in the store's place
        gate.lock.acquire()
        gate.holder = threading.get_ident()
        claimed: list[bool] = []
        claimer = threading.Thread(target=lambda: claimed.append(store.claim(second.id, "phone-1", tmp_path / "2")))
        claimer.start()
        assert gate.waiting.wait(30), "the claim never asked for the write lock"
        store.finish(first.id, "completed")  # while the claim waits behind the lock
        gate.holder = None
        gate.lock.release()
        claimer.join(30)
        assert claimed == [True]
        ended, started = store.get_task(first.id), store.get_task(second.id)
        assert ended is not None and started is not None
        assert ended.finished_at is not None and started.started_at is not None
        assert started.started_at >= ended.finished_at, (started.started_at, ended.finished_at)
    finally:
        store.close()
