"""What an operation runs against, and what it answers.

``OperationContext`` bundles the device, the locator (perception), the screenshot the
action was planned on and the settings; ``Outcome`` is the result of one operation.
``Locator`` and ``DeviceLike`` are the protocols operations need: every method an
operation, the step loop or the plan cache calls on them is declared here, so a wrapper
that lacks one (or takes other arguments) is a type error, not a crash at run time.
``mobile_agent.locate.PerceptionLocator`` and ``LazyLocator``, the run's
``mobile_agent.agent.parts.TimedLocator`` and ``mobile_agent.device.Device`` satisfy them.

Coordinates: the screenshot is full screen resolution, so every point and box here
(``tap_point``, ``swipe``, ``location``) is in **screen pixels**.

May import: numpy, perception.types, perception.snapping (its records), mobile_agent.settings.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from mobile_agent.settings import Settings
from perception.snapping import Snap, SnapTarget
from perception.types import Box, Location, TextLine

__all__ = [
    "AgentDevice",
    "Chooser",
    "DeviceLike",
    "LocationSummary",
    "Locator",
    "OperationContext",
    "Outcome",
    "Platform",
    "RunLocator",
    "ScreenInfoLike",
    "ScreenshotLike",
]


@runtime_checkable
class Locator(Protocol):
    """Finds things on a screenshot (RGB uint8 HxWx3, screen pixels); raises
    ``mobile_agent.errors.PerceptionError`` only.

    ``hierarchy``: the phone's ``uiautomator dump`` XML, given when the
    ``perception.accessibility`` setting is on (``mobile_agent.device.hierarchy``);
    perception trusts it only where it agrees with the pixels."""

    def find_text(self, image: np.ndarray, text: str, hierarchy: str | None = None) -> Location: ...

    def find_icon(
        self, image: np.ndarray, description: str, position: str | None = None, hierarchy: str | None = None
    ) -> Location: ...

    def ocr(self, image: np.ndarray) -> list[TextLine]:
        """Every text line of the frame (cached per frame)."""
        ...

    def ocr_region(self, image: np.ndarray, region: Box) -> list[TextLine]:
        """The text lines of ``region`` alone."""
        ...

    def find_text_in_region(self, image: np.ndarray, text: str, region: Box, label: str = "region") -> Location:
        """``text`` among the lines of ``region`` alone, by ``find_text``'s rules."""
        ...

    def snap_targets(self, image: np.ndarray, hierarchy: str | None = None) -> list[SnapTarget]:
        """What a grounded model's tap may snap to (``perception.snapping``); with
        ``hierarchy`` (as for ``find_text``), the tree's controls where something is drawn."""
        ...

    def snap(
        self,
        point: tuple[int, int],
        image: np.ndarray,
        *,
        max_distance: float,
        drift_tolerance: float,
        hierarchy: str | None = None,
    ) -> Snap:
        """``point`` snapped to what is on ``image``; a locator that learns the model's
        drift over a run's taps (the run's) takes it off first."""
        ...


class RunLocator(Locator, Protocol):
    """The run's locator (``mobile_agent.agent.parts.TimedLocator``): a timed ``Locator``
    plus what only a run has."""

    def untimed(self) -> Locator:
        """The locator itself, for reads outside the steps' timings."""
        ...

    def offer(self, image: np.ndarray, text: str, location: Location) -> None:
        """``text`` found already on ``image``: the next ``find_text`` of that frame and text answers it."""
        ...


class ScreenshotLike(Protocol):
    """A captured frame (``mobile_agent.device.Screenshot``): RGB uint8 HxWx3, screen pixels."""

    @property
    def pixels(self) -> np.ndarray: ...

    @property
    def width(self) -> int: ...

    @property
    def height(self) -> int: ...


class ScreenStateLike(Protocol):
    """Screen power and the keyguard (``mobile_agent.device.ScreenState``): ``locked`` and
    ``secure`` (unlocking takes a PIN, pattern or password) are None where the phone's
    dumps do not say."""

    @property
    def on(self) -> bool: ...

    @property
    def locked(self) -> bool | None: ...

    @property
    def secure(self) -> bool | None: ...


# Which kind of phone a device is: an Android phone (adb) or an iPhone (WebDriverAgent).
Platform = Literal["android", "ios"]


