"""iPhones attached over USB: usbmuxd's device list, and one loopback TCP forward per phone
to its WebDriverAgent (docs/ios.md, "Over USB").

An iPhone on a USB cable is reached through usbmuxd, the daemon (Apple's on macOS,
libimobiledevice's on Linux) that multiplexes TCP connections to the phone's ports over the
cable: ``ListDevices`` names the attached phones by UDID, and ``Connect`` (a device id and a
port in network byte order) turns the client's socket into a connection to that port on the
phone. ``ios:<UDID>`` is such a phone; opening it starts a TCP listener on 127.0.0.1 whose
connections are each spliced to the phone's WDA port (``ios.wda_port``, 8100) through usbmuxd,
so the WDA client (``WdaClient``) talks to ``http://127.0.0.1:<port>`` as it would to
``iproxy 8100 8100``.

The library: **pymobiledevice3** (the optional extra ``ios-usb``; also in ``dev``). Its
``usbmux`` module lists the devices and its ``UsbmuxTcpForwarder`` is the forward (each local
connection: look the UDID up, ``Connect``, pipe both ways). It is maintained (monthly
releases, iOS 17+'s new stack supported) and pure Python with binary wheels for every
dependency. tidevice, the other candidate, still installs, but its author closed the iOS 17
work in favour of pymobiledevice3 (alibaba/tidevice#337, Jan 2024) and builds on it in
tidevice3. Costs of the choice, written down: pymobiledevice3 is GPL-3.0-or-later (an extra the
user installs, never imported unless USB is used; mobile-agent itself stays Apache-2.0), and it
brings ~60 packages (IPython, fastapi, cryptography ...), so it is not a core dependency. It is
asyncio-based: its coroutines run on one event loop in a daemon thread of this module, so the
device layer's callers stay synchronous and may call from any thread.

One forward per phone: opens of the same ``ios:<UDID>`` (the CLI, the REST pool's cached phone,
a farm probe) share it, counted; the last ``close`` (``UsbWdaClient.close``, which
``close_phone`` calls) stops it. A phone unplugged mid-run: the forward's next connection finds
no such UDID and is closed at once, the WDA client sees no answer, and ``IosDevice`` raises
``DeviceLostError`` (the run ends ``device_lost``, as a vanished adb phone's does).

May import: pymobiledevice3 (optional, imported inside functions), httpx, the standard library,
``mobile_agent.errors``/``settings`` and the sibling modules of this package.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.util
import logging
import os
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from mobile_agent.device.ios.wda import WdaClient
from mobile_agent.errors import DeviceError
from mobile_agent.settings import IosSettings

__all__ = [
    "DEFAULT_USBMUXD",
    "UsbForward",
    "UsbIphone",
    "UsbWdaClient",
    "UsbmuxError",
    "attached_iphones",
    "open_forward",
    "open_forwards",
    "same_udid",
    "usb_enabled",
    "usbmuxd_address",
]

log = logging.getLogger(__name__)

DEFAULT_USBMUXD = "/var/run/usbmuxd"  # usbmuxd-proto.h USBMUXD_SOCKET_FILE (Linux and macOS)
INSTALL_HINT = "pip install -e '.[ios-usb]' in mobile-agent's checkout (pymobiledevice3)"
LIST_TIMEOUT_S = 5.0  # the longest a usbmuxd that accepted the connection may take to list its devices
_T = TypeVar("_T")


class UsbmuxError(DeviceError):
    """usbmuxd cannot be asked (not running, no such socket, the library not installed)."""


@dataclass(frozen=True)
class UsbIphone:
    """One phone in usbmuxd's ``ListDevices`` answer: its UDID (``SerialNumber``), usbmuxd's id
    for it, ``USB`` or ``Network`` (macOS lists Wi-Fi-synced phones too), and its name: the one
    ``ios.usb_names`` gives its UDID, else the UDID."""

    udid: str
    device_id: int
    connection_type: str
    name: str = ""

    @property
    def serial(self) -> str:
        return "ios:" + (self.name or self.udid)


def same_udid(one: str, other: str) -> bool:
    """usbmuxd may drop the dash of a ``<ChipID>-<ECID>`` UDID; case does not matter either."""
    return one.replace("-", "").upper() == other.replace("-", "").upper()


def usbmuxd_address(settings: IosSettings) -> str:
    """Where usbmuxd is asked: ``ios.usbmuxd``, else libusbmuxd's ``USBMUXD_SOCKET_ADDRESS``,
    else ``/var/run/usbmuxd``."""
    return settings.usbmuxd or os.environ.get("USBMUXD_SOCKET_ADDRESS") or DEFAULT_USBMUXD


def _library_installed() -> bool:
    return importlib.util.find_spec("pymobiledevice3") is not None


def usb_enabled(settings: IosSettings) -> bool:
    """Whether USB iPhones are looked for: ``ios.usb`` true (the library must be there: else
    ``UsbmuxError``), or ``"auto"`` and pymobiledevice3 installed."""
    if settings.usb is False:
        return False
    if _library_installed():
        return True
    if settings.usb is True:
        raise UsbmuxError(f"ios.usb is true but pymobiledevice3 is not installed: {INSTALL_HINT}")
    return False


# --- the event loop the library's coroutines run on ---------------------------------------

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _quiet(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A forwarded connection that failed (the phone gone between listing and ``Connect``) is
    one log line, not an unretrieved task's traceback."""
    log.info("usbmux forward: %s", context.get("exception") or context.get("message"))


