"""The parts a run is built from when the caller gives none: the device of the
settings, and the perception locator, built on first use and timed.

May import: the standard library, numpy, ``mobile_agent`` (settings, device, locate, agent.speculation,
operations' protocols) and ``perception.types``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from mobile_agent.agent.speculation import SpeculationGate
from mobile_agent.locate import LazyLocator, build_locator, call_perception
from mobile_agent.operations.context import Locator
from mobile_agent.settings import Settings
from perception.snapping import DriftTracker, Snap, SnapTarget
from perception.types import Box, Location, TextLine

if TYPE_CHECKING:
    from mobile_agent.device import Phone

__all__ = ["TimedLocator", "close_run_device", "elapsed_ms", "open_run_device", "run_locator"]

T = TypeVar("T")


def elapsed_ms(start: float) -> float:
    """Milliseconds since ``start`` (a ``time.perf_counter()`` value)."""
    return (time.perf_counter() - start) * 1000.0


def run_locator(settings: Settings, locator: Locator | None) -> TimedLocator:
    """``locator``, or the perception locator of ``settings`` built on first use (one per
    configuration per process), timed."""
    if locator is None:
        locator = LazyLocator(lambda: build_locator(settings))
    return TimedLocator(locator)


def open_run_device(settings: Settings) -> Phone:
    """The phone of ``adb.serial`` (``open_device`` connects ``adb.connect`` first; an
    ``ios:NAME`` serial is an iPhone over WebDriverAgent, ``mobile_agent.device.phones``).
    Whoever opens it closes it (``close_run_device``)."""
    from mobile_agent.device.phones import open_phone

    return open_phone(settings)


def close_run_device(device: Phone) -> None:
    """Let go of a phone ``open_run_device`` opened (an iPhone's WDA connections, a USB
    iPhone's forward)."""
    from mobile_agent.device.phones import close_phone

    close_phone(device)


class TimedLocator:
    """The run's locator (a ``Locator``), timed: perception runs on demand, inside
    operations, so its time is measured here rather than around them. Any locator (a bare
    ``perception.Perception`` too) raises the agent's errors only. It adds what only a run
    has: the model's drift learned over its taps (``snap``), a target found already handed
    to the next lookup (``offer``), speculative OCR (``prefetch``)."""

    def __init__(self, locator: Locator) -> None:
        self.locator = locator
        self._drift: DriftTracker | None = None  # a grounded model's habit (perception.snapping)
        self._elapsed = 0.0
        self._lock = threading.Lock()
        self._prefetches: list[threading.Timer] = []
        self._offered: tuple[np.ndarray, str, Location] | None = None

    def untimed(self) -> Locator:
        """The locator itself (for work outside the steps' timings, such as masking)."""
        return self.locator

    def _timed(self, call: Callable[[], T]) -> T:
        start = time.perf_counter()
        try:
            return call_perception(call)
        finally:
            self._elapsed += time.perf_counter() - start

    def offer(self, image: np.ndarray, text: str, location: Location) -> None:
        """Where ``text`` is on ``image``, found already (a replayed step's target, re-read
        in its recorded band): the next ``find_text`` of that very frame and text answers
        it without reading the screen again; any other lookup drops it."""
        with self._lock:
            self._offered = (image, text, location)

    def find_text(self, image: np.ndarray, text: str, hierarchy: str | None = None) -> Location:
        with self._lock:
            offered, self._offered = self._offered, None
        if offered is not None and offered[0] is image and offered[1] == text:
            return offered[2]
        return self._timed(lambda: self.locator.find_text(image, text, hierarchy))

    def find_icon(
        self, image: np.ndarray, description: str, position: str | None = None, hierarchy: str | None = None
    ) -> Location:
        return self._timed(lambda: self.locator.find_icon(image, description, position, hierarchy))

    def ocr(self, image: np.ndarray) -> list[TextLine]:
        return self._timed(lambda: self.locator.ocr(image))

    def ocr_region(self, image: np.ndarray, region: Box) -> list[TextLine]:
        return self._timed(lambda: self.locator.ocr_region(image, region))

    def find_text_in_region(self, image: np.ndarray, text: str, region: Box, label: str = "region") -> Location:
        return self._timed(lambda: self.locator.find_text_in_region(image, text, region, label))

    def snap_targets(self, image: np.ndarray, hierarchy: str | None = None) -> list[SnapTarget]:
        """What a grounded model's tap may snap to (``perception.snapping``)."""
        return self._timed(lambda: self.locator.snap_targets(image, hierarchy))

    def snap(
        self,
        point: tuple[int, int],
        image: np.ndarray,
        *,
        max_distance: float,
        drift_tolerance: float,
        hierarchy: str | None = None,
    ) -> Snap:
        """``point`` snapped to what is on ``image``, after taking off the model's drift
        learned over this agent's taps (one model, one server: one habit)."""
        if self._drift is None:
            self._drift = DriftTracker(tolerance=drift_tolerance)
        return self._drift.snap(point, self.snap_targets(image, hierarchy), max_distance=max_distance)

    def prefetch(self, image: np.ndarray, delay_s: float = 0.0, *, min_idle: float = 0.0) -> threading.Timer | None:
        """Start OCR of ``image`` on a background thread after ``delay_s``, so that a
        lookup on the same frame later finds it in perception's per-frame cache (which
        also makes a lookup that comes while it runs wait for it rather than run it
        twice). ``cancel()`` the returned timer when the wait it was meant to fill ended
        sooner. Failures are left to that lookup to report. It is speculation: when it
        would start, the process-wide ``SpeculationGate`` lets it run only if at least
        ``min_idle`` of the machine's CPU was idle during ``delay_s`` and no other runs."""
        ocr = self.untimed().ocr
        gate = SpeculationGate.shared()
        since = gate.mark() if min_idle > 0 else None

        def run() -> None:
            if not gate.enter(since, min_idle):
                return
            try:
                ocr(image)
            except Exception:  # noqa: BLE001 - the lookup that needs it raises it properly
                pass
            finally:
                gate.leave()

        # not a daemon: an interpreter that exits while onnxruntime runs aborts the process
        timer = threading.Timer(delay_s, run)
        timer.name = "perception-prefetch"
        timer.daemon = False  # set, not inherited: a run on a daemon thread (the CLI's) would pass its flag on
        timer.start()
        with self._lock:
            self._prefetches = [t for t in self._prefetches if t.is_alive()] + [timer]
        return timer

    def cancel_prefetches(self) -> None:
        """At the end of a run: cancel the OCR not started yet; one already running finishes on
        its own thread (not a daemon, so an exiting interpreter still waits for it) and only
        fills the cache. The run does not wait for it: that OCR cannot change its outcome, and
        on a busy host the wait kept the phone from its next task for seconds."""
        with self._lock:
            pending, self._prefetches = self._prefetches, []
        for timer in pending:
            timer.cancel()

    def join_prefetches(self) -> None:
        """Wait for the OCR started by ``prefetch`` (at the end of a run, so that none
        outlives it)."""
        with self._lock:
            pending, self._prefetches = self._prefetches, []
        for timer in pending:
            timer.join()

    def take_ms(self) -> float:
        """Milliseconds spent since the last call."""
        elapsed, self._elapsed = self._elapsed, 0.0
        return elapsed * 1000.0
