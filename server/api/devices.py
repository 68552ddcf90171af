"""/v1/devices: the phones, a live screenshot of each, ``adb connect``.

May import: fastapi, ``server.*``, ``mobile_agent.errors``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query, Response, status

from mobile_agent.errors import DeviceError
from server.deps import Authorized, Service
from server.devices import DeviceSlot
from server.schemas import ConnectRequest, DeviceListPublic, DevicePublic, is_serial

__all__ = ["router"]

router = APIRouter(prefix="/devices", tags=["devices"], dependencies=[Authorized])


def device_public(slot: DeviceSlot) -> DevicePublic:
    return DevicePublic(**slot.public(), screenshot_url=f"/v1/devices/{slot.serial}/screenshot")


@router.get("", response_model=DeviceListPublic)
def list_devices(service: Service, refresh: bool = False) -> DeviceListPublic:
    if refresh:
        service.pool.refresh()
    slots = service.pool.slots()
    return DeviceListPublic(data=[device_public(s) for s in slots], count=len(slots))


@router.get("/{serial}", response_model=DevicePublic)
def get_device(serial: str, service: Service) -> DevicePublic:
    slot = service.pool.get(serial) if is_serial(serial) else None
    if slot is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no device {serial!r}")
    return device_public(slot)


@router.get(
    "/{serial}/screenshot",
    responses={200: {"content": {"image/png": {}, "image/jpeg": {}}}},
    response_class=Response,
)
def device_screenshot(
    serial: str,
    service: Service,
    format: Annotated[Literal["png", "jpeg"], Query()] = "png",
) -> Response:
    """What the phone shows now."""
    if not is_serial(serial) or not service.pool.knows(serial):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no device {serial!r}")
    try:
        image = service.pool.source.screenshot(serial, format)
    except DeviceError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, exc.to_dict()) from exc
    return Response(image, media_type=f"image/{format}", headers={"Cache-Control": "no-store"})


@router.post("/connect", response_model=DeviceListPublic)
def connect_device(body: ConnectRequest, service: Service) -> DeviceListPublic:
    """``adb connect host:port``, then the refreshed device list."""
    try:
        service.pool.source.connect(body.address)
    except DeviceError as exc:
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, exc.to_dict()) from exc
    service.pool.refresh()
    service.scheduler.wake()
    slots = service.pool.slots()
    return DeviceListPublic(data=[device_public(s) for s in slots], count=len(slots))
