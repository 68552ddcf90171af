"""The benchmarks' test rig: a private adb server, simulated phones behind it, timing.

The same real parts as the tests (tests/conftest.py), for scripts rather than fixtures:

- ``free_port()``: a free loopback port below the kernel's ephemeral range and outside
  5554-5585 (the adb server scans that range for emulators and would pick a simulated phone
  up twice);
- ``private_adb_server()``: the adb binary from the adbutils wheel on ``ADB_PORT``, its own
  HOME/TMPDIR in a temporary folder; killed and cleaned up on exit;
- ``served_phones(n, **phone_kwargs)``: n ``simphone.Phone`` objects served by
  ``simphone.server.PhoneServer``, ``adb connect``ed until they show ``device``;
  disconnected and stopped on exit;
- ``open_service(serial, service)``: a plain socket to the adb server, switched to one
  device service (the transport's floor, no client library);
- ``medians_ms`` / ``samples_ms``: round-robin timing.

Importing this module picks ``ADB_PORT`` and sets ``ANDROID_ADB_SERVER_PORT``, so that
adbutils' module-level client (built when adbutils is imported) talks to the private
server too: import it before anything imports adbutils. Imports only simphone, adbutils
(lazily) and ``mobile_agent.ports`` (the standard library's sockets), never the agent.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import adbutils

    from simphone import Phone


def free_port() -> int:
    """A free loopback port below the ephemeral range, outside 5554-5585
    (``mobile_agent.ports.quiet_port``: the server binds it later, maybe minutes later)."""
    from mobile_agent.ports import quiet_port

    return quiet_port()


if "adbutils" in sys.modules:  # its module client has already read the environment
    raise RuntimeError("import benchmarks.rig before adbutils: it sets ANDROID_ADB_SERVER_PORT")
ADB_PORT = free_port()
os.environ["ANDROID_ADB_SERVER_PORT"] = str(ADB_PORT)


@dataclass
class AdbRig:
    """The running private adb server."""

    port: int
    adb_path: str
    home: Path
    client: adbutils.AdbClient
    env: dict[str, str] = field(repr=False, default_factory=dict)

    def run(self, *args: str, timeout: float = 30.0, check: bool = False) -> subprocess.CompletedProcess:
        """The adb CLI against this server: ``adb -P PORT ARGS``."""
        return subprocess.run(
            [self.adb_path, "-P", str(self.port), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
        )

    def connect(self, *serials: str, timeout: float = 30.0) -> None:
        """``adb connect`` each serial and wait until all show ``device``."""
        for serial in serials:
            self.client.connect(serial, timeout=timeout)
        deadline = time.monotonic() + timeout
        while {d.serial for d in self.client.list() if d.state == "device"} < set(serials):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{', '.join(serials)} did not all come up within {timeout:g} s")
            time.sleep(0.05)

    def disconnect(self, *serials: str) -> None:
        for serial in serials:  # the phone then shuts its side down quietly
            self.run("disconnect", serial)


_current: AdbRig | None = None


@contextmanager
def private_adb_server() -> Iterator[AdbRig]:
    """Start the adbutils wheel's adb binary on ``ADB_PORT`` with its own HOME/TMPDIR."""
    global _current
    import adbutils

    if _current is not None:
        raise RuntimeError("a private adb server is already running in this process")
    adb_path = Path(adbutils.__file__).parent / "binaries" / "adb"
    if not adb_path.is_file():
        raise FileNotFoundError(f"the adbutils wheel has no adb binary at {adb_path}")
    home = Path(tempfile.mkdtemp(prefix="bench-adb-"))
    env = dict(os.environ, HOME=str(home), TMPDIR=str(home))
    rig = AdbRig(ADB_PORT, str(adb_path), home, adbutils.AdbClient(host="127.0.0.1", port=ADB_PORT), env)
    try:
        rig.run("start-server", timeout=60, check=True)
        _current = rig
        yield rig
    finally:
        _current = None
        rig.run("kill-server")
        shutil.rmtree(home, ignore_errors=True)


@contextmanager
def served_phones(n: int = 1, **phone_kwargs: Any) -> Iterator[tuple[list[str], list[Phone]]]:
    """n simulated phones (``Phone(seed=i, **phone_kwargs)``) served over ADB and connected
    to the running private adb server; yields ``(serials, phones)``."""
    from simphone import Phone
    from simphone.server import PhoneServer

    rig = _current
    if rig is None:
        raise RuntimeError("served_phones() needs a running private_adb_server()")
    phones = [Phone(**{"seed": i, **phone_kwargs}) for i in range(n)]
    server = PhoneServer(phones).start()
    serials = list(server.serials)
    try:
        rig.connect(*serials)
        yield serials, phones
    finally:
        rig.disconnect(*serials)
        server.stop()


def open_service(serial: str, service: str, port: int = ADB_PORT) -> socket.socket:
    """A plain socket to the adb server, switched to ``serial``'s ``service`` (e.g.
    ``exec:screencap``); the caller reads the stream and closes it."""
    sock = socket.create_connection(("127.0.0.1", port))
    try:
        for request in (f"host:transport:{serial}", service):
            data = request.encode()
            sock.sendall(b"%04x" % len(data) + data)
            status = sock.recv(4, socket.MSG_WAITALL)
            if status != b"OKAY":
                raise RuntimeError(f"adb server refused {request!r}: {status!r}")
    except BaseException:
        sock.close()
        raise
    return sock


def samples_ms(fns: dict[str, Callable[[], object]], repeat: int, warmup: int = 2) -> dict[str, list[float]]:
    """Wall time in ms of each call of each function, measured round-robin so that the
    machine's load drifts over all of them alike (it is shared)."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            started = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - started) * 1000)
    return times


def medians_ms(fns: dict[str, Callable[[], object]], repeat: int, warmup: int = 2) -> dict[str, float]:
    """Median wall time in ms of each function, measured round-robin (see ``samples_ms``)."""
    return {name: statistics.median(t) for name, t in samples_ms(fns, repeat, warmup).items()}
