"""Recurring tasks: a cron expression or an interval; every occurrence is an ordinary task.

A schedule row keeps the task's body and ``next_at``. ``Schedules.due_tasks`` moves a due
schedule's ``next_at`` forward with a conditional UPDATE (``WHERE next_at = <what I read>``),
so among several API servers sharing a database exactly one creates each occurrence; an
occurrence missed while no server ran is not made up for (the next one is computed from now),
which is what cron does too. Cron is croniter's five-field syntax (minute hour day month
weekday), the one procrastinate's periodic jobs use as well.

An occurrence is held to its token's quota like a submission (``server.quota``), in the one
transaction that moves ``next_at`` on and stores the task: over a ``refuse`` quota it is skipped
(no task; the schedule goes on to its next time, as cron does with a job it may not start) and
recorded as such with the reason; under ``wait`` it is queued like any task of that token,
and waits for its turn. Each occurrence leaves a row in ``farm_schedule_runs`` (the schedule's
history: queued with its task, or skipped, and why), the last ``HISTORY_KEPT`` of each schedule.

``ScheduleTicker`` is the thread of the API server that turns due schedules into tasks and hands
them to the scheduler (the embedded one wakes; the farm's defers a job): the same for both.

May import: sqlalchemy, croniter, ``server.store``, ``server.db``, ``server.quota``,
``server.farm.registry``, the standard library.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from server.db import inserted_id
from server.farm.registry import schedule_runs_table, schedules_table
from server.quota import NO_QUOTA, Quota, QuotaExceeded, waiting_reason
from server.store import TaskRow, TaskStore, tasks_table

__all__ = ["HISTORY_KEPT", "OccurrenceRow", "ScheduleError", "ScheduleLimit", "ScheduleRow", "ScheduleTicker", "Schedules", "next_time"]

log = logging.getLogger(__name__)

# (a schedule's owner, the team stored with it) -> the team its occurrences are of now
OwnerTeam = Callable[[str | None, str | None], str | None]

MIN_INTERVAL_S = 1.0  # the floor of server.schedule_min_interval_s
MAX_INTERVAL_S = 366 * 86400.0  # a schedule more than a year apart is a mistake (a cron of Feb 29 is 4 years: refused too)
CRON_GAPS_CHECKED = 8  # a cron's next occurrences whose gaps are held to the minimum interval
HISTORY_KEPT = 100  # occurrences kept per schedule in farm_schedule_runs
SCHEDULE_LOCK_CLASS = 7_272_015  # the advisory lock of a token's schedule count (QUOTA_LOCK_CLASS + 1)


class ScheduleError(ValueError):
    """A cron expression or interval that cannot be used; ``field`` names the body's field."""

    def __init__(self, message: str, field: str = "cron") -> None:
        super().__init__(message)
        self.field = field


def next_time(cron: str | None, interval_s: float | None, after: float) -> float:
    if interval_s is not None:
        return after + interval_s
    from croniter import croniter

    assert cron is not None
    return float(croniter(cron, after).get_next(float))


def check_when(cron: str | None, interval_s: float | None, min_interval_s: float = MIN_INTERVAL_S,
               now: float | None = None) -> None:
    """Refuse what would never fire, fire too often, or cannot be stored and read back: a cron of
    a date that never comes ("0 0 31 2 *"), a non-finite or absurd interval."""
    if (cron is None) == (interval_s is None):
        raise ScheduleError("give either cron (e.g. \"*/5 * * * *\") or every_s (seconds between runs)",
                            "every_s" if cron is None else "cron")
    if interval_s is not None:
        if not math.isfinite(interval_s):
            raise ScheduleError("every_s must be a finite number of seconds", "every_s")
        if interval_s < min_interval_s:
            raise ScheduleError(f"every_s must be at least {min_interval_s:g} (server.schedule_min_interval_s)",
                                "every_s")
        if interval_s > MAX_INTERVAL_S:
            raise ScheduleError(f"every_s must be at most {MAX_INTERVAL_S:g} (a year)", "every_s")
        return
    assert cron is not None
    from croniter import croniter

    if "\x00" in cron or len(cron.split()) != 5 or not croniter.is_valid(cron):
        raise ScheduleError(f"{cron!r} is not a cron expression of five fields (minute hour day month weekday)")
    start = time.time() if now is None else now
    times = [start]
    try:
        # croniter gives up after 50 years of no match (a date that never comes)
        it = croniter(cron, start)
        for _ in range(CRON_GAPS_CHECKED):
            times.append(float(it.get_next(float)))
    except Exception as exc:  # CroniterBadDateError, or any other refusal of croniter's: never fires
        raise ScheduleError(f"{cron!r} never fires (no such date: {exc})") from exc
    if times[1] - start > MAX_INTERVAL_S:
        raise ScheduleError(f"{cron!r} fires less than once a year (next: {time.strftime('%Y-%m-%d', time.gmtime(times[1]))})")
    gap = min(b - a for a, b in zip(times[1:], times[2:], strict=False))
    if gap < min_interval_s:
        raise ScheduleError(f"{cron!r} fires {gap:g} s apart; the least is {min_interval_s:g} "
                            "(server.schedule_min_interval_s)")


