"""/v1/tasks/{id}: the person's side of a run — reply to a question or a confirmation, act
on the phone during a takeover, and watch it live.

- ``POST /v1/tasks/{id}/reply``: ``answer`` / ``done`` / ``deny`` a question, ``approve`` /
  ``deny`` a confirmation, ``touch`` the phone (a tap, or a swipe with x2/y2) while the
  model has handed over. Only while the task is ``waiting_for_user`` (else 409); the reply
  must fit what is asked (else 422). The run picks it up through the store
  (``server.people``), wherever it runs.
- ``GET /v1/tasks/{id}/live``: the phone's screen as a multipart JPEG stream (a few
  downscaled frames a second) while the task is running or waiting; an ``<img>`` shows it.
  A phone of a farm worker is captured by its worker and relayed through the shared folder
  (``server.farm.live``).

May import: fastapi, starlette, ``server.*``, ``mobile_agent.errors``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, status
from fastapi.responses import StreamingResponse

from mobile_agent.device import lease_holder
from mobile_agent.errors import DeviceError
from server.api.tasks import TaskId, _get_task, task_public
from server.deps import ActedTask, Authorized, CurrentPrincipal, OwnedTask, Service
from server.farm.live import read_frame, want_frames
from server.live import LiveLimit
from server.people import reply_refusal
from server.runner import task_lease_holder
from server.schemas import ReplyCreate, TaskPublic
from server.state import ServiceState

__all__ = ["router", "waiting_request"]

router = APIRouter(prefix="/tasks", tags=["tasks"], dependencies=[Authorized])

_BOUNDARY = "frame"
MAX_LIVE_S = 3600.0  # one stream's longest life; the page opens another


def waiting_request(service: ServiceState, task_id: int) -> dict[str, Any] | None:
    """What a waiting task asks (its run's latest ``waiting_for_user`` event), else None."""
    task = _get_task(service, task_id)
    if task.status != "waiting_for_user":
        return None
    event = service.store.last_event(task_id, "waiting_for_user")
    return dict(event.data) if event is not None else None


@router.post("/{task_id}/reply", status_code=status.HTTP_202_ACCEPTED, response_model=TaskPublic)
def reply_to_task(task_id: TaskId, body: ReplyCreate, task: ActedTask, service: Service,
                  principal: CurrentPrincipal) -> TaskPublic:
    if task.status != "waiting_for_user":
        raise HTTPException(status.HTTP_409_CONFLICT, f"task {task_id} is not waiting for a reply: {task.status}")
    request = waiting_request(service, task_id)
    refusal = reply_refusal(request, body.action)
    if refusal is not None:
        raise HTTPException(422, [{"loc": ["body", "action"], "msg": refusal, "type": "reply_does_not_fit"}])
    # who replied is kept on the reply (the run puts it on its step) and in the audit trail
    data: dict[str, Any] = {"action": body.action, "text": body.text, "by": principal.name}
    if body.action == "touch":
        if body.x2 is not None and body.y2 is not None:
            data["touch"] = {"x1": body.x, "y1": body.y, "x2": body.x2, "y2": body.y2}
        else:
            data["touch"] = {"x": body.x, "y": body.y}
    if service.store.add_event_if(task_id, "waiting_for_user", "user_reply", data) is None:
        raise HTTPException(status.HTTP_409_CONFLICT, f"task {task_id} stopped waiting before the reply came")
    service.store.audit(principal.name, principal.role, "task.reply", f"task {task_id}",
                        {"action": body.action, "owner": task.owner})
    service.hub.notify(task_id)
    return task_public(_get_task(service, task_id), principal, service.redact)


@router.get("/{task_id}/live", response_class=StreamingResponse)
async def live_view(
    task_id: TaskId,
    task: OwnedTask,
    service: Service,
    principal: CurrentPrincipal,
    fps: Annotated[float, Query(gt=0, le=10, description="at most this many frames a second "
                                "(the phone is captured at server.live_fps, once for all its viewers)")] = 3.0,
) -> StreamingResponse:
    """The phone of a running or waiting task, live (multipart/x-mixed-replace JPEG). One capture
    loop per phone feeds every viewer (``server.live``); too many viewers of the phone or of the
    token is a 429 naming the limit."""
    if task.status not in ("running", "waiting_for_user") or not task.device:
        raise HTTPException(status.HTTP_409_CONFLICT, f"task {task_id} has no phone now: {task.status}")
    serial = task.device
    source = service.pool.source
    relayed: list[int] = [0]  # the mtime of the last relayed frame sent
    runs_dir = Path(service.settings.agent.output_dir).resolve()
    if service.settings.farm.enabled:  # the API holds no phone: the worker's frames come through the shared folder

        def frame() -> bytes | None:
            want_frames(runs_dir, task_id)
            image, relayed[0] = read_frame(runs_dir, task_id, relayed[0])
            return image

    elif service.pool.knows(serial):
        ours = task_lease_holder(task_id, task.owner)

        def frame() -> bytes | None:
            held_by = lease_holder(service.settings.adb, serial)
            if held_by is not None and held_by != ours:  # the task waits for a phone another run holds:
                return None  # that run's screen is not this task's (its masks live in its own process)
            try:
                image: bytes = source.screenshot(serial, "jpeg")  # masked there: the one shared frame is
                return image
            except DeviceError:
                return None

    else:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"the phone {serial} is not attached to this server")

    def still_live() -> bool:
        return _get_task(service, task_id).status in ("running", "waiting_for_user")

    try:
        viewer = service.live.join(serial, task_id, principal.name, frame, still_live)
    except LiveLimit as exc:
        raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS, str(exc)) from exc

    async def stream() -> AsyncIterator[bytes]:
        try:
            async for image in viewer.frames(fps, MAX_LIVE_S):
                if service.closing.is_set():
                    return
                yield (
                    f"--{_BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(image)}\r\n\r\n".encode()
                    + image
                    + b"\r\n"
                )
        finally:
            service.live.leave(viewer)

    return StreamingResponse(
        stream(),
        media_type=f"multipart/x-mixed-replace; boundary={_BOUNDARY}",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
