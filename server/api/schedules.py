"""/v1/schedules: recurring tasks (a cron expression or an interval); each occurrence is an
ordinary task, with ``options.schedule_id`` naming its schedule.

The task body gets every check a submission gets (``checked_task``) when the schedule is made,
so a schedule that could never run is refused now, not at each occurrence. An occurrence over
its token's quota is skipped (``server.over_quota = "refuse"``) or waits (``"wait"``):
``skipped``/``last_skipped`` and ``/v1/schedules/{id}/history`` show which, and why.

May import: fastapi, pydantic, ``server.*``.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Response, status
from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict, Field, field_validator

from server.api.tasks import checked_task, typed_secrets
from server.auth import Principal, not_found, options_shown_to, team_now
from server.deps import Actor, Authorized, CurrentPrincipal, Service
from server.farm.recurring import (
    HISTORY_KEPT,
    OccurrenceRow,
    ScheduleError,
    ScheduleLimit,
    ScheduleRow,
)
from server.schemas import MAX_ID, TaskCreate
from server.state import ServiceState

__all__ = ["router"]

router = APIRouter(prefix="/schedules", tags=["schedules"], dependencies=[Authorized])

ScheduleId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


class ScheduleCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(..., min_length=1, max_length=200, description="what the schedule is for")
    cron: str | None = Field(None, max_length=200, description='five cron fields, e.g. "0 7 * * 1-5" (UTC)')
    every_s: float | None = Field(
        None, description="or: seconds between runs (at least server.schedule_min_interval_s, at most a year)")
    task: TaskCreate

    @field_validator("name", "cron")
    @classmethod
    def _storable_text(cls, value: str | None) -> str | None:
        """What a database column can hold: no NUL (PostgreSQL refuses it), no lone surrogate."""
        if value is not None and ("\x00" in value or any(0xD800 <= ord(ch) <= 0xDFFF for ch in value)):
            raise ValueError("contains a NUL character or a lone surrogate")
        return value


class OccurrencePublic(BaseModel):
    due_at: float
    at: float
    outcome: str = Field(..., description="queued (task_id is its task) or skipped (over its token's quota)")
    task_id: int | None
    reason: str | None = Field(None, description="why it was skipped, or why its task waited for its token's quota")


class OccurrenceListPublic(BaseModel):
    data: list[OccurrencePublic]
    count: int


class SchedulePublic(BaseModel):
    id: int
    name: str
    cron: str | None
    every_s: float | None
    task: dict[str, Any]
    enabled: bool
    next_at: float
    next_in_s: float
    runs: int = Field(..., description="occurrences that made a task")
    skipped: int = Field(..., description=f"occurrences skipped over the token's quota, among the last {HISTORY_KEPT}")
    last_skipped: OccurrencePublic | None
    last_task_id: int | None
    created_at: float
    links: dict[str, str]


class ScheduleListPublic(BaseModel):
    data: list[SchedulePublic]
    count: int


def _team(service: ServiceState, row: ScheduleRow) -> str | None:
    """The schedule's team: its owner's now (``server.auth.team_now``), as its occurrences' is."""
    options = row.task.get("options") if isinstance(row.task, dict) else None
    stored = options.get("team") if isinstance(options, dict) else None
    return team_now(service.settings.server, row.owner, stored if isinstance(stored, str) else None)


def _sees(principal: Principal, row: ScheduleRow, service: ServiceState, *, act: bool = False) -> bool:
    """Whether the schedule is the principal's (its owner's, or its team's: ``server.auth``)."""
    check = principal.acts_on if act else principal.sees
    return check(row.owner, _team(service, row))


def _visible(service: ServiceState, principal: Principal, schedule_id: int) -> ScheduleRow:
    row = service.schedules.get(schedule_id)
    if row is None or not _sees(principal, row, service):
        raise not_found(f"schedule {schedule_id}")
    return row


def _occurrence(row: OccurrenceRow) -> OccurrencePublic:
    return OccurrencePublic(due_at=row.due_at, at=row.at, outcome=row.outcome, task_id=row.task_id, reason=row.reason)


