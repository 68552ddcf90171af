"""Durable state of the service: tasks and their events, in SQL (SQLAlchemy 2.0 Core).

SQLite (WAL, busy timeout) is the embedded default; any SQLAlchemy URL works, so several
instances can share one Postgres. Trajectories stay on disk; rows keep their path.

The store is the source of truth for everything the API shows: the scheduler claims
queued tasks with a conditional UPDATE (so two instances never run one task), and the
event stream replays rows (so a client that reconnects loses nothing).

A URL the store cannot serve (malformed, an unknown or missing driver, an in-memory SQLite
database, a database that cannot be opened) is a ``ConfigError`` naming it, password hidden.

May import: sqlalchemy, the standard library, ``server.schemas``, ``server.quota``, ``mobile_agent.errors``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from mobile_agent.errors import ConfigError
from server.quota import admit

__all__ = [
    "ACTIVE_STATUSES",
    "RUNNING_STATUSES",
    "TERMINAL_STATUSES",
    "EventRow",
    "TaskRow",
    "TaskStore",
    "check_database_url",
]

# queued -> running -> one of the agent's RunStatus values, or cancelled / interrupted.
TERMINAL_STATUSES = frozenset(
    {"completed", "not_completed", "budget_exhausted", "error", "cancelled", "interrupted"}
)
# waiting_for_user: a running task paused for its person (server/people.py); it keeps its phone
ACTIVE_STATUSES = frozenset({"queued", "running", "waiting_for_user"})
RUNNING_STATUSES = frozenset({"running", "waiting_for_user"})  # a phone is taken
_STARTED = ("running", "waiting_for_user")

metadata = sa.MetaData()

tasks_table = sa.Table(
    "tasks",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("instruction", sa.Text, nullable=False),
    sa.Column("device_request", sa.String(200), nullable=False),
    sa.Column("device", sa.String(200), nullable=True),
    sa.Column("status", sa.String(32), nullable=False, index=True),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("error", sa.JSON, nullable=True),
    sa.Column("result", sa.JSON, nullable=True),
    sa.Column("steps", sa.Integer, nullable=False, default=0),
    sa.Column("prompt_tokens", sa.Integer, nullable=False, default=0),
    sa.Column("completion_tokens", sa.Integer, nullable=False, default=0),
    sa.Column("cost_usd", sa.Float, nullable=False, default=0.0),
    sa.Column("trajectory_dir", sa.Text, nullable=True),
    sa.Column("instance", sa.String(100), nullable=True),
    sa.Column("cancel_requested", sa.Boolean, nullable=False, default=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("started_at", sa.Float, nullable=True),
    sa.Column("finished_at", sa.Float, nullable=True),
)

events_table = sa.Table(
    "events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("task_id", sa.Integer, sa.ForeignKey("tasks.id"), nullable=False, index=True),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("data", sa.JSON, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)


@dataclass(frozen=True)
class TaskRow:
    id: int
    instruction: str
    device_request: str
    device: str | None
    status: str
    options: dict[str, Any]
    error: dict[str, Any] | None
    result: dict[str, Any] | None
    steps: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    trajectory_dir: str | None
    instance: str | None
    cancel_requested: bool
    created_at: float
    started_at: float | None
    finished_at: float | None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


@dataclass(frozen=True)
class EventRow:
    id: int
    task_id: int
    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0


def _task(row: sa.Row) -> TaskRow:
    return TaskRow(**row._asdict())


def _event(row: sa.Row) -> EventRow:
    return EventRow(**row._asdict())


class TaskStore:
    """Thread-safe access to tasks and events. Every method is one short transaction."""

    def __init__(self, url: str, *, instance: str = "local") -> None:
        self.url = url
        self.instance = instance
        self.engine = _make_engine(url)
        try:
            _create_all(metadata, self.engine)
        except sa.exc.SQLAlchemyError as exc:
            self.engine.dispose()
            cause = getattr(exc, "orig", None) or exc
            raise ConfigError(
                f"cannot open the database {_shown(url)}: {cause}", setting="server.database_url"
            ) from exc
        # Events of one task get ids in the order they were written; serialize writers
        # in this process so a status change never interleaves a half-written step.
        self._write_lock = threading.Lock()

    def close(self) -> None:
        self.engine.dispose()

    # --- tasks ---------------------------------------------------------------------

    def create_task(
        self, instruction: str, device_request: str, options: dict[str, Any], *, owner_limit: int = 0
    ) -> TaskRow:
        """Store a queued task. With ``owner_limit``, ``options["owner"]`` may have at most that
        many tasks active, decided in this transaction (``server.quota``: raises ``QuotaExceeded``)."""
        now = time.time()
        with self._write_lock, self._immediate() as conn:
            if owner_limit:
                admit(conn, tasks_table, str(options.get("owner")), owner_limit, ACTIVE_STATUSES)
            result = conn.execute(
                tasks_table.insert().values(
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
            task_id = int(result.inserted_primary_key[0])
            self._insert_event(conn, task_id, "status", {"status": "queued"}, now)
            row = conn.execute(sa.select(tasks_table).where(tasks_table.c.id == task_id)).one()
        return _task(row)

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
        return _task(row) if row is not None else None

    def list_tasks(
        self,
        *,
        status: str | None = None,
        device: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[TaskRow], int]:
        query = sa.select(tasks_table)
        count = sa.select(sa.func.count()).select_from(tasks_table)
        conditions = []
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
            rows = [_task(r) for r in conn.execute(query)]
            total = int(conn.execute(count).scalar_one())
        return rows, total

    def queued_tasks(self) -> list[TaskRow]:
        """Queued tasks, oldest first (the scheduler's queue)."""
        query = (
            sa.select(tasks_table).where(tasks_table.c.status == "queued").order_by(tasks_table.c.id)
        )
        with self.engine.connect() as conn:
            return [_task(r) for r in conn.execute(query)]

    def count_active_of(self, owner: str, statuses: frozenset[str] = ACTIVE_STATUSES) -> int:
        """Tasks submitted with ``owner``'s token in ``statuses`` (the per-token quota)."""
        query = sa.select(sa.func.count()).select_from(tasks_table).where(
            tasks_table.c.status.in_(sorted(statuses)), tasks_table.c.options["owner"].as_string() == owner
        )
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def count_by_status(self) -> dict[str, int]:
        query = sa.select(tasks_table.c.status, sa.func.count()).group_by(tasks_table.c.status)
        with self.engine.connect() as conn:
            return {status: int(n) for status, n in conn.execute(query)}

    def claim(self, task_id: int, serial: str, trajectory_dir: Path, *, owner_limit: int = 0) -> bool:
        """queued -> running on ``serial``; False when someone else got there first. With
        ``owner_limit`` (``server.over_quota = "wait"``), the task's owner may have at most that
        many tasks running, decided in this transaction (raises ``QuotaExceeded``)."""
        now = time.time()
        with self._write_lock, self._immediate() as conn:
            if owner_limit:
                owner = conn.execute(
                    sa.select(tasks_table.c.options["owner"].as_string()).where(tasks_table.c.id == task_id)
                ).scalar()
                if owner:
                    admit(conn, tasks_table, owner, owner_limit, RUNNING_STATUSES)
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
        """queued -> cancelled; False when the task is no longer queued."""
        return self._finish_if(task_id, {"queued"}, "cancelled", None)

    def request_cancel(self, task_id: int) -> bool:
        """Flag a running task for cancel (the instance running it acts on the flag)."""
        with self._write_lock, self.engine.begin() as conn:
            result = conn.execute(
                tasks_table.update()
                .where(tasks_table.c.id == task_id, tasks_table.c.status.in_(_STARTED))
                .values(cancel_requested=True)
            )
            if result.rowcount != 1:
                return False
            self._insert_event(conn, task_id, "cancel_requested", {}, time.time())
        return True

    def cancel_requests(self, instance: str) -> list[int]:
        """Running tasks of ``instance`` that someone asked to cancel."""
        query = sa.select(tasks_table.c.id).where(
            tasks_table.c.status.in_(_STARTED),
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
        return self._finish_if(task_id, set(_STARTED), status, error, **values)

    def interrupt_running(self, *, instance: str | None = None) -> list[int]:
        """Tasks left running by a dead process become ``interrupted`` (at startup)."""
        query = sa.select(tasks_table.c.id).where(tasks_table.c.status.in_(_STARTED))
        if instance is not None:
            query = query.where(tasks_table.c.instance == instance)
        with self.engine.connect() as conn:
            ids = [int(r[0]) for r in conn.execute(query)]
        error = {"type": "Interrupted", "message": "the server stopped while this task was running"}
        return [i for i in ids if self._finish_if(i, set(_STARTED), "interrupted", error)]

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
        return _event(row) if row is not None else None

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
        now = time.time()
        with self._write_lock, self.engine.begin() as conn:
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
            return [_event(r) for r in conn.execute(query)]

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
        return _event(row) if row is not None else None

    @staticmethod
    def _insert_event(conn: sa.Connection, task_id: int, kind: str, data: dict[str, Any], now: float) -> int:
        # Round-trip through JSON now so that a value the database cannot store fails
        # here, in the writer, and not later in a reader.
        data = cap_strings(json.loads(json.dumps(data, default=str)))
        result = conn.execute(
            events_table.insert().values(task_id=task_id, kind=kind, data=data, created_at=now)
        )
        return int(result.inserted_primary_key[0])

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))


