"""``open_device``: which phone to drive, with a clear error when that is unclear.

May import: the standard library, ``mobile_agent.errors``/``settings`` and the sibling
modules of this package.
"""

from __future__ import annotations

import threading
import time

from mobile_agent.device.adb_protocol import UNAUTHORIZED_HINT
from mobile_agent.device.device import Device
from mobile_agent.device.server import (
    NO_PERMISSIONS_HINT,
    DeviceInfo,
    connect,
    ensure_server,
    parse_devices_l,
)
from mobile_agent.device.validation import validate_serial
from mobile_agent.errors import (
    DeviceError,
    DeviceNotFoundError,
    DeviceOfflineError,
    DeviceUnauthorizedError,
    MultipleDevicesError,
    NoDeviceError,
)
from mobile_agent.settings import AdbSettings

__all__ = ["check_ready", "open_device"]

_CONNECT_SETTLE_S = 5.0


def open_device(settings: AdbSettings, serial: str | None = None, *, cancel: threading.Event | None = None) -> Device:
    """The device to drive: ``serial`` (or ``settings.serial``), or the only one attached.

    Starts the adb server when needed and ``adb connect``s ``settings.connect`` first.
    ``cancel``: the run's event, which ends a wait for a lost phone (``Device``).
    Raises ``NoDeviceError``, ``MultipleDevicesError``, ``DeviceNotFoundError``,
    ``DeviceOfflineError``, ``DeviceUnauthorizedError`` with what to do in the message.
    """
    serial = serial or settings.serial
    if serial is not None:
        validate_serial(serial)
    host = ensure_server(settings)
    for address in settings.connect:
        connect(address, settings)
    devices = parse_devices_l(host.query("host:devices-l"))
    deadline = time.monotonic() + _CONNECT_SETTLE_S
    while settings.connect and time.monotonic() < deadline and any(
        d.serial in settings.connect and d.state != "device" for d in devices
    ):  # a fresh `adb connect` shows offline / connecting until its handshake is done
        time.sleep(0.05)
        devices = parse_devices_l(host.query("host:devices-l"))
    if serial is None:
        if not devices:
            raise NoDeviceError(
                "no device attached: plug in a phone with USB debugging on, or `mobile-agent devices --connect HOST:PORT`"
            )
        if len(devices) > 1:
            serials = [d.serial for d in devices]
            raise MultipleDevicesError(
                f"{len(devices)} devices attached ({', '.join(serials)}): choose one with --serial or adb.serial",
                serials=serials,
            )
        chosen = devices[0]
    else:
        matches = [d for d in devices if d.serial == serial]
        if not matches:
            attached = ", ".join(d.serial for d in devices) or "none"
            raise DeviceNotFoundError(
                f"device {serial!r} is not attached (attached: {attached})", serial=serial, attached=[d.serial for d in devices]
            )
        chosen = matches[0]
    check_ready(chosen)
    return Device(chosen.serial, settings, host=host, cancel=cancel)


def check_ready(info: DeviceInfo) -> None:
    """Raise the error that says what to do when ``info`` (a line of ``adb devices -l``)
    is not a phone ready to drive."""
    if info.state == "unauthorized":
        raise DeviceUnauthorizedError(
            f"device {info.serial} is unauthorized: {UNAUTHORIZED_HINT}", serial=info.serial, hint=UNAUTHORIZED_HINT
        )
    if info.state == "offline":
        raise DeviceOfflineError(
            f"device {info.serial} is offline: reconnect it (USB cable, or `adb disconnect` then `adb connect`)",
            serial=info.serial,
        )
    if info.state.startswith(("no permissions", "insufficient permissions")):
        raise DeviceError(
            f"device {info.serial} is attached but adb has {info.state.split(';')[0]}: {NO_PERMISSIONS_HINT}",
            serial=info.serial,
            state=info.state,
            hint=NO_PERMISSIONS_HINT,
        )
    if info.state != "device":
        raise DeviceError(f"device {info.serial} is in state {info.state!r}, not ready", serial=info.serial)
