"""A run's steps as the reference's operations see them, for the step metrics
(``matching.judge_steps``): ``StepEffects.action_ref``.

The paper's and function calling's steps are the paper's operations already. A grounded
dialect's (UI-TARS, Qwen ``mobile_use``, AutoGLM) are written in screen points and keys,
so each is read by what it did:

- a key press is the paper's key (``Press key (back)`` is ``Back``), ``Finished`` its
  ``Stop``, a Type of a lone newline its ``Enter``;
- a swipe, drag or scroll is the page or swipe operation its finger stroke makes
  (the finger moving up shows what is below: ``Page down``);
- a tap or long press at a point carries a hit test (``ActionRef.lands_on``): the
  reference's text or icon target is located on the step's own screenshot (the run's
  perception, the frame the model saw) and the tapped point (after snapping: what was
  touched) must fall on it, with a small margin. That is the element under the point, the
  way the data engine's targets (``eval.data_engine.targets``) map a located target to a
  dialect's point the other way.

May import: numpy, Pillow, ``mobile_agent`` (the operations' ``Locator`` protocol, the
agent's records for types), ``perception.types``, ``mobile_eval.matching``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from eval.mobile_eval.matching import POINT_STANDS_FOR, ActionRef
from perception.types import LocateStatus, Location

if TYPE_CHECKING:
    from mobile_agent.agent import StepRecord
    from mobile_agent.operations import Locator

__all__ = ["StepEffects", "effect_ref", "stroke_operation"]

_KEYS = {"back": "back", "home": "home", "enter": "enter"}
_SCROLLS = {"down": "page_down", "up": "page_up", "right": "swipe_left", "left": "swipe_right"}
_HIT_MARGIN = 0.01  # a point this close to a target's box (share of the screen's height) is on it


def stroke_operation(x1: float, y1: float, x2: float, y2: float) -> str:
    """The paper's operation a finger stroke makes: moving up shows what is below (Page
    down), moving right to left the next page (Swipe left)."""
    dx, dy = x2 - x1, y2 - y1
    if abs(dy) >= abs(dx):
        return "page_down" if dy < 0 else "page_up"
    return "swipe_left" if dx < 0 else "swipe_right"


def effect_ref(name: str, params: Mapping[str, Any], text: str, *, point: tuple[int, int] | None = None,
               swipe: Sequence[float] | None = None, frame: Callable[[], np.ndarray | None] | None = None,
               locator: Callable[[], Locator] | None = None) -> ActionRef:
    """The action ``name(params)`` as the reference's operations see it (the module's rules);
    ``point`` / ``swipe``: where it touched (screen pixels of ``frame``, the screen it acted on)."""
    params = dict(params)
    if name == "press_key" and str(params.get("key", "")).lower() in _KEYS:
        return ActionRef(_KEYS[str(params["key"]).lower()], {}, text)
    if name == "finished":
        return ActionRef("stop", {}, text)
    if name == "type" and params.get("text") == "\n":
        return ActionRef("enter", {}, text)
    if name == "scroll" and str(params.get("direction", "")) in _SCROLLS:
        return ActionRef(_SCROLLS[str(params["direction"])], {}, text)
    if name in ("swipe_points", "drag") and swipe:
        x1, y1, x2, y2 = (float(v) for v in swipe[:4])
        return ActionRef(stroke_operation(x1, y1, x2, y2), {}, text)
    if name in POINT_STANDS_FOR and point is not None and frame is not None and locator is not None:
        return ActionRef(name, params, text, lands_on=_HitTest(frame, (int(point[0]), int(point[1])), locator))
    return ActionRef(name, params, text)


class StepEffects:
    """Reads a run's steps for the step metrics; ``locator`` gives the perception that
    locates a reference target on a step's screenshot (built on first need)."""

    def __init__(self, trajectory_dir: Path, locator: Callable[[], Locator]) -> None:
        self.trajectory_dir = trajectory_dir
        self._locator = locator

    def action_ref(self, step: StepRecord) -> ActionRef | None:
        """The step's action as the reference's operations see it; None when its reply did not parse."""
        operation = step.operation
        if not operation:
            return None
        point = step.tap_point
        shot = self.trajectory_dir / step.screenshot
        return effect_ref(str(operation["name"]), dict(operation.get("params") or {}), step.action_text,
                          point=(int(point[0]), int(point[1])) if point else None, swipe=step.swipe,
                          frame=_FileFrame(shot), locator=self._locator)


class _FileFrame:
    """A step's screenshot, read once on first need (None when it cannot be read)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pixels: np.ndarray | None = None

    def __call__(self) -> np.ndarray | None:
        if self._pixels is None:
            from PIL import Image

            try:
                with Image.open(self.path) as image:
                    self._pixels = np.asarray(image.convert("RGB"))
            except OSError:
                return None
        return self._pixels


class _HitTest:
    """Whether one tapped point lands on a reference action's target, located on the frame
    the step acted on."""

    def __init__(self, frame: Callable[[], np.ndarray | None], point: tuple[int, int],
                 locator: Callable[[], Locator]) -> None:
        self._frame = frame
        self.point = point
        self._locator = locator

    def __call__(self, reference: ActionRef) -> bool | None:
        pixels = self._frame()
        if pixels is None:
            return None
        params = reference.params
        locator = self._locator()
        if reference.name == "click_icon":
            location = locator.find_icon(pixels, str(params.get("icon") or ""), params.get("position"))
        else:
            location = locator.find_text(pixels, str(params.get("text") or ""))
        return self._on(location, pixels.shape[0])

    def _on(self, location: Location, height: int) -> bool:
        if location.status is LocateStatus.FOUND and location.box is not None:
            boxes = [location.box]
        elif location.status is LocateStatus.CANDIDATES:
            boxes = [c.box for c in location.candidates]
        else:
            return False
        x, y = self.point
        margin = _HIT_MARGIN * height
        return any(b.left - margin <= x <= b.right + margin and b.top - margin <= y <= b.bottom + margin for b in boxes)
