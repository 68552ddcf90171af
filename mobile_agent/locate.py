"""The agent's only entry to perception.

Builds a ``perception.Perception`` from ``Settings.perception`` and re-raises the leaf
library's ``PerceptionFailure`` as ``mobile_agent.errors.PerceptionError`` (keeping
``backend``, ``hint`` and ``path``), so the agent sees one exception tree.

May import: ``mobile_agent.settings``, ``mobile_agent.errors``, ``mobile_agent.operations.context``
(the ``Locator`` protocol), ``perception``.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from mobile_agent.errors import PerceptionError
from mobile_agent.operations.context import Locator
from mobile_agent.settings import PerceptionSettings, Settings
from perception import Box, Location, Perception, PerceptionConfig, PerceptionFailure, TextLine
from perception.snapping import Snap, SnapTarget, snap_point

__all__ = ["LazyLocator", "PerceptionLocator", "build_locator", "call_perception", "perception_config"]

T = TypeVar("T")

_built: dict[PerceptionConfig, PerceptionLocator] = {}
_built_lock = threading.Lock()


def perception_config(settings: PerceptionSettings) -> PerceptionConfig:
    """The perception library's config from the agent's settings (same field names)."""
    names = {f.name for f in dataclasses.fields(PerceptionConfig)}
    values = {k: v for k, v in settings.model_dump().items() if k in names}
    try:
        return PerceptionConfig(**values)
    except (TypeError, ValueError) as exc:
        raise PerceptionError(f"invalid perception settings: {exc}", backend="config") from exc


def call_perception(call: Callable[[], T]) -> T:
    """``call()``, with a ``PerceptionFailure`` re-raised as ``PerceptionError``."""
    try:
        return call()
    except PerceptionFailure as exc:
        raise PerceptionError(exc.message, backend=exc.backend, hint=exc.hint or None, path=exc.path) from exc


class PerceptionLocator:
    """The operations' ``Locator`` on ``perception.Perception``, plus ``describe_backends``;
    raises ``PerceptionError`` only."""

    def __init__(self, perception: Perception) -> None:
        self.perception = perception

    def find_text(self, image: np.ndarray, text: str, hierarchy: str | None = None) -> Location:
        """``hierarchy``: the phone's ``uiautomator dump`` XML, used when the
        ``perception.accessibility`` setting is on (see ``mobile_agent.device.hierarchy``)."""
        return call_perception(lambda: self.perception.find_text(image, text, hierarchy))

    def find_icon(
        self, image: np.ndarray, description: str, position: str | None = None, hierarchy: str | None = None
    ) -> Location:
        return call_perception(lambda: self.perception.find_icon(image, description, position, hierarchy))

    def ocr(self, image: np.ndarray) -> list[TextLine]:
        return call_perception(lambda: self.perception.ocr(image))

    def ocr_region(self, image: np.ndarray, region: Box) -> list[TextLine]:
        """The text lines of ``region`` alone (image pixels): a strip costs a fraction of a full read."""
        return call_perception(lambda: self.perception.ocr_region(image, region))

    def find_text_in_region(self, image: np.ndarray, text: str, region: Box, label: str = "region") -> Location:
        """``text`` among the lines of ``region`` alone, by ``find_text``'s rules and settings."""
        return call_perception(lambda: self.perception.find_text_in_region(image, text, region, label))

    def snap_targets(self, image: np.ndarray, hierarchy: str | None = None) -> list[SnapTarget]:
        """OCR lines and UI-element proposals, for snapping a grounded model's taps; with
        ``hierarchy`` (the ``perception.accessibility`` setting on), the tree's controls too."""
        return call_perception(lambda: self.perception.snap_targets(image, hierarchy))

    def snap(
        self,
        point: tuple[int, int],
        image: np.ndarray,
        *,
        max_distance: float,
        drift_tolerance: float,
        hierarchy: str | None = None,
    ) -> Snap:
        """``point`` snapped to what is on ``image`` (no drift learned here: the run's
        ``TimedLocator`` learns it)."""
        return snap_point(point, self.snap_targets(image, hierarchy), max_distance=max_distance)

    def describe_backends(self) -> dict[str, str]:
        return call_perception(self.perception.describe_backends)


def build_locator(settings: Settings | PerceptionSettings) -> PerceptionLocator:
    """One locator per perception configuration per process (models are shared anyway)."""
    section = settings.perception if isinstance(settings, Settings) else settings
    config = perception_config(section)
    with _built_lock:
        locator = _built.get(config)
        if locator is None:
            locator = _built[config] = PerceptionLocator(Perception(config))
        return locator


class LazyLocator:
    """A ``Locator`` built on first use, once, thread-safe: a run that never clicks by text
    or icon never loads a model. Every method is the built locator's."""

    def __init__(self, factory: Callable[[], Locator]) -> None:
        self._factory = factory
        self._built: Locator | None = None
        self._lock = threading.Lock()

    def get(self) -> Locator:
        """The locator, built now if it was not yet."""
        with self._lock:
            if self._built is None:
                self._built = self._factory()
            return self._built

    def find_text(self, image: np.ndarray, text: str, hierarchy: str | None = None) -> Location:
        return self.get().find_text(image, text, hierarchy)

    def find_icon(
        self, image: np.ndarray, description: str, position: str | None = None, hierarchy: str | None = None
    ) -> Location:
        return self.get().find_icon(image, description, position, hierarchy)

    def ocr(self, image: np.ndarray) -> list[TextLine]:
        return self.get().ocr(image)

    def ocr_region(self, image: np.ndarray, region: Box) -> list[TextLine]:
        return self.get().ocr_region(image, region)

    def find_text_in_region(self, image: np.ndarray, text: str, region: Box, label: str = "region") -> Location:
        return self.get().find_text_in_region(image, text, region, label)

    def snap_targets(self, image: np.ndarray, hierarchy: str | None = None) -> list[SnapTarget]:
        return self.get().snap_targets(image, hierarchy)

    def snap(
        self,
        point: tuple[int, int],
        image: np.ndarray,
        *,
        max_distance: float,
        drift_tolerance: float,
        hierarchy: str | None = None,
    ) -> Snap:
        return self.get().snap(
            point, image, max_distance=max_distance, drift_tolerance=drift_tolerance, hierarchy=hierarchy
        )