class ScheduleLimit(Exception):
    """``owner`` has as many schedules as ``server.max_schedules_per_token`` allows."""

    def __init__(self, owner: str, held: int, limit: int) -> None:
        super().__init__(f"the token {owner!r} has {held} schedules, its limit (server.max_schedules_per_token "
                         f"= {limit}); delete one first")
        self.owner, self.held, self.limit = owner, held, limit


class UnreadableSchedule(ValueError):
    """A stored row this version cannot use (an older version's, or a hand edit)."""


def _row(values: dict[str, Any]) -> ScheduleRow:
    """A stored row as a ``ScheduleRow``, or ``UnreadableSchedule`` saying why not. ``task``
    comes as text (read with a cast), so a body that is not JSON fails here, for its row alone."""
    try:
        task = values["task"]
        if isinstance(task, str):
            task = json.loads(task)
        if not isinstance(task, dict) or not isinstance(task.get("instruction"), str):
            raise UnreadableSchedule("its task is not an object with an instruction")
        if not isinstance(task.get("options", {}), dict) or not isinstance(task.get("device", "any"), str):
            raise UnreadableSchedule("its task's device or options are not of the right type")
        cron, interval = values["cron"], values["interval_s"]
        if (cron is None) == (interval is None):
            raise UnreadableSchedule("it has both or neither of cron and interval_s")
        if interval is not None and not (math.isfinite(float(interval)) and float(interval) >= MIN_INTERVAL_S):
            raise UnreadableSchedule(f"its interval {interval!r} is not a finite number of seconds >= 1")
        if cron is not None:
            from croniter import croniter

            if not isinstance(cron, str) or len(cron.split()) != 5 or not croniter.is_valid(cron):
                raise UnreadableSchedule(f"its cron {cron!r} is not five valid fields")
        for name in ("next_at", "created_at"):
            if not math.isfinite(float(values[name])):
                raise UnreadableSchedule(f"its {name} is not a finite time")
        return ScheduleRow(
            id=int(values["id"]), name=str(values["name"]), cron=cron,
            interval_s=float(interval) if interval is not None else None, task=task,
            owner=values["owner"], enabled=bool(values["enabled"]), next_at=float(values["next_at"]),
            last_task_id=values["last_task_id"], runs=int(values["runs"] or 0), created_at=float(values["created_at"]),
        )
    except UnreadableSchedule:
        raise
    except (ValueError, TypeError, KeyError, OverflowError) as exc:
        raise UnreadableSchedule(f"{type(exc).__name__}: {exc}") from exc


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


@dataclass(frozen=True)
class OccurrenceRow:
    """One occurrence of a schedule: ``queued`` (``task_id``) or ``skipped``, and why."""

    id: int
    schedule_id: int
    due_at: float
    at: float
    outcome: str
    task_id: int | None
    reason: str | None


