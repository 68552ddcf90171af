"""ADB transport framing: the 24-byte message header, commands, the device banner.

Facts from AOSP ``protocol.txt`` as measured against adb 29 and adb 36 (see
``/work/shared/notes/adb-device-protocol.md``): six little-endian u32 (command, arg0,
arg1, data_length, data_check, magic = command ^ 0xFFFFFFFF); ``data_check`` is a byte
sum, skipped (0) from version 0x01000001 on.

May import: the standard library only.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = [
    "A_AUTH",
    "A_CLSE",
    "A_CNXN",
    "A_OKAY",
    "A_OPEN",
    "A_STLS",
    "A_VERSION",
    "A_VERSION_MIN",
    "A_WRTE",
    "AUTH_RSAPUBLICKEY",
    "AUTH_SIGNATURE",
    "AUTH_TOKEN",
    "DEVICE_FEATURES",
    "HEADER",
    "MAX_PAYLOAD",
    "MAX_PAYLOAD_LEGACY",
    "Header",
    "ProtocolError",
    "checksum",
    "command_name",
    "device_banner",
    "pack_header",
    "parse_header",
]

A_CNXN = 0x4E584E43
A_AUTH = 0x48545541
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_STLS = 0x534C5453
_KNOWN = {
    A_CNXN: "CNXN",
    A_AUTH: "AUTH",
    A_OPEN: "OPEN",
    A_OKAY: "OKAY",
    A_CLSE: "CLSE",
    A_WRTE: "WRTE",
    A_STLS: "STLS",
}

A_VERSION_MIN = 0x01000000
A_VERSION = 0x01000001  # "skip checksum"

AUTH_TOKEN = 1
AUTH_SIGNATURE = 2
AUTH_RSAPUBLICKEY = 3

MAX_PAYLOAD = 1024 * 1024
MAX_PAYLOAD_LEGACY = 4096  # what may be sent before the handshake is done

# No sendrecv_v2 / delayed_ack: not implemented, so not advertised.
DEVICE_FEATURES = (
    "shell_v2",
    "cmd",
    "stat_v2",
    "ls_v2",
    "fixed_push_mkdir",
    "apex",
    "abb",
    "abb_exec",
    "fixed_push_symlink_timestamp",
    "remount_shell",
)

HEADER = struct.Struct("<6I")


class ProtocolError(ValueError):
    """A message that breaks the framing rules; the connection that sent it is closed."""


@dataclass(frozen=True)
class Header:
    command: int
    arg0: int
    arg1: int
    data_length: int
    data_check: int

    @property
    def name(self) -> str:
        return command_name(self.command)


def command_name(command: int) -> str:
    return _KNOWN.get(command, f"0x{command:08x}")


def checksum(data: bytes | memoryview) -> int:
    return sum(data) & 0xFFFFFFFF


def pack_header(command: int, arg0: int, arg1: int, data_length: int, data_check: int = 0) -> bytes:
    return HEADER.pack(command, arg0, arg1, data_length, data_check, command ^ 0xFFFFFFFF)


def parse_header(raw: bytes, *, max_payload: int) -> Header:
    """Decode and check one header; raises ``ProtocolError`` on bad magic, command or size."""
    if len(raw) != HEADER.size:
        raise ProtocolError(f"short header: {len(raw)} bytes")
    command, arg0, arg1, length, check, magic = HEADER.unpack(raw)
    if magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad magic 0x{magic:08x} for command 0x{command:08x}")
    if command not in _KNOWN:
        raise ProtocolError(f"unknown command 0x{command:08x}")
    if length > max_payload:
        raise ProtocolError(f"{command_name(command)} payload of {length} bytes exceeds {max_payload}")
    return Header(command, arg0, arg1, length, check)


def device_banner(name: str, model: str, device: str, features: tuple[str, ...] = DEVICE_FEATURES) -> bytes:
    """The device's CNXN payload. Not NUL-terminated: the host would lose the last feature."""
    for label, value in (("name", name), ("model", model), ("device", device)):
        if any(c in value for c in ";=\0"):
            raise ValueError(f"ro.product.{label} may not contain ';', '=' or NUL: {value!r}")
    props = f"ro.product.name={name};ro.product.model={model};ro.product.device={device};"
    if not features:  # adbd before Android 7 announced no features at all
        return f"device::{props}".encode()
    return f"device::{props}features={','.join(features)}".encode()
