"""The per-token quota (``server.max_active_per_token``), decided in the transaction that
stores the task, so that two submissions in the same instant cannot both pass.

The count of a token's active tasks and the insert of its new one must not interleave with
another submission of the same token, on any instance sharing the database:

- PostgreSQL: ``pg_advisory_xact_lock`` on a key made of the token's name (released at commit
  or rollback) serializes the submissions of one token and leaves the others' alone; under
  READ COMMITTED the count, taken after the lock, sees every task the previous holder committed.
- SQLite: the store opens the transaction with ``BEGIN IMMEDIATE``, which takes the database's
  write lock at once (https://www.sqlite.org/lang_transaction.html), so a second writer waits
  until the first has committed and then counts its task.

Two ways to treat a token at its limit (``server.over_quota``): ``refuse`` (the default) counts
its queued and running tasks and answers a submission over the limit with a 429; ``wait``
accepts every submission and counts running tasks only: the claim that would start one more
is refused in the database the same way, and the task stays queued, its ``waiting_reason``
saying so (``quota_reason``).

Under ``wait`` the limit is decided at submission and kept with the task (``options`` key
``RUNNING_LIMIT_OPTION``): whoever claims it later (the embedded scheduler, or a farm worker
that was given no quota settings at all) reads the limit from the row it claims, so the API
server's configuration is the only one, and a worker cannot hold a token to another limit.

May import: sqlalchemy, the standard library, ``mobile_agent.settings``, ``server.tables``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa

from mobile_agent.settings import ServerSettings
from server.tables import ACTIVE_STATUSES, RUNNING_STATUSES

__all__ = [
    "NO_QUOTA",
    "QUOTA_LOCK_CLASS",
    "RUNNING_LIMIT_OPTION",
    "Quota",
    "QuotaExceeded",
    "admit",
    "admit_claim",
    "admit_submission",
    "quota_reason",
    "stored_running_limit",
    "waiting_reason",
]

# the first key of the two-key advisory lock: "quota" among this database's advisory locks
QUOTA_LOCK_CLASS = 7_272_014
# the key of a task's options that keeps its token's running limit (server.over_quota = "wait")
RUNNING_LIMIT_OPTION = "quota_running_limit"


class QuotaExceeded(Exception):
    """The token already has ``limit`` tasks queued or running."""

    def __init__(self, owner: str, active: int, limit: int) -> None:
        super().__init__(f"the token {owner!r} has {active} tasks queued or running (limit {limit})")
        self.owner = owner
        self.active = active
        self.limit = limit


def admit(conn: sa.Connection, tasks: sa.Table, owner: str, limit: int, active_statuses: Collection[str]) -> None:
    """Raise ``QuotaExceeded`` when ``owner`` is at ``limit``; else return holding what keeps
    the decision true until ``conn``'s transaction ends (see the module docstring)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(QUOTA_LOCK_CLASS, sa.func.hashtext(owner))))
    active = _count(conn, tasks, owner, active_statuses)
    if active >= limit:
        raise QuotaExceeded(owner, active, limit)


def _count(conn: sa.Connection, tasks: sa.Table, owner: str, statuses: Collection[str]) -> int:
    return int(conn.execute(
        sa.select(sa.func.count())
        .select_from(tasks)
        .where(tasks.c.status.in_(sorted(statuses)), tasks.c.owner == owner)  # the owner column: what reads check
    ).scalar_one())


@dataclass(frozen=True)
class Quota:
    """What a token's submission is held to: ``server.max_active_per_token`` (0: no limit) and
    ``server.over_quota``."""

    limit: int = 0
    over: Literal["refuse", "wait"] = "refuse"

    @classmethod
    def of(cls, server: ServerSettings) -> Quota:
        return cls(server.max_active_per_token, server.over_quota)


NO_QUOTA = Quota()


def admit_submission(conn: sa.Connection, tasks: sa.Table, quota: Quota, options: dict[str, Any]) -> dict[str, Any]:
    """The options to store a new task with, decided in ``conn``'s transaction: under ``refuse``
    ``QuotaExceeded`` when its owner has ``quota.limit`` tasks queued or running; under ``wait``
    the options with the limit its claim will be held to."""
    owner = options.get("owner")
    if not quota.limit or not owner:
        return options
    if quota.over == "wait":
        return {**options, RUNNING_LIMIT_OPTION: quota.limit}
    admit(conn, tasks, str(owner), quota.limit, ACTIVE_STATUSES)
    return options


def stored_running_limit(options: dict[str, Any]) -> int:
    """The running limit a task was submitted under (0: none)."""
    limit = options.get(RUNNING_LIMIT_OPTION)
    return limit if isinstance(limit, int) and limit > 0 else 0


def admit_claim(conn: sa.Connection, tasks: sa.Table, task_id: int) -> None:
    """Raise ``QuotaExceeded`` when starting task ``task_id`` would run more of its owner's tasks
    than the limit stored with it; decided in ``conn``'s transaction, like a submission."""
    row = conn.execute(sa.select(tasks.c.owner, tasks.c.options).where(tasks.c.id == task_id)).first()
    if row is None or not row.owner or not isinstance(row.options, dict):
        return
    limit = stored_running_limit(row.options)
    if limit:
        admit(conn, tasks, str(row.owner), limit, RUNNING_STATUSES)


def quota_reason(owner: str, running: int, limit: int) -> str | None:
    """Why a queued task of ``owner`` waits, when its quota is what holds it."""
    if not limit or running < limit:
        return None
    return (f"waits for its token's quota: {owner!r} has {running} task{'s' if running != 1 else ''} running, "
            f"its limit (server.max_active_per_token); it starts when one of them ends")


def waiting_reason(conn: sa.Connection, tasks: sa.Table, owner: str | None, options: dict[str, Any]) -> str | None:
    """Why a queued task of ``owner`` (its owner column) stored with ``options`` waits, when the
    running limit stored with it (``server.over_quota = "wait"``) is what holds it; None otherwise."""
    limit = stored_running_limit(options)
    if not limit or not owner:
        return None
    return quota_reason(owner, _count(conn, tasks, owner, RUNNING_STATUSES), limit)
