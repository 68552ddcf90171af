"""The phones this instance can drive, and who holds each one.

``DevicePool`` keeps one ``DeviceSlot`` per serial the adb server reports and per iPhone of
``ios.devices`` (serial ``ios:NAME``, docs/ios.md): its platform, state, model, screen size,
and the task that holds its lease (one task per phone at a time, whatever the platform).
A phone whose run ended with a device error is marked lost until a fresh probe answers.

``DeviceSource`` is how the pool sees phones; ``AdbDeviceSource`` (the default) goes
through ``mobile_agent.device``: the real adb server's phones, and the iPhones whose
WebDriverAgent answers ready (state ``device``; ``offline`` when it does not answer). Both
kinds are opened by ``open_phone``, one device protocol.

May import: ``mobile_agent`` (public API), the standard library.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from mobile_agent.device import PLATFORM_PHONES, device_refusal, platform_of
from mobile_agent.errors import DeviceError
from mobile_agent.settings import Settings

if TYPE_CHECKING:
    from mobile_agent.device import Phone

__all__ = ["AdbDeviceSource", "DevicePool", "DeviceSlot", "DeviceSource", "LOST_ERROR_TYPES", "platform_refusal"]

log = logging.getLogger(__name__)

# Errors after which a phone is not handed out again until it answers a probe.
LOST_ERROR_TYPES = frozenset(
    {"DeviceLostError", "DeviceOfflineError", "DeviceNotFoundError", "NoDeviceError", "ScreenshotError"}
)


@dataclass
class DeviceSlot:
    serial: str
    state: str
    platform: str = "android"  # "ios" for an iPhone (``ios:NAME``)
    model: str | None = None
    width: int | None = None
    height: int | None = None
    task_id: int | None = None
    lost: bool = False
    present: bool = True
    ever_ready: bool = False  # answered a probe once: a phone, not an address that never answered
    leased_at: int = 0  # the pool's lease count when this phone was last leased (0: never): least recent goes first

    @property
    def available(self) -> bool:
        return self.present and self.state == "device" and not self.lost

    @property
    def free(self) -> bool:
        return self.available and self.task_id is None

    @property
    def refusal(self) -> str | None:
        """Why a new task for this phone would never start, or None: it never answered as a
        phone (offline or unauthorized since it was listed, e.g. a failed `adb connect`)."""
        if self.ever_ready or self.available:
            return None
        state = self.state if self.present else "gone"
        return f"device {self.serial!r} is {state} and has never answered as a phone"

    def public(self) -> dict[str, Any]:
        state = "lost" if self.lost else (self.state if self.present else "gone")
        return {
            "serial": self.serial,
            "platform": self.platform,
            "state": state,
            "model": self.model,
            "width": self.width,
            "height": self.height,
            "busy": self.task_id is not None,
            "current_task": self.task_id,
        }


class DeviceSource(Protocol):
    def list(self) -> list[tuple[str, str, str | None]]:
        """(serial, state, model) of every phone: the adb server's, and the configured iPhones
        (``ios:NAME``: state ``device`` when its WebDriverAgent answers ready)."""
        ...

    def screen_size(self, serial: str) -> tuple[int, int]: ...

    def screenshot(self, serial: str, fmt: str) -> bytes: ...

    def connect(self, address: str) -> str: ...

    def close(self) -> None:
        """The service stops: let go of every phone opened for screenshots (the source is the
        pool's, ``DevicePool.close``); a screenshot afterwards opens none (``DeviceError``)."""
        ...


class AdbDeviceSource:
    """Phones through ``mobile_agent.device``: the real adb server's, and the iPhones of
    ``ios.devices`` (``list_iphones``; listed with no adb server too). Each is opened with
    ``open_phone`` and kept for the next screenshot (the live view's capture loop), opened
    again after a probe or a device error, closed by ``close`` (the service's shutdown).

    Every network phone (``host:port``) seen attached and ready, whoever connected it (``adb.connect``,
    ``POST /v1/devices/connect``, an outside ``adb connect``), is remembered with its address; when
    the adb server no longer lists it (it restarted and forgot it, or the phone dropped off Wi-Fi)
    it is connected again, with backoff per address (``RECONNECT_BACKOFF_S``, doubling to ``RECONNECT_MAX_S``)."""

    RECONNECT_BACKOFF_S = 0.5
    RECONNECT_MAX_S = 30.0

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # the phones this source opens only look (a probe, a screenshot, the live view's frames): a
        # silent adb server holds each of their calls adb.list_timeout_s, not a run's command_timeout_s
        adb = settings.adb
        self._looking = settings.model_copy(update={"adb": adb.model_copy(
            update={"command_timeout_s": min(adb.list_timeout_s, adb.command_timeout_s)})})
        self.allow = frozenset(settings.server.devices)  # a phone this instance may not drive is not reconnected
        self._seen: set[str] = set()  # network phones ever seen ready
        self._phones: dict[str, Phone] = {}  # opened for screenshots; opened again after a probe or an error
        self._retry: dict[str, tuple[float, float]] = {}  # address -> (next try, current backoff)
        self._ios_retry: dict[str, tuple[float, float]] = {}  # iPhone name -> (next try, current backoff)
        self._adb_missing = False  # the adb server did not answer the last listing (iPhones listed alone)
        self._ios_last: dict[str, tuple[str, bool, str | None]] = {}  # iPhone name -> (serial, ready, model) last asked
        self._closed = False  # close(): no phone is opened (and kept) after it
        self._lock = threading.Lock()

    def _adb_list(self) -> list[tuple[str, str, str | None]]:
        from mobile_agent.device import connect, list_devices

        listed = list_devices(self.settings.adb)  # starts a dead local adb server (and reconnects what it can)
        now = time.monotonic()
        with self._lock:
            for d in listed:
                if d.state == "device" and _is_network(d.serial) and (not self.allow or d.serial in self.allow):
                    self._seen.add(d.serial)
                    self._retry.pop(d.serial, None)
            wanted = set(self.settings.adb.connect) | self._seen
            missing = sorted(a for a in wanted - {d.serial for d in listed} if self._retry.get(a, (0.0, 0.0))[0] <= now)
        for address in missing:  # (re)connect when absent (a failed one is not listed)
            try:
                connect(address, self.settings.adb)
                log.info("adb connect %s: connected again", address)
                with self._lock:
                    self._retry.pop(address, None)
            except DeviceError as exc:
                with self._lock:
                    backoff = self._retry.get(address, (0.0, self.RECONNECT_BACKOFF_S / 2))[1] * 2
                    backoff = min(max(backoff, self.RECONNECT_BACKOFF_S), self.RECONNECT_MAX_S)
                    self._retry[address] = (time.monotonic() + backoff, backoff)
                log.info("adb connect %s: %s (next try in %g s)", address, exc.message, backoff)
        if missing:
            listed = list_devices(self.settings.adb)
        return [(d.serial, d.state, d.model) for d in listed]

    def _iphones(self) -> list[tuple[str, str, str | None]]:
        """The iPhones of ``ios.devices`` and those attached over USB (``iphone_names``: an
        unplugged one is no longer listed, as a vanished adb phone is not); one whose WDA did not
        answer is asked again after a backoff (as an adb address is reconnected), listed
        ``offline`` meanwhile: a phone off the network does not hold up every refresh by the
        probe's timeout."""
        from mobile_agent.device import iphone_names, list_iphones

        now = time.monotonic()
        names = iphone_names(self.settings.ios)
        with self._lock:
            due = sorted(n for n in names if self._ios_retry.get(n, (0.0, 0.0))[0] <= now)
        answered = list_iphones(self.settings.ios, names=due) if due else []  # by name, as ``due``
        with self._lock:
            for name, listing in zip(due, answered, strict=True):
                self._ios_last[name] = (listing.serial, listing.ready, listing.model)
                if listing.ready:
                    self._ios_retry.pop(name, None)
                else:
                    backoff = self._ios_retry.get(name, (0.0, self.RECONNECT_BACKOFF_S / 2))[1] * 2
                    backoff = min(max(backoff, self.RECONNECT_BACKOFF_S), self.RECONNECT_MAX_S)
                    self._ios_retry[name] = (time.monotonic() + backoff, backoff)
            # every name was asked once (nothing waits before its first answer); the rest wait out a backoff
            last = [self._ios_last[n] for n in sorted(names) if n in self._ios_last]
        return [(serial, "device" if ready else "offline", model) for serial, ready, model in last]

    def list(self) -> list[tuple[str, str, str | None]]:
        iphones = self._iphones()
        try:
            android = self._adb_list()
            self._adb_missing = False
            return android + iphones
        except DeviceError as exc:
            if not iphones:
                raise
            # iPhones need no adb server: said once (and again after adb answered), not at every refresh
            if not self._adb_missing:
                log.warning("no Android phones (the iPhones are listed): %s", exc.message)
            self._adb_missing = True
            return iphones

    def _open(self, serial: str, *, fresh: bool = False) -> Phone:
        """The phone (Android or iPhone, ``open_phone``), kept for the next screenshot. The one
        it replaces (``fresh``), or its own when another caller's got kept first, is closed:
        a USB iPhone's forward counts the phones kept open, so a dropped one would keep the
        forward running for ever."""
        from mobile_agent.device import close_phone, open_phone

        with self._lock:
            if self._closed:
                raise _stopping(serial)
            phone = None if fresh else self._phones.get(serial)
        if phone is not None:
            return phone
        phone = open_phone(self._looking, serial)
        with self._lock:
            kept, closed = self._phones.get(serial), self._closed
            if closed:  # closed while this one was opening: nobody would close it
                spare = phone
            elif fresh or kept is None:
                self._phones[serial], spare = phone, kept
            else:
                phone, spare = kept, phone
        if spare is not None:
            close_phone(spare)
        if closed:
            raise _stopping(serial)
        return phone

    def _forget(self, serial: str, phone: Phone | None = None) -> None:
        """Drop ``phone`` (None: whichever is kept) after an error, and close it; a newer one
        another caller kept meanwhile stays."""
        from mobile_agent.device import close_phone

        with self._lock:
            kept = self._phones.get(serial)
            if kept is not None and (phone is None or kept is phone):
                del self._phones[serial]
                phone = kept
        if phone is not None:
            close_phone(phone)

    def close(self) -> None:
        """Close every phone kept for screenshots: a USB iPhone's forward (a 127.0.0.1 listener and a
        task on the usbmux loop) and an iPhone's WDA connections do not outlive the service."""
        from mobile_agent.device import close_phone

        with self._lock:
            self._closed = True
            kept, self._phones = list(self._phones.items()), {}
        for serial, phone in kept:  # one that fails to close leaves the rest to be closed all the same
            try:
                close_phone(phone)
            except Exception as exc:
                log.warning("closing phone %s at shutdown failed: %s: %s", serial, type(exc).__name__, exc,
                            exc_info=True)

    def screen_size(self, serial: str) -> tuple[int, int]:
        phone = None
        try:
            phone = self._open(serial, fresh=True)  # a probe: a phone new or back, opened anew
            info = phone.screen_info()
        except Exception:
            self._forget(serial, phone)
            raise
        return int(info.width), int(info.height)

    def screenshot(self, serial: str, fmt: str) -> bytes:
        from mobile_agent.agent import mask_live_frame

        phone = None
        try:
            phone = self._open(serial)
            shot = phone.screenshot()
        except DeviceError:
            self._forget(serial, phone)
            raise
        # the run on this phone hides its secrets here too (the live view, the device screenshot)
        shot = replace(shot, pixels=mask_live_frame(serial, shot.pixels))
        if fmt == "jpeg":
            return shot.to_jpeg(720, 70)
        return shot.to_png()

    def connect(self, address: str) -> str:
        from mobile_agent.device import connect

        connect(address, self.settings.adb)
        return address


def _stopping(serial: str) -> DeviceError:
    return DeviceError(f"{serial}: the service is stopping (its device source is closed)", serial=serial)


def _is_network(serial: str) -> bool:
    from mobile_agent.device import validate_address

    try:
        validate_address(serial)
    except DeviceError:
        return False
    return True


class DevicePool:
    """Leases over the known phones. All methods are thread-safe."""

    def __init__(self, source: DeviceSource, *, allow: list[str] | None = None,
                 held: Callable[[str], bool] | None = None) -> None:
        self.source = source
        self.allow = frozenset(allow or ())
        # whether another interface's run holds the phone (its PhoneLease: mobile-agent run, MCP, the
        # pytest plugin): "any" takes such a phone only when no other is free (the task would wait for it)
        self.held = held or (lambda serial: False)
        self._slots: dict[str, DeviceSlot] = {}
        self._leases = 0
        self._lock = threading.Lock()

    def held_unlisted(self, slot: DeviceSlot) -> bool:
        """A slot here does not know its phone's lock: the lock is asked (``held``)."""
        return self.held(slot.serial)

    def refresh(self) -> None:
        """Re-read the adb device list; probe phones that are new or were lost."""
        try:
            listed = [d for d in self.source.list() if not self.allow or d[0] in self.allow]
        except DeviceError as exc:  # no adb server now: no phone can be driven until it is back
            log.warning("cannot list devices: %s", exc.message)
            with self._lock:
                for gone in self._slots.values():
                    gone.present = False
            return
        seen = set()
        probe: list[str] = []
        with self._lock:
            for serial, state, model in listed:
                seen.add(serial)
                slot = self._slots.get(serial)
                if slot is None:
                    slot = self._slots[serial] = DeviceSlot(serial=serial, state=state, model=model,
                                                            platform=platform_of(serial))
                    probe.append(serial)
                else:
                    if not slot.present or (slot.lost and slot.task_id is None) or (
                        state == "device" and not slot.ever_ready  # e.g. authorized since it was listed
                    ):
                        probe.append(serial)
                    slot.state, slot.present = state, True
                    slot.model = model or slot.model
            for serial, slot in list(self._slots.items()):
                if serial not in seen:
                    slot.present = False
                    if not slot.ever_ready and slot.task_id is None:
                        # never was a phone (a failed `adb connect` target): not listed forever
                        del self._slots[serial]
        for serial in probe:
            self._probe(serial)

    def _probe(self, serial: str) -> None:
        try:
            width, height = self.source.screen_size(serial)
        except Exception as exc:  # a phone that cannot answer stays out of rotation
            log.info("device %s does not answer: %s", serial, exc)
            with self._lock:
                slot = self._slots.get(serial)
                if slot is not None and slot.state == "device":
                    slot.lost = True
            return
        with self._lock:
            slot = self._slots.get(serial)
            if slot is not None:
                slot.width, slot.height, slot.lost = width, height, False
                slot.ever_ready = slot.ever_ready or slot.state == "device"

    def slots(self) -> list[DeviceSlot]:
        with self._lock:
            return [DeviceSlot(**vars(s)) for s in sorted(self._slots.values(), key=lambda s: s.serial)]

    def get(self, serial: str) -> DeviceSlot | None:
        with self._lock:
            slot = self._slots.get(serial)
            return DeviceSlot(**vars(slot)) if slot is not None else None

    def knows(self, serial: str) -> bool:
        with self._lock:
            return serial in self._slots

    def lease(self, request: str, task_id: int, *, platform: str | None = None) -> str | None:
        """Give ``task_id`` the requested phone ("any" = the free one leased least recently, so
        that short tasks spread over every phone instead of the first in serial order, one that
        another interface's run holds last; with ``platform``, of that platform only); None if
        none free."""
        with self._lock:
            if request == "any":
                free = [s for s in self._slots.values() if s.free and platform in (None, s.platform)]
                candidates = sorted(free, key=lambda s: (self.held(s.serial), s.leased_at, s.serial))
            else:
                slot = self._slots.get(request)
                candidates = [slot] if slot is not None else []
            for slot in candidates:
                if slot.free:
                    self._leases += 1
                    slot.task_id, slot.leased_at = task_id, self._leases
                    return slot.serial
        return None

    def release(self, serial: str, task_id: int, *, lost: bool = False) -> None:
        with self._lock:
            slot = self._slots.get(serial)
            if slot is not None and slot.task_id == task_id:
                slot.task_id = None
                if lost:
                    slot.lost = True

    def any_free(self) -> bool:
        with self._lock:
            return any(s.free for s in self._slots.values())

    def platforms(self) -> set[str]:
        """The platforms of the phones known now (``android``, ``ios``)."""
        with self._lock:
            return {s.platform for s in self._slots.values()}

    def close(self) -> None:
        """The service stops: the pool's source lets go of the phones it opened (it is the
        pool's from ``DevicePool(source)`` on, whoever built it)."""
        self.source.close()


class _Listed(Protocol):
    def refresh(self) -> None: ...

    def slots(self) -> list[DeviceSlot]: ...


_PLATFORM_HINTS = {"ios": " (iPhones are configured in ios.devices, and named in server.devices when that lists "
                          "phones: docs/ios.md)"}


def platform_refusal(phones: _Listed, device: str, platform: str | None) -> str | None:
    """Why a task asking for ``platform`` (``TaskOptions.platform``) on ``device`` could never
    start here, or None: the serial named is of another platform, or no phone of that platform
    is known (iPhones: ``ios.devices``; on a farm, a worker's)."""
    if platform is None:
        return None
    wanted = PLATFORM_PHONES.get(platform, platform)
    if device != "any":
        return device_refusal(device, platform)
    if not any(s.platform == platform for s in phones.slots()):
        phones.refresh()
        if not any(s.platform == platform for s in phones.slots()):
            return (f"this server has no phone of platform {platform!r}{_PLATFORM_HINTS.get(platform, '')}: "
                    f"a task for {wanted} would wait forever")
    return None
