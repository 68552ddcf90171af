"""Validation of what reaches a device command: serials, addresses, package names,
key names (``KEYCODES``), coordinates and durations.

A bad serial / address raises ``DeviceError``, a bad package ``AppNotFoundError``, a bad
key, coordinate or duration ``ValueError``; each message says what a valid one looks like. May import: numpy, the standard library and ``mobile_agent.errors``.
"""

from __future__ import annotations

import re

import numpy as np

from mobile_agent.errors import AppNotFoundError, DeviceError

__all__ = [
    "KEYCODES",
    "check_coordinate",
    "check_duration",
    "keycode_for",
    "validate_address",
    "validate_package",
    "validate_serial",
]

# USB serials are alphanumeric; emulators are emulator-NNNN; network devices host:port
# ([v6]:port); mDNS ones look like adb-XXXX-YYYY._adb-tls-connect._tcp.
_SERIAL_RE = re.compile(r"^[A-Za-z0-9\[][A-Za-z0-9._:\-\[\]]{0,127}$")
_HOST_RE = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*$")
_IPV6_RE = re.compile(r"^\[[0-9A-Fa-f:.]+\]$")
# Java package names as Android requires them: two or more dotted identifiers.
_PACKAGE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+$")


def validate_serial(serial: str) -> str:
    if not isinstance(serial, str) or not _SERIAL_RE.fullmatch(serial):
        raise DeviceError(
            f"invalid device serial {serial!r}: expected letters, digits and . _ - : [ ] "
            "(e.g. emulator-5554, 192.168.1.5:5555, R58M123ABC)",
            serial=str(serial),
        )
    return serial


def validate_address(address: str) -> str:
    """``host:port`` for ``adb connect`` (port 1-65535)."""
    if not isinstance(address, str) or ":" not in address:
        raise DeviceError(f"invalid address {address!r}: expected host:port, e.g. 192.168.1.5:5555", serial=str(address))
    host, _, port = address.rpartition(":")
    ok_host = bool(_HOST_RE.fullmatch(host) or _IPV6_RE.fullmatch(host))
    ok_port = port.isascii() and port.isdigit() and 1 <= int(port) <= 65535
    if not (ok_host and ok_port):
        raise DeviceError(f"invalid address {address!r}: expected host:port, e.g. 192.168.1.5:5555", serial=address)
    return address


def validate_package(package: str) -> str:
    if not isinstance(package, str) or len(package) > 255 or not _PACKAGE_RE.fullmatch(package):
        raise AppNotFoundError(
            f"invalid package name {package!r}: expected a Java package such as com.android.settings",
            app=str(package),
        )
    return package


KEYCODES: dict[str, int] = {
    "home": 3,
    "back": 4,
    "call": 5,
    "volume_up": 24,
    "volume_down": 25,
    "power": 26,
    "camera": 27,
    "tab": 61,
    "space": 62,
    "enter": 66,
    "delete": 67,
    "backspace": 67,
    "menu": 82,
    "search": 84,
    "escape": 111,
    "forward_delete": 112,
    "move_home": 122,
    "move_end": 123,
    "app_switch": 187,
    "recent": 187,
    "wakeup": 224,
}


def check_coordinate(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float)):
        raise ValueError(f"coordinate must be a number, got {value!r}")
    if value != value or not 0 <= value <= 100_000:  # NaN or off any screen
        raise ValueError(f"coordinate out of range: {value!r}")
    return int(round(value))


def check_duration(ms: int) -> int:
    if isinstance(ms, bool) or not isinstance(ms, (int, float, np.integer)) or not 0 <= ms <= 60_000:
        raise ValueError(f"duration_ms must be between 0 and 60000, got {ms!r}")
    return int(ms)


def keycode_for(name: str | int) -> int | str:
    if isinstance(name, bool):
        raise ValueError(f"invalid key {name!r}")
    if isinstance(name, int):
        if not 0 <= name <= 400:
            raise ValueError(f"keycode out of range: {name}")
        return name
    if isinstance(name, str):
        key = name.strip()
        if key.isascii() and key.isdigit():
            return keycode_for(int(key))
        lowered = key.lower()
        if lowered in KEYCODES:
            return KEYCODES[lowered]
        if lowered.startswith("keycode_") and lowered[8:] in KEYCODES:
            return KEYCODES[lowered[8:]]
        upper = key.upper()
        if upper.startswith("KEYCODE_") and upper[8:].replace("_", "").isalnum() and upper.isascii():
            return upper
    raise ValueError(
        f"unknown key {name!r}: use one of {', '.join(sorted(KEYCODES))}, KEYCODE_<NAME>, or a keycode number"
    )
