"""What a run must not do alone: sensitive operations and the app policy.

Before a planned operation is carried out, ``Guard.check`` says whether it may go ahead,
must be confirmed by the person first, or is refused outright:

- **the model's own word**: a reply that declares its operation sensitive
  (AutoGLM's ``do(action="Tap", element=[x,y], message="…")``, ``ParsedAction.sensitive``);
- **words**: the operation's target (the text it clicks, the app it opens, the screen
  text under a grounded tap) against the categories of ``data/sensitive.toml`` (pay, send,
  post, delete, install, security) in several languages, extended by
  ``agent.safety.rules_file``; a Type while the screen shows a password word is typing
  into a password field (unless it types a ``{{secret:name}}`` the person gave for it);
- **per-app policy**: ``agent.safety.deny_apps`` (never opened, never acted in),
  ``allow_apps`` (the only apps Open App may open), ``confirm_apps`` (every action asks).

A refusal stops the step with its reason (feedback for the model); a confirmation is
asked through the run's ``UserChannel``.

The words under a grounded tap are read where the tap will land (after the snap the
operation does, ``snap_on``), from every source the operations locate by: OCR, and the
accessibility tree's node text, content-desc and resource id when ``perception.accessibility``
is on or the frame is blank (a FLAG_SECURE window captures black: the tree alone); a
password field reads as the word "password" (``guard_on`` builds such a guard).

May import: the standard library, numpy, ``mobile_agent`` (settings, errors, operations),
``perception`` (text_match, accessibility, blank_screen).
"""

from __future__ import annotations

import functools
import logging
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from mobile_agent.errors import ConfigError
from mobile_agent.operations.context import Locator
from mobile_agent.operations.coordinates import DRIFT_TOLERANCE
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.operations.secrets import SECRET_REFERENCE
from mobile_agent.settings import SafetySettings, Settings
from perception.accessibility import nodes_from
from perception.blank_screen import blank_app_area

__all__ = ["Guard", "GuardedPhone", "SensitiveRules", "Verdict", "guard_on", "screen_reader"]

log = logging.getLogger(__name__)

# operations whose target is a point on the screen: the words under it are the target
_POINT_OPERATIONS = frozenset({"tap_point", "long_press_point", "double_tap_point"})
# ways out of an app: never refused, never asked about
_WAYS_OUT = frozenset({"press_key", "back", "home", "stop", "finished", "give_up", "hand_over", "wait"})
_NEAR_PX = 24  # a tap this close to an OCR line is a tap on it
_NODE_MAX_AREA = 0.15  # a tree node larger than this part of the screen is a page or a panel, not a control
ScreenLines = list[tuple[str, tuple[int, int, int, int]]]  # a screen's text lines with their boxes (screen pixels)
# where a tap planned at a point on a frame will land (the operation's snap), or None: where it was planned
LandingPoint = Callable[[tuple[int, int], np.ndarray], "tuple[int, int] | None"]
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True)
class Verdict:
    """``refusal``: the step stops with this reason. ``confirm``: ask the person this
    question first (``category`` and ``matched`` say why). Neither: go ahead."""

    refusal: str | None = None
    confirm: str | None = None
    category: str = ""
    matched: str = ""

    @property
    def clear(self) -> bool:
        return self.refusal is None and self.confirm is None


