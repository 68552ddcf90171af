"""Perception-only checks of what a phone shows: no model, deterministic.

``Phone(settings, device)`` reads the screen with the perception stack (OCR, the icon
detector and ranker) and answers ``assert_visible`` / ``assert_not_visible`` /
``assert_icon`` / ``wait_for_text``. A failed check raises ``ScreenAssertionError`` (an
``AssertionError``) whose message names the texts that were on the screen and whose
``screenshot_path`` is the PNG of the frame it judged.

Waiting polls with the settle detector (``Device.wait_settled``): the screen is read
again only after it has moved and come to rest, never on a fixed sleep.

May import: ``mobile_agent`` (device, locate, settings, errors), ``perception``.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TypeVar

import numpy as np
from PIL import Image

from mobile_agent.agent.mask import MaskedFrame, SecretMask, secret_values
from mobile_agent.agent.redact import Redactor
from mobile_agent.agent.screen_diff import screen_changed
from mobile_agent.errors import RunCancelled
from mobile_agent.operations.context import AgentDevice, Locator, ScreenshotLike
from mobile_agent.settings import Settings
from perception.types import LocateStatus, Location

__all__ = ["Phone", "ScreenAssertionError", "ScreenEvidence"]

R = TypeVar("R")

_SHOWN_TEXTS = 25  # texts named in a failure message
_STATUS_BAR_SHARE = 0.035  # the clock and battery texts at the top are not "on the screen" for a test


@dataclass(frozen=True)
class ScreenEvidence:
    """The frame a check judged and where it is kept."""

    frame: ScreenshotLike
    path: Path | None
    texts: tuple[str, ...]


class ScreenAssertionError(AssertionError):
    """A screen check that failed: ``expectation`` (what was asked), ``texts`` (what the
    screen showed), ``screenshot_path`` (the judged frame, a PNG)."""

    def __init__(self, message: str, *, expectation: str, evidence: ScreenEvidence) -> None:
        super().__init__(message)
        self.expectation = expectation
        self.texts = evidence.texts
        self.screenshot = evidence.frame
        self.screenshot_path = evidence.path


class Phone:
    """A phone under test: perception-only assertions on its screen.

    ``reader`` defaults to the perception locator of ``settings`` (one per configuration
    per process); ``evidence_dir`` (default ``<agent.output_dir>/evidence``) receives the
    screenshot of every failed check."""

    def __init__(
        self,
        settings: Settings,
        device: AgentDevice,
        *,
        reader: Locator | None = None,
        evidence_dir: Path | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        self.settings = settings
        self.device = device
        self.cancel = cancel  # set: a wait (``poll``) ends with RunCancelled (a REST flow task's cancel)
        if reader is None:
            from mobile_agent.locate import build_locator

            reader = build_locator(settings)
        self.reader = reader
        self._mask = SecretMask(secret_values(settings), lambda: self.reader)  # the run's masking step
        self.evidence_dir = evidence_dir if evidence_dir is not None else Path(settings.agent.output_dir) / "evidence"
        self._numbers = itertools.count(1)
        self._close: Callable[[], None] | None = None  # what ``close`` lets go of: the phone ``open`` opened

    @classmethod
    def open(cls, settings: Settings, serial: str | None = None) -> Phone:
        """The phone of ``settings.adb`` (or ``serial``; ``ios:NAME`` is an iPhone of ``ios.devices``);
        ``close`` it when done."""
        from mobile_agent.device import close_phone, open_phone

        opened = open_phone(settings, serial or settings.adb.serial)
        made = cls(settings, opened)
        made._close = lambda: close_phone(opened)
        return made

    def close(self) -> None:
        """Let go of the phone ``open`` opened (an iPhone's connections to its WDA, a USB
        iPhone's forward with its last user); a device passed in stays its owner's. Once."""
        close, self._close = self._close, None
        if close is not None:
            close()

    @property
    def serial(self) -> str:
        return self.device.serial

    # -- looking ------------------------------------------------------------------------

    def screenshot(self) -> ScreenshotLike:
        return self.device.screenshot()

    def settled(self, timeout_s: float | None = None) -> ScreenshotLike:
        """The screen once it has stopped moving (the settle detector), or the last frame
        after ``timeout_s``."""
        agent = self.settings.agent
        return self.device.wait_settled(
            agent.settle_timeout_s if timeout_s is None else timeout_s, agent.settle_interval_s, agent.settle_tolerance
        )

    def texts(self, frame: ScreenshotLike | None = None) -> list[str]:
        """The texts OCR reads on ``frame`` (default: the settled screen), top to bottom,
        the status bar left out."""
        frame = frame if frame is not None else self.settled()
        top = frame.height * _STATUS_BAR_SHARE
        lines = [line for line in self.reader.ocr(frame.pixels) if line.box.top >= top]
        return [line.text for line in sorted(lines, key=lambda t: (t.box.top, t.box.left))]

    def find_text(self, text: str, frame: ScreenshotLike | None = None) -> Location:
        frame = frame if frame is not None else self.settled()
        return self.reader.find_text(frame.pixels, _checked(text, "text"))

    # -- assertions ---------------------------------------------------------------------

    def assert_visible(self, text: str) -> Location:
        """``text`` is on the settled screen (OCR, the agent's text rules: case, spacing and
        punctuation folded, whole words inside a longer line); answers where."""
        frame = self.settled()
        location = self.find_text(text, frame)
        if location.status is LocateStatus.NOT_FOUND:
            self._fail(f"{text!r} is not on the screen", text, frame, location)
        return location

    def assert_not_visible(self, text: str) -> None:
        """``text`` is nowhere on the settled screen."""
        frame = self.settled()
        location = self.find_text(text, frame)
        if location.status is not LocateStatus.NOT_FOUND:
            where = f" at {location.point}" if location.point else f" ({len(location.candidates)} places)"
            self._fail(f"{text!r} is on the screen{where}, expected it not to be", text, frame, location)

    def assert_icon(self, description: str, position: str | None = None) -> Location:
        """An icon matching ``description`` (``"gear"``, ``"orange plus button"``) is on the
        settled screen, in ``position`` (``"top right"``…) when given. Only a box the icon
        ranker confirms counts: unconfirmed or tied candidates fail the assertion."""
        frame = self.settled()
        location = self.reader.find_icon(frame.pixels, _checked(description, "icon description"), position)
        where = f" {position}" if position else ""
        if location.status is LocateStatus.NOT_FOUND:
            self._fail(f"no icon like {description!r}{where} on the screen", description, frame, location)
        if location.status is not LocateStatus.FOUND:
            # candidates are boxes the ranker could not confirm or tell apart: no proof for a test
            self._fail(f"no icon like {description!r}{where} confirmed on the screen "
                       f"({len(location.candidates)} unconfirmed: {location.feedback})", description, frame, location)  # fmt: skip
        return location

    def wait_for_text(self, text: str, timeout: float = 10.0) -> Location:
        """Wait until ``text`` is on the screen. The screen is read when it has settled,
        and read again only after it changed: no fixed sleeps, no OCR of an unchanged
        frame. ``ScreenAssertionError`` after ``timeout`` seconds."""
        _checked(text, "text")
        held, frame, location = self.poll(timeout, lambda f: self.find_text(text, f),
                                          lambda found: found.status is not LocateStatus.NOT_FOUND)  # fmt: skip
        if held:
            return location
        self._fail(f"{text!r} did not appear on the screen within {timeout:g} s", text, frame, location)

    def poll(self, timeout: float, judge: Callable[[ScreenshotLike], R], holds: Callable[[R], bool]) -> tuple[bool, ScreenshotLike, R]:
        """``judge`` the settled screen until ``holds`` its answer or ``timeout`` seconds went by:
        the screen is judged once it has settled, and again only after it has changed (the settle
        detector, no fixed sleeps). (whether it held, the last frame judged, its answer)."""
        deadline = time.monotonic() + timeout
        agent = self.settings.agent
        frame = self.settled(max(0.0, min(agent.settle_timeout_s, timeout)))
        answer = judge(frame)
        while not holds(answer) and time.monotonic() < deadline:
            if self.cancel is not None and self.cancel.is_set():
                raise RunCancelled("cancelled while waiting for the screen")
            left = deadline - time.monotonic()
            shown = self.settled(max(0.0, min(agent.settle_timeout_s, left)))
            if screen_changed(frame.pixels, shown.pixels, agent.change_threshold)[0]:
                frame, answer = shown, judge(shown)
        if not holds(answer) and self.cancel is not None and self.cancel.is_set():
            # cancelled while the deadline passed inside a judgement (OCR, a model): not a timeout
            raise RunCancelled("cancelled while waiting for the screen")
        return holds(answer), frame, answer

    # -- evidence -----------------------------------------------------------------------

    def masked(self, frame: ScreenshotLike) -> ScreenshotLike:
        """``frame`` with what shows a secret of the settings (``agent.secrets``,
        ``agent.named_secrets``) blacked out by the run's own masking step (``agent.mask.SecretMask``):
        what the model judges and what evidence keeps. A test may have typed a secret in any
        earlier step, so the mask reads every frame as a run's once it typed one: the OCR lines
        that show a secret or a part of one, the dump's password fields and the nodes holding one."""
        mask = self._mask
        if not mask.active:
            return frame
        if not mask.armed:
            mask.arm(self.device, None, frame.width)
        pixels = mask.masked(frame.pixels, self.device)
        return frame if pixels is frame.pixels else MaskedFrame(pixels, frame.width, frame.height)

    def evidence(self, frame: ScreenshotLike, name: str = "check") -> ScreenEvidence:
        """``frame`` saved as a PNG under ``evidence_dir``, with the texts it shows."""
        self.evidence_dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        path = self.evidence_dir / f"{stamp}-{next(self._numbers):03d}-{_slug(name)}.png"
        Image.fromarray(np.ascontiguousarray(self.masked(frame).pixels)).save(path)
        return ScreenEvidence(frame, path, tuple(self.texts(frame)))

    def _fail(self, summary: str, expectation: str, frame: ScreenshotLike, location: Location | None) -> NoReturn:
        evidence = self.evidence(frame, expectation)
        # the screen's texts may show a secret the test typed: the message is redacted as a trajectory is
        message = Redactor.from_settings(self.settings).text(failure_message(summary, evidence, location))
        raise ScreenAssertionError(message, expectation=expectation, evidence=evidence)


def failure_message(summary: str, evidence: ScreenEvidence, location: Location | None = None) -> str:
    """``summary``, then what the screen showed and where its screenshot is."""
    shown = list(evidence.texts[:_SHOWN_TEXTS])
    more = len(evidence.texts) - len(shown)
    seen = ", ".join(repr(t) for t in shown) + (f" and {more} more" if more > 0 else "") if shown else "no text"
    closest = ""
    if location is not None and location.closest:
        closest = f"; closest: {', '.join(repr(t) for t in location.closest[:3])}"
    path = f"\nscreenshot: {evidence.path}" if evidence.path is not None else ""
    return f"{summary}{closest}\nthe screen shows: {seen}{path}"


def _checked(text: str, what: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"the {what} to look for must be a non-empty text, got {text!r}")
    return text.strip()


def _slug(text: str) -> str:
    cleaned = "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")
    return "-".join(filter(None, cleaned.split("-")))[:40] or "check"
