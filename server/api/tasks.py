"""/v1/tasks: submit, list, inspect, stream events, cancel, download trajectories.

Handlers only read and write the store and poke the scheduler; runs happen in the
scheduler's worker threads.

May import: fastapi, starlette, ``server.*``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import mimetypes
import os
import tempfile
import time
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Response, status
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, StreamingResponse
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from mobile_agent.agent import (
    PinnedApps,
    PlatformPinError,
    Redactor,
    inside_paths,
    relative_inside,
    server_path,
)
from server.auth import Principal, options_shown_to
from server.deps import ActedTask, Actor, Authorized, CurrentPrincipal, OwnedTask, Service
from server.devices import platform_refusal
from server.farm.routing import Requirement
from server.quota import Quota, QuotaExceeded
from server.runner import tell_unrun_end
from server.schemas import (
    MAX_ID,
    EventPublic,
    TaskCreate,
    TaskListPublic,
    TaskPublic,
    TaskStatus,
)
from server.state import ServiceState
from server.store import EventRow, TaskRow
from server.webhooks import callback_refusal

__all__ = ["CheckedTask", "TaskId", "checked_task", "router", "task_public", "typed_secrets"]

log = logging.getLogger(__name__)
router = APIRouter(prefix="/tasks", tags=["tasks"], dependencies=[Authorized])

SSE_KEEPALIVE_S = 15.0
SSE_POLL_S = 2.0
_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp"}
# A trajectory's files come from runs (the report shows what the model wrote and what the
# phone showed): served from the API's origin, they get no power over it. ``sandbox``
# gives the report an origin of its own (its inline script cannot call the API with the
# dashboard's cookie); nothing may be loaded from elsewhere; no sniffing a PNG into HTML.
FILE_HEADERS = {
    "Content-Security-Policy": (
        "sandbox allow-scripts; default-src 'none'; img-src 'self' data: blob:; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
}

# Ids fit the database's INTEGER column (32-bit on Postgres): a larger one is a 422, not a 500.
TaskId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


def _unprocessable(field: str, message: str, kind: str = "value_error") -> HTTPException:
    return HTTPException(
        status_code=422,
        detail=[{"loc": ["body", field], "msg": message, "type": kind}],
    )


def task_public(task: TaskRow, principal: Principal, redact: Redactor) -> TaskPublic:
    """The task as ``principal`` reads it (``server.auth.options_shown_to``: a callback URL is its
    owner's), the server's secrets taken out of its instruction and options (``redact``:
    ``ServiceState.redact``; the row keeps them for the run)."""
    base = f"/v1/tasks/{task.id}"
    left_queue = task.started_at or task.finished_at  # a task cancelled while queued never started
    queued_s = left_queue - task.created_at if left_queue else None
    run_s = task.finished_at - task.started_at if task.finished_at and task.started_at else None
    links = {"self": base, "events": f"{base}/events", "cancel": f"{base}/cancel"}
    if task.status == "waiting_for_user":
        links.update(reply=f"{base}/reply", live=f"{base}/live")
    if task.trajectory_dir:
        links["trajectory"] = f"{base}/trajectory.zip"
    # the row's other columns (trajectory_dir, instance, cancel_requested) stay inside:
    # TaskPublic ignores fields it does not declare
    base_dir = _trajectory_base(task)
    error, result = inside_paths(task.error, base_dir), inside_paths(task.result, base_dir)
    options = redact(options_shown_to(principal, task.owner, task.options))
    return TaskPublic.model_validate({**vars(task), "instruction": redact.text(task.instruction), "options": options,
                                      "error": error, "result": result,
                                      "queued_s": queued_s, "run_s": run_s, "links": links})


def _get_task(service: ServiceState, task_id: int) -> TaskRow:
    """The task as stored (its owner already checked by the route's dependency)."""
    task = service.store.get_task(task_id)
    if task is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no task {task_id}")
    return task


@router.post("", status_code=status.HTTP_202_ACCEPTED, response_model=TaskPublic)
def create_task(body: TaskCreate, service: Service, response: Response, principal: Actor) -> TaskPublic:
    checked = checked_task(body, service, principal)
    instruction, body = checked.instruction, checked.task
    full = service.retention.disk_refusal()
    if full is not None:  # refused now rather than dying mid-run when the disk fills (server.retention)
        raise HTTPException(status.HTTP_507_INSUFFICIENT_STORAGE, full)
    owner = principal.name
    options = body.stored_options(owner, principal.team, typed_secrets(service, owner))
    try:
        task = service.store.create_task(
            instruction, body.device, options, quota=Quota.of(service.settings.server)
        )
    except QuotaExceeded as exc:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            f"the token {owner!r} has {exc.active} tasks queued or running, its limit "
            f"(server.max_active_per_token): submit again when one has ended",
        ) from exc
    service.store.audit(principal.name, principal.role, "task.submit", f"task {task.id}",
                        {"instruction": service.redact.text(instruction)[:200], "device": body.device})
    service.scheduler.submit(task)
    response.headers["Location"] = f"/v1/tasks/{task.id}"
    return task_public(task, principal, service.redact)


@dataclass(frozen=True)
class CheckedTask:
    """A task body that passed every check a submission gets: its ``instruction`` (a script's
    or flow's is made up) and the ``task`` to store (``platform`` set where its script or flow
    pins it: ``_pinned_by_script``)."""

    instruction: str
    task: TaskCreate


def checked_task(body: TaskCreate, service: ServiceState, principal: Principal) -> CheckedTask:
    """The task once every check a submission gets has passed (422 otherwise): a script that
    parses, a planner for an instruction, the limits, a phone that can run it, secrets that
    ``principal`` may have typed."""
    limits = service.settings.server
    script_lines = 0
    flow_name = None
    pins = PinnedApps("instruction")  # an instruction in words pins no platform
    if body.flow is not None:  # it parsed (TaskCreate); a flow of model steps needs a planner
        from mobile_agent.testing import flow_pins, parse_flow

        flow = parse_flow(body.flow)
        flow_name = flow.name
        pins = flow_pins([flow])
        steps = flow.model_dump(by_alias=True, exclude_none=True)["steps"]
        for number, step in enumerate(steps, 1):  # a flow sent here has no folder: it names no server file
            if isinstance(step.get("extract"), dict) and step["extract"].get("schema") is not None:
                raise _unprocessable(
                    "flow", f"step {number}: a flow sent to the service cannot read a schema file of the server; "
                    "give the answer's fields inline (fields:)", "server_file")
        if flow.needs_model and not (service.settings.planner.configured or limits.planner_base_urls or body.base_url):
            raise _unprocessable(
                "flow",
                "the flow has run / assert / extract / wait_for steps, which ask a model, and no planner endpoint "
                "is configured on this server",
                "no_planner",
            )
        if len(flow.steps) > limits.max_steps_limit:
            raise _unprocessable("flow", f"the flow has over {limits.max_steps_limit} steps", "too_long")
        _check_flow_budget(steps, limits.max_steps_limit)
    elif body.script is not None:
        from mobile_agent.agent import parse_script, script_app_platforms
        from mobile_agent.errors import OperationError

        try:
            lines = parse_script(body.script)  # a bad line is a 422 now, not a failed run
        except OperationError as exc:
            raise _unprocessable("script", exc.message, "script_invalid") from exc
        script_lines = len(lines)
        pins = PinnedApps("script", script_app_platforms(lines))
        if script_lines > limits.max_steps_limit:
            raise _unprocessable("script", f"the script has over {limits.max_steps_limit} operations", "too_long")
    elif not (service.settings.planner.configured or limits.planner_base_urls or body.base_url):
        raise _unprocessable(
            "instruction",
            "no planner endpoint is configured on this server, so an instruction cannot be planned: send a "
            'script instead (one operation per line, e.g. "Open App (Settings)"), or configure '
            "MOBILE_AGENT_PLANNER__BASE_URL / MOBILE_AGENT_PLANNER__API_KEY",
            "no_planner",
        )
    instruction = body.instruction or (
        f"flow: {flow_name}" if flow_name else f"script of {script_lines} operation{'s' if script_lines != 1 else ''}"
    )
    if len(instruction) > limits.max_instruction_chars:
        raise _unprocessable(
            "instruction", f"instruction is longer than {limits.max_instruction_chars} characters", "string_too_long"
        )
    if body.max_steps is not None and body.max_steps > limits.max_steps_limit:
        raise _unprocessable("max_steps", f"max_steps is over the limit of {limits.max_steps_limit}", "less_than_equal")
    if body.base_url is not None:
        # the run sends the server's planner API key to that endpoint: only known ones
        allowed = {u.rstrip("/") for u in [*limits.planner_base_urls, service.settings.planner.base_url or ""] if u}
        if body.base_url.rstrip("/") not in allowed:
            raise _unprocessable(
                "base_url",
                "base_url must be the server's planner endpoint or one of server.planner_base_urls",
                "base_url_not_allowed",
            )
    if body.model is not None and not principal.admin and body.model not in (
            service.settings.planner.model, *limits.planner_models):  # the server's API key pays for it
        raise _unprocessable("model", f"model {body.model!r} is not one this server lets a task choose "
                             "(planner.model, server.planner_models)", "model_not_allowed")
    if body.device != "any" and not service.pool.knows(body.device):
        service.pool.refresh()
        if not service.pool.knows(body.device):
            phones = sorted(service.pool.allow)
            message = (
                f"device {body.device!r} is not one of this server's phones (server.devices: {', '.join(phones)})"
                if phones and body.device not in service.pool.allow
                else f"no device {body.device!r} is attached"
            )
            raise _unprocessable("device", message, "unknown_device")
    if body.device != "any":
        slot = service.pool.get(body.device)
        refusal = slot.refusal if slot is not None else None
        if refusal is not None:
            raise _unprocessable("device", f"{refusal}: a task for it would wait forever", "device_not_ready")
    refusal = platform_refusal(service.pool, body.device, body.platform)
    if refusal is not None:
        raise _unprocessable("platform", refusal, "unroutable")
    body = _pinned_by_script(body, pins, service)
    server_allows = service.settings.agent.safety.allow_apps
    if body.allow_apps and server_allows and not set(body.allow_apps) & set(server_allows):
        raise _unprocessable(  # a task narrows the server's app policy (server.runner.narrowed_policy)
            "allow_apps", "allow_apps names no app this server allows (agent.safety.allow_apps): a task's list "
            "only narrows the server's", "app_not_allowed")
    if body.device == "any" and (body.deny_apps or body.allow_apps) and not _platform_pinned(body):
        platforms = {slot.platform for slot in service.pool.slots()}
        if len(platforms) > 1:  # an app policy is written in one platform's app ids: void on the other
            raise _unprocessable(
                "platform",
                f"this server has phones of several platforms ({', '.join(sorted(platforms))}) and the task's "
                'deny_apps / allow_apps name apps by one platform\'s ids: give "platform" ("android" or "ios"), '
                "or a device", "platform_needed")
    refusal = service.scheduler.route_refusal(body.device, body.options().stored())
    if refusal is not None:
        raise _unprocessable("requires", refusal, "unroutable")
    from mobile_agent.operations import referenced_secrets

    named = service.settings.agent.named_secrets
    used = {n for t in (body.instruction, body.script, body.flow) if t for n in referenced_secrets(t)}
    # a run that would type nothing where the person meant a secret, or another's secret: one answer
    # for both, so a token learns no name it may not use
    missing = sorted(n for n in used if n not in named or not limits.may_type(principal.name, n))
    if missing:
        where = "on this server (agent.named_secrets)" if principal.admin else (
            f"that the token {principal.name!r} may use (agent.named_secrets, given to a token by name in "
            f"server.tokens.{principal.name}.secrets)")
        raise _unprocessable("instruction", f"no secret named {', '.join(missing)} {where}", "unknown_secret")
    if body.callback_url is not None and limits.webhook_secret is None:
        raise _unprocessable(
            "callback_url", "this server has no server.webhook_secret to sign webhooks with", "no_webhook_secret"
        )
    refusal = callback_refusal(body.callback_url, limits.webhook_allow) if body.callback_url is not None else None
    if refusal is not None:  # docs/security.md: a webhook never reaches the server's own network
        raise _unprocessable("callback_url", refusal, "callback_not_allowed")
    return CheckedTask(instruction, body)


def typed_secrets(service: ServiceState, owner: str) -> list[str] | None:
    """The named secrets a task of ``owner`` may type, stored with it (``StoredOptions.secrets``):
    decided here, where ``server.tokens`` is, for the run wherever it runs (a farm's workers hold
    no tokens). None when this server has no named secrets (no task of it may name one)."""
    server, named = service.settings.server, service.settings.agent.named_secrets
    return sorted(name for name in named if server.may_type(owner, name)) if named else None


def _check_flow_budget(steps: list[dict[str, Any]], limit: int) -> None:
    """A flow (its ``steps`` as dumped) is held to ``server.max_steps_limit`` as an instruction and
    a script are: a ``run:`` step's own ``max_steps`` (its model's steps), and the operations of its
    ``do:`` steps together (a one-step flow may not carry the lines of a script the limit refuses);
    422 ``too_long``."""
    operations = 0
    for number, step in enumerate(steps, 1):
        asked = step.get("max_steps") if "run" in step else None
        if isinstance(asked, int) and asked > limit:
            raise _unprocessable("flow", f"step {number}: max_steps {asked} is over the limit of {limit} "
                                 "(server.max_steps_limit)", "too_long")
        text = step.get("do")
        if isinstance(text, str):
            operations += sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    if operations > limit:
        raise _unprocessable("flow", f"the flow's do: steps have over {limit} operations (server.max_steps_limit)",
                             "too_long")


def _pinned_by_script(body: TaskCreate, pins: PinnedApps, service: ServiceState) -> TaskCreate:
    """``body`` whose script or flow opens apps by one platform's ids (``pins``, read from the
    script or flow ``checked_task`` parsed once) runs on a phone of that platform: under ``"any"``
    with no ``platform``, its platform is set; a platform or phone that cannot run them is a
    422, worded by ``PinnedApps`` as every other interface words it."""
    try:
        platform = pins.platform()
        if platform is None:
            return body
        refused = pins.conflict(body.platform)
        if refused is None:
            refusal = platform_refusal(service.pool, body.device, platform)
            refused = None if refusal is None else pins.unroutable(refusal)
    except PlatformPinError as exc:
        refused = exc
    if refused is not None:
        loc = {"platforms_mixed": pins.where, "platform_conflict": "platform"}.get(
            refused.code, "device" if body.device != "any" else "platform")
        raise _unprocessable(loc, refused.message, refused.code)
    if body.device != "any" or body.platform is not None:
        return body
    return body.model_copy(update={"platform": platform})


def _platform_pinned(body: TaskCreate) -> bool:
    """Whether the task says its platform: ``platform``, or a requirement that only one
    platform's phones meet (``platform=…``, an ``android`` or ``ios`` version)."""
    if body.platform is not None:
        return True
    return any(Requirement.parse(text).key in ("platform", "android", "ios") for text in body.requires or [])


@router.get("", response_model=TaskListPublic)
def list_tasks(
    service: Service,
    principal: CurrentPrincipal,
    status_: Annotated[TaskStatus | None, Query(alias="status")] = None,
    device: Annotated[str | None, Query(max_length=200)] = None,
    offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> TaskListPublic:
    visible_to = None if principal.admin else (principal.name, principal.team)
    rows, total = service.store.list_tasks(status=status_, device=device, offset=offset, limit=limit,
                                           visible_to=visible_to)
    return TaskListPublic(data=[task_public(r, principal, service.redact) for r in rows], count=total, offset=offset, limit=limit)


@router.get("/{task_id}", response_model=TaskPublic)
def get_task(task_id: TaskId, row: OwnedTask, service: Service, principal: CurrentPrincipal) -> TaskPublic:
    task = task_public(row, principal, service.redact)
    if task.status == "queued":
        task.waiting_reason = service.store.quota_waiting_reason(row) or service.scheduler.waiting_reason(row)
    if task.status == "waiting_for_user":
        event = service.store.last_event(task_id, "waiting_for_user")
        task.asking = dict(event.data) if event is not None else None
    return task


@router.post("/{task_id}/cancel", status_code=status.HTTP_202_ACCEPTED, response_model=TaskPublic)
def cancel_task(task_id: TaskId, task: ActedTask, service: Service, principal: CurrentPrincipal) -> TaskPublic:
    if task.terminal:
        raise HTTPException(status.HTTP_409_CONFLICT, f"task {task_id} already ended: {task.status}")
    if not service.scheduler.cancel(task_id):
        task = _get_task(service, task_id)
        if task.terminal:
            raise HTTPException(status.HTTP_409_CONFLICT, f"task {task_id} already ended: {task.status}")
    service.store.audit(principal.name, principal.role, "task.cancel", f"task {task_id}", {"owner": task.owner})
    after = _get_task(service, task_id)
    if after.status == "cancelled" and after.started_at is None:  # never ran: no runner tells its end
        # the service's sender, which its stop waits for (ServiceState.webhooks)
        tell_unrun_end(service.webhooks, after, "cancelled", result=after.result)  # as stored (TaskStore.cancel_queued)
    return task_public(after, principal, service.redact)


def event_public(event: EventRow, base: Path | None) -> EventPublic:
    """The event as clients see it: file paths inside the trajectory ``base`` (its task's
    ``_trajectory_base``) become URLs."""
    data = dict(event.data)
    for key, value in event.data.items():
        if not isinstance(value, str) or len(value) > 4096 or "\n" in value or "\x00" in value:
            continue
        image = Path(value).suffix.lower() in _IMAGE_SUFFIXES
        if not (image or value.startswith("/")):
            continue
        relative = relative_inside(base, value) if base is not None else None
        if relative is not None and image:
            data[f"{key}_url"] = f"/v1/tasks/{event.task_id}/files/{relative}"
        if relative is not None or server_path(value):  # the server's paths stay inside: the trajectory's, relative
            data[key] = relative if relative is not None else "[a path on the server]"
    data = {key: value if key.endswith("_url") else inside_paths(value, base) for key, value in data.items()}
    return EventPublic(id=event.id, task_id=event.task_id, kind=event.kind, data=data, created_at=event.created_at)


def _trajectory_base(task: TaskRow) -> Path | None:
    return Path(task.trajectory_dir).resolve() if task.trajectory_dir else None


def _sse_batch(service: ServiceState, task_id: int, after: int) -> tuple[bool, list[str], int]:
    """(task ended, frames of the events after ``after``, last id), read in one go in a worker
    thread (database and file-system calls). The task is read before its events: once it is
    terminal, its final event is already among them."""
    task = _get_task(service, task_id)
    events = service.store.events_after(task_id, after)
    base = _trajectory_base(task)  # resolved once per batch, not per event
    frames = []
    for event in events:
        public = event_public(event, base)
        frames.append(f"id: {event.id}\nevent: {event.kind}\ndata: {public.model_dump_json()}\n\n")
        after = event.id
    if not events and task.terminal:
        frames.append(f"event: end\ndata: {json.dumps({'task_id': task_id, 'status': task.status})}\n\n")
    return task.terminal and not events, frames, after


@router.get("/{task_id}/events", response_class=StreamingResponse)
async def task_events(
    task_id: TaskId,
    task: OwnedTask,
    service: Service,
    principal: CurrentPrincipal,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    after: Annotated[int | None, Query(ge=0, le=MAX_ID, description="same as Last-Event-ID")] = None,
) -> StreamingResponse:
    """Server-Sent Events: every past event of the task, then live ones, then ``end``."""
    start = after or 0
    if last_event_id:
        digits = last_event_id.isascii() and last_event_id.isdigit() and len(last_event_id) <= 10
        resume = int(last_event_id) if digits else -1
        if not 0 <= resume <= MAX_ID:
            raise HTTPException(status.HTTP_400_BAD_REQUEST, "Last-Event-ID must be an event id")
        start = max(start, resume)
    stream_id = service.hub.open_stream(principal.name)  # each open stream reads the store every few seconds
    if stream_id is None:
        limit = service.hub.streams_per_token
        raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS,
                            f"the token {principal.name!r} has {limit} event streams open, its limit "
                            f"(server.event_streams_per_token = {limit}): close one first")

    async def stream() -> AsyncIterator[str]:
        last = start
        last_sent = time.monotonic()
        wake = service.hub.listen(task_id)
        try:
            yield "retry: 2000\n\n"
            while True:
                wake.clear()
                service.hub.stream_alive(stream_id, principal.name)
                ended, frames, last = await run_in_threadpool(_sse_batch, service, task_id, last)
                for frame in frames:
                    yield frame
                if ended or service.closing.is_set():
                    return  # a stream cut by a stop has no "end": the client reconnects
                if frames:
                    last_sent = time.monotonic()
                    continue
                try:
                    # woken by this process's runs; re-reads the store anyway every few
                    # seconds, for runs of other instances sharing the database
                    await asyncio.wait_for(wake.wait(), SSE_POLL_S)
                except asyncio.TimeoutError:
                    if time.monotonic() - last_sent >= SSE_KEEPALIVE_S:
                        yield ": keepalive\n\n"
                        last_sent = time.monotonic()
        finally:
            # also on a client's disconnect: Starlette cancels the stream (ASGI spec 2.3)
            service.hub.unlisten(task_id, wake)
            service.hub.close_stream(stream_id)

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.get("/{task_id}/files/{path:path}")
def task_file(task_id: TaskId, path: str, task: OwnedTask) -> FileResponse:
    """One file of the task's trajectory (a step's screenshot, the report)."""
    return _task_file(task, path)


def _task_file(task: TaskRow, path: str) -> FileResponse:
    base = _trajectory_base(task)
    if base is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "this task has no trajectory yet")
    if "\x00" in path or Path(path).is_absolute():
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such file")
    try:
        target = (base / path).resolve()
        found = target.is_relative_to(base) and target.is_file()
    except (OSError, ValueError):  # a name over NAME_MAX (ENAMETOOLONG), a loop of links
        found = False
    if not found:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such file")
    media_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    return FileResponse(target, media_type=media_type, headers=FILE_HEADERS)


