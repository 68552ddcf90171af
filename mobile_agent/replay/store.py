"""Where cached plans live: one table, in a SQLite file by default (any SQLAlchemy URL
works, so a farm can keep them in its shared database).

Each plan belongs to a namespace (``cache.namespace``): a run replays and adds to its own
namespace's plans only, so the service keeps one token's (or team's) plans from another's
runs; "" is the local user's (``mobile-agent run``), and an admin's ``cache.shared`` puts every
task in it. ``PlanStore(url, namespace=None)`` reads and deletes across every namespace.

SQLAlchemy Core rather than sqlite3: the service already uses it, and a database URL
is the one setting that moves the cache into Postgres.

May import: SQLAlchemy, the standard library and this package.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import threading
import time
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from mobile_agent.replay.fingerprint import ScreenFingerprint
from mobile_agent.replay.plans import CachedPlan, CachedStep

__all__ = ["PlanStore", "default_cache_url"]

_metadata = sa.MetaData()
_plans = sa.Table(
    "cached_plans",
    _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("template", sa.Text, nullable=False, index=True),
    sa.Column("instruction", sa.Text, nullable=False, default=""),
    sa.Column("source_run", sa.Text, nullable=False, default=""),
    sa.Column("steps", sa.Text, nullable=False),
    sa.Column("final", sa.Text, nullable=False),
    sa.Column("uses", sa.Integer, nullable=False, default=0),
    sa.Column("successes", sa.Integer, nullable=False, default=0),
    sa.Column("failures", sa.Integer, nullable=False, default=0),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("namespace", sa.String(200), nullable=False, default="", server_default="", index=True),
    sa.Column("used_at", sa.Float, nullable=True),  # the last replay; None: never replayed (retention)
)


_Filtered = TypeVar("_Filtered", sa.Select[Any], sa.Delete)


def _add_namespace(engine: sa.engine.Engine) -> None:
    """A cache file from before namespaces gets the column (and its index); its plans become the
    local user's. One from before ``used_at`` gets it too (NULL: counted from ``created_at``)."""
    columns = {c["name"] for c in sa.inspect(engine).get_columns("cached_plans")}
    for name, ddl in (("namespace", "namespace VARCHAR(200) NOT NULL DEFAULT ''"), ("used_at", "used_at FLOAT")):
        if name in columns:
            continue
        with contextlib.suppress(sa.exc.OperationalError, sa.exc.ProgrammingError):  # another process added it
            with engine.begin() as conn:
                conn.exec_driver_sql(f"ALTER TABLE cached_plans ADD COLUMN {ddl}")
    # create_all makes a table's indexes only with the table: an older file gains the namespace's
    # index here (every lookup filters by namespace)
    indexed = {index["name"] for index in sa.inspect(engine).get_indexes("cached_plans")}
    for index in _plans.indexes:
        if index.name not in indexed:
            with contextlib.suppress(sa.exc.OperationalError, sa.exc.ProgrammingError):  # a racing process's
                index.create(engine, checkfirst=True)


def default_cache_url(output_dir: Path) -> str:
    return f"sqlite:///{Path(output_dir) / 'plan-cache.sqlite3'}"