class DeviceLike(Protocol):
    """The part of ``mobile_agent.device.Device`` that operations use."""

    @property
    def serial(self) -> str: ...

    @property
    def platform(self) -> Platform:
        """``"android"`` or ``"ios"``: what the planner tells the model the phone is (an
        iPhone has no Back key: Back is the system's edge swipe or the app's own button)."""
        ...

    def accessibility_xml(self) -> str | None:
        """The screen's accessibility tree as ``uiautomator dump`` XML (an adb phone's dump;
        an iPhone's WDA page source written in that format, in pixels); None when the phone
        gives none (vision decides). Raises only ``DeviceLostError``."""
        ...

    def tap(self, x: int, y: int) -> object: ...

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> object: ...

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> object: ...

    def key(self, name: str) -> object: ...

    def type_text(self, text: str) -> object: ...

    def launch_app(self, package: str) -> object: ...

    def resolve_app_label(self, label: str) -> str | None: ...

    @property
    def lists_apps(self) -> bool:
        """Whether the phone lists its launchable apps (an adb phone's ``launcher_apps``), so
        that Open App resolves a name through ``mobile_agent.apps`` (the listing, the alias
        table, the APKs' labels); False: the phone names its apps itself
        (``resolve_app_label``: an iPhone's bundle id table), and Open App reads the home
        screen's icons from the phone's own tree (an iPhone's page source) before the screen."""
        ...

    def keyboard_shown(self) -> bool | None:
        """Whether the soft keyboard is up; None when the phone does not say."""
        ...

    def alert_text(self) -> str | None:
        """The text of a system alert open over the app (an iPhone's, WDA's ``/alert/text``:
        the planner is told it); None when none is open or the phone does not say (an Android
        phone's system dialogs are in its screenshot and its accessibility tree)."""
        ...

    def screen_state(self) -> ScreenStateLike: ...

    def wait_settled(
        self, timeout_s: float, interval_s: float, tolerance: float, cancel: threading.Event | None = None
    ) -> ScreenshotLike: ...


class ScreenInfoLike(Protocol):
    @property
    def width(self) -> int: ...

    @property
    def height(self) -> int: ...

    @property
    def density(self) -> int | None: ...


class AgentDevice(DeviceLike, Protocol):
    """The device a run drives: what operations use, plus the captures of the step loop,
    the screen facts of the trajectory's header and the app in front (the app policy)."""

    def screenshot(self) -> ScreenshotLike: ...

    def screen_info(self) -> ScreenInfoLike: ...

    def current_app(self) -> str | None:
        """The package of the app in front (``agent.guard``'s app policy); None when the phone does not say."""
        ...


# Given a CANDIDATES location, the 1-based index of the candidate to use, or None.
Chooser = Callable[[Location], "int | None"]


@dataclass(frozen=True)
class LocationSummary:
    """What perception found for an operation's target, without the image crops: the one
    JSON form of a ``Location`` (outcomes, trajectory steps)."""

    status: str
    target: str
    point: tuple[int, int] | None = None
    box: list[int] | None = None
    candidates: tuple[dict[str, Any], ...] = ()
    closest: tuple[str, ...] = ()
    feedback: str = ""
    backend: str = ""

    @classmethod
    def from_location(cls, location: Location | None) -> LocationSummary | None:
        if location is None:
            return None
        return cls(
            status=location.status.value,
            target=location.target,
            point=(int(location.point[0]), int(location.point[1])) if location.point else None,
            box=location.box.as_list() if location.box is not None else None,
            candidates=tuple(
                {"index": c.index, "box": c.box.as_list(), "text": c.text, "score": round(float(c.score), 4)}
                for c in location.candidates
            ),
            closest=tuple(location.closest),
            feedback=location.feedback,
            backend=location.backend,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "target": self.target,
            "point": list(self.point) if self.point else None,
            "box": self.box,
            "candidates": [dict(c) for c in self.candidates],
            "closest": list(self.closest),
            "feedback": self.feedback,
            "backend": self.backend,
        }


@dataclass
class OperationContext:
    device: DeviceLike
    locator: Locator
    screenshot: ScreenshotLike
    settings: Settings
    choose: Chooser | None = None
    # set when the run is cancelled: waits inside operations end early
    cancel: threading.Event = field(default_factory=threading.Event)

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the screenshot, i.e. of the screen."""
        height, width = self.screenshot.pixels.shape[:2]
        return int(width), int(height)


@dataclass(frozen=True)
class Outcome:
    """What one operation did.

    ``ok`` is False when the model asked for something that could not be done (text
    not found, app unknown); ``feedback`` then tells the planner why, in a sentence
    written for it. ``terminal`` is True for Stop.
    """

    ok: bool
    feedback: str = ""
    tap_point: tuple[int, int] | None = None
    swipe: tuple[int, int, int, int] | None = None  # x1, y1, x2, y2
    location: Location | None = None
    terminal: bool = False
    # a tap snapped to an element: the model's point, the tapped point and why (perception.snapping)
    snap: dict[str, Any] | None = None
    # set with terminal: the run ends not completed with this reason, no completion check (Hand over)
    stop_reason: str | None = None
    # Hand over: what the person is asked; a run with a person to ask pauses instead of ending
    question: str | None = None

    def to_dict(self) -> dict[str, Any]:
        summary = LocationSummary.from_location(self.location)
        return {
            "ok": self.ok,
            "feedback": self.feedback,
            "tap_point": list(self.tap_point) if self.tap_point else None,
            "swipe": list(self.swipe) if self.swipe else None,
            "location": summary.to_dict() if summary is not None else None,
            "terminal": self.terminal,
        }
