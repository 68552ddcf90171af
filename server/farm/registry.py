"""The farm's own tables: hosts with their heartbeat, phones with their properties and owner,
the route queues that tasks asked for, recurring schedules and what became of their occurrences. Beside the store's tasks/events
in the same database (SQLAlchemy Core; the job rows themselves belong to procrastinate).

A phone belongs to one host. ``claim_phones`` takes a phone only if nobody has it or its
owner's heartbeat is older than the host timeout, in one conditional upsert, so two workers
configured with the same serial cannot both drive it: one wins, the other is told who has it.

May import: sqlalchemy, ``server.farm.routing``, the standard library.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert

from server.farm.routing import Route, queue_for

__all__ = ["FarmRegistry", "PhoneRow", "farm_metadata"]

farm_metadata = sa.MetaData()

hosts_table = sa.Table(
    "farm_hosts",
    farm_metadata,
    sa.Column("name", sa.String(100), primary_key=True),
    sa.Column("labels", sa.JSON, nullable=False),
    sa.Column("pid", sa.Integer, nullable=True),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("last_seen", sa.Float, nullable=False),
    sa.Column("stopped", sa.Boolean, nullable=False, default=False),
)

phones_table = sa.Table(
    "farm_phones",
    farm_metadata,
    sa.Column("serial", sa.String(200), primary_key=True),
    sa.Column("host", sa.String(100), nullable=False, index=True),
    sa.Column("state", sa.String(32), nullable=False),
    sa.Column("properties", sa.JSON, nullable=False),
    sa.Column("task_id", sa.Integer, nullable=True),
    sa.Column("updated_at", sa.Float, nullable=False),
    # another interface's run holds it (its PhoneLease: mobile-agent run, MCP, the pytest plugin), as its
    # worker last saw; the API server cannot look at another host's locks (NULL: an older worker, not held)
    sa.Column("held", sa.Boolean, nullable=True),
)

routes_table = sa.Table(
    "farm_routes",
    farm_metadata,
    sa.Column("queue", sa.String(64), primary_key=True),
    sa.Column("spec", sa.JSON, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)

schedules_table = sa.Table(
    "farm_schedules",
    farm_metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("cron", sa.String(200), nullable=True),
    sa.Column("interval_s", sa.Float, nullable=True),
    sa.Column("task", sa.JSON, nullable=False),
    sa.Column("owner", sa.String(64), nullable=True),
    sa.Column("enabled", sa.Boolean, nullable=False, default=True),
    sa.Column("next_at", sa.Float, nullable=False, index=True),
    sa.Column("last_task_id", sa.Integer, nullable=True),
    sa.Column("runs", sa.Integer, nullable=False, default=0),
    sa.Column("created_at", sa.Float, nullable=False),
)

# What became of each occurrence of a schedule: "queued" (``task_id`` its task) or "skipped"
# (over its token's quota under server.over_quota = "refuse"); ``reason`` says why, for a skip
# or a task that waits for its token's quota. A table of its own, so an existing database
# gets it with CREATE TABLE IF NOT EXISTS (no column is added to farm_schedules).
schedule_runs_table = sa.Table(
    "farm_schedule_runs",
    farm_metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("schedule_id", sa.Integer, nullable=False, index=True),
    sa.Column("due_at", sa.Float, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("outcome", sa.String(16), nullable=False),
    sa.Column("task_id", sa.Integer, nullable=True),
    sa.Column("reason", sa.Text, nullable=True),
)


@dataclass(frozen=True)
class PhoneRow:
    serial: str
    host: str
    state: str
    properties: dict[str, str]
    task_id: int | None
    updated_at: float
    host_lost: bool = False
    host_seen: float = 0.0
    held: bool = False  # by another interface's run on its host (``FarmHost._note_holder``)

    @property
    def public_state(self) -> str:
        """free / busy / offline (or adb's word: unauthorized, gone, lost) / host lost."""
        if self.host_lost:
            return "host lost"
        if self.state != "device":
            return self.state
        return "busy" if self.task_id is not None or self.held else "free"

    def routable(self) -> dict[str, str]:
        return {**self.properties, "serial": self.serial, "host": self.host}


@dataclass
class FarmRegistry:
    engine: sa.Engine
    host_timeout_s: float = 30.0
    _created: bool = field(default=False, repr=False)

    def create_tables(self) -> None:
        if not self._created:
            from server.db import create_tables

            create_tables(farm_metadata, self.engine)
            self._created = True

    # --- hosts --------------------------------------------------------------------

    def heartbeat(self, host: str, labels: dict[str, str], pid: int | None, *, starting: bool = False) -> None:
        now = time.time()
        values: dict[str, Any] = {"labels": labels, "pid": pid, "last_seen": now, "stopped": False}
        if starting:
            values["started_at"] = now
        stmt = pg_insert(hosts_table).values({"name": host, "started_at": now, **values})
        stmt = stmt.on_conflict_do_update(index_elements=["name"], set_=values)
        with self.engine.begin() as conn:
            conn.execute(stmt)

    def host_stopped(self, host: str) -> None:
        """A clean stop: its phones show offline at once (no timeout to wait for)."""
        with self.engine.begin() as conn:
            conn.execute(hosts_table.update().where(hosts_table.c.name == host).values(stopped=True))
            conn.execute(phones_table.update().where(phones_table.c.host == host)
                         .values(state="offline", task_id=None, held=None, updated_at=time.time()))

    def reset_host(self, host: str) -> None:
        """A (re)starting worker: none of its phones runs anything yet, nor is seen held."""
        with self.engine.begin() as conn:
            conn.execute(phones_table.update().where(phones_table.c.host == host).values(task_id=None, held=None))

    def lost_hosts(self) -> list[str]:
        cutoff = time.time() - self.host_timeout_s
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(hosts_table.c.name).where(hosts_table.c.last_seen < cutoff,
                                                                   hosts_table.c.stopped.is_(False)))
            return [r[0] for r in rows]

    # --- phones -------------------------------------------------------------------

    def claim_phones(self, host: str, phones: list[tuple[str, str, dict[str, str]]]) -> dict[str, str]:
        """Register (serial, state, properties) for ``host``. Returns the refused serials with
        the reason: another live host drives them."""
        now = time.time()
        cutoff = now - self.host_timeout_s
        refused: dict[str, str] = {}
        with self.engine.begin() as conn:
            for serial, state, properties in phones:
                owner_alive = (
                    sa.select(hosts_table.c.name)
                    .where(hosts_table.c.name == phones_table.c.host, hosts_table.c.last_seen >= cutoff,
                           hosts_table.c.stopped.is_(False))
                    .exists()
                )
                insert = pg_insert(phones_table).values(
                    serial=serial, host=host, state=state, properties=properties, task_id=None, updated_at=now
                )
                upsert = insert.on_conflict_do_update(
                    index_elements=["serial"],
                    set_={"host": host, "state": state, "properties": properties, "updated_at": now,
                          # a phone taken over from a lost host: its new worker says whether it is held
                          "held": sa.case((phones_table.c.host == host, phones_table.c.held), else_=None)},
                    where=sa.or_(phones_table.c.host == host, ~owner_alive),
                ).returning(phones_table.c.serial)
                if conn.execute(upsert).first() is None:
                    owner = conn.execute(sa.select(phones_table.c.host).where(phones_table.c.serial == serial)).scalar()
                    refused[serial] = f"phone {serial} is already driven by host {owner!r}"
        return refused

    def set_phone_state(self, host: str, serial: str, state: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(phones_table.update().where(phones_table.c.serial == serial, phones_table.c.host == host)
                         .values(state=state, updated_at=time.time()))

    def set_phone_task(self, host: str, serial: str, task_id: int | None) -> None:
        with self.engine.begin() as conn:
            conn.execute(phones_table.update().where(phones_table.c.serial == serial, phones_table.c.host == host)
                         .values(task_id=task_id, updated_at=time.time()))

    def set_phone_held(self, host: str, serial: str, held: bool) -> None:
        with self.engine.begin() as conn:
            conn.execute(phones_table.update().where(phones_table.c.serial == serial, phones_table.c.host == host)
                         .values(held=held, updated_at=time.time()))

    def phones(self, serial: str | None = None) -> list[PhoneRow]:
        """Every phone, by host and serial; with ``serial``, that phone's row alone (or none)."""
        now = time.time()
        query = sa.select(phones_table, hosts_table.c.last_seen, hosts_table.c.stopped).join(
            hosts_table, hosts_table.c.name == phones_table.c.host, isouter=True
        ).order_by(phones_table.c.host, phones_table.c.serial)
        if serial is not None:
            query = query.where(phones_table.c.serial == serial)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        out = []
        for row in rows:
            seen = row.last_seen or 0.0
            lost = not row.stopped and now - seen > self.host_timeout_s
            out.append(PhoneRow(row.serial, row.host, row.state, dict(row.properties), row.task_id, row.updated_at,
                                host_lost=lost, host_seen=seen, held=bool(row.held)))
        return out

    def phone(self, serial: str) -> PhoneRow | None:
        """The phone's row (one row read, not the whole table), or None."""
        return next(iter(self.phones(serial)), None)

    # --- routes -------------------------------------------------------------------

    def route_queue(self, route: Route) -> str:
        """The queue of ``route``, recorded so that the workers of matching phones listen on it."""
        queue = queue_for(route)
        if route.is_any or queue.startswith("p."):
            return queue
        stmt = pg_insert(routes_table).values(queue=queue, spec=route.spec(), created_at=time.time())
        with self.engine.begin() as conn:
            conn.execute(stmt.on_conflict_do_nothing(index_elements=["queue"]))
        return queue

    def routes(self) -> dict[str, Route]:
        with self.engine.connect() as conn:
            return {r.queue: Route.from_spec(r.spec) for r in conn.execute(sa.select(routes_table))}
