"""Validation of what reaches a device command: serials, addresses, package names.

A value that fails raises ``DeviceError`` subclasses with a message saying what a valid
one looks like. May import: the standard library and ``mobile_agent.errors``.
"""

from __future__ import annotations

import re

from mobile_agent.errors import AppNotFoundError, DeviceError

__all__ = ["validate_address", "validate_package", "validate_serial"]

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
