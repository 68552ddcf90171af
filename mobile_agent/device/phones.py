"""``open_phone``: the phone a run drives, Android or iPhone, by its serial.

``ios:NAME`` is the iPhone whose WebDriverAgent URL ``ios.devices`` names (docs/ios.md);
any other serial (or none) is an Android phone behind the adb server (``open_device``).
Callers above the device layer get a phone of the one device protocol and never ask
which kind it is.

``ios:<UDID>`` is an iPhone attached over USB (usbmuxd, ``mobile_agent.device.ios.usb``:
pymobiledevice3 where installed, ``ios.usb``): opening it starts the phone's one loopback
forward to its WDA port, and ``close_phone`` lets go of it.

``list_iphones`` asks each configured or USB-attached iPhone's WDA whether it is ready (the Android
phones are ``list_devices``'s); ``platform_of`` names a serial's platform and
``phone_properties`` what a farm routes on (the platform included), so the layers above
list, route and open both kinds without telling them apart themselves.

May import: the standard library, ``mobile_agent.errors``/``settings`` and the sibling
modules of this package.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from mobile_agent.device.device import Device
from mobile_agent.device.ios.device import IOS_PREFIX, IosDevice
from mobile_agent.device.ios.usb import (
    UsbIphone,
    UsbmuxError,
    UsbWdaClient,
    attached_iphones,
    open_forward,
    same_udid,
    usb_enabled,
)
from mobile_agent.device.ios.wda import WdaClient, WdaError, shown_url
from mobile_agent.device.selection import open_device
from mobile_agent.errors import DeviceNotFoundError, DeviceOfflineError
from mobile_agent.settings import IosSettings, Settings

__all__ = [
    "IPHONE_PROBE_S",
    "PLATFORM_PHONES",
    "IphoneListing",
    "Phone",
    "close_phone",
    "device_refusal",
    "Platform",
    "iphone_names",
    "list_iphones",
    "open_iphone",
    "open_phone",
    "phone_properties",
    "platform_of",
    "usb_iphones",
    "wda_url",
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


PLATFORM_PHONES: dict[str, str] = {"android": "an Android phone", "ios": "an iPhone"}


def device_refusal(serial: str, platform: str) -> str | None:
    """Why phone ``serial`` cannot run what ``platform``'s phones run (it is of the other), or None:
    the words every interface gives (``mobile_agent.apps.platforms``, the service's routing)."""
    if platform_of(serial) == platform:
        return None
    return f"device {serial!r} is not {PLATFORM_PHONES.get(platform, platform)}"


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


def usb_iphones(settings: IosSettings) -> tuple[list[UsbIphone], str | None]:
    """The iPhones usbmuxd lists now that no name of ``ios.devices`` shadows, and why none could
    be listed (``None``: USB is off by ``ios.usb``, or usbmuxd answered)."""
    try:
        if not usb_enabled(settings):
            return [], None
        return [p for p in attached_iphones(settings) if p.name not in settings.devices], None
    except UsbmuxError as exc:
        return [], exc.message


def iphone_names(settings: IosSettings) -> list[str]:
    """Every iPhone's name (its serial without ``ios:``): those of ``ios.devices`` and those of
    the phones attached over USB now (``ios.usb_names``, else the UDID)."""
    return sorted(settings.devices) + [p.name for p in usb_iphones(settings)[0]]


def _usb_url(settings: IosSettings, udid: str) -> str:
    return f"usbmux://{udid}:{settings.wda_port}"  # what a listing names: the phone's WDA port over USB


def list_iphones(settings: IosSettings, names: Collection[str] | None = None) -> list[IphoneListing]:
    """The iPhones of ``ios.devices`` and those attached over USB (all, or those of ``names``:
    one listing each, in the order of ``sorted(names)``), by name, each WDA asked ``/status``
    once, all at the same time, waiting at most ``IPHONE_PROBE_S`` (or ``ios.timeout_s`` if
    shorter): one phone that does not answer delays the list by that, not by that once per
    phone. A USB iPhone's WDA is asked through its forward; a name asked for that is neither
    configured nor attached (unplugged) is listed not ready."""
    wanted = set(settings.devices) | set(names or ())
    usb: dict[str, UsbIphone] = {}
    usb_problem: str | None = None
    if names is None or wanted - set(settings.devices):
        found, usb_problem = usb_iphones(settings)
        usb = {p.name: p for p in found}
        wanted |= set(usb)
    chosen = sorted(n for n in wanted if names is None or n in names)

    def probe(name: str) -> IphoneListing:
        if name in settings.devices:
            return _probe_iphone(settings, name)
        if name in usb:
            return _probe_usb_iphone(settings, usb[name])
        problem = usb_problem or "not attached over USB (usbmuxd does not list it)"
        udid = settings.usb_names.get(name, name)
        return IphoneListing(IOS_PREFIX + name, _usb_url(settings, udid), False, problem=problem)

    if len(chosen) <= 1:
        return [probe(name) for name in chosen]
    with ThreadPoolExecutor(max_workers=min(len(chosen), 16), thread_name_prefix="wda-status") as pool:
        return list(pool.map(probe, chosen))


def _probe_iphone(settings: IosSettings, name: str) -> IphoneListing:
    client = WdaClient(settings.devices[name], timeout_s=min(settings.timeout_s, IPHONE_PROBE_S))
    return _probe_client(IOS_PREFIX + name, shown_url(settings.devices[name]), client)


def _probe_usb_iphone(settings: IosSettings, phone: UsbIphone) -> IphoneListing:
    url = _usb_url(settings, phone.udid)
    try:
        forward = open_forward(settings, phone.udid)
    except UsbmuxError as exc:
        return IphoneListing(phone.serial, url, False, problem=exc.message)
    listing = _probe_client(phone.serial, url, UsbWdaClient(forward, timeout_s=min(settings.timeout_s, IPHONE_PROBE_S)))
    if listing.ready:
        return listing
    # the client's message names the forward's passing local port: say what it stands for
    problem = f"WebDriverAgent on the USB iPhone's port {settings.wda_port} (is it running? docs/ios.md): {listing.problem}"
    return dataclasses.replace(listing, problem=problem)


def _probe_client(serial: str, url: str, client: WdaClient) -> IphoneListing:
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
        return _open_usb_iphone(settings, serial, name)
    return IosDevice(name, _ready(serial, shown_url(url), WdaClient(url, timeout_s=settings.timeout_s)))


def _open_usb_iphone(settings: IosSettings, serial: str, name: str) -> IosDevice:
    """``ios:<UDID>``, a phone usbmuxd lists: its WDA through the phone's forward. Not listed
    (or no usbmuxd): ``DeviceNotFoundError`` naming the configured and the attached iPhones."""
    known = ", ".join(IOS_PREFIX + n for n in sorted(settings.devices)) or "none (set ios.devices)"
    attached, problem = usb_iphones(settings)
    phone = next((p for p in attached if name == p.name or same_udid(name, p.udid)), None)
    if phone is None:
        usb = f"; over USB: {problem}" if problem else (
            "; attached over USB: " + (", ".join(p.serial for p in attached) or "none") if usb_enabled(settings) else "")
        raise DeviceNotFoundError(f"no iPhone named {name!r}; configured iPhones: {known}{usb}", serial=serial)
    try:
        forward = open_forward(settings, phone.udid)
    except UsbmuxError as exc:
        raise DeviceOfflineError(exc.message, serial=phone.serial) from None
    where = f"{forward.url} (USB, the phone's port {settings.wda_port})"
    return IosDevice(phone.name, _ready(phone.serial, where, UsbWdaClient(forward, timeout_s=settings.timeout_s)))


def _ready(serial: str, where: str, client: WdaClient) -> WdaClient:
    """``client`` once its WDA answered ``/status`` ready; else closed, and ``DeviceOfflineError``."""
    try:
        status = client.status()
    except WdaError as exc:
        client.close()
        raise DeviceOfflineError(f"the iPhone {serial}'s WebDriverAgent at {where} does not answer: {exc.message}",
                                 serial=serial) from exc
    if status.ready is False:
        client.close()
        raise DeviceOfflineError(f"the iPhone {serial}'s WebDriverAgent at {where} is not ready", serial=serial)
    return client


def wda_url(phone: object) -> str | None:
    """The WebDriverAgent URL an iPhone opened by ``open_phone`` talks to (``ios.devices``'s, or
    a USB iPhone's local forward); None for anything else (an Android phone)."""
    return phone.client.base_url if isinstance(phone, IosDevice) else None


def close_phone(phone: Phone) -> None:
    """Let go of what ``open_phone`` opened: an iPhone's HTTP client (its connections to WDA;
    a USB iPhone's forward with the last of its opens); an Android phone holds nothing open.
    The caller is done with ``phone``."""
    if isinstance(phone, IosDevice):
        phone.client.close()


def open_phone(settings: Settings, serial: str | None = None, *, cancel: threading.Event | None = None) -> Phone:
    """``serial`` (or ``adb.serial``): an iPhone for ``ios:NAME``, else ``open_device``.
    ``cancel`` (the run's event) ends an Android phone's wait to come back (``Device``); an
    iPhone's calls are bounded by ``ios.timeout_s``."""
    chosen = serial or settings.adb.serial
    if chosen is not None and chosen.startswith(IOS_PREFIX):
        return open_iphone(settings.ios, chosen)
    return open_device(settings.adb, serial, cancel=cancel)