class SensitiveRules:
    """Categories of words, each with a ``why`` ("pays or orders") for the question."""

    def __init__(self, categories: dict[str, tuple[str, list[str]]]) -> None:
        self.categories = categories
        self._patterns = {name: [(w, _pattern(w)) for w in words] for name, (_why, words) in categories.items()}

    @classmethod
    def load(cls, extra: Path | None = None) -> SensitiveRules:
        categories = dict(_packaged_categories())
        if extra is not None:
            try:
                categories.update(_categories(tomllib.loads(extra.read_text(encoding="utf-8")), str(extra)))
            except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"cannot read agent.safety.rules_file {extra}: {exc}", setting="agent.safety.rules_file") from exc
        return cls(categories)

    def why(self, category: str) -> str:
        return self.categories[category][0]

    def match(self, text: str, *, skip: frozenset[str] = frozenset({"password"})) -> tuple[str, str] | None:
        """(category, word) of the first rule ``text`` matches."""
        folded = text.casefold()
        if not folded.strip():
            return None
        for name, patterns in self._patterns.items():
            if name in skip:
                continue
            for word, pattern in patterns:
                if pattern.search(folded):
                    return name, word
        return None

    def shows_password(self, lines: list[str]) -> str | None:
        for line in lines:
            found = self.match(line, skip=frozenset(n for n in self.categories if n != "password"))
            if found is not None:
                return found[1]
        return None


def _pattern(word: str) -> re.Pattern[str]:
    folded = re.escape(word.casefold()).replace(r"\ ", r"\s+")
    if _CJK.search(word):
        return re.compile(folded)
    return re.compile(rf"(?<!\w){folded}(?!\w)")


@functools.cache
def _packaged_categories() -> dict[str, tuple[str, list[str]]]:
    """The rules shipped in the package, read once per process (every run builds a guard;
    parsing the file each time cost a farm host several ms of CPU per task). Callers copy it."""
    text = resources.files("mobile_agent.agent").joinpath("data/sensitive.toml").read_text(encoding="utf-8")
    return _categories(tomllib.loads(text), "sensitive.toml")


def _categories(data: dict[str, Any], source: str) -> dict[str, tuple[str, list[str]]]:
    out: dict[str, tuple[str, list[str]]] = {}
    for name, body in dict(data.get("categories") or {}).items():
        words = body.get("words") if isinstance(body, dict) else None
        if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
            raise ConfigError(f"{source}: categories.{name}.words must be a list of words", setting="agent.safety.rules_file")
        out[str(name)] = (str(body.get("why") or name), [w.strip() for w in words])
    return out


