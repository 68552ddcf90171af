"""One adb host connection to a simulated phone: handshake, streams, services.

``DeviceConnection.serve()`` runs on the server's asyncio loop. It answers CNXN (or, for
an unauthorized phone, keeps asking for AUTH and never accepts), opens streams on OPEN,
acknowledges every host WRTE with OKAY, and sends data as WRTE chunks of at most
min(host maxdata, own maxdata), waiting for the host's OKAY after each one. Services:
``shell:`` / ``exec:`` (raw, stderr merged), ``shell,v2,...:`` (shell protocol with exit
codes), ``sync:``, ``framebuffer:``, ``abb_exec:`` / ``abb:`` (``cmd SERVICE ARGS``); anything else is
refused with CLSE. A malformed message closes this connection only.

Shell commands run in a worker thread (``phone.run`` may render), one at a time per
phone, so several phones on one loop keep answering.

May import: the standard library, ``simphone.shell``, ``simphone.types``, ``simphone.adb.*``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import struct
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from simphone.adb.protocol import (
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_VERSION,
    A_VERSION_MIN,
    A_WRTE,
    AUTH_SIGNATURE,
    AUTH_TOKEN,
    DEVICE_FEATURES,
    HEADER,
    MAX_PAYLOAD,
    MAX_PAYLOAD_LEGACY,
    ProtocolError,
    checksum,
    device_banner,
    pack_header,
    parse_header,
)
from simphone.adb.sync import SyncSession
from simphone.shell import STDERR, STDOUT, ShellOutput, run_script
from simphone.types import CommandResult, PhoneLike

__all__ = ["DeviceConnection", "PhoneSlot"]

log = logging.getLogger(__name__)

# Shell protocol v2 packet ids (AOSP shell_protocol.h).
_SHELL_STDIN, _SHELL_STDOUT, _SHELL_STDERR, _SHELL_EXIT, _SHELL_CLOSE_STDIN = 0, 1, 2, 3, 4
_SHELL_PACKET = struct.Struct("<BI")
# screencap pixel format -> (red offset, length, blue offset, length, green offset, length,
# alpha offset, length) as the framebuffer: service reports them.
_FRAMEBUFFER_LAYOUTS = {1: (0, 8, 16, 8, 8, 8, 24, 8), 2: (0, 8, 16, 8, 8, 8, 24, 0)}


@dataclass
class PhoneSlot:
    """What a connection needs of the phone it serves (shared by all its connections)."""

    phone: PhoneLike
    unauthorized: bool = False
    maxdata: int = MAX_PAYLOAD
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def features(self) -> tuple[str, ...]:
        """What adbd announces: the phone's own list where it has one (an Android 6 phone
        has none: no shell protocol v2, so stderr comes merged into stdout)."""
        own = getattr(self.phone, "adb_features", None)
        return DEVICE_FEATURES if own is None else tuple(own)

    def run_script(self, script: str) -> ShellOutput:
        with self.lock:
            return run_script(script, self.phone, run_pending=self._without_lock)

    def _without_lock(self, pending: Callable[[], CommandResult]) -> CommandResult:
        """A long-running program (screenrecord) runs on with the slot free: the phone's
        other connections (input, screencap, the pkill that stops it) are served meanwhile."""
        self.lock.release()
        try:
            return pending()
        finally:
            self.lock.acquire()

    def run_argv(self, argv: list[str]) -> CommandResult:
        with self.lock:
            return self.phone.run(argv)


class _StreamClosed(Exception):
    pass


class _Stream:
    def __init__(self, local_id: int, remote_id: int, *, reads_input: bool) -> None:
        self.local_id = local_id
        self.remote_id = remote_id
        # What the host writes to a service that never reads it (a command's unread
        # stdin) is dropped, so it cannot pile up in memory.
        self.reads_input = reads_input
        self.acked = asyncio.Event()
        self.acked.set()
        self.inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.buffer = bytearray()
        self.closed = False
        self.task: asyncio.Task[None] | None = None

    async def read_exact(self, n: int) -> bytes:
        while len(self.buffer) < n:
            data = await self.inbox.get()
            if data is None:
                raise _StreamClosed
            self.buffer += data
        out = bytes(self.buffer[:n])
        del self.buffer[:n]
        return out

    async def read_some(self) -> bytes | None:
        if self.buffer:
            out = bytes(self.buffer)
            self.buffer.clear()
            return out
        return await self.inbox.get()


_Handler = Callable[[_Stream], Awaitable[None]]


class DeviceConnection:
    """The device end of one adb transport connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, slot: PhoneSlot) -> None:
        self.reader = reader
        self.writer = writer
        self.slot = slot
        self.online = False
        self.version = A_VERSION
        self.chunk = MAX_PAYLOAD_LEGACY
        self.streams: dict[int, _Stream] = {}
        self._next_id = 1
        self._auth_tokens_sent = 0
        self._drain_lock = asyncio.Lock()  # Python 3.10's drain() allows one waiter only

    # -- framing -----------------------------------------------------------------------------
    def _send(
        self,
        command: int,
        arg0: int,
        arg1: int,
        pieces: Iterable[bytes | memoryview] = (),
        size: int | None = None,
    ) -> None:
        pieces = list(pieces)
        if size is None:
            size = sum(len(p) for p in pieces)
        check = 0
        if self.version < A_VERSION and pieces:
            check = sum(checksum(p) for p in pieces) & 0xFFFFFFFF
        self.writer.write(pack_header(command, arg0, arg1, size, check))
        for piece in pieces:
            self.writer.write(piece)

    async def serve(self) -> None:
        peer = self.writer.get_extra_info("peername")
        try:
            while True:
                raw = await self.reader.readexactly(HEADER.size)
                header = parse_header(raw, max_payload=self.slot.maxdata)
                data = await self.reader.readexactly(header.data_length) if header.data_length else b""
                await self._dispatch(header.command, header.arg0, header.arg1, data)
                async with self._drain_lock:
                    await self.writer.drain()
        except ProtocolError as exc:
            log.warning("closing adb connection from %s: %s", peer, exc)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._close_all()

    def _close_all(self) -> None:
        for stream in list(self.streams.values()):
            self._drop(stream)
        self.writer.close()

    def abort(self) -> None:
        """Drop the TCP connection at once, like a phone that lost power."""
        transport = self.writer.transport
        transport.abort()

    # -- messages ------------------------------------------------------------------------------
    async def _dispatch(self, command: int, arg0: int, arg1: int, data: bytes) -> None:
        if command == A_CNXN:
            self._on_cnxn(arg0, arg1)
        elif command == A_AUTH:
            self._on_auth(arg0)
        elif not self.online:
            raise ProtocolError(f"0x{command:08x} before the handshake")
        elif command == A_OPEN:
            self._on_open(arg0, data)
        elif command == A_OKAY:
            stream = self.streams.get(arg1)
            if stream is not None:
                stream.acked.set()
        elif command == A_WRTE:
            stream = self.streams.get(arg1)
            if stream is None:
                self._send(A_CLSE, 0, arg0)
                return
            if stream.reads_input:
                stream.inbox.put_nowait(data)
            self._send(A_OKAY, stream.local_id, stream.remote_id)
        elif command == A_CLSE:
            stream = self.streams.get(arg1)
            if stream is not None:
                self._drop(stream)
        # STLS: never offered, so never answered.

    def _on_cnxn(self, version: int, maxdata: int) -> None:
        if version < A_VERSION_MIN:
            raise ProtocolError(f"unsupported adb protocol version 0x{version:08x}")
        self.version = min(version, A_VERSION)
        self.chunk = max(256, min(maxdata, self.slot.maxdata))
        if self.slot.unauthorized:
            self._send_auth_token()
            return
        self._go_online()

    def _on_auth(self, kind: int) -> None:
        if not self.slot.unauthorized:
            return
        if kind == AUTH_SIGNATURE:
            self._send_auth_token()  # every signature is "wrong": ask again
        # AUTH_RSAPUBLICKEY: a real phone would show the "Allow USB debugging?" dialog.

    def _send_auth_token(self) -> None:
        self._auth_tokens_sent += 1
        self._send(A_AUTH, AUTH_TOKEN, 0, [os.urandom(20)])

    def _go_online(self) -> None:
        phone = self.slot.phone
        self.online = True
        self._send(
            A_CNXN, self.version, self.slot.maxdata,
            [device_banner(phone.name, phone.model, phone.device, self.slot.features)],
        )

    def _on_open(self, remote_id: int, data: bytes) -> None:
        service = data.rstrip(b"\0").decode("utf-8", "surrogateescape")
        found = self._service_handler(service)
        if found is None or remote_id == 0:
            log.info("refusing adb service %r", service)
            self._send(A_CLSE, 0, remote_id)
            return
        handler, reads_input = found
        local_id = self._next_id
        self._next_id += 1
        stream = _Stream(local_id, remote_id, reads_input=reads_input)
        self.streams[local_id] = stream
        self._send(A_OKAY, local_id, remote_id)
        stream.task = asyncio.get_running_loop().create_task(self._run_service(stream, handler, service))

    def _drop(self, stream: _Stream) -> None:
        stream.closed = True
        stream.acked.set()
        stream.inbox.put_nowait(None)
        self.streams.pop(stream.local_id, None)
        if stream.task is not None and stream.task is not asyncio.current_task():
            stream.task.cancel()

    # -- stream output --------------------------------------------------------------------------
    async def write_stream(self, stream: _Stream, pieces: Iterable[bytes | memoryview]) -> None:
        """Send ``pieces`` as WRTE messages of at most ``self.chunk`` bytes, no copies."""
        batch: list[memoryview] = []
        size = 0
        for piece in pieces:
            view = piece if isinstance(piece, memoryview) else memoryview(piece)
            offset = 0
            while offset < len(view):
                take = min(len(view) - offset, self.chunk - size)
                batch.append(view[offset : offset + take])
                size += take
                offset += take
                if size == self.chunk:
                    await self._write_chunk(stream, batch, size)
                    batch, size = [], 0
        if batch:
            await self._write_chunk(stream, batch, size)

    async def _write_chunk(self, stream: _Stream, batch: list[memoryview], size: int) -> None:
        await stream.acked.wait()
        if stream.closed:
            raise _StreamClosed
        stream.acked.clear()
        self._send(A_WRTE, stream.local_id, stream.remote_id, batch, size)
        async with self._drain_lock:
            await self.writer.drain()

    async def _finish(self, stream: _Stream) -> None:
        await stream.acked.wait()
        if not stream.closed:
            self._send(A_CLSE, stream.local_id, stream.remote_id)
            self.streams.pop(stream.local_id, None)
            stream.closed = True

    async def _run_service(self, stream: _Stream, handler: _Handler, service: str) -> None:
        try:
            await handler(stream)
            await self._finish(stream)
        except _StreamClosed:
            pass
        except asyncio.CancelledError:
            raise
        except (ConnectionError, RuntimeError) as exc:
            log.debug("service %r ended: %s", service, exc)
        except Exception:
            log.exception("service %r failed", service)
            if not stream.closed and not self.writer.is_closing():
                self._send(A_CLSE, stream.local_id, stream.remote_id)
                self.streams.pop(stream.local_id, None)

    # -- services --------------------------------------------------------------------------------
    def _service_handler(self, service: str) -> tuple[_Handler, bool] | None:
        """The handler of ``service`` and whether it reads what the host writes."""
        if service.startswith("shell"):
            head, colon, command = service.partition(":")
            if not colon:
                return None
            options = head.split(",")[1:]
            if head.split(",")[0] != "shell":
                return None
            v2 = "v2" in options
            if command == "":
                # A pty (the default) shows a prompt; "raw" (stdin not a terminal) doesn't.
                prompt = b"" if "raw" in options else b"$ "
                if v2:
                    return (lambda s: self._interactive_v2(s, prompt)), True
                return (lambda s: self._interactive_v1(s, prompt)), True
            if v2:
                return (lambda s: self._shell_v2(s, command)), False
            return (lambda s: self._shell_raw(s, command)), False
        if service.startswith("exec:"):
            command = service[len("exec:") :]
            return (lambda s: self._shell_raw(s, command)), False
        if service in ("sync:", "sync"):
            return self._sync, True
        if service == "framebuffer:":
            return self._framebuffer, False
        if service.startswith("abb_exec:") or service.startswith("abb:"):
            kind, _, rest = service.partition(":")
            argv = ["cmd", *[a for a in rest.split("\0") if a]]
            return (lambda s: self._abb(s, argv, v2=kind == "abb")), False
        return None

    async def _run_in_thread(self, script: str) -> ShellOutput:
        return await asyncio.get_running_loop().run_in_executor(None, self.slot.run_script, script)

    async def _shell_raw(self, stream: _Stream, command: str) -> None:
        output = await self._run_in_thread(command)
        await self.write_stream(stream, output.merged())

    async def _shell_v2(self, stream: _Stream, command: str) -> None:
        output = await self._run_in_thread(command)
        await self.write_stream(stream, _v2_pieces(output))

    async def _abb(self, stream: _Stream, argv: list[str], *, v2: bool) -> None:
        result = await asyncio.get_running_loop().run_in_executor(None, self.slot.run_argv, argv)
        chunks = [(STDOUT, result.stdout), (STDERR, result.stderr)]
        output = ShellOutput(chunks=chunks[::-1] if result.stderr_first else chunks, exit_code=result.exit_code)
        await self.write_stream(stream, _v2_pieces(output) if v2 else output.merged())

    async def _interactive_v1(self, stream: _Stream, prompt: bytes) -> None:
        """``adb shell`` without a command on a raw stream: a line-at-a-time shell."""
        pending = b""
        await self.write_stream(stream, [prompt])
        while True:
            data = await stream.read_some()
            if data is None:
                return
            pending += data.replace(b"\r", b"\n")
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                output = await self._run_in_thread(line.decode("utf-8", "replace"))
                if output.exited:
                    await self.write_stream(stream, output.merged())
                    return
                await self.write_stream(stream, [*output.merged(), prompt])

    async def _interactive_v2(self, stream: _Stream, prompt: bytes) -> None:
        """``adb shell`` without a command over shell protocol v2 (stdin packets)."""
        pending = b""
        status = 0
        await self.write_stream(stream, _prompt_packet(prompt))
        while True:
            kind, length = _SHELL_PACKET.unpack(await stream.read_exact(_SHELL_PACKET.size))
            payload = await stream.read_exact(length) if length else b""
            if kind == _SHELL_CLOSE_STDIN:
                break
            if kind != _SHELL_STDIN:
                continue  # window size changes
            pending += payload.replace(b"\r", b"\n")
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                output = await self._run_in_thread(line.decode("utf-8", "replace"))
                status = output.exit_code
                if output.exited:
                    await self.write_stream(stream, _v2_pieces(output))
                    return
                pieces = _v2_pieces(output, with_exit=False)
                await self.write_stream(stream, [*pieces, *_prompt_packet(prompt)])
        await self.write_stream(stream, [_SHELL_PACKET.pack(_SHELL_EXIT, 1), bytes([status])])

    async def _framebuffer(self, stream: _Stream) -> None:
        """The legacy ``framebuffer:`` service: a DDMS raw-image v1 header, then the pixels."""
        output = await self._run_in_thread("screencap")
        raw = output.stdout
        if output.exit_code != 0 or len(raw) < 12:
            return  # a real adbd closes the stream when screencap fails
        width, height, fmt = struct.unpack_from("<III", raw)
        layout = _FRAMEBUFFER_LAYOUTS.get(fmt)
        pixels = width * height * 4
        if layout is None or len(raw) - pixels not in (12, 16):
            log.warning("framebuffer: unsupported screencap output (format %d, %d bytes)", fmt, len(raw))
            return
        header = struct.pack("<13I", 1, 32, pixels, width, height, *layout)
        await self.write_stream(stream, [header, memoryview(raw)[len(raw) - pixels :]])

    async def _sync(self, stream: _Stream) -> None:
        session = SyncSession(
            getattr(self.slot.phone, "fs", None),
            stream.read_exact,
            lambda pieces: self.write_stream(stream, pieces),
        )
        await session.run()


def _prompt_packet(prompt: bytes) -> list[bytes]:
    return [_SHELL_PACKET.pack(_SHELL_STDOUT, len(prompt)), prompt] if prompt else []


def _v2_pieces(output: ShellOutput, *, with_exit: bool = True) -> list[bytes | memoryview]:
    pieces: list[bytes | memoryview] = []
    for fd, data in output.chunks:
        if data:
            pieces.append(_SHELL_PACKET.pack(_SHELL_STDOUT if fd == STDOUT else _SHELL_STDERR, len(data)))
            pieces.append(data)
    if with_exit:
        pieces.append(_SHELL_PACKET.pack(_SHELL_EXIT, 1))
        pieces.append(bytes([output.exit_code & 0xFF]))
    return pieces
