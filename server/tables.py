"""What the store keeps: the ``tasks`` and ``events`` tables, their rows as frozen dataclasses,
the task statuses, and the bound on the text one event may keep.

May import: sqlalchemy, the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

__all__ = [
    "ACTIVE_STATUSES",
    "MAX_EVENT_TEXT",
    "RUNNING_STATUSES",
    "STARTED_STATUSES",
    "TERMINAL_STATUSES",
    "AuditRow",
    "EventRow",
    "TaskRow",
    "audit_table",
    "cap_strings",
    "event_row",
    "events_table",
    "metadata",
    "task_row",
    "tasks_table",
]

# queued -> running -> one of the agent's RunStatus values, or cancelled / interrupted.
TERMINAL_STATUSES = frozenset(
    {"completed", "not_completed", "budget_exhausted", "error", "cancelled", "interrupted"}
)
# waiting_for_user: a running task paused for its person (server/people.py); it keeps its phone
ACTIVE_STATUSES = frozenset({"queued", "running", "waiting_for_user"})
RUNNING_STATUSES = frozenset({"running", "waiting_for_user"})  # a phone is taken
STARTED_STATUSES = ("running", "waiting_for_user")

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
    # whose task this is (server.auth): the token's name and its team; None on rows stored
    # before owners existed, which only admins see
    sa.Column("owner", sa.String(100), nullable=True, index=True),
    sa.Column("team", sa.String(100), nullable=True, index=True),
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


# Who did what (server.audit): one row per submission, reply, cancel, deletion, cache clearing,
# phone connection; admins read it (GET /v1/audit).
audit_table = sa.Table(
    "audit",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", sa.Float, nullable=False, index=True),
    sa.Column("actor", sa.String(100), nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("action", sa.String(64), nullable=False),
    sa.Column("resource", sa.String(200), nullable=False),
    sa.Column("detail", sa.JSON, nullable=False),
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
    owner: str | None = None
    team: str | None = None

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


@dataclass(frozen=True)
class AuditRow:
    id: int
    at: float
    actor: str
    role: str
    action: str
    resource: str
    detail: dict[str, Any]


def task_row(row: sa.Row[Any]) -> TaskRow:
    return TaskRow(**row._asdict())


def event_row(row: sa.Row[Any]) -> EventRow:
    return EventRow(**row._asdict())


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