def _public(row: ScheduleRow, service: ServiceState, principal: Principal) -> SchedulePublic:
    """The schedule as ``principal`` reads it: its task's callback URL is its owner's
    (``server.auth.options_shown_to``); its team, its owner's now (``_team``)."""
    skipped, last_skipped = service.schedules.skipped(row.id)
    task = service.redact(dict(row.task))  # the server's secrets out of its instruction and options (as a task's)
    if isinstance(task.get("options"), dict):
        options = {key: value for key, value in task["options"].items() if key != "team"}
        team = _team(service, row)
        task["options"] = options_shown_to(principal, row.owner, options if team is None else {**options, "team": team})
    links = {"self": f"/v1/schedules/{row.id}", "history": f"/v1/schedules/{row.id}/history"}
    if row.last_task_id:
        links["last_task"] = f"/v1/tasks/{row.last_task_id}"
    return SchedulePublic(
        id=row.id, name=row.name, cron=row.cron, every_s=row.interval_s, task=task, enabled=row.enabled,
        next_at=row.next_at, next_in_s=round(max(0.0, row.next_at - time.time()), 3), runs=row.runs,
        skipped=skipped, last_skipped=_occurrence(last_skipped) if last_skipped is not None else None,
        last_task_id=row.last_task_id, created_at=row.created_at, links=links,
    )


@router.post("", status_code=status.HTTP_201_CREATED, response_model=SchedulePublic)
def create_schedule(body: ScheduleCreate, service: Service, principal: Actor, response: Response) -> SchedulePublic:
    checked = checked_task(body.task, service, principal)
    owner = principal.name
    task = {"instruction": checked.instruction, "device": checked.task.device,
            "options": checked.task.stored_options(owner, principal.team, typed_secrets(service, owner))}
    schedules = service.schedules
    limits = service.settings.server
    try:
        row = schedules.create(body.name, body.cron, body.every_s, task, owner=owner,
                               min_interval_s=limits.schedule_min_interval_s,
                               max_per_owner=limits.max_schedules_per_token)
    except ScheduleError as exc:
        raise HTTPException(422, [{"loc": ["body", exc.field], "msg": str(exc), "type": "schedule_invalid"}]) from exc
    except ScheduleLimit as exc:
        raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS, str(exc)) from exc
    service.store.audit(principal.name, principal.role, "schedule.create", f"schedule {row.id}", {"name": body.name})
    response.headers["Location"] = f"/v1/schedules/{row.id}"
    return _public(row, service, principal)


@router.get("", response_model=ScheduleListPublic)
def list_schedules(service: Service, principal: CurrentPrincipal) -> ScheduleListPublic:
    schedules = service.schedules
    rows = [r for r in schedules.all() if _sees(principal, r, service)]
    return ScheduleListPublic(data=[_public(r, service, principal) for r in rows], count=len(rows))


@router.get("/{schedule_id}", response_model=SchedulePublic)
def get_schedule(schedule_id: ScheduleId, service: Service, principal: CurrentPrincipal) -> SchedulePublic:
    return _public(_visible(service, principal, schedule_id), service, principal)


@router.get("/{schedule_id}/history", response_model=OccurrenceListPublic)
def schedule_history(schedule_id: ScheduleId, service: Service, principal: CurrentPrincipal,
                     limit: Annotated[int, Query(ge=1, le=HISTORY_KEPT)] = HISTORY_KEPT) -> OccurrenceListPublic:
    """The schedule's last occurrences, newest first: each one's task, or why it was skipped."""
    schedules = service.schedules
    _visible(service, principal, schedule_id)
    rows = schedules.history(schedule_id, limit)
    return OccurrenceListPublic(data=[_occurrence(r) for r in rows], count=len(rows))


@router.delete("/{schedule_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_schedule(schedule_id: ScheduleId, service: Service, principal: Actor) -> Response:
    """No more occurrences; the tasks it made stay. A stored row this version cannot read is
    found by its owner column alone, so its owner (or an admin) can still delete it."""
    row = service.schedules.get(schedule_id)
    if row is not None:
        owner, allowed, seen = row.owner, _sees(principal, row, service, act=True), _sees(principal, row, service)
    else:
        exists, owner = service.schedules.stored_owner(schedule_id)
        seen = exists and principal.sees(owner, None)
        allowed = seen and principal.acts_on(owner, None)
    if not seen:
        raise not_found(f"schedule {schedule_id}")
    if not allowed:
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"the token {principal.name!r} may not delete schedule {schedule_id}")
    if not service.schedules.delete(schedule_id):
        raise not_found(f"schedule {schedule_id}")
    service.store.audit(principal.name, principal.role, "schedule.delete", f"schedule {schedule_id}", {"owner": owner})
    return Response(status_code=status.HTTP_204_NO_CONTENT)
