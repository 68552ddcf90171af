"""``IosDevice``: an iPhone behind WebDriverAgent, driven through the same device
protocol as ``mobile_agent.device.Device`` (``mobile_agent.operations.context.AgentDevice``).

Points and pixels: WDA takes coordinates in points; screenshots (and so every point
the agent computes) are in pixels. ``scale`` (``/wda/screen``: 2 or 3 on iPhones) turns
one into the other; a tap at pixel (x, y) is sent at point (x / scale, y / scale).
``screen_info().density`` is ``160 * scale``, so Android's dp (px * 160 / dpi) is
iOS's point.

Keys: iOS has Home (``/wda/pressButton``) and the volume buttons, no Back key. ``back``
is the system's edge swipe (from the left edge to the right); ``enter`` is Return typed
through ``/wda/keys``; ``wakeup`` is WDA's ``/wda/unlock`` (wakes and unlocks a phone
without a passcode). Other Android key names raise ``DeviceCommandError``.

The accessibility tree: ``accessibility_xml`` (the device protocol's tree) is WDA's page
source written as a ``uiautomator dump`` in pixels, so perception reads one format
whatever the phone. There is no shell (no ``run``).

May import: numpy, Pillow, the standard library, ``mobile_agent.errors`` and the sibling
modules of ``mobile_agent.device``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from typing import Literal

from mobile_agent.device.device import ScreenInfo, ScreenState, frame_difference
from mobile_agent.device.ios.apps import bundle_for_label
from mobile_agent.device.ios.source import hierarchy_from_source
from mobile_agent.device.ios.wda import WdaClient, WdaError
from mobile_agent.device.screenshot import Screenshot, decode_png
from mobile_agent.device.validation import check_coordinate, check_duration, keycode_for
from mobile_agent.errors import AppNotFoundError, DeviceCommandError, DeviceLostError, ScreenshotError

__all__ = ["IOS_PREFIX", "IosDevice"]

log = logging.getLogger(__name__)

IOS_PREFIX = "ios:"
_BUTTONS = {"home": "home", "volume_up": "volumeUp", "volume_down": "volumeDown"}


class IosDevice:
    """One iPhone: ``serial`` is ``ios:NAME``; ``client`` its WDA server."""

    def __init__(self, name: str, client: WdaClient) -> None:
        if not name or any(c.isspace() for c in name):
            raise ValueError(f"an iPhone's name is one word, got {name!r}")
        self.serial = name if name.startswith(IOS_PREFIX) else IOS_PREFIX + name
        self.client = client
        self._scale: float | None = None

    def __repr__(self) -> str:
        return f"IosDevice({self.serial!r}, {self.client.shown_url!r})"

    @property
    def platform(self) -> Literal["ios"]:
        """An iPhone: the planner tells the model so (Back is the edge swipe or the app's
        own back button, Home the home indicator)."""
        return "ios"

    @contextlib.contextmanager
    def _wda(self, operation: str) -> Iterator[None]:
        """Every call to WDA goes through this: a WDA that stopped answering is a lost phone
        (``DeviceLostError``, a run ends ``device_lost``) as an adb phone that vanished is;
        WDA's other errors pass on as they are."""
        try:
            yield
        except WdaError as exc:
            if exc.error != "unreachable":
                raise
            raise DeviceLostError(f"iPhone {self.serial} went away during {operation}: {exc.message}",
                                  serial=self.serial, operation=operation) from exc

    @property
    def scale(self) -> float:
        if self._scale is None:
            with self._wda("screen"):
                self._scale = self.client.screen().scale
        return self._scale

    def _points(self, *pixels: int) -> list[float]:
        return [check_coordinate(v) / self.scale for v in pixels]

    # --- screen ------------------------------------------------------------------------

    def screenshot(self) -> Screenshot:
        with self._wda("screenshot"):
            data = self.client.screenshot_png()
        if not data:
            raise ScreenshotError(f"WDA returned an empty screenshot for {self.serial}", serial=self.serial)
        return Screenshot(pixels=decode_png(data, serial=self.serial), captured_at=time.time())

    def screen_info(self) -> ScreenInfo:
        """Size in pixels: WDA's window (points) times the scale."""
        with self._wda("screen_info"):
            width, height = self.client.window_size()
        scale = self.scale
        return ScreenInfo(width=round(width * scale), height=round(height * scale),
                          rotation=0 if height >= width else 1, density=round(160 * scale))

    def screen_state(self) -> ScreenState:
        """WDA says whether the phone is locked; not whether the screen is lit, and not
        whether a passcode guards it (``secure`` None)."""
        with self._wda("screen_state"):
            return ScreenState(on=True, locked=self.client.locked(), secure=None)

    def wait_settled(
        self, timeout_s: float = 3.0, interval_s: float = 0.15, tolerance: float = 0.002,
        cancel: threading.Event | None = None,
    ) -> Screenshot:
        deadline = time.monotonic() + timeout_s
        last = self.screenshot()
        pause = cancel.wait if cancel is not None else time.sleep
        while time.monotonic() < deadline:
            if pause(max(0.0, min(interval_s, deadline - time.monotonic()))):
                return last
            current = self.screenshot()
            if frame_difference(last, current) <= tolerance:
                return current
            last = current
        return last

    def page_source(self) -> str:
        """WDA's XML tree of the screen (``XCUIElementType…`` elements, frames in points)."""
        with self._wda("page_source"):
            return self.client.source()

    def accessibility_xml(self) -> str | None:
        """The page source as a ``uiautomator dump`` document in pixels
        (``mobile_agent.device.ios.source``); None when WDA gives no usable source (vision
        decides). Raises only ``DeviceLostError``, as ``mobile_agent.device.Device``'s does."""
        try:
            with self._wda("accessibility_xml"):  # a WDA gone: DeviceLostError, not a WdaError
                source = self.client.source()
            return hierarchy_from_source(source, self.scale)
        except WdaError as exc:
            log.info("no page source from %s: %s", self.serial, exc)
        except ValueError as exc:  # not a page source
            log.info("no usable page source from %s: %s", self.serial, exc)
        return None

    # --- input -------------------------------------------------------------------------

    def tap(self, x: int, y: int) -> None:
        px, py = self._points(x, y)
        with self._wda("tap"):
            self.client.touch([(px, py)])

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        px, py = self._points(x, y)
        with self._wda("long_press"):
            self.client.touch([(px, py)], hold_ms=check_duration(duration_ms))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        a, b, c, d = self._points(x1, y1, x2, y2)
        with self._wda("swipe"):
            self.client.touch([(a, b), (c, d)], move_ms=check_duration(duration_ms))

    def key(self, name: str | int) -> None:
        keycode_for(name)  # a name no phone has is a ValueError, as on Android
        key = str(name).strip().lower().removeprefix("keycode_")
        with self._wda(f"key {key}"):
            self._key(key, name)

    def _key(self, key: str, name: str | int) -> None:
        if key in _BUTTONS:
            self.client.press_button(_BUTTONS[key])
        elif key == "back":
            width, height = self.client.window_size()  # the edge swipe, in points
            self.client.touch([(1.0, height / 2), (width * 0.7, height / 2)], move_ms=250)
        elif key == "enter":
            self.client.keys("\n")
        elif key == "wakeup":
            self.client.unlock()
        else:
            raise DeviceCommandError(
                f"the iPhone {self.serial} has no {name!r} key (it has home, back as an edge swipe, enter, "
                "volume_up, volume_down, wakeup)",
                command=["key", str(name)], serial=self.serial,
            )

    def type_text(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        if text:
            with self._wda("type_text"):
                self.client.keys(text)

    def keyboard_shown(self) -> bool | None:
        """Whether the page source has a keyboard element (None when WDA gives no source)."""
        try:
            with self._wda("keyboard_shown"):  # a WDA gone: DeviceLostError (no WdaError)
                return "<XCUIElementTypeKeyboard" in self.client.source()
        except WdaError:
            return None

    # --- apps ----------------------------------------------------------------------------

    def launch_app(self, package: str) -> None:
        """``package`` is a bundle id: brought to the front, started when not running
        (``AppNotFoundError`` when the iPhone does not have it)."""
        try:
            with self._wda("launch_app"):
                self.client.activate(package)
        except WdaError as exc:
            if exc.error == "invalid argument":
                raise AppNotFoundError(f"{package} is not on the iPhone {self.serial}: {exc.message}",
                                       app=package, serial=self.serial) from exc
            raise

    def resolve_app_label(self, label: str) -> str | None:
        """The bundle id of the app people call ``label``, from the bundle id table
        (``mobile_agent.device.ios.apps``: Apple's apps and common third-party ones, each id
        with its source); None for a name it does not know (Open App then looks for the home
        screen's icon in the page source, then on the screen)."""
        if not isinstance(label, str) or not label.strip():
            raise ValueError("app label must be a non-empty string")
        return bundle_for_label(label)

    @property
    def lists_apps(self) -> bool:
        """No: WDA lists no installed apps; ``resolve_app_label`` names apps from the bundle id
        table, and the page source names the home screen's icons (``accessibility_xml``:
        SpringBoard's ``XCUIElementTypeIcon`` elements), which Open App reads next."""
        return False

    def current_app(self) -> str | None:
        """The bundle id of the app in front (WDA's ``/wda/activeAppInfo``;
        ``com.apple.springboard`` on the home screen), as the app policy
        (``agent.safety.deny_apps`` …) and Open App name apps on an iPhone; None when WDA
        does not say. A WDA that went away is a lost phone."""
        try:
            with self._wda("current_app"):
                return self.client.active_app()
        except DeviceLostError:
            raise
        except WdaError as exc:
            log.info("no app in front from %s: %s", self.serial, exc)
            return None

    # --- alerts --------------------------------------------------------------------------

    def alert_text(self) -> str | None:
        """The open alert's text (WDA's ``/alert/text``: title and message), None when none is
        open or WDA does not say; a WDA that went away is a lost phone."""
        try:
            with self._wda("alert_text"):
                return self.client.alert_text()
        except DeviceLostError:
            raise
        except WdaError as exc:
            log.info("no alert text from %s: %s", self.serial, exc)
            return None

    def accept_alert(self) -> None:
        with self._wda("accept_alert"):
            self.client.accept_alert()

    def dismiss_alert(self) -> None:
        with self._wda("dismiss_alert"):
            self.client.dismiss_alert()

    def unlock(self) -> None:
        with self._wda("unlock"):
            self.client.unlock()
