"""Free loopback ports for the tests' servers."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A free TCP port on 127.0.0.1 outside 5555–5585: the adb server takes a listener
    there for an emulator, which would show up as one more device in every test."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if not 5555 <= port <= 5585:
            return port
