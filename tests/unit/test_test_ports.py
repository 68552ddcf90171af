"""The tests' free ports (``tests.ports.free_port``) are picked where nothing takes them before
the test's server binds: below the kernel's ephemeral range, which an outgoing connection of any
process (the suite makes thousands: adb, httpx, PostgreSQL) may take as its own end meanwhile,
and outside the ports the adb server scans for emulators."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.ports import free_port

RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


@pytest.mark.skipif(not RANGE.is_file(), reason="no /proc/sys/net/ipv4/ip_local_port_range (not Linux)")
def test_free_ports_are_below_the_ephemeral_range_and_free() -> None:
    low = int(RANGE.read_text().split()[0])
    picked = [free_port() for _ in range(50)]
    if low > 12000:  # room below the range (Linux's default starts at 32768)
        assert all(port < low for port in picked), (low, picked)
    assert not [port for port in picked if 5554 <= port <= 5585]
    for port in picked[:5]:  # each one can be listened on
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            server.bind(("127.0.0.1", port))
            server.listen()
