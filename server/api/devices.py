"""/v1/devices: the phones, a live screenshot of each, ``adb connect``.

Every principal sees the phones' state; only an admin sees which worker host a phone is on and
its properties, connects phones, and sees the screen of a phone that runs a task it may not
see (``server.auth``).

May import: fastapi, ``server.*``, ``mobile_agent.errors``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query, Response, status

from mobile_agent.agent import hide_secrets_shown
from mobile_agent.device import lease_holder
from mobile_agent.errors import DeviceError
from server.auth import Principal
from server.deps import Admin, Authorized, CurrentPrincipal, Service
from server.devices import DeviceSlot
from server.runner import task_lease_holder
from server.schemas import ConnectRequest, DeviceListPublic, DevicePublic, is_serial
from server.state import ServiceState

__all__ = ["router"]

router = APIRouter(prefix="/devices", tags=["devices"], dependencies=[Authorized])


def device_public(slot: DeviceSlot, principal: Principal, service: ServiceState) -> DevicePublic:
    public = DevicePublic(**slot.public(), screenshot_url=f"/v1/devices/{slot.serial}/screenshot")
    if not public.busy and service.pool.held_unlisted(slot):
        public.busy = True  # another interface's run holds it (mobile-agent run, MCP): busy, with no task here
    if principal.admin:
        return public
    public.host = public.properties = None
    if public.current_task is not None and not _task_visible(service, principal, public.current_task):
        public.current_task = None  # busy, with someone else's task
    return public


def _held_by_another(service: ServiceState, serial: str, task_id: int) -> bool:
    """Whether a run other than task ``task_id``'s holds the phone's lease (the task waits for it:
    ``waiting_for_phone``). The embedded service reads the lock; a farm's API server cannot see a
    host's locks (its slot says busy from the worker's row)."""
    if service.settings.farm.enabled:
        return False
    held_by = lease_holder(service.settings.adb, serial)
    task = service.store.get_task(task_id)
    return held_by is not None and held_by != task_lease_holder(task_id, task.owner if task is not None else None)


def _task_visible(service: ServiceState, principal: Principal, task_id: int) -> bool:
    task = service.store.get_task(task_id)
    return task is not None and principal.sees(task.owner, task.team)


@router.get("", response_model=DeviceListPublic)
def list_devices(
    service: Service,
    principal: CurrentPrincipal,
    refresh: bool = False,
    platform: Annotated[Literal["android", "ios"] | None, Query(description="only phones of this platform")] = None,
) -> DeviceListPublic:
    if refresh:
        service.pool.refresh()
    slots = [s for s in service.pool.slots() if platform in (None, s.platform)]
    return DeviceListPublic(data=[device_public(s, principal, service) for s in slots], count=len(slots))


@router.get("/{serial}", response_model=DevicePublic)
def get_device(serial: str, service: Service, principal: CurrentPrincipal) -> DevicePublic:
    slot = service.pool.get(serial) if is_serial(serial) else None
    if slot is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no device {serial!r}")
    return device_public(slot, principal, service)


@router.get(
    "/{serial}/screenshot",
    responses={200: {"content": {"image/png": {}, "image/jpeg": {}}}},
    response_class=Response,
)
def device_screenshot(
    serial: str,
    service: Service,
    principal: CurrentPrincipal,
    format: Annotated[Literal["png", "jpeg"], Query()] = "png",
) -> Response:
    """What the phone shows now. A phone running a task shows to whoever may watch that task's
    live view (an admin, its owner, its team); a free phone (whatever the last run left on its
    screen) to a principal that may act (not a viewer). A phone another interface's run holds
    (``mobile-agent run``, MCP, the pytest plugin: its ``PhoneLease``) is not free: that run hides
    its secrets in its own process, not in this capture, so only an admin sees it."""
    if not is_serial(serial) or not service.pool.knows(serial):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no device {serial!r}")
    slot = service.pool.get(serial)
    running = slot.task_id if slot is not None else None
    if not principal.admin and running is not None and not _task_visible(service, principal, running):
        raise HTTPException(status.HTTP_409_CONFLICT, f"the phone {serial} is running a task that is not yours")
    if not principal.admin and running is None and service.pool.held(serial):
        raise HTTPException(status.HTTP_409_CONFLICT, f"the phone {serial} is running a run that is not yours")
    if not principal.admin and running is not None and _held_by_another(service, serial, running):
        raise HTTPException(status.HTTP_409_CONFLICT, f"the phone {serial} is running a run that is not yours")
    if running is None and not principal.may_act:
        raise HTTPException(status.HTTP_403_FORBIDDEN,
                            f"the token {principal.name!r} is a viewer: it sees the screen of its team's runs only")
    try:
        image = service.pool.source.screenshot(serial, format)
    except DeviceError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, exc.to_dict()) from exc
    if not principal.admin and running is None:  # what the last run left on a free phone: no secret of it shows
        image = _secrets_hidden(service, image, format)
    return Response(image, media_type=f"image/{format}", headers={"Cache-Control": "no-store"})


def _secrets_hidden(service: ServiceState, image: bytes, fmt: str) -> bytes:
    """A free phone's capture (PNG or JPEG) with every OCR line that shows one of the server's
    secrets, or a part of one, filled black (``hide_secrets_shown``): no run masks it, and it
    shows what the last run typed, whoever that run was. Unchanged with no secret configured."""
    if not (service.settings.agent.secrets or service.settings.agent.named_secrets):
        return image
    import io

    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(image)) as opened:
        pixels = np.asarray(opened.convert("RGB"))
    hidden = hide_secrets_shown(service.settings, pixels, service.reader.get)
    if hidden is pixels:
        return image
    out = io.BytesIO()
    Image.fromarray(hidden).save(out, format="JPEG" if fmt == "jpeg" else "PNG")
    return out.getvalue()


@router.post("/connect", response_model=DeviceListPublic)
def connect_device(body: ConnectRequest, service: Service, principal: Admin) -> DeviceListPublic:
    """``adb connect host:port`` (admins only), then the refreshed device list."""
    service.store.audit(principal.name, principal.role, "device.connect", f"device {body.address}")
    try:
        service.pool.source.connect(body.address)
    except DeviceError as exc:
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, exc.to_dict()) from exc
    service.pool.refresh()
    service.scheduler.wake()
    slots = service.pool.slots()
    return DeviceListPublic(data=[device_public(s, principal, service) for s in slots], count=len(slots))