class Schedules:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._unreadable: set[Any] = set()  # ids of rows whose reason was logged
        # only this table: an embedded SQLite database gets no farm tables it would never use
        for attempt in range(3):
            try:
                schedules_table.create(engine, checkfirst=True)
                schedule_runs_table.create(engine, checkfirst=True)
                return
            except (sa.exc.IntegrityError, sa.exc.ProgrammingError):  # another process made it meanwhile
                if attempt == 2:
                    raise
                time.sleep(0.2 * (attempt + 1))

    def create(self, name: str, cron: str | None, interval_s: float | None, task: dict[str, Any],
               owner: str | None = None, *, min_interval_s: float = MIN_INTERVAL_S,
               max_per_owner: int = 0) -> ScheduleRow:
        """Store a schedule; ``ScheduleError`` for a time that cannot be used, ``ScheduleLimit``
        when ``owner`` has ``max_per_owner`` already (0: no limit)."""
        check_when(cron, interval_s, min_interval_s)
        now = time.time()
        with self._serialized() as conn:
            if max_per_owner and owner is not None:
                # the count and the insert must not interleave with another create of this token's
                # (the per-token quota's way: server.quota)
                if conn.dialect.name == "postgresql":
                    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(SCHEDULE_LOCK_CLASS, sa.func.hashtext(owner))))
                held = int(conn.execute(sa.select(sa.func.count()).select_from(schedules_table)
                                        .where(schedules_table.c.owner == owner)).scalar_one())
                if held >= max_per_owner:
                    raise ScheduleLimit(owner, held, max_per_owner)
            result = conn.execute(schedules_table.insert().values(
                name=name, cron=cron, interval_s=interval_s, task=task, owner=owner, enabled=True,
                next_at=next_time(cron, interval_s, now), runs=0, created_at=now,
            ))
            schedule_id = inserted_id(result)
        found = self.get(schedule_id)
        assert found is not None
        return found

    @contextlib.contextmanager
    def _serialized(self) -> Iterator[sa.Connection]:
        """A write transaction; on SQLite ``BEGIN IMMEDIATE`` (the write lock from the start)."""
        if self.engine.dialect.name != "sqlite":
            with self.engine.begin() as conn:
                yield conn
            return
        with self.engine.connect() as conn:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            yield conn
            conn.commit()

    def _read(self, conn: sa.Connection, *where: Any) -> list[ScheduleRow]:
        """The rows matching ``where``, oldest first; one that cannot be read is skipped, and the
        reason logged once per row (the list and the ticker go on without it)."""
        c = schedules_table.c
        columns = [col for col in schedules_table.c if col.name != "task"] + [sa.cast(c.task, sa.Text).label("task")]
        rows = []
        for found in conn.execute(sa.select(*columns).where(*where).order_by(c.id)):
            values = found._asdict()
            try:
                rows.append(_row(values))
            except UnreadableSchedule as exc:
                if values.get("id") not in self._unreadable:
                    self._unreadable.add(values.get("id"))
                    log.warning("schedule %s cannot be read and is skipped: %s (delete it, or fix the row)",
                                values.get("id"), exc)
        return rows

    def get(self, schedule_id: int) -> ScheduleRow | None:
        with self.engine.connect() as conn:
            found = self._read(conn, schedules_table.c.id == schedule_id)
        return found[0] if found else None

    def all(self) -> list[ScheduleRow]:
        with self.engine.connect() as conn:
            return self._read(conn)

    def stored_owner(self, schedule_id: int) -> tuple[bool, str | None]:
        """(whether a row of that id is stored, its owner), read from the owner column alone: a
        row that cannot be read as a schedule (skipped by ``get``) can still be found and deleted."""
        with self.engine.connect() as conn:
            found = conn.execute(sa.select(schedules_table.c.owner)
                                 .where(schedules_table.c.id == schedule_id)).one_or_none()
        return (found is not None, found[0] if found is not None else None)

    def count_of(self, owner: str) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(schedules_table)
                                    .where(schedules_table.c.owner == owner)).scalar_one())

    def delete(self, schedule_id: int) -> bool:
        with self.engine.begin() as conn:
            conn.execute(schedule_runs_table.delete().where(schedule_runs_table.c.schedule_id == schedule_id))
            return conn.execute(schedules_table.delete().where(schedules_table.c.id == schedule_id)).rowcount == 1

    def history(self, schedule_id: int, limit: int = HISTORY_KEPT) -> list[OccurrenceRow]:
        """The schedule's last occurrences, newest first."""
        query = (sa.select(schedule_runs_table).where(schedule_runs_table.c.schedule_id == schedule_id)
                 .order_by(schedule_runs_table.c.id.desc()).limit(limit))
        with self.engine.connect() as conn:
            return [OccurrenceRow(**r._asdict()) for r in conn.execute(query)]

    def skipped(self, schedule_id: int) -> tuple[int, OccurrenceRow | None]:
        """How many of the kept occurrences were skipped, and the last one."""
        runs = schedule_runs_table.c
        where = (runs.schedule_id == schedule_id, runs.outcome == "skipped")
        with self.engine.connect() as conn:
            count = int(conn.execute(sa.select(sa.func.count()).select_from(schedule_runs_table).where(*where)).scalar_one())
            last = conn.execute(sa.select(schedule_runs_table).where(*where).order_by(runs.id.desc()).limit(1)).one_or_none()
        return count, OccurrenceRow(**last._asdict()) if last is not None else None

    def due_tasks(self, store: TaskStore, now: float | None = None, quota: Quota = NO_QUOTA,
                  refusal: str | None = None,
                  owner_refusal: Callable[[str | None], str | None] = lambda owner: None,
                  owner_team: OwnerTeam = lambda owner, stored: stored) -> list[TaskRow]:
        """Create the task of every due schedule (once, whoever else is ticking), each held to its
        token's ``quota`` as a submission is; a skipped occurrence makes no task. ``refusal`` (why
        no task may start now: the runs folder's disk nearly full) skips every due occurrence;
        ``owner_refusal`` (why its owner may not submit now: a revoked token, a viewer) the
        schedule's. Each task is of its owner's team now (``owner_team``: ``server.auth.team_now``),
        not the team the schedule was made in."""
        now = time.time() if now is None else now
        with self.engine.connect() as conn:
            due = self._read(conn, schedules_table.c.enabled.is_(True), schedules_table.c.next_at <= now)
        created = []
        for schedule in due:
            try:
                task = self._occur(store, schedule, now, quota, refusal or owner_refusal(schedule.owner), owner_team)
            except (ValueError, KeyError, TypeError, OverflowError) as exc:  # its time or body: the others go on
                if schedule.id not in self._unreadable:
                    self._unreadable.add(schedule.id)
                    log.warning("schedule %s is skipped: %s: %s", schedule.id, type(exc).__name__, exc)
                continue
            if task is not None:
                created.append(task)
        return created

    def _occur(self, store: TaskStore, schedule: ScheduleRow, now: float, quota: Quota,
               refusal: str | None = None, owner_team: OwnerTeam = lambda owner, stored: stored) -> TaskRow | None:
        """One occurrence, in one transaction of the store's: ``next_at`` moved on (only by the
        instance whose conditional update wins), the quota decided, the task or the skip stored."""
        following = next_time(schedule.cron, schedule.interval_s, max(now, schedule.next_at))
        body = dict(schedule.task)
        options = {**body.get("options", {}), "schedule_id": schedule.id}
        stored_team = options.pop("team", None)
        team = owner_team(schedule.owner, stored_team if isinstance(stored_team, str) else None)
        if team is not None:  # as the options are stored: a task of no team has no key
            options["team"] = team
        with store.write() as conn:
            won = conn.execute(
                schedules_table.update()
                .where(schedules_table.c.id == schedule.id, schedules_table.c.next_at == schedule.next_at)
                .values(next_at=following)
            ).rowcount == 1
            if not won:
                return None
            if refusal is not None:
                log.warning("schedule %s: occurrence skipped: %s", schedule.id, refusal)
                self._record(conn, schedule, now, "skipped", None, f"skipped: {refusal}; the schedule goes on")
                return None
            try:
                task = store.insert_task(conn, body["instruction"], body.get("device", "any"), options, quota=quota)
            except QuotaExceeded as exc:
                reason = (f"skipped: the token {exc.owner!r} had {exc.active} tasks queued or running, its limit "
                          f"(server.max_active_per_token); the schedule goes on")
                log.warning("schedule %s: occurrence %s", schedule.id, reason)
                self._record(conn, schedule, now, "skipped", None, reason)
                return None
            conn.execute(schedules_table.update().where(schedules_table.c.id == schedule.id)
                         .values(last_task_id=task.id, runs=schedules_table.c.runs + 1))
            self._record(conn, schedule, now, "queued", task.id, waiting_reason(conn, tasks_table, task.owner, task.options))
        return task

    @staticmethod
    def _record(conn: sa.Connection, schedule: ScheduleRow, now: float, outcome: str, task_id: int | None,
                reason: str | None) -> None:
        """The occurrence in the schedule's history; older ones beyond ``HISTORY_KEPT`` go."""
        runs = schedule_runs_table.c
        conn.execute(schedule_runs_table.insert().values(
            schedule_id=schedule.id, due_at=schedule.next_at, at=now, outcome=outcome, task_id=task_id, reason=reason))
        oldest_kept = conn.execute(sa.select(runs.id).where(runs.schedule_id == schedule.id)
                                   .order_by(runs.id.desc()).offset(HISTORY_KEPT - 1).limit(1)).scalar()
        if oldest_kept is not None:
            conn.execute(schedule_runs_table.delete().where(runs.schedule_id == schedule.id, runs.id < oldest_kept))


class ScheduleTicker:
    """A thread: every ``interval_s``, due schedules become tasks given to ``submit``."""

    def __init__(self, schedules: Schedules, store: TaskStore, submit: Callable[[TaskRow], None],
                 interval_s: float = 1.0, quota: Quota = NO_QUOTA,
                 refusal: Callable[[], str | None] = lambda: None,
                 owner_refusal: Callable[[str | None], str | None] = lambda owner: None,
                 owner_team: OwnerTeam = lambda owner, stored: stored) -> None:
        self.schedules = schedules
        self.refusal = refusal  # why no task may start now (the disk), checked at each tick
        self.owner_refusal = owner_refusal  # why a schedule's owner may not submit now (server.auth)
        self.owner_team = owner_team  # the owner's team now (server.auth.team_now)
        self.store = store
        self.submit = submit
        self.quota = quota  # the API server's: an occurrence is held to it as a submission is
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
        tasks = self.schedules.due_tasks(self.store, quota=self.quota, refusal=self.refusal(),
                                         owner_refusal=self.owner_refusal, owner_team=self.owner_team)
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
