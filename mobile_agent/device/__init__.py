"""The ADB device layer: choose a phone, capture its screen, send it input.

Public API (see docs/architecture.md, ``mobile_agent.device``): ``open_device``,
``list_devices``, ``connect``, ``Device``, ``DeviceInfo``, ``Screenshot``,
``ScreenInfo``, ``PhoneLease`` (one phone, one run, across interfaces); ``open_phone`` (an
Android phone or, for ``ios:NAME``, an iPhone: docs/ios.md), ``close_phone``, ``list_iphones``,
``platform_of``, ``phone_properties``, ``iphone_names`` (configured and USB-attached iPhones), ``wda_url``. Errors are the ``DeviceError`` subtree of ``mobile_agent.errors``.

May import: adbutils, numpy, Pillow, the standard library, ``mobile_agent.errors`` and
``mobile_agent.settings``.
"""

from __future__ import annotations

from mobile_agent.device.device import Device, ScreenInfo, ScreenState, frame_difference
from mobile_agent.device.lease import PhoneLease, lease_holder
from mobile_agent.device.parsing import LauncherApp
from mobile_agent.device.phones import (
    PLATFORM_PHONES,
    IphoneListing,
    Phone,
    Platform,
    close_phone,
    device_refusal,
    iphone_names,
    list_iphones,
    open_phone,
    phone_properties,
    platform_of,
    wda_url,
)
from mobile_agent.device.screenshot import Screenshot
from mobile_agent.device.selection import open_device
from mobile_agent.device.server import DeviceInfo, adb_version, connect, ensure_server, find_adb, list_devices
from mobile_agent.device.validation import KEYCODES, validate_address, validate_package, validate_serial

__all__ = [
    "KEYCODES",
    "PLATFORM_PHONES",
    "Device",
    "DeviceInfo",
    "IphoneListing",
    "LauncherApp",
    "Phone",
    "PhoneLease",
    "Platform",
    "ScreenInfo",
    "ScreenState",
    "Screenshot",
    "adb_version",
    "close_phone",
    "connect",
    "device_refusal",
    "ensure_server",
    "find_adb",
    "frame_difference",
    "iphone_names",
    "lease_holder",
    "list_devices",
    "list_iphones",
    "open_device",
    "open_phone",
    "phone_properties",
    "platform_of",
    "validate_address",
    "validate_package",
    "validate_serial",
    "wda_url",
]