# The longest text an event keeps per value. The planner caps its replies already
# (planner.max_reply_bytes); this bound holds for whatever else a run reports, so that one
# event can never make the database, the event stream and every reader's memory grow.
MAX_EVENT_TEXT = 32 * 1024


def cap_strings(value: Any, limit: int = MAX_EVENT_TEXT) -> Any:
    """``value`` with every string over ``limit`` characters cut, the cut said at its end."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return f"{value[:limit]}\n[truncated by the server: {len(value) - limit} more characters]"
    if isinstance(value, dict):
        return {k: cap_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [cap_strings(v, limit) for v in value]
    return value


def _create_all(tables: sa.MetaData, engine: Engine) -> None:
    """CREATE TABLE IF NOT EXISTS, safe when several processes start at once on one Postgres:
    the loser of a race to create a table sees a unique violation on the catalog, and finds
    the table there on the next try."""
    for attempt in range(3):
        try:
            tables.create_all(engine)
            return
        except (sa.exc.IntegrityError, sa.exc.ProgrammingError):
            if attempt == 2 or engine.dialect.name != "postgresql":
                raise
            time.sleep(0.2 * (attempt + 1))


def check_database_url(url: str) -> None:
    """Raise ``ConfigError`` now for a URL the store could not serve (no connection is made)."""
    _make_engine(url).dispose()


def _shown(url: str) -> str:
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return repr(url)


def _make_engine(url: str) -> Engine:
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError as exc:
        raise ConfigError(
            f"server.database_url {url!r} is not a database URL (sqlite:///path or postgresql+psycopg://…)",
            setting="server.database_url",
        ) from exc
    if parsed.drivername in ("postgresql", "postgres"):
        # a plain postgresql:// (libpq's own form) means psycopg 3, the driver of the postgres
        # extra; SQLAlchemy's default for it would be psycopg2, which nothing installs
        parsed = parsed.set(drivername="postgresql+psycopg")
        url = parsed.render_as_string(hide_password=False)
    try:
        return _engine(url, parsed)
    except (sa.exc.ArgumentError, ImportError) as exc:  # NoSuchModuleError is an ArgumentError
        hint = " (pip install 'mobile-agent[postgres]')" if parsed.get_backend_name() == "postgresql" else ""
        raise ConfigError(
            f"server.database_url {_shown(url)}: no driver for it{hint}: {exc}", setting="server.database_url"
        ) from exc


def _engine(url: str, parsed: sa.engine.URL) -> Engine:
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if not database or database == ":memory:" or parsed.query.get("mode") == "memory":
            # every pooled connection would open its own empty database
            raise ConfigError(
                "server.database_url: an in-memory SQLite database cannot be shared by the service's "
                "threads; name a file (sqlite:///path/to/tasks.sqlite3)",
                setting="server.database_url",
            )
        try:
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"server.database_url: cannot create the folder of {database}: {exc}", setting="server.database_url"
            ) from exc
        engine = sa.create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=20,
            max_overflow=40,
        )

        @sa.event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return sa.create_engine(url, pool_pre_ping=True, pool_size=20, max_overflow=40)
