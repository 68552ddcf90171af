"""A fake usbmuxd for tests: a unix socket server speaking usbmuxd's plist protocol, so the
USB path of the iOS backend (``mobile_agent.device.ios.usb``, pymobiledevice3's own usbmux
client and forwarder) is tested without a Mac, an iPhone or a usbmuxd.

The wire format is usbmuxd's (``src/usbmuxd-proto.h``: a 16-byte little-endian header
length/version/message/tag, then an XML plist; version 1, message 8 = PLIST), and every
reply is built from the real packets of ``tests/data/usbmux/`` (a packet trace of macOS's
usbmuxd; SOURCES.md names it and usbmuxd's ``src/client.c`` for the rest): a device record is
the recorded ``Attached`` record with the device's id and UDID put in, a result is the
recorded ``Result`` with its number, ``Detached`` the recorded one with the id. For the
recorded phone (``SAMPLE_UDID``, device 38) the fake's bytes are the recording's, byte for byte
(tests/unit/test_usbmux_fake.py).

``Connect`` (``DeviceID``, ``PortNumber`` in network byte order, as libusbmuxd sends it)
answers ``Result`` 0 and then splices the client's socket to the TCP address the phone's port
maps to (a simulated iPhone's WDA front-end, ``simphone serve --ios``); an unknown device is
``BADDEV`` (2), a port nothing serves ``CONNREFUSED`` (3). ``unplug`` drops a phone: it leaves the
list, its spliced connections are cut, listeners get ``Detached``.
"""

from __future__ import annotations

import contextlib
import plistlib
import socket
import socketserver
import struct
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from mobile_agent.device.ios.usb import UsbForward
    from simphone.ios import WdaFrontEnd

DATA = Path(__file__).resolve().parent / "data" / "usbmux"
SAMPLE_UDID = "00008120-0006696026A2201E"  # the recorded phone (list_devices_reply.bin)
SAMPLE_DEVICE_ID = 38
# the iPhone of the ``usb_iphone`` fixture (an A12-or-later UDID: <ChipID:8>-<ECID:16>) and its serial
USB_UDID = "00008110-000A1B2C3D4E5F60"
USB_SERIAL = "ios:" + USB_UDID
BUID = "7A1C9C34-1F0B-4E39-9C3E-2A6D3B8F5E21"  # a system BUID (usbmuxd's config.c makes a UUID)

HEADER = struct.Struct("<IIII")  # length (with the header), version, message, tag
PLIST_VERSION, PLIST_MESSAGE = 1, 8
RESULT_OK, RESULT_BADCOMMAND, RESULT_BADDEV, RESULT_CONNREFUSED = 0, 1, 2, 3  # usbmuxd-proto.h


def recorded(name: str) -> tuple[tuple[int, int, int, int], dict[str, Any]]:
    """A recorded packet of ``tests/data/usbmux``: its header and its plist."""
    data = (DATA / f"{name}.bin").read_bytes()
    header = HEADER.unpack(data[: HEADER.size])
    return header, plistlib.loads(data[HEADER.size:])


def packet(tag: int, body: dict[str, Any]) -> bytes:
    payload = plistlib.dumps(body)  # Apple's XML plist layout (tabs, sorted keys): what usbmuxd sends
    return HEADER.pack(HEADER.size + len(payload), PLIST_VERSION, PLIST_MESSAGE, tag) + payload


@dataclass
class FakeUsbIphone:
    """A phone on the fake cable: its UDID, usbmuxd's id for it, and what each of its ports is
    (port -> a TCP address on this machine)."""

    udid: str
    device_id: int
    ports: dict[int, tuple[str, int]] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """The recorded ``Attached`` record, this phone's id and UDID in it."""
        _, attached = recorded("attached")
        attached["DeviceID"] = self.device_id
        props = attached["Properties"]
        props["DeviceID"] = self.device_id
        props["SerialNumber"] = self.udid
        props["USBSerialNumber"] = self.udid.replace("-", "")
        return attached