class PlanStore:
    """Cached plans by template; thread-safe (one engine, short transactions)."""

    _engines: dict[str, sa.engine.Engine] = {}
    _engines_lock = threading.Lock()

    def __init__(self, url: str, namespace: str | None = "") -> None:
        self.url = url
        self.namespace = namespace
        with self._engines_lock:
            engine = self._engines.get(url)
            if engine is None:
                if url.startswith("sqlite:///"):
                    Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
                engine = sa.create_engine(url, future=True)
                _metadata.create_all(engine)
                _add_namespace(engine)
                self._engines[url] = engine
        self.engine = engine

    def save(self, plan: CachedPlan) -> int:
        """Store ``plan`` as the newest plan of its template; its id."""
        row = {
            "template": plan.template,
            "instruction": plan.instruction,
            "source_run": plan.source_run,
            "steps": json.dumps(plan.steps_json(), ensure_ascii=False),
            "final": json.dumps(plan.final.to_dict(), ensure_ascii=False),
            "uses": 0,
            "successes": 0,
            "failures": 0,
            "created_at": time.time(),
            "namespace": self.namespace or "",
        }
        with self.engine.begin() as conn:
            result = conn.execute(_plans.insert().values(**row))
            key = result.inserted_primary_key
            return int(key[0]) if key else 0

    def find(self, template: str) -> CachedPlan | None:
        """The newest trusted plan of ``template``."""
        plans = self.find_all(template, limit=1)
        return plans[0] if plans else None

    def find_all(self, template: str, limit: int = 10) -> list[CachedPlan]:
        """The trusted plans of ``template``, newest first (they may start on different screens)."""
        query = self._mine(_plans.select().where(_plans.c.template == template).order_by(_plans.c.id.desc()))
        found: list[CachedPlan] = []
        with self.engine.connect() as conn:
            for row in conn.execute(query):
                plan = self._plan(row._mapping)
                if plan.trusted:
                    found.append(plan)
                    if len(found) >= limit:
                        break
        return found

    def get(self, plan_id: int) -> CachedPlan | None:
        with self.engine.connect() as conn:
            row = conn.execute(self._mine(_plans.select().where(_plans.c.id == plan_id))).first()
        return self._plan(row._mapping) if row is not None else None

    def list(self, limit: int = 100) -> list[CachedPlan]:
        query = self._mine(_plans.select().order_by(_plans.c.id.desc()).limit(limit))
        with self.engine.connect() as conn:
            return [self._plan(row._mapping) for row in conn.execute(query)]

    def note_use(self, plan_id: int, *, succeeded: bool) -> None:
        column = _plans.c.successes if succeeded else _plans.c.failures
        with self.engine.begin() as conn:
            conn.execute(
                _plans.update().where(_plans.c.id == plan_id).values(
                    {_plans.c.uses: _plans.c.uses + 1, column: column + 1, _plans.c.used_at: time.time()})
            )

    def unused_since(self, before: float) -> builtins.list[tuple[int, str, float]]:
        """(id, template, last use or creation) of the plans not replayed since ``before``, oldest first."""
        last = sa.func.coalesce(_plans.c.used_at, _plans.c.created_at)
        query = self._mine(sa.select(_plans.c.id, _plans.c.template, last).where(last < before).order_by(last))
        with self.engine.connect() as conn:
            return [(int(r[0]), str(r[1]), float(r[2])) for r in conn.execute(query)]

    def forget_unused(self, before: float) -> int:
        """Delete the plans not replayed since ``before`` (retention); how many went."""
        last = sa.func.coalesce(_plans.c.used_at, _plans.c.created_at)
        with self.engine.begin() as conn:
            return int(conn.execute(self._mine(_plans.delete().where(last < before))).rowcount or 0)

    def delete(self, plan_id: int) -> bool:
        with self.engine.begin() as conn:
            return conn.execute(self._mine(_plans.delete().where(_plans.c.id == plan_id))).rowcount > 0

    def clear(self) -> int:
        with self.engine.begin() as conn:
            return int(conn.execute(self._mine(_plans.delete())).rowcount or 0)

    def _mine(self, statement: _Filtered) -> _Filtered:
        """``statement`` held to this store's namespace (all of them for None)."""
        if self.namespace is None:
            return statement
        return statement.where(_plans.c.namespace == self.namespace)

    @staticmethod
    def _plan(row: Any) -> CachedPlan:
        return CachedPlan(
            id=int(row["id"]),
            template=str(row["template"]),
            instruction=str(row["instruction"]),
            source_run=str(row["source_run"]),
            steps=tuple(CachedStep.from_dict(step) for step in json.loads(row["steps"])),
            final=ScreenFingerprint.from_dict(json.loads(row["final"])),
            uses=int(row["uses"]),
            successes=int(row["successes"]),
            failures=int(row["failures"]),
            created_at=float(row["created_at"]),
        )