class Guard:
    """Checks planned operations against the safety settings (see the module docstring).

    ``read_screen(pixels)`` gives the screen's text lines as (text, box) pairs (the run's
    OCR, and the tree's nodes); ``landing(point, pixels)`` where a tap at ``point`` lands
    (the snap); ``current_app()`` the package in front; ``app_package(label)`` what Open App
    would open. Each is optional: what cannot be read is not checked."""

    def __init__(
        self,
        settings: SafetySettings,
        *,
        read_screen: Callable[[np.ndarray], ScreenLines] | None = None,
        current_app: Callable[[], str | None] | None = None,
        app_package: Callable[[str], str | None] | None = None,
        landing: LandingPoint | None = None,
    ) -> None:
        self.settings = settings
        self.landing = landing
        self.rules = SensitiveRules.load(settings.rules_file)
        self.read_screen = read_screen
        self.current_app = current_app
        self.app_package = app_package
        self.deny = set(settings.deny_apps)
        self.allow = set(settings.allow_apps)
        self.confirm_in = set(settings.confirm_apps)

    @property
    def watches_apps(self) -> bool:
        return bool(self.deny or self.confirm_in)

    def landed_in(self) -> str | None:
        """A reason when the app now in front is denied (after a step)."""
        if not self.deny or self.current_app is None:
            return None
        app = _safe(self.current_app)
        if app in self.deny:
            return f"the step ended in {app}, an app the policy denies (agent.safety.deny_apps): leave it (Back or Home)"
        return None

    def check(
        self, action: ParsedAction, pixels: np.ndarray, *, read_screen: Callable[[np.ndarray], ScreenLines | None] | None = None
    ) -> Verdict:
        """The verdict on ``action`` planned on ``pixels``. ``read_screen``: a narrower
        reading for a Type's password check (a replayed Type reads around its recorded
        field, ``replay.field``); its None means "read the whole screen"."""
        name = action.name
        params = action.params.model_dump()
        if name == "open_app":
            refusal = self._app_refusal(str(params.get("app", "")))
            if refusal is not None:
                return Verdict(refusal=refusal)
        if name in _WAYS_OUT:
            return Verdict()
        front = _safe(self.current_app) if self.watches_apps and self.current_app is not None else None
        if front is not None and front in self.deny and name != "open_app":
            return Verdict(refusal=f"{front} is denied by the app policy (agent.safety.deny_apps): only Back, Home or "
                           "Open App of another app may be done here")
        if not self.settings.confirm_sensitive:
            return Verdict()
        if action.sensitive:
            return self._ask(action, "declared", action.sensitive, f"the model says it is sensitive: {action.sensitive}")
        if front is not None and front in self.confirm_in:
            return self._ask(action, "app", front, f"every action in {front} needs your yes (agent.safety.confirm_apps)")
        text = action.typed_text
        if text is not None:
            if SECRET_REFERENCE.fullmatch(text.strip()):
                return Verdict()  # the person gave this secret for typing
            lines = read_screen(pixels) if read_screen is not None else None
            word = self.rules.shows_password([t for t, _ in (lines if lines is not None else self._lines(pixels))])
            if word is not None:
                return self._ask(action, "password", word, f"it {self.rules.why('password')} (the screen shows {word!r})")
            return Verdict()
        for target in self._targets(action, params, pixels):
            found = self.rules.match(target)
            if found is not None:
                category, word = found
                return self._ask(action, category, word, f"it {self.rules.why(category)} ({word!r} in {target!r})")
        return Verdict()

    def _ask(self, action: ParsedAction, category: str, matched: str, why: str) -> Verdict:
        question = f"Allow {action.text}? {why[0].upper()}{why[1:]}."
        return Verdict(confirm=question, category=category, matched=matched)

    def _app_refusal(self, label: str) -> str | None:
        if not (self.deny or self.allow):
            return None
        resolve = self.app_package
        package = _safe(lambda: resolve(label)) if resolve is not None else None
        names = {n for n in (label, package) if n}
        if names & self.deny:
            return f"Open App ({label}) is refused: the app policy denies it (agent.safety.deny_apps)"
        if self.allow and not names & self.allow:
            return f"Open App ({label}) is refused: it is not one of the allowed apps (agent.safety.allow_apps)"
        return None

    def _targets(self, action: ParsedAction, params: dict[str, Any], pixels: np.ndarray) -> list[str]:
        targets = [str(params[k]) for k in ("text", "app", "icon", "target") if isinstance(params.get(k), str)]
        if action.name in _POINT_OPERATIONS and "x" in params and "y" in params:
            # the model's point, and where the snap will move the tap: both are judged
            points = [(int(params["x"]), int(params["y"]))]
            landed = self._landing(points[0], pixels)
            if landed is not None and landed != points[0]:
                points.append(landed)
            for text, (left, top, right, bottom) in self._lines(pixels):
                if any(left - _NEAR_PX <= x <= right + _NEAR_PX and top - _NEAR_PX <= y <= bottom + _NEAR_PX
                       for x, y in points):
                    targets.append(text)
        return targets

    def _landing(self, point: tuple[int, int], pixels: np.ndarray) -> tuple[int, int] | None:
        if self.landing is None:
            return None
        try:
            return self.landing(point, pixels)
        except Exception as exc:  # noqa: BLE001 - the check judges the model's point then
            log.warning("could not work out where the tap lands for the safety check: %s", exc)
            return None

    def _lines(self, pixels: np.ndarray) -> ScreenLines:
        if self.read_screen is None:
            return []
        try:
            return self.read_screen(pixels)
        except Exception as exc:  # a safety check that cannot read the screen says so and checks what it can
            log.warning("could not read the screen for the safety check: %s", exc)
            return []


def _safe(call: Callable[[], str | None]) -> str | None:
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - the policy checks what it can read
        log.warning("app policy: could not read the app: %s", exc)
        return None