class FakeUsbmuxd:
    """``FakeUsbmuxd(path).start()``; ``attach(phone)``, ``unplug(udid)``, ``stop()``. ``requests``
    holds every message a client sent (its header and plist); ``connects`` the (udid, port) of each
    ``Connect`` that was spliced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.phones: dict[str, FakeUsbIphone] = {}
        self.requests: list[tuple[tuple[int, int, int, int], dict[str, Any]]] = []
        self.connects: list[tuple[str, int]] = []
        self._spliced: dict[str, list[socket.socket]] = {}
        self._listeners: list[socket.socket] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                fake._serve(self.request)

        self._server = socketserver.ThreadingUnixStreamServer(str(path), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-usbmuxd", daemon=True)

    def start(self) -> FakeUsbmuxd:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            for sockets in self._spliced.values():
                for s in sockets:
                    _close(s)
            for s in self._listeners:
                _close(s)
        self.path.unlink(missing_ok=True)

    def attach(self, phone: FakeUsbIphone) -> FakeUsbIphone:
        with self._lock:
            self.phones[phone.udid] = phone
            listeners = list(self._listeners)
        for s in listeners:
            _send(s, packet(0, phone.record()))
        return phone

    def unplug(self, udid: str) -> None:
        """The cable pulled: the phone leaves the list, its connections end, listeners hear it."""
        with self._lock:
            phone = self.phones.pop(udid)
            cut = self._spliced.pop(udid, [])
            listeners = list(self._listeners)
        for s in cut:
            _close(s)
        _, detached = recorded("detached")
        detached["DeviceID"] = phone.device_id
        for s in listeners:
            _send(s, packet(0, detached))

    # --- one client ---------------------------------------------------------------------

    def _serve(self, client: socket.socket) -> None:
        while True:
            header = _recv(client, HEADER.size)
            if header is None:
                return
            length, version, message, tag = HEADER.unpack(header)
            payload = _recv(client, length - HEADER.size) if length > HEADER.size else b""
            if payload is None:
                return
            if version != PLIST_VERSION or message != PLIST_MESSAGE:  # the binary protocol: not this fake's
                _send(client, packet(tag, _result(RESULT_BADCOMMAND)))
                continue
            request = plistlib.loads(payload)
            with self._lock:
                self.requests.append(((length, version, message, tag), request))
            kind = request.get("MessageType")
            if kind == "ListDevices":
                with self._lock:
                    records = [p.record() for p in sorted(self.phones.values(), key=lambda p: p.device_id)]
                _send(client, packet(tag, {"DeviceList": records}))
            elif kind == "ReadBUID":
                _send(client, packet(tag, {"BUID": BUID}))  # usbmuxd client.c send_system_buid
            elif kind == "Listen":
                _send(client, packet(tag, _result(RESULT_OK)))
                with self._lock:
                    self._listeners.append(client)
                    records = [p.record() for p in self.phones.values()]
                for record in records:
                    _send(client, packet(0, record))
            elif kind == "Connect":
                if self._connect(client, tag, request):
                    return  # the socket is the phone's port now
            else:
                _send(client, packet(tag, _result(RESULT_BADCOMMAND)))

    def _connect(self, client: socket.socket, tag: int, request: dict[str, Any]) -> bool:
        port = socket.ntohs(int(request.get("PortNumber", 0)))  # libusbmuxd sends htons(port)
        with self._lock:
            phone = next((p for p in self.phones.values() if p.device_id == request.get("DeviceID")), None)
        if phone is None:
            _send(client, packet(tag, _result(RESULT_BADDEV)))
            return False
        target = phone.ports.get(port)
        try:
            if target is None:
                raise ConnectionRefusedError(port)
            upstream = socket.create_connection(target, timeout=10)
            upstream.settimeout(None)
        except OSError:
            _send(client, packet(tag, _result(RESULT_CONNREFUSED)))
            return False
        with self._lock:
            if phone.udid not in self.phones:  # unplugged meanwhile
                _close(upstream)
                _send(client, packet(tag, _result(RESULT_BADDEV)))
                return False
            self._spliced.setdefault(phone.udid, []).extend([client, upstream])
            self.connects.append((phone.udid, port))
        _send(client, packet(tag, _result(RESULT_OK)))
        pump = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
        pump.start()
        _pump(client, upstream)
        pump.join()
        return True


def _result(number: int) -> dict[str, Any]:
    _, result = recorded("listen_result")  # {"MessageType": "Result", "Number": 0}
    result["Number"] = number
    return result


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        _close(sink)
        _close(source)


def _recv(sock: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        try:
            chunk = sock.recv(size - len(data))
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    return data


def _send(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except OSError:
        pass


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


@contextlib.contextmanager
def usbmuxd_with(udid: str, device_id: int, wda_url: str, wda_port: int = 8100) -> Iterator[FakeUsbmuxd]:
    """A fake usbmuxd in a short /tmp folder (a unix socket's path is at most 107 bytes) with one
    phone attached, whose ``wda_port`` is the WDA at ``wda_url`` (a simulated iPhone's)."""
    folder = Path(tempfile.mkdtemp(prefix="usbmux-", dir="/tmp"))
    fake = FakeUsbmuxd(folder / "usbmuxd").start()
    host, port = wda_url.removeprefix("http://").rsplit(":", 1)
    fake.attach(FakeUsbIphone(udid, device_id, {wda_port: (host, int(port))}))
    try:
        yield fake
    finally:
        fake.stop()
        folder.rmdir()


@pytest.fixture
def usb_iphone(front: WdaFrontEnd) -> Iterator[FakeUsbmuxd]:
    """A fake usbmuxd with one iPhone attached over "USB": ``USB_UDID`` (``USB_SERIAL`` to the
    interfaces), whose port 8100 is the simulated iPhone's WDA (the ``front`` fixture)."""
    with usbmuxd_with(USB_UDID, 9, front.url) as fake:
        yield fake


def forwards_through(fake: FakeUsbmuxd) -> list[UsbForward]:
    """The running USB forwards (``mobile_agent.device.ios.usb``) through this fake usbmuxd,
    not another test's."""
    from mobile_agent.device.ios.usb import open_forwards

    return [f for f in open_forwards() if f.key[0] == str(fake.path)]
