"""``open_phone``: the phone a run drives, Android or iPhone, by its serial.

``ios:NAME`` is the iPhone whose WebDriverAgent URL ``ios.devices`` names (docs/ios.md);
any other serial (or none) is an Android phone behind the adb server (``open_device``).
Callers above the device layer get a phone of the one device protocol and never ask
which kind it is.

May import: the standard library, ``mobile_agent.errors``/``settings`` and the sibling
modules of this package.
"""

from __future__ import annotations

from mobile_agent.device.device import Device
from mobile_agent.device.ios.device import IOS_PREFIX, IosDevice
from mobile_agent.device.ios.wda import WdaClient, WdaError
from mobile_agent.device.selection import open_device
from mobile_agent.errors import DeviceNotFoundError, DeviceOfflineError
from mobile_agent.settings import IosSettings, Settings

__all__ = ["open_iphone", "open_phone"]


def open_iphone(settings: IosSettings, serial: str) -> IosDevice:
    """The iPhone ``ios:NAME``: ``DeviceNotFoundError`` when ``ios.devices`` has no such
    name, ``DeviceOfflineError`` when its WDA does not answer ``/status`` as ready."""
    name = serial.removeprefix(IOS_PREFIX)
    url = settings.devices.get(name)
    if url is None:
        known = ", ".join(IOS_PREFIX + n for n in sorted(settings.devices)) or "none (set ios.devices)"
        raise DeviceNotFoundError(f"no iPhone named {name!r}; configured iPhones: {known}", serial=serial)
    client = WdaClient(url, timeout_s=settings.timeout_s)
    try:
        status = client.status()
    except WdaError as exc:
        client.close()
        raise DeviceOfflineError(f"the iPhone {serial}'s WebDriverAgent at {url} does not answer: {exc.message}",
                                 serial=serial) from exc
    if status.ready is False:
        client.close()
        raise DeviceOfflineError(f"the iPhone {serial}'s WebDriverAgent at {url} is not ready", serial=serial)
    return IosDevice(name, client)


def open_phone(settings: Settings, serial: str | None = None) -> Device | IosDevice:
    """``serial`` (or ``adb.serial``): an iPhone for ``ios:NAME``, else ``open_device``."""
    chosen = serial or settings.adb.serial
    if chosen is not None and chosen.startswith(IOS_PREFIX):
        return open_iphone(settings.ios, chosen)
    return open_device(settings.adb, serial)