def screen_reader(
    locator: Locator, tree: Callable[[np.ndarray], str | None] | None = None
) -> Callable[[np.ndarray], ScreenLines]:
    """The screen's text lines with their boxes (screen pixels), read by ``locator.ocr``
    (cached per frame by perception), and, when ``tree(pixels)`` gives the frame's
    accessibility tree (``uiautomator dump`` XML), each control's text and content-desc (a
    password field as the word "password"), and its resource id only on a blank frame, where
    nothing else names it. A control's words reach only taps inside its bounds: an OCR line's
    reach around a point (``_NEAR_PX``) would put a neighbour's words ("Delete" beside
    "Archive") on the tap."""

    def read(pixels: np.ndarray) -> ScreenLines:
        lines = locator.ocr(pixels)
        out = [
            (str(line.text), (int(line.box.left), int(line.box.top), int(line.box.right), int(line.box.bottom)))
            for line in lines
        ]
        xml = tree(pixels) if tree is not None else None
        if xml:
            size = (int(pixels.shape[1]), int(pixels.shape[0]))
            out.extend(_tree_lines(xml, size, with_ids=blank_app_area(pixels)))
        return out

    return read


def _tree_lines(xml: str, size: tuple[int, int], *, with_ids: bool) -> ScreenLines:
    nodes = nodes_from(xml) or []
    width, height = size
    out: ScreenLines = []
    for node in nodes:
        b = node.bounds
        box = (max(0, int(b.left)), max(0, int(b.top)), min(width, int(b.right)), min(height, int(b.bottom)))
        area = (box[2] - box[0]) * (box[3] - box[1])
        if area <= 0 or area > _NODE_MAX_AREA * width * height:
            continue
        resource = node.resource_id.rsplit("/", 1)[-1].replace("_", " ").strip() if with_ids else ""
        words = ["password"] if node.password else []
        words += [w for w in (node.text.strip(), node.content_desc.strip(), resource) if w]
        # drawn _NEAR_PX inside its bounds: the guard's reach around a point gives back the bounds
        inner = (box[0] + _NEAR_PX, box[1] + _NEAR_PX, box[2] - _NEAR_PX, box[3] - _NEAR_PX)
        out.extend((w, inner) for w in words)
    return out


class GuardedPhone(Protocol):
    """What the guard reads of the phone (an ``AgentDevice`` is one)."""

    def accessibility_xml(self) -> str | None: ...

    def current_app(self) -> str | None: ...

    def resolve_app_label(self, label: str) -> str | None: ...


def guard_on(settings: Settings, device: GuardedPhone, locator: Locator) -> Guard:
    """The guard of a run (or an MCP call) on ``device``: the screen read as the operations
    read it (OCR, and the tree when ``perception.accessibility`` is on or the frame is blank,
    each frame's tree dumped once), a grounded tap judged where the snap lands it, and the
    app policy asked of the phone. ``locator``: an untimed one (the guard's reads are not a
    step's timings, and learn no drift)."""
    last: list[tuple[np.ndarray, str | None]] = []

    def tree(pixels: np.ndarray) -> str | None:
        if not (settings.perception.accessibility or blank_app_area(pixels)):
            return None
        if not last or last[0][0] is not pixels:
            last[:] = [(pixels, device.accessibility_xml())]
        return last[0][1]

    def landing(point: tuple[int, int], pixels: np.ndarray) -> tuple[int, int] | None:
        if not settings.planner.snap:
            return None
        height = int(pixels.shape[0])
        # as the operation's ``snap_on``, with the tree dumped once for this frame
        return locator.snap(point, pixels, max_distance=settings.planner.snap_max_distance * height,
                            drift_tolerance=DRIFT_TOLERANCE * height, hierarchy=tree(pixels)).point

    return Guard(settings.agent.safety, read_screen=screen_reader(locator, tree), current_app=device.current_app,
                 app_package=device.resolve_app_label, landing=landing)
