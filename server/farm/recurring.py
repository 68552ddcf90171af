"""Recurring tasks: a cron expression or an interval; every occurrence is an ordinary task.

A schedule row keeps the task's body and ``next_at``. ``Schedules.due_tasks`` moves a due
schedule's ``next_at`` forward with a conditional UPDATE (``WHERE next_at = <what I read>``),
so among several API servers sharing a database exactly one creates each occurrence; an
occurrence missed while no server ran is not made up for (the next one is computed from now),
which is what cron does too. Cron is croniter's five-field syntax (minute hour day month
weekday), the one procrastinate's periodic jobs use as well.

``ScheduleTicker`` is the thread of the API server that turns due schedules into tasks and hands
them to the scheduler (the embedded one wakes; the farm's defers a job): the same for both.

May import: sqlalchemy, croniter, ``server.store``, ``server.farm.registry``, the standard library.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from server.farm.registry import schedules_table
from server.store import TaskRow, TaskStore

__all__ = ["ScheduleError", "ScheduleRow", "ScheduleTicker", "Schedules", "next_time"]

log = logging.getLogger(__name__)

MIN_INTERVAL_S = 1.0


class ScheduleError(ValueError):
    """A cron expression or interval that cannot be used."""


def next_time(cron: str | None, interval_s: float | None, after: float) -> float:
    if interval_s is not None:
        return after + interval_s
    from croniter import croniter

    assert cron is not None
    return float(croniter(cron, after).get_next(float))


def check_when(cron: str | None, interval_s: float | None) -> None:
    if (cron is None) == (interval_s is None):
        raise ScheduleError("give either cron (e.g. \"*/5 * * * *\") or every_s (seconds between runs)")
    if interval_s is not None and interval_s < MIN_INTERVAL_S:
        raise ScheduleError(f"every_s must be at least {MIN_INTERVAL_S:g}")
    if cron is not None:
        from croniter import croniter

        if len(cron.split()) != 5 or not croniter.is_valid(cron):
            raise ScheduleError(f"{cron!r} is not a cron expression of five fields (minute hour day month weekday)")


@dataclass(frozen=True)
class ScheduleRow:
    id: int
    name: str
    cron: str | None
    interval_s: float | None
    task: dict[str, Any]
    owner: str | None
    enabled: bool
    next_at: float
    last_task_id: int | None
    runs: int
    created_at: float


class Schedules:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        # only this table: an embedded SQLite database gets no farm tables it would never use
        for attempt in range(3):
            try:
                schedules_table.create(engine, checkfirst=True)
                return
            except (sa.exc.IntegrityError, sa.exc.ProgrammingError):  # another process made it meanwhile
                if attempt == 2:
                    raise
                time.sleep(0.2 * (attempt + 1))

    def create(self, name: str, cron: str | None, interval_s: float | None, task: dict[str, Any],
               owner: str | None = None) -> ScheduleRow:
        check_when(cron, interval_s)
        now = time.time()
        with self.engine.begin() as conn:
            result = conn.execute(schedules_table.insert().values(
                name=name, cron=cron, interval_s=interval_s, task=task, owner=owner, enabled=True,
                next_at=next_time(cron, interval_s, now), runs=0, created_at=now,
            ))
            schedule_id = int(result.inserted_primary_key[0])
        found = self.get(schedule_id)
        assert found is not None
        return found

    def get(self, schedule_id: int) -> ScheduleRow | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(schedules_table).where(schedules_table.c.id == schedule_id)).one_or_none()
        return ScheduleRow(**row._asdict()) if row is not None else None

    def list(self) -> list[ScheduleRow]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(schedules_table).order_by(schedules_table.c.id))
            return [ScheduleRow(**r._asdict()) for r in rows]

    def delete(self, schedule_id: int) -> bool:
        with self.engine.begin() as conn:
            return conn.execute(schedules_table.delete().where(schedules_table.c.id == schedule_id)).rowcount == 1

    def due_tasks(self, store: TaskStore, now: float | None = None) -> list[TaskRow]:
        """Create the task of every due schedule (once, whoever else is ticking)."""
        now = time.time() if now is None else now
        created = []
        with self.engine.connect() as conn:
            due = [ScheduleRow(**r._asdict()) for r in conn.execute(
                sa.select(schedules_table).where(schedules_table.c.enabled.is_(True), schedules_table.c.next_at <= now))]
        for schedule in due:
            following = next_time(schedule.cron, schedule.interval_s, max(now, schedule.next_at))
            with self.engine.begin() as conn:
                won = conn.execute(
                    schedules_table.update()
                    .where(schedules_table.c.id == schedule.id, schedules_table.c.next_at == schedule.next_at)
                    .values(next_at=following, runs=schedules_table.c.runs + 1)
                ).rowcount == 1
            if not won:
                continue
            body = dict(schedule.task)
            options = {**body.get("options", {}), "schedule_id": schedule.id}
            task = store.create_task(body["instruction"], body.get("device", "any"), options)
            with self.engine.begin() as conn:
                conn.execute(schedules_table.update().where(schedules_table.c.id == schedule.id)
                             .values(last_task_id=task.id))
            created.append(task)
        return created


class ScheduleTicker:
    """A thread: every ``interval_s``, due schedules become tasks given to ``submit``."""

    def __init__(self, schedules: Schedules, store: TaskStore, submit: Callable[[TaskRow], None],
                 interval_s: float = 1.0) -> None:
        self.schedules = schedules
        self.store = store
        self.submit = submit
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="schedules", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def tick(self) -> list[TaskRow]:
        tasks = self.schedules.due_tasks(self.store)
        for task in tasks:
            log.info("schedule %s: task %s", task.options.get("schedule_id"), task.id)
            self.submit(task)
        return tasks

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.tick()
            except Exception:  # the database away for a moment: the next tick tries again
                log.exception("recurring schedules failed")
