"""Free loopback ports for servers this project starts itself (a private adb server, a
simulated phone): the quick start, the CI's smoke checks, the benchmarks and the tests.

May import: the standard library only (the tests import it before adbutils reads
``ANDROID_ADB_SERVER_PORT``).
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

__all__ = ["quiet_port"]

# The adb server scans 5555-5585 for emulators: a listener there shows up as one more device.
_EMULATOR_PORTS = range(5554, 5586)
_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_pick = random.SystemRandom()  # two processes started at once still pick apart


def _ephemeral_low() -> int | None:
    try:
        return int(_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _any_free(host: str, avoid: frozenset[int]) -> int:
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            port = int(sock.getsockname()[1])
        if port not in _EMULATOR_PORTS and port not in avoid:
            return port


def quiet_port(host: str = "127.0.0.1", *, avoid: tuple[int, ...] = ()) -> int:
    """A free TCP port on ``host`` below the kernel's ephemeral range, for a server that will
    listen on it soon.

    A port of the ephemeral range (what a bind to port 0 hands out) may go, between this check
    and the server's own bind, to any outgoing connection of any process as its own end; the
    server then cannot listen (adb: "could not install *smartsocket* listener: Address already
    in use"). No socket takes a port below the range unless it asks for that number, so only
    another such pick can take it. Where the range cannot be read (not Linux) or starts too
    low to leave room, a port from the kernel as usual."""
    taken = frozenset(avoid)
    low = _ephemeral_low()
    if low is None or low <= 12000:
        return _any_free(host, taken)
    for _ in range(100):
        port = _pick.randrange(10000, low)
        if port in taken or port in _EMULATOR_PORTS:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
        return port
    return _any_free(host, taken)