def _event_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            loop.set_exception_handler(_quiet)
            threading.Thread(target=loop.run_forever, name="usbmux", daemon=True).start()
            _loop = loop
        return _loop


def _run(coro: Coroutine[Any, Any, _T], timeout_s: float) -> _T:
    future = asyncio.run_coroutine_threadsafe(coro, _event_loop())
    try:
        return future.result(timeout_s)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise


# --- discovery ------------------------------------------------------------------------------


def attached_iphones(settings: IosSettings) -> list[UsbIphone]:
    """usbmuxd's device list (one ``ListDevices``), USB before Network for a phone listed both
    ways, one entry per UDID. ``UsbmuxError`` when usbmuxd does not answer, with what to do."""
    if not _library_installed():
        raise UsbmuxError(f"pymobiledevice3 is not installed: {INSTALL_HINT}")
    from pymobiledevice3 import usbmux
    from pymobiledevice3.exceptions import ConnectionFailedToUsbmuxdError, MuxException

    address = usbmuxd_address(settings)
    try:
        found = _run(usbmux.list_devices(usbmux_address=address), LIST_TIMEOUT_S)
    except ConnectionFailedToUsbmuxdError:
        raise UsbmuxError(f"usbmuxd does not answer at {address}: install and start it (`apt install usbmuxd`; "
                          "macOS runs it already) or set ios.usbmuxd") from None
    except (MuxException, OSError, concurrent.futures.TimeoutError) as exc:
        raise UsbmuxError(f"usbmuxd at {address} did not list its devices: {exc!r}") from None
    phones: dict[str, UsbIphone] = {}
    for device in sorted(found, key=lambda d: d.connection_type != "USB"):
        name = next((n for n, udid in settings.usb_names.items() if same_udid(udid, device.serial)), device.serial)
        phones.setdefault(device.serial, UsbIphone(device.serial, device.devid, device.connection_type, name))
    return sorted(phones.values(), key=lambda p: p.name)


# --- the forwards ---------------------------------------------------------------------------


class UsbForward:
    """127.0.0.1:``port`` -> the phone's ``wda_port`` through usbmuxd (pymobiledevice3's
    ``UsbmuxTcpForwarder``), shared by every open of the phone: ``acquire``/``release`` count
    them; the last release stops the listener and its connections."""

    def __init__(self, key: tuple[str, str, int], forwarder: Any, task: asyncio.Task[None], port: int) -> None:
        self.key = key
        self.udid, self.wda_port = key[1], key[2]
        self.port = port
        self._forwarder = forwarder
        self._task = task
        self.users = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return not self._task.done()

    @property
    def bound(self) -> tuple[str, int]:
        """The address the listener is bound to (127.0.0.1: nothing off this machine reaches it)."""
        host, port = self._forwarder.server.sockets[0].getsockname()[:2]
        return str(host), int(port)

    def release(self) -> None:
        with _forwards_lock:
            self.users -= 1
            if self.users > 0:
                return
            if _forwards.get(self.key) is self:
                del _forwards[self.key]
        self._stop()

    def _stop(self) -> None:
        async def stop() -> None:
            self._forwarder.stop()
            await asyncio.gather(self._task, return_exceptions=True)

        try:
            _run(stop(), 10.0)
        except concurrent.futures.TimeoutError:
            log.warning("the USB forward to %s did not stop in 10 s", self.udid)


