"""Durable state of the service: tasks and their events, in SQL (SQLAlchemy 2.0 Core).

Trajectories stay on disk; rows keep their path. The tables and rows are ``server.tables``',
the engine and its URL checks ``server.db``'s; both are re-exported here, the import path the
rest of the service uses.

The store is the source of truth for everything the API shows: the scheduler claims
queued tasks with a conditional UPDATE (so two instances never run one task), and the
event stream replays rows (so a client that reconnects loses nothing).

May import: sqlalchemy, the standard library, ``server.tables``, ``server.db``, ``server.quota``,
``mobile_agent.errors``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from mobile_agent.errors import ConfigError
from server.db import check_database_url, create_tables, inserted_id, make_engine, shown_url
from server.quota import NO_QUOTA, Quota, admit_claim, admit_submission, waiting_reason
from server.tables import (
    ACTIVE_STATUSES,
    MAX_EVENT_TEXT,
    RUNNING_STATUSES,
    STARTED_STATUSES,
    TERMINAL_STATUSES,
    AuditRow,
    EventRow,
    TaskRow,
    audit_table,
    cap_strings,
    event_row,
    events_table,
    metadata,
    task_row,
    tasks_table,
)

__all__ = [
    "ACTIVE_STATUSES",
    "CANCELLED_WHILE_QUEUED",
    "MAX_EVENT_TEXT",
    "RUNNING_STATUSES",
    "TERMINAL_STATUSES",
    "AuditRow",
    "EventRow",
    "TaskRow",
    "TaskStore",
    "cap_strings",
    "check_database_url",
    "events_table",
    "tasks_table",
]

# the result of a task cancelled before any run took it: stored, shown by GET, told by its webhook
CANCELLED_WHILE_QUEUED: dict[str, Any] = {"reason": "cancelled while queued"}


class TaskStore:
    """Thread-safe access to tasks and events. Every method is one short transaction."""

    def __init__(self, url: str, *, instance: str = "local") -> None:
        self.url = url
        self.instance = instance
        self.engine = make_engine(url)
        try:
            create_tables(metadata, self.engine)
        except sa.exc.SQLAlchemyError as exc:
            self.engine.dispose()
            cause = (exc.orig if isinstance(exc, sa.exc.DBAPIError) else None) or exc
            raise ConfigError(
                f"cannot open the database {shown_url(url)}: {cause}", setting="server.database_url"
            ) from exc
        # Events of one task get ids in the order they were written; serialize writers
        # in this process so a status change never interleaves a half-written step.
        self._write_lock = threading.Lock()

    def close(self) -> None:
        self.engine.dispose()

    # --- tasks ---------------------------------------------------------------------

    def create_task(
        self, instruction: str, device_request: str, options: dict[str, Any], *, quota: Quota = NO_QUOTA
    ) -> TaskRow:
        """Store a queued task, held to ``options["owner"]``'s ``quota`` in this transaction
        (``server.quota``: raises ``QuotaExceeded`` under ``refuse``)."""
        with self.write() as conn:
            return self.insert_task(conn, instruction, device_request, options, quota=quota)

    @contextlib.contextmanager
    def write(self) -> Iterator[sa.Connection]:
        """One write transaction of this store, for a caller that stores a task together with
        rows of its own (a schedule's occurrence, ``server.farm.recurring``)."""
        with self._write_lock, self._immediate() as conn:
            yield conn

    def insert_task(
        self, conn: sa.Connection, instruction: str, device_request: str, options: dict[str, Any], *,
        quota: Quota = NO_QUOTA,
    ) -> TaskRow:
        """``create_task`` inside ``conn``, a transaction from ``write()``. The task's owner and
        team (``server.auth``) are the options' ``owner`` and ``team``, kept in columns too."""
        now = time.time()
        options = admit_submission(conn, tasks_table, quota, options)
        owner, team = options.get("owner"), options.get("team")
        result = conn.execute(
            tasks_table.insert().values(
                owner=str(owner) if owner else None,
                team=str(team) if team else None,
                instruction=instruction,
                device_request=device_request,
                status="queued",
                options=options,
                steps=0,
                prompt_tokens=0,
                completion_tokens=0,
                cost_usd=0.0,
                cancel_requested=False,
                created_at=now,
            )
        )
        task_id = inserted_id(result)
        self._insert_event(conn, task_id, "status", {"status": "queued"}, now)
        return task_row(conn.execute(sa.select(tasks_table).where(tasks_table.c.id == task_id)).one())

    @contextlib.contextmanager
    def _immediate(self) -> Iterator[sa.Connection]:
        """A write transaction; on SQLite ``BEGIN IMMEDIATE`` (the write lock from the start,
        so what it reads cannot change before it commits), elsewhere the usual ``BEGIN``."""
        if self.engine.dialect.name != "sqlite":
            with self.engine.begin() as conn:
                yield conn
            return
        with self.engine.connect() as conn:
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # pysqlite then issues no BEGIN of its own
            yield conn
            conn.commit()  # an exception above leaves it uncommitted: connect() rolls it back

    def get_task(self, task_id: int) -> TaskRow | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(tasks_table).where(tasks_table.c.id == task_id)).one_or_none()
        return task_row(row) if row is not None else None

    def list_tasks(
        self,
        *,
        status: str | None = None,
        device: str | None = None,
        offset: int = 0,
        limit: int = 50,
        visible_to: tuple[str, str | None] | None = None,
    ) -> tuple[list[TaskRow], int]:
        """A page of tasks, newest first; with ``visible_to`` = (owner, team), only the tasks
        of that owner or of that team (``server.auth.Principal.sees``)."""
        query = sa.select(tasks_table)
        count = sa.select(sa.func.count()).select_from(tasks_table)
        conditions = []
        if visible_to is not None:
            owner, team = visible_to
            mine = tasks_table.c.owner == owner
            conditions.append(sa.or_(mine, tasks_table.c.team == team) if team else mine)
        if status is not None:
            conditions.append(tasks_table.c.status == status)
        if device is not None:
            conditions.append(
                sa.or_(tasks_table.c.device == device, tasks_table.c.device_request == device)
            )
        for condition in conditions:
            query = query.where(condition)
            count = count.where(condition)
        query = query.order_by(tasks_table.c.id.desc()).offset(offset).limit(limit)
        with self.engine.connect() as conn:
            rows = [task_row(r) for r in conn.execute(query)]
            total = int(conn.execute(count).scalar_one())
        return rows, total

    def queued_tasks(self) -> list[TaskRow]:
        """Queued tasks, oldest first (the scheduler's queue)."""
        query = (
            sa.select(tasks_table).where(tasks_table.c.status == "queued").order_by(tasks_table.c.id)
        )
        with self.engine.connect() as conn:
            return [task_row(r) for r in conn.execute(query)]

    def count_active_of(self, owner: str, statuses: frozenset[str] = ACTIVE_STATUSES) -> int:
        """Tasks submitted with ``owner``'s token in ``statuses`` (the per-token quota)."""
        query = sa.select(sa.func.count()).select_from(tasks_table).where(
            tasks_table.c.status.in_(sorted(statuses)), tasks_table.c.owner == owner
        )
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def quota_waiting_reason(self, task: TaskRow) -> str | None:
        """Why ``task``, queued, waits for its token's quota (``server.quota.waiting_reason``)."""
        with self.engine.connect() as conn:
            return waiting_reason(conn, tasks_table, task.owner, task.options)

    def count_by_status(self) -> dict[str, int]:
        query = sa.select(tasks_table.c.status, sa.func.count()).group_by(tasks_table.c.status)
        with self.engine.connect() as conn:
            return {status: int(n) for status, n in conn.execute(query)}

    def claim(self, task_id: int, serial: str, trajectory_dir: Path) -> bool:
        """queued -> running on ``serial``; False when someone else got there first. A task
        submitted under ``server.over_quota = "wait"`` starts only while its owner has fewer
        tasks running than the limit stored with it, decided in this transaction (raises
        ``QuotaExceeded``), whatever quota settings the claiming process has."""
        with self._write_lock, self._immediate() as conn:
            admit_claim(conn, tasks_table, task_id)
            # the time once the lock is held: a claim that waited behind the finish of the run
            # it follows starts after that run's finished_at, as it did
            now = time.time()
            result = conn.execute(
                tasks_table.update()
                .where(tasks_table.c.id == task_id, tasks_table.c.status == "queued")
                .values(
                    status="running",
                    device=serial,
                    started_at=now,
                    instance=self.instance,
                    trajectory_dir=str(trajectory_dir),
                )
            )
            if result.rowcount != 1:
                return False
            self._insert_event(conn, task_id, "status", {"status": "running", "device": serial}, now)
        return True

    def cancel_queued(self, task_id: int) -> bool:
        """queued -> cancelled, its result ``CANCELLED_WHILE_QUEUED`` (what its ``task_finished``
        webhook says, ``server.runner.tell_unrun_end``); False when the task is no longer queued."""
        return self._finish_if(task_id, {"queued"}, "cancelled", None, result=dict(CANCELLED_WHILE_QUEUED))

    def refuse_queued(self, task_id: int, error: dict[str, Any]) -> bool:
        """queued -> error, never run (its owner may no longer submit: ``server.auth.submit_refusal``);
        False when the task is no longer queued."""
        return self._finish_if(task_id, {"queued"}, "error", error)

    def request_cancel(self, task_id: int) -> bool:
        """Flag a running task for cancel (the instance running it acts on the flag)."""
        with self._write_lock, self.engine.begin() as conn:
            result = conn.execute(
                tasks_table.update()
                .where(tasks_table.c.id == task_id, tasks_table.c.status.in_(STARTED_STATUSES))
                .values(cancel_requested=True)
            )
            if result.rowcount != 1:
                return False
            self._insert_event(conn, task_id, "cancel_requested", {}, time.time())
        return True

    def cancel_requests(self, instance: str) -> list[int]:
        """Running tasks of ``instance`` that someone asked to cancel."""
        query = sa.select(tasks_table.c.id).where(
            tasks_table.c.status.in_(STARTED_STATUSES),
            tasks_table.c.instance == instance,
            tasks_table.c.cancel_requested.is_(True),
        )
        with self.engine.connect() as conn:
            return [int(r[0]) for r in conn.execute(query)]

    def finish(
        self,
        task_id: int,
        status: str,
        *,
        error: dict[str, Any] | None = None,
        result: dict[str, Any] | None = None,
        steps: int | None = None,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost_usd: float = 0.0,
        trajectory_dir: str | None = None,
    ) -> bool:
        values: dict[str, Any] = {
            "prompt_tokens": int(prompt_tokens),
            "completion_tokens": int(completion_tokens),
            "cost_usd": float(cost_usd),
            "result": json.loads(json.dumps(result, default=str)) if result is not None else None,
        }
        if steps is not None:
            values["steps"] = int(steps)
        if trajectory_dir is not None:
            values["trajectory_dir"] = trajectory_dir
        return self._finish_if(task_id, set(STARTED_STATUSES), status, error, **values)

    def interrupt_running(self, *, instance: str | None = None) -> list[int]:
        """Tasks left running by a dead process become ``interrupted`` (at startup)."""
        query = sa.select(tasks_table.c.id).where(tasks_table.c.status.in_(STARTED_STATUSES))
        if instance is not None:
            query = query.where(tasks_table.c.instance == instance)
        with self.engine.connect() as conn:
            ids = [int(r[0]) for r in conn.execute(query)]
        error = {"type": "Interrupted", "message": "the server stopped while this task was running"}
        return [i for i in ids if self._finish_if(i, set(STARTED_STATUSES), "interrupted", error)]

    def set_waiting(self, task_id: int, waiting: bool) -> bool:
        """running <-> waiting_for_user (a run paused for its person, server/people.py)."""
        before, after = ("running", "waiting_for_user") if waiting else ("waiting_for_user", "running")
        with self._write_lock, self.engine.begin() as conn:
            result = conn.execute(
                tasks_table.update()
                .where(tasks_table.c.id == task_id, tasks_table.c.status == before)
                .values(status=after)
            )
            if result.rowcount != 1:
                return False
            self._insert_event(conn, task_id, "status", {"status": after}, time.time())
        return True

    def add_event_if(self, task_id: int, status: str, kind: str, data: dict[str, Any]) -> int | None:
        """An event, only while the task is in ``status`` (a person's reply reaches only a
        task that waits for one); None otherwise."""
        with self._write_lock, self.engine.begin() as conn:
            now = conn.execute(sa.select(tasks_table.c.status).where(tasks_table.c.id == task_id)).scalar_one_or_none()
            if now != status:
                return None
            return self._insert_event(conn, task_id, kind, data, time.time())

    def last_event(self, task_id: int, kind: str) -> EventRow | None:
        query = (
            sa.select(events_table)
            .where(events_table.c.task_id == task_id, events_table.c.kind == kind)
            .order_by(events_table.c.id.desc())
            .limit(1)
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).one_or_none()
        return event_row(row) if row is not None else None

    def set_steps(self, task_id: int, steps: int) -> None:
        with self._write_lock, self.engine.begin() as conn:
            conn.execute(tasks_table.update().where(tasks_table.c.id == task_id).values(steps=steps))

    def _finish_if(
        self,
        task_id: int,
        allowed: set[str],
        status: str,
        error: dict[str, Any] | None,
        **values: Any,
    ) -> bool:
        with self._write_lock, self.engine.begin() as conn:
            now = time.time()  # once the lock is held, as a claim's start
            result = conn.execute(
                tasks_table.update()
                .where(tasks_table.c.id == task_id, tasks_table.c.status.in_(sorted(allowed)))
                .values(status=status, error=error, finished_at=now, **values)
            )
            if result.rowcount != 1:
                return False
            data: dict[str, Any] = {"status": status}
            if error is not None:
                data["error"] = error
            self._insert_event(conn, task_id, "status", data, now)
        return True

    # --- events --------------------------------------------------------------------

    def add_event(self, task_id: int, kind: str, data: dict[str, Any], *, steps: int | None = None) -> int:
        """Store an event; with ``steps``, the task's step count in the same transaction."""
        with self._write_lock, self.engine.begin() as conn:
            if steps is not None:
                conn.execute(tasks_table.update().where(tasks_table.c.id == task_id).values(steps=steps))
            return self._insert_event(conn, task_id, kind, data, time.time())

    def events_after(self, task_id: int, after_id: int = 0, limit: int = 500) -> list[EventRow]:
        query = (
            sa.select(events_table)
            .where(events_table.c.task_id == task_id, events_table.c.id > after_id)
            .order_by(events_table.c.id)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [event_row(r) for r in conn.execute(query)]

    def step_event(self, task_id: int, step: int) -> EventRow | None:
        """The ``step``-th (1-based) ``step_finished`` event of the task, if there is one."""
        if step < 1:
            return None
        query = (
            sa.select(events_table)
            .where(events_table.c.task_id == task_id, events_table.c.kind == "step_finished")
            .order_by(events_table.c.id)
            .offset(step - 1)
            .limit(1)
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).one_or_none()
        return event_row(row) if row is not None else None

    @staticmethod
    def _insert_event(conn: sa.Connection, task_id: int, kind: str, data: dict[str, Any], now: float) -> int:
        # Round-trip through JSON now so that a value the database cannot store fails
        # here, in the writer, and not later in a reader.
        data = cap_strings(json.loads(json.dumps(data, default=str)))
        result = conn.execute(
            events_table.insert().values(task_id=task_id, kind=kind, data=data, created_at=now)
        )
        return inserted_id(result)

    # --- audit ---------------------------------------------------------------------

    def audit(self, actor: str, role: str, action: str, resource: str, detail: dict[str, Any] | None = None) -> int:
        """One row of the audit trail: ``actor`` (a token's name) with ``role`` did ``action`` to
        ``resource`` ("task 12", "schedule 3", "cache", "device 10.0.0.5:5555")."""
        values = cap_strings(json.loads(json.dumps(detail or {}, default=str)), 2000)
        with self._write_lock, self.engine.begin() as conn:
            result = conn.execute(audit_table.insert().values(
                at=time.time(), actor=actor[:100], role=role, action=action[:64], resource=resource[:200],
                detail=values))
            return inserted_id(result)

    def audit_page(self, *, offset: int = 0, limit: int = 50) -> tuple[list[AuditRow], int]:
        """Audit rows, newest first, and how many there are."""
        query = sa.select(audit_table).order_by(audit_table.c.id.desc()).offset(offset).limit(limit)
        with self.engine.connect() as conn:
            rows = [AuditRow(**r._asdict()) for r in conn.execute(query)]
            total = int(conn.execute(sa.select(sa.func.count()).select_from(audit_table)).scalar_one())
        return rows, total

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))

