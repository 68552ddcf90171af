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

May import: sqlalchemy, the standard library, ``mobile_agent.settings``.
"""

from __future__ import annotations

from collections.abc import Collection

import sqlalchemy as sa

from mobile_agent.settings import ServerSettings

__all__ = ["QUOTA_LOCK_CLASS", "QuotaExceeded", "admit", "quota_reason", "running_limit", "submit_limit"]

# the first key of the two-key advisory lock: "quota" among this database's advisory locks
QUOTA_LOCK_CLASS = 7_272_014


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
    active = conn.execute(
        sa.select(sa.func.count())
        .select_from(tasks)
        .where(tasks.c.status.in_(sorted(active_statuses)), tasks.c.options["owner"].as_string() == owner)
    ).scalar_one()
    if int(active) >= limit:
        raise QuotaExceeded(owner, int(active), limit)


def submit_limit(server: ServerSettings) -> int:
    """The limit a submission is checked against (0: none)."""
    return server.max_active_per_token if server.over_quota == "refuse" else 0


def running_limit(server: ServerSettings) -> int:
    """The limit a claim is checked against (0: none)."""
    return server.max_active_per_token if server.over_quota == "wait" else 0


def quota_reason(owner: str, running: int, limit: int) -> str | None:
    """Why a queued task of ``owner`` waits, when its quota is what holds it."""
    if not limit or running < limit:
        return None
    return (f"waits for its token's quota: {owner!r} has {running} task{'s' if running != 1 else ''} running, "
            f"its limit (server.max_active_per_token); it starts when one of them ends")