_forwards: dict[tuple[str, str, int], UsbForward] = {}
_forwards_lock = threading.Lock()


def open_forwards() -> list[UsbForward]:
    """The forwards running now (one per phone and WDA port)."""
    with _forwards_lock:
        return list(_forwards.values())


def open_forward(settings: IosSettings, udid: str) -> UsbForward:
    """The forward to ``udid``'s WDA port, started on first use; each call is one more user
    (``release`` it once)."""
    key = (usbmuxd_address(settings), udid, settings.wda_port)
    with _forwards_lock:  # held while starting: two opens at once start one forward
        forward = _forwards.get(key)
        if forward is None or not forward.running:
            forward = _start_forward(key)
            _forwards[key] = forward
        forward.users += 1
        return forward


# pymobiledevice3.tcp_forwarder logs a line per connection (info) and "failed to connect to remote
# endpoint" (error) for each connection to an unplugged phone, which the WDA client already reports
# as a lost phone. Only those records are dropped: the logger's level, and any other record it
# writes, stay the application's (it was set to CRITICAL process-wide before).
_FORWARDER_NOISE = ("failed to connect to remote endpoint", "connection established from ",
                    "connection %s was closed", "connection %s ended with ", "%s %s bytes=%d",
                    "Selected device: ")


class _ForwarderNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.msg if isinstance(record.msg, str) else ""
        return not message.startswith(_FORWARDER_NOISE)


def _quiet_forwarder_log() -> None:
    logger = logging.getLogger("pymobiledevice3.tcp_forwarder")
    if not any(isinstance(f, _ForwarderNoise) for f in logger.filters):
        logger.addFilter(_ForwarderNoise())


def _start_forward(key: tuple[str, str, int]) -> UsbForward:
    from pymobiledevice3.tcp_forwarder import UsbmuxTcpForwarder

    address, udid, wda_port = key
    _quiet_forwarder_log()

    async def start() -> tuple[Any, asyncio.Task[None], int]:
        listening = asyncio.Event()
        forwarder = UsbmuxTcpForwarder(udid, wda_port, 0, listening_event=listening, usbmux_address=address)
        task: asyncio.Task[None] = asyncio.ensure_future(forwarder.start("127.0.0.1"))  # loopback only
        ready = asyncio.ensure_future(listening.wait())
        await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():  # it could not listen
            ready.cancel()
            task.result()
        port = forwarder.listening_port
        if port is None:
            raise OSError("the forward has no port")
        return forwarder, task, port

    try:
        forwarder, task, port = _run(start(), 10.0)
    except (OSError, concurrent.futures.TimeoutError) as exc:
        raise UsbmuxError(f"could not start a local forward to the iPhone {udid}: {exc!r}", serial="ios:" + udid) from None
    log.info("USB forward 127.0.0.1:%d -> iPhone %s port %d (usbmuxd %s)", port, udid, wda_port, address)
    return UsbForward(key, forwarder, task, port)


class UsbWdaClient(WdaClient):
    """A ``WdaClient`` whose WDA is a USB iPhone's, through ``forward``: closing it lets go of
    the forward (once, however often it is closed)."""

    def __init__(self, forward: UsbForward, *, timeout_s: float = 30.0) -> None:
        super().__init__(forward.url, timeout_s=timeout_s)
        self.forward = forward
        self._released = False
        self._release_lock = threading.Lock()

    def close(self) -> None:
        super().close()
        with self._release_lock:
            if self._released:
                return
            self._released = True
        self.forward.release()
