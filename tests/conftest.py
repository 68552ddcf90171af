"""Shared test fixtures: a private adb server and simulated phones behind it.

Everything goes through real parts: the adb binary bundled in the ``adbutils`` wheel,
started on its own free port for this test session, and ``simphone.Phone`` objects
served over the ADB transport by ``simphone.server.PhoneServer`` on loopback.

Fixtures
--------
``adb_server`` (session)
    ``.port``, ``.adb_path``, ``.home`` (its HOME/TMPDIR: key and logs),
    ``.client`` (``adbutils.AdbClient(host="127.0.0.1", port=PORT)``),
    ``.run(*args, text=True, timeout=30, input=None) -> CompletedProcess`` (the adb CLI,
    ``-P PORT`` added; ``text=False`` for bytes), ``.state(serial) -> str | None``
    (``device`` / ``offline`` / ``unauthorized`` or None when not listed) and
    ``.wait_state(serial, state, timeout=15)``.
    ``ANDROID_ADB_SERVER_PORT`` is set in ``os.environ`` when this file is imported, so
    adbutils' module-level client (``adbutils.adb``) talks to this server too. HOME and
    TMPDIR are changed only for the adb server process, not for the tests.

``sim_phone`` (function; the server behind it is shared by the whole session)
    A connected 1080x2400 ``simphone.Phone``, reset before each test: ``.serial``
    (``"127.0.0.1:PORT"``), ``.phone`` (the in-process Phone, to read its state),
    ``.device`` (``adbutils.AdbDevice``), ``.server`` (the ``PhoneServer``), ``.adb``
    (the ``adb_server`` handle), ``.kill()`` / ``.revive(reconnect=True)``, and over ADB:
    ``.element(text)`` (ground truth), ``.tap_element(text)``, ``.adb_state()``.
    Tests that kill a phone should use ``sim_phones`` so the shared one stays up.

``sim_phones`` (function) — a factory
    ``sim_phones(n=1, *, unauthorized=False, **phone_kwargs) -> list[SimPhoneHandle]``:
    n fresh phones (``profile="pixel7-14"`` plays that real phone; numbered 1..n, so
    their serials differ) on their own ``PhoneServer`` (one port each), connected (unless
    unauthorized: those show ``unauthorized`` in ``adb devices``); all disconnected and
    stopped after the test. ``handle.kill()`` drops the listener and its connections
    (the adb server shows the phone ``offline``); ``handle.revive()`` listens again on the
    same port and, with ``reconnect=True``, runs ``adb disconnect`` + ``adb connect`` and
    waits for ``device`` (``reconnect=False`` leaves it to the adb server's own retry,
    about 10 s later).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# The helper modules whose fixtures every tier uses, served to all tests from here: a test
# module asks for `llm_server`, `service`, `postgres_server`/`pg_database`, `browser` or
# `usb_iphone` by name and never imports them (tests/unit/test_test_layout.py). Imported by pytest after this
# file has run, so after ANDROID_ADB_SERVER_PORT is set below.
pytest_plugins = ["tests.llm_fixtures", "tests.server_fixtures", "tests.pg_fixtures", "tests.browser_support",
                  "tests.usbmux_fake"]

# The Ctrl-C tests send SIGINT to `mobile-agent run` / `simphone serve` subprocesses, which
# inherit an ignored SIGINT (and Python then installs no KeyboardInterrupt handler): a shell
# without job control starts a background `pytest … &` so. Restored here, the children get
# SIGINT's default whichever way the suite was started.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _adb_server_port() -> int:
    """A free port below the kernel's ephemeral range, for this session's adb server.

    The port is chosen when this file is imported and bound only when a test first asks for
    ``adb_server``: on a pytest-xdist worker, after a collection that takes a minute or more. A
    port of the ephemeral range may meanwhile go to any socket of this or another process (a
    bind to port 0, any outgoing connection's own port), and then the adb server cannot start
    (``pytest.exit``: the worker's whole session lost). ``quiet_port`` picks below the range,
    where no socket gets a port unless it asks for that number."""
    from mobile_agent.ports import quiet_port  # the standard library only: adbutils stays unimported

    return quiet_port()


# Before anything imports adbutils' module-level client (it reads this when built).
_ADB_PORT = _adb_server_port()
os.environ["ANDROID_ADB_SERVER_PORT"] = str(_ADB_PORT)

import adbutils  # noqa: E402

if TYPE_CHECKING:
    from simphone import Phone
    from simphone.server import PhoneServer

# simphone is imported inside the fixtures: a half-edited phone model must not stop the
# tests of other areas from being collected.


def _bundled_adb() -> str:
    path = Path(adbutils.__file__).parent / "binaries" / "adb"
    if not path.is_file():
        pytest.exit(f"the adbutils wheel has no adb binary at {path}", returncode=3)
    return str(path)


@dataclass
class AdbServerHandle:
    """A private adb server for the test session."""

    port: int
    adb_path: str
    home: Path
    client: adbutils.AdbClient
    env: dict[str, str] = field(repr=False, default_factory=dict)

    def run(
        self, *args: str, text: bool = True, timeout: float = 30.0, input: str | bytes | None = None
    ) -> subprocess.CompletedProcess:
        """Run the adb CLI against this server (``adb -P PORT ARGS``); never raises on rc."""
        return subprocess.run(
            [self.adb_path, "-P", str(self.port), *args],
            env=self.env,
            capture_output=True,
            text=text,
            timeout=timeout,
            input=input,
        )

    def state(self, serial: str) -> str | None:
        for info in self.client.list():
            if info.serial == serial:
                return info.state
        return None

    def wait_state(self, serial: str, state: str | None, timeout: float = 15.0) -> None:
        """Wait until ``serial`` is in ``state`` (None: not listed at all)."""
        deadline = time.monotonic() + timeout
        seen = self.state(serial)
        while seen != state:
            if time.monotonic() > deadline:
                raise AssertionError(f"{serial} stayed {seen!r}, expected {state!r} within {timeout}s")
            time.sleep(0.02)
            seen = self.state(serial)

    def connect(self, serial: str, *, expect: str = "device", timeout: float = 15.0) -> None:
        self.client.connect(serial, timeout=timeout)
        self.wait_state(serial, expect, timeout=timeout)

    def disconnect(self, serial: str) -> None:
        try:
            self.client.disconnect(serial, raise_error=False)
        except adbutils.AdbError:
            pass


@pytest.fixture(scope="session")
def adb_server() -> Iterator[AdbServerHandle]:
    home = Path(tempfile.mkdtemp(prefix="adb-home-"))
    env = dict(os.environ, HOME=str(home), TMPDIR=str(home), ANDROID_ADB_SERVER_PORT=str(_ADB_PORT))
    handle = AdbServerHandle(
        port=_ADB_PORT,
        adb_path=_bundled_adb(),
        home=home,
        client=adbutils.AdbClient(host="127.0.0.1", port=_ADB_PORT),
        env=env,
    )
    started = handle.run("start-server", timeout=60)
    if started.returncode != 0:
        pytest.exit(f"adb start-server failed: {started.stderr}", returncode=3)
    try:
        yield handle
    finally:
        handle.run("kill-server", timeout=30)
        shutil.rmtree(home, ignore_errors=True)


@dataclass
class SimPhoneHandle:
    """One simulated phone as a test sees it."""

    serial: str
    phone: Phone
    device: adbutils.AdbDevice
    server: PhoneServer
    adb: AdbServerHandle

    def kill(self, *, wait_offline: bool = True) -> None:
        """Switch the phone off: listener and connections dropped."""
        self.server.kill(self.serial)
        if wait_offline:
            self.adb.wait_state(self.serial, "offline")

    def revive(self, *, reconnect: bool = True, timeout: float = 15.0) -> None:
        self.server.revive(self.serial)
        if reconnect:
            self.adb.disconnect(self.serial)
            self.adb.connect(self.serial, timeout=timeout)
        else:
            self.adb.wait_state(self.serial, "device", timeout=timeout)

    # Over ADB, as a person's script would see the phone (not through the in-process object).

    def element(self, text: str) -> dict:
        """The first on-screen element whose text or description is ``text``
        (``cmd simphone ground-truth``)."""
        for el in json.loads(self.device.shell(["cmd", "simphone", "ground-truth"])):
            if text in (el["text"], el["description"]):
                return el
        raise AssertionError(f"{text!r} not on screen")

    def tap_element(self, text: str) -> None:
        left, top, right, bottom = self.element(text)["box"]
        self.device.click((left + right) // 2, (top + bottom) // 2)

    def adb_state(self) -> dict:
        """The phone's state as ``dumpsys simphone`` prints it."""
        return json.loads(self.device.shell(["dumpsys", "simphone"]))


@pytest.fixture(scope="session")
def _shared_phone(adb_server: AdbServerHandle) -> Iterator[SimPhoneHandle]:
    from simphone import Phone
    from simphone.server import PhoneServer

    phone = Phone()
    server = PhoneServer(phone).start()
    serial = server.serials[0]
    adb_server.connect(serial)
    handle = SimPhoneHandle(serial, phone, adb_server.client.device(serial), server, adb_server)
    try:
        yield handle
    finally:
        adb_server.disconnect(serial)
        server.stop()


@pytest.fixture
def sim_phone(_shared_phone: SimPhoneHandle) -> SimPhoneHandle:
    handle = _shared_phone
    if hasattr(handle.phone, "reset"):
        handle.phone.reset()
    if not handle.server.endpoint(handle.serial).listening or handle.adb.state(handle.serial) != "device":
        handle.revive(reconnect=True)
    return handle


@pytest.fixture
def wda():  # -> Iterator[tests.wda_fake.FakeWda]
    """A fake WebDriverAgent answering the recorded real samples of ``tests/data/wda``
    (``tests.wda_fake``): the iOS client's and backend's truth about WDA's formats."""
    from tests.wda_fake import FakeWda

    fake = FakeWda().start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def front():  # -> Iterator[simphone.ios.WdaFrontEnd]
    """A simulated iPhone behind its WebDriverAgent front-end (``simphone serve --ios``, scale 3):
    ``front.url`` is what ``ios.devices`` names, ``front.phone`` the phone's model. No adb."""
    from simphone import Phone
    from simphone.ios import WdaFrontEnd

    server = WdaFrontEnd(Phone(), scale=3).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def sim_phones(adb_server: AdbServerHandle):
    from simphone import Phone
    from simphone.server import PhoneServer

    servers: list[PhoneServer] = []
    handles: list[SimPhoneHandle] = []

    def make(n: int = 1, *, unauthorized: bool = False, **phone_kwargs: object) -> list[SimPhoneHandle]:
        if n < 1:
            raise ValueError(f"n must be at least 1, got {n}")
        phones = [Phone(**{"number": i + 1, **phone_kwargs}) for i in range(n)]  # type: ignore[arg-type]
        server = PhoneServer(phones, unauthorized=unauthorized).start()
        servers.append(server)
        made = []
        for phone, serial in zip(phones, server.serials, strict=True):
            if unauthorized:
                try:  # adb reports "failed to authenticate": that is the point
                    adb_server.client.connect(serial, timeout=15)
                except adbutils.AdbError:
                    pass
                adb_server.wait_state(serial, "unauthorized")
            else:
                adb_server.connect(serial)
            made.append(SimPhoneHandle(serial, phone, adb_server.client.device(serial), server, adb_server))
        handles.extend(made)
        return made

    yield make
    for handle in handles:
        adb_server.disconnect(handle.serial)
    for server in servers:
        server.stop()
