"""``PhoneServer``: serves one or many simulated phones over ADB-on-TCP.

Each phone gets its own TCP port (``adb connect 127.0.0.1:PORT``); all ports share one
asyncio loop running in a background thread, so tests and the CLI use the server
in-process. ``kill(serial)`` drops a phone's listener and connections (the host sees it
``offline``), ``revive(serial)`` listens again on the same port.

Ports 5555-5585 are where the adb server auto-detects emulators; they are refused unless
``allow_emulator_ports=True``.

May import: the standard library, ``simphone.adb``, ``simphone.types``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from simphone.adb.connection import DeviceConnection, PhoneSlot
from simphone.adb.protocol import MAX_PAYLOAD
from simphone.types import PhoneLike

__all__ = ["EMULATOR_PORTS", "Endpoint", "PhoneServer"]

log = logging.getLogger(__name__)

EMULATOR_PORTS = range(5555, 5586)
T = TypeVar("T")
_START_TIMEOUT_S = 10.0
_DRAIN_TIMEOUT_S = 2.0


@dataclass
class Endpoint:
    """One served phone: where it listens and whether it is up."""

    phone: PhoneLike
    host: str
    port: int
    unauthorized: bool = False
    listening: bool = False
    slot: PhoneSlot | None = field(default=None, repr=False)
    _server: asyncio.base_events.Server | None = field(default=None, repr=False)
    _connections: set[DeviceConnection] = field(default_factory=set, repr=False)

    @property
    def serial(self) -> str:
        return f"{self.host}:{self.port}"


class PhoneServer:
    """Serve phones over the device side of the ADB transport.

    ``PhoneServer(phones, port=0)`` gives each phone a free port (``port=N`` uses N, N+1,
    …). Use as a context manager or call ``start()`` / ``stop()``.
    """

    def __init__(
        self,
        phones: PhoneLike | Iterable[PhoneLike] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        unauthorized: bool = False,
        maxdata: int = MAX_PAYLOAD,
        allow_emulator_ports: bool = False,
    ) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be 0..65535, got {port}")
        if not 256 <= maxdata <= MAX_PAYLOAD:
            raise ValueError(f"maxdata must be 256..{MAX_PAYLOAD}, got {maxdata}")
        self.host = host
        self.unauthorized = unauthorized
        self.maxdata = maxdata
        self.allow_emulator_ports = allow_emulator_ports
        self._next_port = port
        self._endpoints: list[Endpoint] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        if hasattr(phones, "run"):
            phones = [phones]  # type: ignore[list-item]
        for phone in phones:  # type: ignore[union-attr]
            self._register(phone, port=None, unauthorized=None)

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self) -> PhoneServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._loop is not None

    def start(self) -> PhoneServer:
        if self._loop is not None:
            return self
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run_loop() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        self._thread = threading.Thread(target=run_loop, name="simphone-adb", daemon=True)
        self._thread.start()
        ready.wait(_START_TIMEOUT_S)
        self._loop = loop
        try:
            for endpoint in self._endpoints:
                self._call(self._listen(endpoint))
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None:
            return

        async def shutdown() -> None:
            for endpoint in self._endpoints:
                await self._unlisten(endpoint)
            # The aborted connections end their own tasks; cancelling a connection task
            # instead makes Python 3.11's stream protocol log the CancelledError.
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if others:
                _done, pending = await asyncio.wait(others, timeout=_DRAIN_TIMEOUT_S)
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(_START_TIMEOUT_S)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(_START_TIMEOUT_S)
            loop.close()
            self._thread = None

    # -- phones --------------------------------------------------------------------------------
    @property
    def endpoints(self) -> list[Endpoint]:
        return list(self._endpoints)

    @property
    def serials(self) -> list[str]:
        return [e.serial for e in self._endpoints]

    def endpoint(self, which: str | PhoneLike) -> Endpoint:
        for endpoint in self._endpoints:
            if endpoint.serial == which or endpoint.phone is which:
                return endpoint
        raise KeyError(f"no phone served as {which!r}")

    def add_phone(
        self, phone: PhoneLike, *, port: int | None = None, unauthorized: bool | None = None
    ) -> Endpoint:
        """Serve one more phone (now, if the server is running); returns its endpoint."""
        endpoint = self._register(phone, port=port, unauthorized=unauthorized)
        if self._loop is not None:
            try:
                self._call(self._listen(endpoint))
            except BaseException:
                self._endpoints.remove(endpoint)
                raise
        return endpoint

    def kill(self, which: str | PhoneLike) -> None:
        """Stop listening and drop every connection, as if the phone were switched off."""
        self._call(self._unlisten(self.endpoint(which)))

    def revive(self, which: str | PhoneLike) -> None:
        """Listen again on the same port after ``kill``."""
        endpoint = self.endpoint(which)
        if not endpoint.listening:
            self._call(self._listen(endpoint))

    # -- internals ------------------------------------------------------------------------------
    def _register(self, phone: PhoneLike, *, port: int | None, unauthorized: bool | None) -> Endpoint:
        for attr in ("run", "name", "model", "device"):
            if not hasattr(phone, attr):
                raise TypeError(f"{type(phone).__name__} is not a phone: it has no {attr!r}")
        if port is None:
            port = self._next_port
            if self._next_port:
                self._next_port += 1
        if port and port in EMULATOR_PORTS and not self.allow_emulator_ports:
            raise ValueError(
                f"port {port} is in 5555-5585, where the adb server auto-registers emulators; "
                "pick another port or pass allow_emulator_ports=True"
            )
        if port and any(e.port == port for e in self._endpoints):
            raise ValueError(f"port {port} is already used by another phone")
        flag = self.unauthorized if unauthorized is None else unauthorized
        endpoint = Endpoint(phone=phone, host=self.host, port=port, unauthorized=flag)
        endpoint.slot = PhoneSlot(phone=phone, unauthorized=flag, maxdata=self.maxdata)
        self._endpoints.append(endpoint)
        return endpoint

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(_START_TIMEOUT_S)

    async def _listen(self, endpoint: Endpoint) -> None:
        assert endpoint.slot is not None
        slot = endpoint.slot

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            connection = DeviceConnection(reader, writer, slot)
            endpoint._connections.add(connection)
            try:
                await connection.serve()
            finally:
                endpoint._connections.discard(connection)

        server = await asyncio.start_server(on_connect, endpoint.host, endpoint.port)
        if endpoint.port == 0:
            endpoint.port = server.sockets[0].getsockname()[1]
        endpoint._server = server
        endpoint.listening = True
        log.info("serving %s (%s) on %s", endpoint.phone.name, endpoint.phone.model, endpoint.serial)

    async def _unlisten(self, endpoint: Endpoint) -> None:
        server, endpoint._server = endpoint._server, None
        endpoint.listening = False
        if server is not None:
            server.close()
        for connection in list(endpoint._connections):
            connection.abort()
        if server is not None:
            await server.wait_closed()
