"""The adb server's smart-socket protocol, spoken over a raw socket.

Why not adbutils for every call: its ``AdbConnection.close()`` sleeps 10 ms, each
device call opens two connections, and its read loop concatenates 4 KiB chunks
(quadratic for a 10 MB framebuffer). Here a call is one connection, and a stream of
known size is read once into a preallocated buffer with ``recv_into``.

Requests are ``%04x`` + ASCII text; the server answers ``OKAY`` or ``FAIL`` + a
length-prefixed message. ``host:transport:SERIAL`` switches the connection to the
device, after which a service (``exec:``, ``shell:``, ``shell,v2,raw:``) streams.

May import: numpy, the standard library, ``mobile_agent.errors`` and ``displays``.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from mobile_agent.device.displays import split_text_preamble
from mobile_agent.errors import (
    AdbServerError,
    DeviceCommandError,
    DeviceError,
    DeviceLostError,
    DeviceNotFoundError,
    DeviceOfflineError,
    DeviceUnauthorizedError,
    MultipleDevicesError,
    RunCancelled,
)

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

T = TypeVar("T")

__all__ = ["AdbHost", "ShellResult", "failure_to_error"]

_OKAY = b"OKAY"
_FAIL = b"FAIL"
_RECV_CHUNK = 1 << 20
_MAX_PREAMBLE = 8192  # text before a framebuffer: a few warning lines, never more

# shell protocol v2 packet ids (AOSP adb/shell_protocol.h)
_V2_STDOUT = 1
_V2_STDERR = 2
_V2_EXIT = 3

UNAUTHORIZED_HINT = "accept the 'Allow USB debugging?' RSA prompt on the phone, then retry"

# A run's connections look at its cancel this often while the adb server has not answered; once
# the cancel is set, a wait idle this long ends the call (RunCancelled). An answer that comes
# sooner still counts: the IME put back after a cancelled Type, on a phone that answers.
CANCEL_SLICE_S = 0.25
CANCEL_GRACE_S = 2.0


class ShellResult:
    """What a device command printed, and its exit code when the shell protocol gives one."""

    __slots__ = ("exit_code", "stderr", "stdout")

    def __init__(self, stdout: bytes, stderr: bytes, exit_code: int | None) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.exit_code = exit_code

    def __repr__(self) -> str:
        return f"ShellResult(exit_code={self.exit_code}, stdout={self.stdout[:60]!r}, stderr={self.stderr[:60]!r})"


def failure_to_error(message: str, serial: str | None, request: str = "") -> DeviceError:
    """The typed error for a ``FAIL`` answer of the adb server to ``request``."""
    text = message.lower()
    if "unauthorized" in text:
        return DeviceUnauthorizedError(
            f"device {serial or ''} is unauthorized: {UNAUTHORIZED_HINT}".replace("  ", " "),
            serial=serial,
            hint=UNAUTHORIZED_HINT,
        )
    if "offline" in text:
        return DeviceOfflineError(
            f"device {serial} is offline: reconnect it (USB cable, or `adb disconnect` + `adb connect`)",
            serial=serial,
        )
    if "connecting" in text or "authorizing" in text:
        return DeviceOfflineError(f"device {serial} is not ready yet ({message}): retry in a moment", serial=serial)
    if "more than one" in text:
        return MultipleDevicesError(f"adb server: {message}", serials=[], serial=serial)
    if "not found" in text or "no devices" in text or "no emulators" in text:
        return DeviceNotFoundError(
            f"device {serial!r} is not attached (`mobile-agent devices` lists what is)", serial=serial
        )
    return DeviceCommandError(
        f"adb server refused {request!r}: {message}", serial=serial, command=request, output=message
    )


class AdbHost:
    """The adb server at ``host:port``. Holds no connection: every call opens its own,
    so one ``AdbHost`` can serve several threads at once."""

    def __init__(self, host: str, port: int, timeout_s: float, *, cancel: threading.Event | None = None) -> None:
        self.host = host
        self.port = port
        self.timeout_s = timeout_s
        self.cancel = cancel  # a run's: a call the adb server leaves hanging ends soon after it is set

    def watching(self, cancel: threading.Event) -> AdbHost:
        """The same server, for a run with ``cancel``: a wait for an answer that hangs (a wedged adb
        server, a frozen phone) ends ``CANCEL_GRACE_S`` after the cancel with ``RunCancelled``
        instead of after ``timeout_s`` (``adb.command_timeout_s``)."""
        return AdbHost(self.host, self.port, self.timeout_s, cancel=cancel)

    # --- connections -------------------------------------------------------------------

    def connect(self) -> socket.socket:
        try:
            sock = socket.create_connection((self.host, self.port), timeout=min(self.timeout_s, 5.0))
        except OSError as exc:
            raise AdbServerError(
                f"adb server at {self.host}:{self.port} is not answering ({exc})",
                host=self.host,
                port=self.port,
            ) from exc
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.cancel is not None:
            return _RunSocket.around(sock, self.cancel, self.timeout_s)
        sock.settimeout(self.timeout_s)
        return sock

    def reachable(self) -> bool:
        try:
            self.connect().close()
        except AdbServerError:
            return False
        return True

    @staticmethod
    def _send(sock: socket.socket, request: str) -> None:
        data = request.encode("utf-8")
        sock.sendall(b"%04x" % len(data) + data)

    @staticmethod
    def _check_okay(sock: socket.socket, serial: str | None, request: str) -> None:
        status = _read_exact(sock, 4)
        if status == _OKAY:
            return
        if status == _FAIL:
            raise failure_to_error(_read_block(sock).decode("utf-8", "replace"), serial, request)
        raise DeviceCommandError(
            f"adb server answered {status!r} to {request!r}, expected OKAY/FAIL", serial=serial, command=request
        )

    # --- host services -----------------------------------------------------------------

    def query(self, request: str, serial: str | None = None) -> str:
        """A host service answering one length-prefixed string (``host:version``…)."""
        sock = self.connect()
        try:
            self._send(sock, request)
            self._check_okay(sock, serial, request)
            return _read_block(sock).decode("utf-8", "replace")
        except (OSError, EOFError) as exc:
            raise AdbServerError(f"adb server connection failed during {request!r}: {exc}") from exc
        finally:
            sock.close()

    def server_version(self) -> int:
        return int(self.query("host:version"), 16)

    # --- device services ---------------------------------------------------------------

    def open_service(self, serial: str, service: str) -> socket.socket:
        """A socket streaming ``service`` on the device ``serial`` (OKAYs checked)."""
        sock = self.connect()
        try:
            self._send(sock, f"host:transport:{serial}")
            self._check_okay(sock, serial, f"host:transport:{serial}")
            self._send(sock, service)
            self._check_okay(sock, serial, service)
        except (OSError, EOFError) as exc:
            sock.close()
            raise DeviceLostError(f"device {serial} went away while opening {service!r}: {exc}", serial=serial) from exc
        except BaseException:
            sock.close()
            raise
        return sock

    def read_all(self, serial: str, service: str) -> bytes:
        """Everything ``service`` writes until the device closes the stream."""
        sock = self.open_service(serial, service)
        try:
            return b"".join(_iter_chunks(sock))
        except OSError as exc:
            raise DeviceLostError(f"device {serial} went away during {service!r}: {exc}", serial=serial) from exc
        finally:
            sock.close()

    def shell_v2(self, serial: str, command: str) -> ShellResult:
        """``shell,v2,raw:`` — stdout, stderr and the exit code, without a pty.

        A stream that ends without its exit packet means the device went away.
        """
        sock = self.open_service(serial, f"shell,v2,raw:{command}")
        out: list[bytes] = []
        err: list[bytes] = []
        try:
            reader = _BufferedReader(sock)
            while True:
                header = reader.read(5)
                if header is None:
                    raise DeviceLostError(
                        f"device {serial} went away during `{command}` (no exit status)", serial=serial
                    )
                kind, length = struct.unpack("<BI", header)
                payload = reader.read(length)
                if payload is None:
                    raise DeviceLostError(f"device {serial} went away during `{command}`", serial=serial)
                if kind == _V2_STDOUT:
                    out.append(payload)
                elif kind == _V2_STDERR:
                    err.append(payload)
                elif kind == _V2_EXIT:
                    return ShellResult(b"".join(out), b"".join(err), payload[0] if payload else 0)
        except OSError as exc:
            raise DeviceLostError(f"device {serial} went away during `{command}`: {exc}", serial=serial) from exc
        finally:
            sock.close()

    def shell_v1(self, serial: str, command: str) -> ShellResult:
        """``shell:`` — stdout and stderr merged, no exit code (devices without shell_v2)."""
        return ShellResult(self.read_all(serial, f"shell:{command}"), b"", None)

    def read_framebuffer(self, serial: str, service: str) -> tuple[int, int, int, np.ndarray, list[bytes]]:
        """Run ``screencap`` (raw) and return ``(width, height, format, bytes, preamble)``.

        Text lines printed before the image (the multi-display warning of Android 14+,
        which ``exec:`` merges from stderr) are taken off and returned as ``preamble``.
        The 12-byte header (width, height, format) is read next; the rest is received
        once into a buffer sized for the pixels plus the optional 4-byte colorspace of
        newer Android versions, whose presence the total length decides.
        """
        sock = self.open_service(serial, service)
        try:
            head = _read_exact(sock, 12)
            preamble: list[bytes] = []
            split = split_text_preamble(head)
            while split is None or (split[0] and len(split[1]) < 12):
                if len(head) > _MAX_PREAMBLE:
                    return 0, 0, 0, np.empty(0, np.uint8), [head[:200]]
                chunk = sock.recv(4096)
                if not chunk:
                    return 0, 0, 0, np.empty(0, np.uint8), [head[:200]]
                head += chunk
                split = split_text_preamble(head)
            preamble, head = split
            width, height, fmt = struct.unpack("<III", head[:12])
            extra = head[12:]
            bpp = _BYTES_PER_PIXEL.get(fmt)
            if bpp is None or not (0 < width <= 16384 and 0 < height <= 16384):
                return width, height, fmt, np.empty(0, np.uint8), preamble
            size = width * height * bpp
            buf = np.empty(max(size + 4, len(extra)), dtype=np.uint8)
            buf[: len(extra)] = np.frombuffer(extra, dtype=np.uint8)
            view = memoryview(buf.data)
            got = len(extra)
            while got < len(buf):
                n = sock.recv_into(view[got:], len(buf) - got)
                if n == 0:
                    break
                got += n
            if got == size + 4:
                pixels = buf[4:]
            elif got == size:
                pixels = buf[:size]
            else:
                return width, height, fmt, buf[:got], preamble
            return width, height, fmt, pixels, preamble
        except EOFError:
            return 0, 0, 0, np.empty(0, np.uint8), []
        except OSError as exc:
            raise DeviceLostError(f"device {serial} went away during a screenshot: {exc}", serial=serial) from exc
        finally:
            sock.close()


class _RunSocket(socket.socket):
    """A connection to the adb server for a run's device: its reads wait in slices of
    ``CANCEL_SLICE_S``, and look at the run's cancel between them. Idle for ``idle_limit_s``
    (``adb.command_timeout_s``) it times out as any connection does; once the cancel is set,
    idle for ``CANCEL_GRACE_S`` it ends with ``RunCancelled``. A read that gets data never
    looks: a cancel ends waits, not a call the phone answers."""

    cancel: threading.Event
    idle_limit_s: float

    @classmethod
    def around(cls, sock: socket.socket, cancel: threading.Event, idle_limit_s: float) -> _RunSocket:
        watched = cls(sock.family, sock.type, sock.proto, fileno=sock.detach())
        watched.cancel, watched.idle_limit_s = cancel, idle_limit_s
        watched.settimeout(CANCEL_SLICE_S)
        return watched

    def _waiting(self, read: Callable[[], T]) -> T:
        idle = idle_cancelled = 0.0
        while True:
            try:
                return read()
            except TimeoutError:
                idle += CANCEL_SLICE_S
                if self.cancel.is_set():
                    idle_cancelled += CANCEL_SLICE_S
                    if idle_cancelled >= CANCEL_GRACE_S:
                        raise RunCancelled("the run was cancelled while the adb server had not answered") from None
                if idle >= self.idle_limit_s:
                    raise

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        return self._waiting(lambda: super(_RunSocket, self).recv(bufsize, flags))

    def recv_into(self, buffer: WriteableBuffer, nbytes: int = 0, flags: int = 0) -> int:
        return self._waiting(lambda: super(_RunSocket, self).recv_into(buffer, nbytes, flags))


# PixelFormat values of android.graphics / ui/PixelFormat.h
_BYTES_PER_PIXEL = {1: 4, 2: 4, 3: 3, 4: 2, 5: 4}


def _iter_chunks(sock: socket.socket) -> Iterator[bytes]:
    while True:
        chunk = sock.recv(_RECV_CHUNK)
        if not chunk:
            return
        yield chunk


def _read_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise EOFError(f"stream ended after {got} of {n} bytes")
        got += k
    return bytes(buf)


def _read_block(sock: socket.socket) -> bytes:
    length = int(_read_exact(sock, 4), 16)
    return _read_exact(sock, length) if length else b""


class _BufferedReader:
    """Exact reads over a socket with few ``recv`` calls; ``None`` at end of stream."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buf = b""
        self._pos = 0

    def read(self, n: int) -> bytes | None:
        if len(self._buf) - self._pos < n:
            parts = [self._buf[self._pos :]]
            have = len(parts[0])
            while have < n:
                chunk = self._sock.recv(max(_RECV_CHUNK, n - have))
                if not chunk:
                    return None
                parts.append(chunk)
                have += len(chunk)
            self._buf, self._pos = b"".join(parts), 0
        data = self._buf[self._pos : self._pos + n]
        self._pos += n
        return data
