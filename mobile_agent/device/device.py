"""``Device``: one phone behind the adb server, and ``open_device`` to choose it.

Every call opens its own connection to the adb server (no shared socket, no
module-level client), so several ``Device`` objects can be driven from several
threads at once. Commands are argument lists, each argument ``shlex.quote``-d.

May import: adbutils, numpy, the standard library, ``mobile_agent.errors``/``settings``
and the sibling modules of this package.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import adbutils
import numpy as np

from mobile_agent.device.adb_protocol import AdbHost, ShellResult
from mobile_agent.device.displays import (
    MULTI_DISPLAY_WARNING_START,
    DisplayTarget,
    choose_display,
    parse_display_infos,
    parse_surfaceflinger_ids,
)
from mobile_agent.device.hierarchy import dump_hierarchy
from mobile_agent.device.keyboard import AdbKeyboardSession
from mobile_agent.device.packages import AppCommands
from mobile_agent.device.parsing import (
    LauncherApp,
    current_screen_size,
    parse_density,
    parse_keyguard_secure,
    parse_locked,
    parse_rotation,
    parse_screen_on,
)
from mobile_agent.device.screenshot import Screenshot, decode_framebuffer, decode_png
from mobile_agent.device.server import connect, ensure_server, parse_devices_l
from mobile_agent.device.text_input import (
    ADB_KEYBOARD_CLEAR,
    ADB_KEYBOARD_HINT,
    ADB_KEYBOARD_IME,
    ADB_KEYBOARD_PACKAGE,
    adb_keyboard_broadcast,
    input_text_commands,
    is_plain_ascii,
    shell_line,
)
from mobile_agent.device.validation import (
    KEYCODES,
    check_coordinate,
    check_duration,
    keycode_for,
    validate_address,
    validate_serial,
)
from mobile_agent.errors import (
    AdbKeyboardMissingError,
    AdbServerError,
    DeviceCommandError,
    DeviceError,
    DeviceLostError,
    DeviceNotFoundError,
    DeviceOfflineError,
    RunCancelled,
    ScreenshotError,
)
from mobile_agent.settings import AdbSettings

__all__ = ["Device", "ScreenInfo", "ScreenState", "frame_difference"]

log = logging.getLogger(__name__)

_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
_PNG_FALLBACK_AFTER = 2  # consecutive raw failures before a Device prefers PNG
_DISPLAYS_TTL_S = 10.0  # a foldable folds: which display is on is asked again after this
# one display stays one display (a plugged-in screen is rare), and before Android 10
# `dumpsys SurfaceFlinger --display-id` prints the whole SurfaceFlinger dump: ask seldom
_SINGLE_DISPLAY_TTL_S = 120.0

T = TypeVar("T")


@dataclass(frozen=True)
class ScreenInfo:
    """Screen size in pixels of the current orientation, rotation (0-3), density (dpi)."""

    width: int
    height: int
    rotation: int
    density: int | None


@dataclass(frozen=True)
class ScreenState:
    """Screen power and the keyguard: ``locked`` None = the dumps do not say; ``secure``:
    unlocking takes a credential (None: not known, as on Android <= 9)."""

    on: bool
    locked: bool | None
    secure: bool | None = None


def _lost_on_vanish(method: Callable[..., T]) -> Callable[..., T]:
    """A device that was there when opened and is now 'not found'/'offline' is lost; so
    is one whose service the adb server refused ("closed") because it just went away.

    Before that verdict, one recovery of up to ``adb.reconnect_s``: an adb server that died
    is started again (which reconnects the ``adb connect`` phones), and a network phone the
    restarted server forgot is connected again, with backoff; then the call is retried once.
    The device's ``cancel`` event (the run's) ends that wait at once with ``RunCancelled``."""

    @functools.wraps(method)
    def wrapper(self: Device, *args: Any, **kwargs: Any) -> T:
        try:
            try:
                return method(self, *args, **kwargs)
            except (AdbServerError, DeviceNotFoundError) as exc:
                if not self._recover(exc):
                    if isinstance(exc, DeviceNotFoundError) and not _is_address(self.serial):
                        raise  # a USB phone unplugged: lost at once, below
                    raise DeviceLostError(
                        f"device {self.serial} went away during {method.__name__} and did not come back within "
                        f"{self.settings.reconnect_s:g} s (adb.reconnect_s): {exc.message}",
                        serial=self.serial,
                        operation=method.__name__,
                    ) from exc
                return method(self, *args, **kwargs)
        except (DeviceNotFoundError, DeviceOfflineError) as exc:
            raise DeviceLostError(
                f"device {self.serial} went away during {method.__name__}: {exc.message}",
                serial=self.serial,
                operation=method.__name__,
            ) from exc
        except DeviceCommandError:  # here only a FAIL answer of the adb server
            self._raise_if_gone(method.__name__)
            raise

    return wrapper


def _is_address(serial: str) -> bool:
    try:
        validate_address(serial)
    except DeviceError:
        return False
    return True


class Device(AppCommands):
    """One phone. Build it with ``open_device``; ``Device(serial, settings)`` skips the
    checks of the device's state.

    ``cancel``: the event of the run that drives the phone (a REST task's); once it is set, a
    wait for the phone to come back (``adb.reconnect_s``) ends at once with ``RunCancelled``,
    so a cancelled task or a server shutting down is not held by a phone that went away; a
    call the adb server leaves hanging ends too, ``adb_protocol.CANCEL_GRACE_S`` after it
    (``AdbHost.watching``), not after ``adb.command_timeout_s``."""

    def __init__(self, serial: str, settings: AdbSettings, *, host: AdbHost | None = None,
                 cancel: threading.Event | None = None) -> None:
        self.serial = validate_serial(serial)
        self.settings = settings
        self._cancel = cancel or threading.Event()
        self._host = host or AdbHost(settings.server_host, settings.server_port, settings.command_timeout_s)
        if cancel is not None:  # a run's: a call the adb server leaves hanging ends with its cancel
            self._host = self._host.watching(cancel)
        # adbutils for what is not on a hot path (install, sync); built from settings, never global
        self.client = adbutils.AdbClient(
            settings.server_host, settings.server_port, socket_timeout=settings.command_timeout_s
        )
        self._features: frozenset[str] | None = None
        self._raw_failures = 0
        self._display: tuple[float, DisplayTarget | None] | None = None
        self._launcher_cache: tuple[float, list[LauncherApp]] | None = None

    def __repr__(self) -> str:
        return f"Device({self.serial!r})"

    @property
    def platform(self) -> Literal["android"]:
        """An Android phone (``mobile_agent.operations.context.DeviceLike.platform``)."""
        return "android"

    @property
    def lists_apps(self) -> bool:
        """Yes: ``launcher_apps`` (``mobile_agent.apps`` resolves Open App's names from it)."""
        return True

    def alert_text(self) -> None:
        """None: Android's system dialogs are windows of the screen (its screenshot and
        ``uiautomator dump``), not alerts apart (``DeviceLike.alert_text``)."""
        return None

    @property
    def adbutils_device(self) -> adbutils.AdbDevice:
        return self.client.device(self.serial)

    # --- shell -------------------------------------------------------------------------

    @property
    def features(self) -> frozenset[str]:
        if self._features is None:
            text = self._host.query(f"host-serial:{self.serial}:features", serial=self.serial)
            self._features = frozenset(f.strip() for f in text.split(",") if f.strip())
        return self._features

    @_lost_on_vanish
    def run(self, args: list[str]) -> ShellResult:
        """Run one command on the device; returns stdout/stderr/exit code (``None``
        when the device has no shell protocol v2)."""
        if isinstance(args, str) or not args:
            raise TypeError("device commands are non-empty argument lists, never shell strings")
        if any("\0" in str(a) for a in args):  # adbd would cut the command line there
            raise ValueError(f"a device command argument contains a NUL character: {args!r}")
        line = shell_line(args)
        if "shell_v2" in self.features:
            return self._host.shell_v2(self.serial, line)
        return self._host.shell_v1(self.serial, line)

    def shell(self, args: list[str]) -> str:
        """stdout of ``args`` (each argument quoted, never interpreted by the shell)."""
        result = self.run(args)
        return result.stdout.decode("utf-8", "replace")

    def check(self, args: list[str]) -> str:
        """Like ``shell`` but a non-zero exit code (or an ``Error:`` line) raises
        ``DeviceCommandError``."""
        result = self.run(args)
        out = result.stdout.decode("utf-8", "replace")
        err = result.stderr.decode("utf-8", "replace")
        failed = result.exit_code not in (0, None) or (
            result.exit_code is None and any(ln.startswith(("Error:", "Exception")) for ln in out.splitlines())
        )
        if failed:
            raise DeviceCommandError(
                f"`{shell_line(args)}` failed on {self.serial} (exit {result.exit_code}): {(err or out).strip()[:300]}",
                serial=self.serial,
                command=list(args),
                exit_code=result.exit_code,
            )
        return out

    # --- displays ------------------------------------------------------------------------

    def display_target(self, *, refresh: bool = False) -> DisplayTarget | None:
        """The display captured and touched when the phone has several (None: one
        display, no ``-d`` needed). Asked again every few seconds: a foldable folds."""
        now = time.monotonic()
        if not refresh and self._display is not None:
            ttl = _DISPLAYS_TTL_S if self._display[1] is not None else _SINGLE_DISPLAY_TTL_S
            if now - self._display[0] < ttl:
                return self._display[1]
        physical = parse_surfaceflinger_ids(self.shell(["dumpsys", "SurfaceFlinger", "--display-id"]))
        target = None
        if len(physical) > 1:
            target = choose_display(physical, parse_display_infos(self.shell(["dumpsys", "display"])))
        self._display = (now, target)
        return target

    def _input(self, *args: str) -> list[str]:
        """An ``input`` command line, aimed at the chosen display on multi-display phones."""
        target = self.display_target()
        if target is not None and target.logical_id is not None:
            return ["input", "-d", str(target.logical_id), *args]
        return ["input", *args]

    def _screencap_service(self, png: bool) -> str:
        target = self.display_target()
        parts = ["exec:screencap"] + (["-p"] if png else [])
        if target is not None:
            parts += ["-d", str(target.physical_id)]
        return " ".join(parts)

    # --- screen --------------------------------------------------------------------------

    @_lost_on_vanish
    def screenshot(self) -> Screenshot:
        """The current screen, in memory: raw framebuffer first, PNG as fallback."""
        if self._raw_failures < _PNG_FALLBACK_AFTER:
            try:
                shot = self._screenshot_raw()
                self._raw_failures = 0
                return shot
            except ScreenshotError as exc:
                self._raw_failures += 1
                log.debug("raw screencap failed on %s (%s); trying PNG", self.serial, exc.message)
        return self._screenshot_png()

    def _screenshot_raw(self) -> Screenshot:
        width, height, fmt, data, preamble = self._host.read_framebuffer(self.serial, self._screencap_service(png=False))
        if preamble:
            log.debug("screencap on %s printed %r before the image", self.serial, b"".join(preamble)[:200])
            if any(MULTI_DISPLAY_WARNING_START in line for line in preamble):
                self.display_target(refresh=True)  # a display appeared: aim the next capture
        try:
            pixels = decode_framebuffer(width, height, fmt, data, serial=self.serial)
        except ScreenshotError:
            self._raise_if_gone("screenshot")
            raise
        return Screenshot(pixels=pixels, captured_at=time.time())

    def _recover(self, exc: DeviceError) -> bool:
        """After the adb server died (or forgot this network phone): start it, connect the
        phone again, and wait until it is ready, for up to ``adb.reconnect_s`` (the adb server
        may come back late, a phone's `adb connect` may fail a few times). True when a retry
        makes sense. A network phone (``host:port``) is connected again whoever connected it
        first: the Device was opened on it, so it was attached."""
        network = _is_address(self.serial)
        if isinstance(exc, DeviceNotFoundError) and not network:
            return False
        deadline = time.monotonic() + self.settings.reconnect_s
        pause = 0.25
        next_connect = 0.0
        while True:
            if self._cancel.is_set():
                raise RunCancelled(f"the run was cancelled while waiting for {self.serial} to come back")
            try:
                ensure_server(self.settings)  # restarts a dead local server; reconnects what we connected
                state = self.state()
                if state == "device":
                    log.info("device %s is back", self.serial)
                    return True
                if network and state is None and time.monotonic() >= next_connect:
                    next_connect = time.monotonic() + pause
                    pause = min(pause * 2, 5.0)  # backoff between `adb connect`s of a phone not answering yet
                    connect(self.serial, self.settings)
            except DeviceError as err:
                log.debug("recovering %s: %s", self.serial, err.message)
            if time.monotonic() >= deadline:
                log.warning("device %s did not come back within %g s", self.serial, self.settings.reconnect_s)
                return False
            self._cancel.wait(0.1)

    def state(self) -> str | None:
        """The device's state as the adb server sees it now (None: not attached)."""
        for info in parse_devices_l(self._host.query("host:devices-l")):
            if info.serial == self.serial:
                return info.state
        return None

    def _raise_if_gone(self, operation: str) -> None:
        state = self.state()
        if state != "device":
            raise DeviceLostError(
                f"device {self.serial} went away during {operation} (now: {state or 'not attached'})",
                serial=self.serial,
                operation=operation,
                state=state,
            )

    def _screenshot_png(self) -> Screenshot:
        data = self._host.read_all(self.serial, self._screencap_service(png=True))
        try:
            if not data:
                raise ScreenshotError(f"screencap -p returned nothing on {self.serial}", serial=self.serial)
            pixels = decode_png(data, serial=self.serial)
        except ScreenshotError:
            self._raise_if_gone("screenshot")  # a stream cut short by a phone that went away
            raise
        return Screenshot(pixels=pixels, captured_at=time.time())

    def screen_info(self) -> ScreenInfo:
        """Size in the current orientation. ``wm size`` reports the *natural* one (portrait
        on phones, landscape on many tablets), so it is turned for rotations 1 and 3
        whatever its aspect; on multi-display phones the chosen display's own size."""
        target = self.display_target()
        density = parse_density(self.shell(["wm", "density"]))
        input_dump = self.shell(["dumpsys", "input"])
        if target is not None and target.logical_id not in (None, 0):
            for display in parse_display_infos(self.shell(["dumpsys", "display"])):
                if display.display_id == target.logical_id and display.width and display.height:
                    return ScreenInfo(display.width, display.height, display.rotation or 0, density)
        current = current_screen_size(self.shell(["wm", "size"]), input_dump)
        if current is None:
            shot = self.screenshot()
            return ScreenInfo(shot.width, shot.height, parse_rotation(input_dump) or 0, density)
        width, height, rotation = current
        return ScreenInfo(width=width, height=height, rotation=rotation, density=density)

    def screen_state(self) -> ScreenState:
        on = parse_screen_on(self.shell(["dumpsys", "power"]))
        window = self.shell(["dumpsys", "window"])
        return ScreenState(on=True if on is None else on, locked=parse_locked(window),
                           secure=parse_keyguard_secure(window))

    def is_screen_on(self) -> bool:
        """Screen on and not behind the keyguard."""
        state = self.screen_state()
        return state.on and not state.locked

    def wait_settled(
        self,
        timeout_s: float = 3.0,
        interval_s: float = 0.15,
        tolerance: float = 0.002,
        cancel: threading.Event | None = None,
    ) -> Screenshot:
        """Capture until two consecutive frames differ in at most ``tolerance`` of their
        (downscaled) pixels, or until ``timeout_s``; returns the last frame.

        A set ``cancel`` event ends the wait early (the last frame is returned; the
        caller decides what a cancel means)."""
        deadline = time.monotonic() + timeout_s
        last = self.screenshot()
        pause = cancel.wait if cancel is not None else time.sleep
        while time.monotonic() < deadline:
            if pause(max(0.0, min(interval_s, deadline - time.monotonic()))):
                return last  # cancelled
            current = self.screenshot()
            if frame_difference(last, current) <= tolerance:
                return current
            last = current
        return last

    # --- input ---------------------------------------------------------------------------

    def tap(self, x: int, y: int) -> None:
        self.check(self._input("tap", str(check_coordinate(x)), str(check_coordinate(y))))

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        x, y = check_coordinate(x), check_coordinate(y)
        self.check(self._input("swipe", str(x), str(y), str(x), str(y), str(check_duration(duration_ms))))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        coords = [str(check_coordinate(v)) for v in (x1, y1, x2, y2)]
        self.check(self._input("swipe", *coords, str(check_duration(duration_ms))))

    def swipe_direction(self, direction: str, distance: float = 0.5, duration_ms: int = 300) -> tuple[int, int, int, int]:
        """Swipe the finger ``direction`` (up/down/left/right) through the screen's centre,
        over ``distance`` of the screen's extent in that direction. Returns the stroke."""
        key = str(direction).lower()
        if key not in _DIRECTIONS:
            raise ValueError(f"direction must be one of up, down, left, right; got {direction!r}")
        if not 0 < distance <= 1:
            raise ValueError(f"distance is a fraction of the screen in (0, 1], got {distance}")
        info = self.screen_info()
        dx, dy = _DIRECTIONS[key]
        cx, cy = info.width // 2, info.height // 2
        half_x = int(info.width * distance / 2) * dx
        half_y = int(info.height * distance / 2) * dy
        stroke = (
            min(info.width - 1, max(0, cx - half_x)),
            min(info.height - 1, max(0, cy - half_y)),
            min(info.width - 1, max(0, cx + half_x)),
            min(info.height - 1, max(0, cy + half_y)),
        )
        self.swipe(*stroke, duration_ms=duration_ms)
        return stroke

    def key(self, name: str | int) -> None:
        """A key event: a name of ``KEYCODES`` (back, home, enter, app_switch, delete…),
        ``KEYCODE_*``, or a numeric keycode."""
        self.check(self._input("keyevent", str(keycode_for(name))))

    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused field, exactly.

        Printable ASCII goes through ``input text`` (``\\n`` as the Enter key); anything
        else through ADB Keyboard (``AdbKeyboardMissingError`` when it is not installed).
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        if not text:
            return
        lines = text.split("\n")
        if all(is_plain_ascii(line) for line in lines):
            for i, line in enumerate(lines):
                if i:  # a newline is the Enter key, as on the on-screen keyboard
                    self.check(self._input("keyevent", str(KEYCODES["enter"])))
                for argv in input_text_commands(line):
                    self.check(self._input(*argv[1:]))
            return
        with self._adb_keyboard() as keyboard:
            keyboard.send(adb_keyboard_broadcast(text))

    def keyboard_shown(self) -> bool | None:
        """Whether the soft keyboard is up (``mInputShown`` of ``dumpsys input_method``, as
        appium-adb's ``isSoftKeyboardPresent`` and adbutils' ``current_ime`` read it); None
        when the phone does not say."""
        for line in self.shell(["dumpsys", "input_method"]).splitlines():
            key, sep, value = line.strip().partition("=")
            if sep and key == "mInputShown":
                return value.strip().lower() == "true"
        return None

    def accessibility_xml(self) -> str | None:
        """The screen's accessibility tree, ``uiautomator dump``'s XML
        (``mobile_agent.device.hierarchy``); None when the phone gives none (vision decides).
        Raises only ``DeviceLostError``."""
        return dump_hierarchy(self).xml

    def clear_text(self, max_chars: int = 200) -> None:
        """Empty the focused field: ADB Keyboard's clear when installed, otherwise
        move to the end and delete ``max_chars`` characters in one key event call."""
        if self.has_adb_keyboard():
            with AdbKeyboardSession(self) as keyboard:  # not _adb_keyboard(): it would ask the phone again
                keyboard.send(["am", "broadcast", "-a", ADB_KEYBOARD_CLEAR])
            return
        self.check(self._input("keyevent", str(KEYCODES["move_end"]), *[str(KEYCODES["delete"])] * int(max_chars)))

    def has_adb_keyboard(self) -> bool:
        out = self.shell(["ime", "list", "-a", "-s"])
        if ADB_KEYBOARD_IME in out.split():
            return True
        return f"package:{ADB_KEYBOARD_PACKAGE}" in self.shell(["pm", "list", "packages", ADB_KEYBOARD_PACKAGE]).split()

    def _adb_keyboard(self) -> AdbKeyboardSession:
        if not self.has_adb_keyboard():
            raise AdbKeyboardMissingError(
                f"typing non-ASCII text on {self.serial} needs ADB Keyboard, which is not installed: {ADB_KEYBOARD_HINT}",
                serial=self.serial,
                hint=ADB_KEYBOARD_HINT,
            )
        return AdbKeyboardSession(self)


def frame_difference(a: Screenshot, b: Screenshot, step: int = 8, threshold: int = 8) -> float:
    """Share of (downscaled) pixels whose grey level differs by more than ``threshold``."""
    if a.pixels.shape != b.pixels.shape:
        return 1.0
    ta, tb = a.thumbnail(step), b.thumbnail(step)
    return float(np.count_nonzero(np.abs(ta - tb) > threshold)) / ta.size
