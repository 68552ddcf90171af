"""The scheduler under faults, on a real SQLite store: a claim that fails gives the phone
back, a device refresh that raises does not end the scheduler thread, and a cancel that
lands between the claim and the worker's start reaches the run. The phones here are a
scripted ``DeviceSource`` (the pool's public seam): these faults are about leases, not adb."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from server.devices import DevicePool
from server.runner import TaskOutcome, TaskSpec
from server.scheduler import Scheduler
from server.store import TaskRow, TaskStore


class ScriptedPhones:
    """Phones that always answer, except for ``list_failures`` raised in turn."""

    def __init__(self, serials: list[str]) -> None:
        self.serials = serials
        self.list_failures: list[Exception] = []

    def list(self) -> list[tuple[str, str, str | None]]:
        if self.list_failures:
            raise self.list_failures.pop(0)
        return [(s, "device", "ScriptedPhone") for s in self.serials]

    def screen_size(self, serial: str) -> tuple[int, int]:
        return 540, 1200

    def screenshot(self, serial: str, fmt: str) -> bytes:
        raise NotImplementedError

    def connect(self, address: str) -> str:
        raise NotImplementedError

    def close(self) -> None:
        return  # holds nothing open


class FlakyStore(TaskStore):
    """The real store; ``claim_failures`` are raised by the next claims, and a claim that
    wins can run ``after_claim`` (another client's request arriving right then)."""

    claim_failures: list[Exception]
    after_claim: Any = None

    def claim(self, task_id: int, serial: str, trajectory_dir: Path) -> bool:
        if self.claim_failures:
            raise self.claim_failures.pop(0)
        won = super().claim(task_id, serial, trajectory_dir)
        if won and self.after_claim is not None:
            self.after_claim(task_id)
        return won


class RecordingRunner:
    """Runs until cancelled or ``hold_s`` passes; records whether cancel was already set."""

    def __init__(self, hold_s: float = 0.0) -> None:
        self.hold_s = hold_s
        self.started: list[tuple[int, str, bool]] = []

    def __call__(self, spec: TaskSpec, *, cancel: threading.Event, emit: Any) -> TaskOutcome:
        self.started.append((spec.task_id, spec.serial, cancel.is_set()))
        emit("step_finished", {"step": 1})
        if cancel.wait(self.hold_s):
            return TaskOutcome(status="cancelled", steps=1)
        return TaskOutcome(status="completed", steps=1)

    def prepare(self) -> None:
        pass

    def describe(self) -> dict[str, str]:
        return {}


@pytest.fixture
def parts(tmp_path: Path):
    store = FlakyStore(f"sqlite:///{tmp_path / 'faults.sqlite3'}", instance="here")
    store.claim_failures = []
    phones = ScriptedPhones(["phone-a"])
    pool = DevicePool(phones)
    pool.refresh()
    made: list[Scheduler] = []

    def scheduler(runner: RecordingRunner) -> Scheduler:
        made.append(Scheduler(store, pool, runner, runs_dir=tmp_path / "runs", refresh_interval_s=0.05))
        return made[-1]

    yield store, phones, pool, scheduler
    for s in made:
        s.stop(timeout_s=5)
    store.close()


def _wait_final(store: TaskStore, task_id: int, timeout: float = 20.0) -> TaskRow:
    deadline = time.monotonic() + timeout
    while True:
        row = store.get_task(task_id)
        assert row is not None
        if row.terminal:
            return row
        assert time.monotonic() < deadline, f"task {task_id} still {row.status}"
        time.sleep(0.02)


def test_a_claim_that_raises_gives_the_phone_back(parts) -> None:
    store, _phones, pool, make = parts
    store.claim_failures = [sa.exc.OperationalError("UPDATE tasks", {}, Exception("database is locked"))]
    runner = RecordingRunner()
    scheduler = make(runner)
    task = store.create_task("first", "phone-a", {})
    scheduler.start()
    assert _wait_final(store, task.id).status == "completed"  # a leaked lease would keep it queued
    assert store.claim_failures == []  # the failure did happen
    assert [(t, s) for t, s, _ in runner.started] == [(task.id, "phone-a")]
    assert pool.get("phone-a").task_id is None


def test_a_device_refresh_that_raises_does_not_stop_the_scheduler(parts) -> None:
    store, phones, _pool, make = parts
    phones.list_failures = [RuntimeError("adb answered something unexpected")]
    runner = RecordingRunner()
    scheduler = make(runner)
    scheduler.start()
    deadline = time.monotonic() + 10
    while phones.list_failures:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    task = store.create_task("after the failed refresh", "any", {})
    scheduler.wake()
    assert _wait_final(store, task.id).status == "completed"
    again = store.create_task("and the one after", "any", {})  # the loop is still there, not one last pass
    scheduler.wake()
    assert _wait_final(store, again.id).status == "completed"


def test_a_cancel_between_claim_and_start_reaches_the_run(parts) -> None:
    store, _phones, pool, make = parts
    runner = RecordingRunner(hold_s=30.0)
    scheduler = make(runner)
    answers: list[bool] = []

    def cancel_from_another_client(task_id: int) -> None:
        client = threading.Thread(target=lambda: answers.append(scheduler.cancel(task_id)))
        client.start()
        client.join(10)

    store.after_claim = cancel_from_another_client
    task = store.create_task("cancelled as it starts", "any", {})
    scheduler.start()
    row = _wait_final(store, task.id, timeout=10)  # a missed cancel would hold the phone 30 s
    assert answers == [True]
    assert runner.started == [(task.id, "phone-a", True)]
    assert row.status == "cancelled" and row.cancel_requested
    assert pool.get("phone-a").task_id is None


def test_a_folder_left_by_an_earlier_database_is_not_reused(parts, tmp_path: Path) -> None:
    store, _phones, _pool, make = parts
    stale = tmp_path / "runs" / "task-1" / "an-old-run"
    stale.mkdir(parents=True)
    (stale / "step-1.png").write_bytes(b"someone else's screen")
    (tmp_path / "runs" / "task-1.2").mkdir()
    runner = RecordingRunner()
    scheduler = make(runner)
    task = store.create_task("first task of a fresh database", "any", {})
    assert task.id == 1
    scheduler.start()
    row = _wait_final(store, task.id)
    assert row.status == "completed"
    assert Path(row.trajectory_dir) == tmp_path / "runs" / "task-1.3"
    assert (stale / "step-1.png").exists()  # left alone
