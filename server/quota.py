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

May import: sqlalchemy, the standard library.
"""

from __future__ import annotations

from collections.abc import Collection

import sqlalchemy as sa

__all__ = ["QUOTA_LOCK_CLASS", "QuotaExceeded", "admit"]

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
