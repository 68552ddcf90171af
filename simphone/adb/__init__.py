"""The device side of the ADB transport for simulated phones.

``simphone.adb.protocol`` (framing), ``simphone.adb.connection`` (one host connection:
handshake, streams, shell / exec / sync services), ``simphone.adb.sync`` (push / pull).
``PhoneServer`` (in ``simphone.server``) listens on TCP ports and is re-exported here.

May import: the standard library, ``simphone.shell``, ``simphone.fs``, ``simphone.types``.
"""

from __future__ import annotations

from typing import Any

from simphone.adb.connection import DeviceConnection, PhoneSlot
from simphone.adb.protocol import MAX_PAYLOAD, ProtocolError, device_banner

__all__ = ["MAX_PAYLOAD", "DeviceConnection", "PhoneServer", "PhoneSlot", "ProtocolError", "device_banner"]


def __getattr__(name: str) -> Any:
    # Lazy: simphone.server imports this package, so a top-level import would be circular.
    if name == "PhoneServer":
        from simphone.server import PhoneServer

        return PhoneServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
