"""``open_phone``: the phone a run drives, Android or iPhone, by its serial.

``ios:NAME`` is the iPhone whose WebDriverAgent URL ``ios.devices`` names (docs/ios.md);
any other serial (or none) is an Android phone behind the adb server (``open_device``).
Callers above the device layer get a phone of the one device protocol and never ask
which kind it is.

``list_iphones`` asks each configured iPhone's WDA whether it is ready (the Android
phones are ``list_devices``'s); ``platform_of`` names a serial's platform and
``phone_properties`` what a farm routes on (the platform included), so the layers above
list, route and open both kinds without telling them apart themselves.

May import: the standard library, ``mobile_agent.errors``/``settings`` and the sibling
modules of this package.
"""

from __future__ import annotations

from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from mobile_agent.device.device import Device
from mobile_agent.device.ios.device import IOS_PREFIX, IosDevice
from mobile_agent.device.ios.wda import WdaClient, WdaError
from mobile_agent.device.selection import open_device
from mobile_agent.errors import DeviceNotFoundError, DeviceOfflineError
from mobile_agent.settings import IosSettings, Settings

__all__ = [
    "IPHONE_PROBE_S",
    "IphoneListing",
    "Phone",
    "close_phone",
    "Platform",
    "list_iphones",
    "open_iphone",
    "open_phone",
    "phone_properties",
    "platform_of",
]

Platform = Literal["android", "ios"]
Phone = Device | IosDevice  # what open_phone gives: one device protocol (mobile_agent.operations.AgentDevice)
IPHONE_PROBE_S = 5.0  # the longest one listing waits for an iPhone's WDA (ios.timeout_s if shorter)

# getprop names: AOSP build/make/tools/buildinfo.sh (what simphone's profiles answer too)
_ANDROID_PROPS = {
    "model": "ro.product.model",
    "android": "ro.build.version.release",
    "sdk": "ro.build.version.sdk",
    "density": "ro.sf.lcd_density",
}


def platform_of(serial: str) -> Platform:
    """``ios`` for an ``ios:NAME`` serial, else ``android``."""
    return "ios" if serial.startswith(IOS_PREFIX) else "android"


@dataclass(frozen=True)
class IphoneListing:
    """One iPhone of ``ios.devices`` as its WDA answered ``GET /status`` just now: ``ready``
    (it answered ready), else ``problem`` says why not (no answer, or not ready)."""

    serial: str
    url: str
    ready: bool
    model: str | None = None  # WDA's "device" ("iphone", "ipad")
    os: str | None = None  # "iOS 17.0"
    problem: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"serial": self.serial, "platform": "ios", "state": "ready" if self.ready else "not answering",
                "model": self.model, "os": self.os, "url": self.url, "problem": self.problem}


def list_iphones(settings: IosSettings, names: Collection[str] | None = None) -> list[IphoneListing]:
    """The iPhones of ``ios.devices`` (all, or those of ``names``), by name, each WDA asked
    ``/status`` once, all at the same time, waiting at most ``IPHONE_PROBE_S`` (or
    ``ios.timeout_s`` if shorter): one phone that does not answer delays the list by that, not
    by that once per phone."""
    chosen = sorted(n for n in settings.devices if names is None or n in names)
    if len(chosen) <= 1:
        return [_probe_iphone(settings, name) for name in chosen]
    with ThreadPoolExecutor(max_workers=min(len(chosen), 16), thread_name_prefix="wda-status") as pool:
        return list(pool.map(lambda name: _probe_iphone(settings, name), chosen))


def _probe_iphone(settings: IosSettings, name: str) -> IphoneListing:
    serial, url = IOS_PREFIX + name, settings.devices[name]
    client = WdaClient(url, timeout_s=min(settings.timeout_s, IPHONE_PROBE_S))
    try:
        status = client.status()
    except WdaError as exc:
        return IphoneListing(serial, url, False, problem=exc.message)
    finally:
        client.close()
    os_text = " ".join(p for p in (status.os_name, status.os_version) if p) or None
    ready = status.ready is not False
    return IphoneListing(serial, url, ready, model=status.device, os=os_text,
                         problem=None if ready else f"WebDriverAgent at {url} is not ready")


def phone_properties(settings: Settings, serial: str) -> dict[str, str]:
    """What a farm routes a phone by (``server.farm.routing``): its ``platform``, and ``model``,
    ``android``, ``sdk``, ``density`` read over adb (``getprop``) for an Android phone, or
    ``model`` (WDA's device kind), ``ios`` (the version) and ``density`` for an iPhone. Raises the device's
    error when it does not answer."""
    if platform_of(serial) == "ios":
        iphone = open_iphone(settings.ios, serial)
        try:
            status = iphone.client.status()
            density = iphone.screen_info().density  # 160 per point: Android's dp is iOS's point
        finally:
            iphone.client.close()
        found = {"platform": "ios", "model": status.device or "", "ios": status.os_version or "", "density": str(density)}
        return {key: value for key, value in found.items() if value}
    device = open_device(settings.adb, serial=serial)
    props = {"platform": "android"}
    for key, prop in _ANDROID_PROPS.items():
        value = device.shell(["getprop", prop]).strip()
        if value:
            props[key] = value
    return props


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


def close_phone(phone: Phone) -> None:
    """Let go of what ``open_phone`` opened: an iPhone's HTTP client (its connections to WDA);
    an Android phone holds nothing open. The caller is done with ``phone``."""
    if isinstance(phone, IosDevice):
        phone.client.close()


def open_phone(settings: Settings, serial: str | None = None) -> Phone:
    """``serial`` (or ``adb.serial``): an iPhone for ``ios:NAME``, else ``open_device``."""
    chosen = serial or settings.adb.serial
    if chosen is not None and chosen.startswith(IOS_PREFIX):
        return open_iphone(settings.ios, chosen)
    return open_device(settings.adb, serial)
