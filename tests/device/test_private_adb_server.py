"""A private adb server started on a port another socket took meanwhile (stop 36's refused CI).

The quick start, the CI's smoke checks and the benchmarks start an adb server of their own
(``start_private_server``). A port picked free can be taken before adb's daemon binds it, by
any outgoing connection's own end; adb then exits 255 ("could not install *smartsocket*
listener: Address already in use"). The real adb binary, a port held by a real connection.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mobile_agent import ports
from mobile_agent.device import server
from mobile_agent.device.adb_protocol import AdbHost
from mobile_agent.errors import AdbServerError
from mobile_agent.settings import AdbSettings


@pytest.fixture
def adb_env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, HOME=str(tmp_path), TMPDIR=str(tmp_path))


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port held as the own end of an established loopback connection (not listening)."""
    with socket.socket() as listener, socket.socket() as client:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        client.bind(("127.0.0.1", ports.quiet_port()))
        client.connect(listener.getsockname())
        accepted, _ = listener.accept()
        with accepted:
            yield client.getsockname()[1]


def _kill(adb: Path, port: int, env: dict[str, str]) -> None:
    subprocess.run([str(adb), "-P", str(port), "kill-server"], env=env, capture_output=True, timeout=30, check=False)


def test_quiet_ports_are_free_and_below_the_ephemeral_range() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    picked = {ports.quiet_port() for _ in range(20)}
    assert all(port < low and not 5554 <= port <= 5585 for port in picked), picked
    for port in picked:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))  # free when handed out
    avoided = tuple(range(10000, 10000 + (low - 10000) // 2))  # half the room below the range
    again = {ports.quiet_port(avoid=avoided) for _ in range(20)}
    assert not again & set(avoided), sorted(again & set(avoided))


def test_a_taken_port_is_left_for_another(
    taken_port: int, adb_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    adb = server.find_adb(AdbSettings())
    offered = [taken_port]
    real_pick = ports.quiet_port

    def pick(host: str = "127.0.0.1", *, avoid: tuple[int, ...] = ()) -> int:
        return offered.pop(0) if offered else real_pick(host, avoid=avoid)

    monkeypatch.setattr(server, "quiet_port", pick)
    port = server.start_private_server(adb, env=adb_env)
    try:
        assert port != taken_port
        assert AdbHost("127.0.0.1", port, 5.0).server_version() > 0
    finally:
        _kill(adb, port, adb_env)


def test_the_last_attempt_says_why(taken_port: int, adb_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    adb = server.find_adb(AdbSettings())
    monkeypatch.setattr(server, "quiet_port", lambda host="127.0.0.1", *, avoid=(): taken_port)
    with pytest.raises(AdbServerError) as caught:
        server.start_private_server(adb, env=adb_env, attempts=2)
    assert "Address already in use" in caught.value.message
    assert str(taken_port) in caught.value.message