@router.get("/{task_id}/steps/{step}/screenshot")
def step_screenshot(task_id: TaskId, step: Annotated[int, PathParam(ge=1, le=MAX_ID)], task: OwnedTask,
                    service: Service) -> FileResponse:
    """The screenshot a step started from (the n-th ``step_finished`` event, 1-based)."""
    base = _trajectory_base(task)
    event = service.store.step_event(task_id, step) if base is not None else None
    if base is None or event is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"task {task_id} has no step {step}")
    for key, value in event.data.items():
        if isinstance(value, str) and Path(value).suffix.lower() in _IMAGE_SUFFIXES and "screenshot" in key:
            relative = relative_inside(base, value)
            if relative is not None:
                return _task_file(task, relative)
    raise HTTPException(status.HTTP_404_NOT_FOUND, f"step {step} has no screenshot")


@router.get("/{task_id}/trajectory.zip")
def trajectory_zip(task_id: TaskId, task: OwnedTask) -> FileResponse:
    """The whole trajectory directory as one zip."""
    base = _trajectory_base(task)
    if base is None or not base.is_dir():
        raise HTTPException(status.HTTP_404_NOT_FOUND, "this task has no trajectory on disk")
    handle, name = tempfile.mkstemp(prefix=f"task-{task_id}-", suffix=".zip")
    os.close(handle)
    with zipfile.ZipFile(name, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(base.rglob("*")):
            # symlinks could point outside the trajectory; a trajectory never needs them
            if file.is_file() and not file.is_symlink():
                archive.write(file, arcname=f"task-{task_id}/{file.relative_to(base).as_posix()}")
    return FileResponse(
        name,
        media_type="application/zip",
        filename=f"task-{task_id}-trajectory.zip",
        background=BackgroundTask(os.unlink, name),
    )
