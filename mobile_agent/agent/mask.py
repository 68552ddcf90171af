"""Secrets on screen: the one masking step every image of a run passes before it leaves.

A ``{{secret:name}}`` value (``agent.named_secrets``) or a text of ``agent.secrets`` may show
on the phone's screen; every copy of a frame that leaves the run — the planner's image, the
saved frames and the report, the live view and the dashboard's device screenshot, the MCP
screenshot — is blacked out where it shows, by ``SecretMask``:

- **OCR lines** that show a secret (``SecretText.shows``): the value, a fragment of it of
  ``MIN_FRAGMENT`` characters or more (a field that scrolls, wraps or ellipsizes shows a
  part), or nearly the value (an OCR misread). The lines are the frame's own OCR, read
  through the run's locator and cached per frame by perception: the step's operations
  (``Click (text)``) find them there, so masking costs no second read of a frame.
- **Accessibility nodes** (``uiautomator dump``), once a secret was typed: password fields
  (``password="true"``: Android shows a password's last character for a moment) and every
  node whose text holds the secret or a part of it: the field that was typed into, tracked
  across frames for as long as a dump shows it, even where the pixels show only a part.
- **A band** around the point the run tapped before typing, where the phone gives no dump
  (no ``uiautomator``): kept for the rest of the run.

When each frame is read: before a secret was typed, only the saved copies are masked (on the
trajectory writer's thread); from the moment one is typed (``arm``), every frame the run
captures or settles on is read at once (OCR and a dump), so that the planner's image is
masked before it is encoded and the live view hides the field the moment typing starts.

Texts go the same way: ``SecretText.redact`` replaces the words that show a secret or a
part of it in what the model reads (history, feedback) and in MCP answers.

Live frames: the dashboard's live view and ``/v1/devices/{serial}/screenshot`` capture the
phone outside the run. ``masking_live_frames`` shows the run's ``LiveMask`` (the boxes of its
latest frame) for its phone's serial, and ``mask_live_frame`` applies it to any capture of
that phone in this process (one fill: reading every live frame again would cost the live
view its frame rate). While a secret is typed and the screen moves after an action, the live
view holds the run's last masked frame (``LiveMask.hold``) until the next settled frame is
read: a moving secret has no box yet.

May import: numpy, rapidfuzz, the standard library, ``mobile_agent.settings``, ``perception`` (text folding, types,
the accessibility dump's parser) and, for types, ``mobile_agent.operations.context`` (``DeviceLike``: the
phone's ``accessibility_xml``, an adb phone's dump or an iPhone's page source).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from rapidfuzz import fuzz

from mobile_agent.settings import Settings
from perception.accessibility import AccessibilityNode
from perception.text_match import fold
from perception.types import TextLine

if TYPE_CHECKING:
    from mobile_agent.operations.context import DeviceLike

__all__ = [
    "MIN_FRAGMENT",
    "MASKED_NOTE",
    "LiveMask",
    "MaskedFrame",
    "SecretMask",
    "SecretText",
    "black_out",
    "mask_live_frame",
    "hide_live_mask",
    "hide_secrets_shown",
    "masking_live_frames",
    "show_live_mask",
    "password_boxes",
    "screen_nodes",
    "secret_values",
]

Box = tuple[int, int, int, int]  # left, top, right, bottom in screen pixels

log = logging.getLogger(__name__)

MIN_FRAGMENT = 4  # characters of a secret that count as showing it (a field shows part of a long value)
_NEAR = 85  # rapidfuzz partial_ratio that counts as "shows the secret" despite OCR noise
_MARGIN = 4  # pixels around an OCR line: its box hugs the glyphs, anti-aliasing spills past it
_BAND = 90  # half the height of the band around a typed field when the phone gives no dump
_REDACTED = "[REDACTED]"
_FRAMES_KEPT = 3  # frames whose boxes are remembered (a step's frame, its settled frame)

# what the model is told when its image has masked boxes
MASKED_NOTE = ("The black box(es) on the screenshot hide a secret you typed: the phone shows it there. "
               "Do not try to read or retype it.")


def secret_values(settings: Settings) -> list[str]:
    """The texts a run hides: ``agent.secrets`` and the values of ``agent.named_secrets``."""
    values = [x.get_secret_value() for x in settings.agent.secrets]
    return values + [x.get_secret_value() for x in settings.agent.named_secrets.values()]


_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


def _norm(text: str) -> str:
    # perception's folding (case, width, punctuation), then no spaces at all: OCR splits
    # and joins words at will. For ASCII that is its lower-case letters and digits, found
    # 25x faster (every log line of the process passes here while a run hides a secret)
    if text.isascii():
        return _NOT_ALNUM.sub("", text.lower())
    return fold(text).replace(" ", "")


class SecretText:
    """Which texts show a secret: a value whole, ``MIN_FRAGMENT`` characters of it in a row,
    or nearly the whole value (OCR misreads). Values shorter than three characters are left
    out (they would hide ordinary words); one shorter than ``MIN_FRAGMENT`` counts whole only."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self._secrets = sorted({s for s in (_norm(x) for x in secrets) if len(s) >= 3}, key=len, reverse=True)
        self._fragments = {
            s[i : i + MIN_FRAGMENT] for s in self._secrets if len(s) >= MIN_FRAGMENT
            for i in range(len(s) - MIN_FRAGMENT + 1)
        }

    @property
    def active(self) -> bool:
        return bool(self._secrets)

    def shows(self, text: str) -> bool:
        line = _norm(text)
        if not line or not self._secrets:
            return False
        if any(fragment in line for fragment in self._fragments):
            return True
        for secret in self._secrets:
            if secret in line:
                return True
            if len(line) >= len(secret) - 1 and fuzz.partial_ratio(secret, line) >= _NEAR:
                return True
        return False

    def __call__(self, value: Any) -> Any:
        """A copy of ``value`` (JSON-able: an MCP answer) with every string ``redact``-ed."""
        if not self._secrets:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self(v) for v in value]
        return value

    def redact(self, text: str) -> str:
        """``text`` with every word that shows a secret (``shows``) replaced by ``[REDACTED]``."""
        if not self._secrets or not text:
            return text
        if not self.shows(text):
            return text
        return re.sub(r"\S+", lambda m: _REDACTED if self.shows(m.group(0)) else m.group(0), text)


def black_out(pixels: np.ndarray, boxes: list[Box]) -> np.ndarray:
    """``pixels`` with ``boxes`` (screen pixels) filled black: a copy when any."""
    if not boxes:
        return pixels
    out = np.array(pixels, copy=True)
    height, width = out.shape[:2]
    for left, top, right, bottom in boxes:
        out[max(0, top) : min(height, bottom), max(0, left) : min(width, right)] = 0
    return out


@dataclass(frozen=True)
class MaskedFrame:
    """A frame's masked copy, as the planner and the trajectory take frames (``ScreenshotLike``)."""

    pixels: np.ndarray
    width: int
    height: int


class TextReader(Protocol):
    """What reads a frame's text lines (the run's locator: ``PerceptionLocator.ocr``, cached per frame)."""

    def ocr(self, image: np.ndarray) -> list[TextLine]: ...


def screen_nodes(device: DeviceLike) -> list[AccessibilityNode] | None:
    """The accessibility nodes on the phone now (its ``accessibility_xml``: an adb phone's
    ``uiautomator dump``, an iPhone's WDA page source); None when the device cannot say."""
    from perception.accessibility import parse_uiautomator_dump

    try:
        xml = device.accessibility_xml()
        return parse_uiautomator_dump(xml) if xml else None
    except Exception as exc:  # noqa: BLE001 - masking is best effort here; the OCR pass still runs
        log.warning("could not read the screen's fields to mask a secret: %s", exc)
        return None


def password_boxes(device: DeviceLike) -> list[Box]:
    """The screen boxes of the password fields on the phone now (``password="true"`` nodes of
    its accessibility tree, AOSP's ``AccessibilityNodeInfoDumper`` attribute); none when the
    device cannot say."""
    return [_box(n) for n in screen_nodes(device) or [] if n.password]


def _overlaps(line: Any, box: Box) -> bool:
    return bool(line.left < box[2] and box[0] < line.right and line.top < box[3] and box[1] < line.bottom)


# text input classes: Android's EditText (and subclasses named so), XCUITest's fields and text view
_IOS_INPUTS = frozenset({"XCUIElementTypeTextField", "XCUIElementTypeSecureTextField", "XCUIElementTypeSearchField",
                         "XCUIElementTypeTextView"})


def _editable(node: AccessibilityNode) -> bool:
    return node.class_name.endswith("EditText") or node.class_name in _IOS_INPUTS


def _box(node: AccessibilityNode) -> Box:
    return (int(node.bounds.left), int(node.bounds.top), int(node.bounds.right), int(node.bounds.bottom))


class LiveMask:
    """What one run blacks out of its phone's screen now (the boxes of its latest frame), for
    frames the run does not take itself; or, while held (``hold``), the run's last masked
    frame, shown instead of a capture. Thread-safe: the run sets, the live view applies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._boxes: list[Box] = []
        self._held: np.ndarray | None = None

    def set(self, boxes: list[Box]) -> None:
        with self._lock:
            self._boxes = list(boxes)
            self._held = None

    def hold(self, pixels: np.ndarray | None) -> None:
        """Show ``pixels`` (a masked frame) instead of captures until the next ``set``."""
        with self._lock:
            self._held = pixels

    def boxes(self) -> list[Box]:
        with self._lock:
            return list(self._boxes)

    def __call__(self, pixels: np.ndarray) -> np.ndarray:
        with self._lock:
            held, boxes = self._held, list(self._boxes)
        if held is not None and held.shape == pixels.shape and held.dtype == pixels.dtype:
            return held
        return black_out(pixels, boxes)


class SecretMask:
    """The run's masking step: ``boxes(pixels, device)`` where a frame shows a secret, and
    ``masked(...)`` the copy that leaves. Boxes are computed once per frame (remembered by the
    frame's identity) and told to the run's ``LiveMask``."""

    def __init__(self, secrets: Iterable[str], reader: Callable[[], TextReader]) -> None:
        self.text = SecretText(secrets)
        self._reader = reader  # the run's locator, built on first use
        self.live = LiveMask()
        self._lock = threading.Lock()
        self._armed = False
        self._band: Box | None = None
        self._frames: list[tuple[np.ndarray, list[Box]]] = []
        # masked copies made here (nothing left to hide in them), with their frame and its boxes
        self._clean: list[tuple[np.ndarray, np.ndarray, list[Box]]] = []

    @property
    def active(self) -> bool:
        return self.text.active

    @property
    def armed(self) -> bool:
        """A secret was typed: every frame is read before it leaves."""
        return self._armed

    def arm(self, device: DeviceLike, tapped: tuple[int, int] | None, width: int) -> None:
        """A ``{{secret:name}}`` is about to be typed on ``device``: from now on every frame is
        read; the live view hides the phone's text fields (and password fields) at once, or a
        band around ``tapped`` (the run's last tap) when the phone gives no dump."""
        if not self.active:
            return
        with self._lock:
            self._armed = True
        nodes = screen_nodes(device)
        if nodes is None:
            if tapped is not None:
                self._band = (0, tapped[1] - _BAND, width, tapped[1] + _BAND)
            self.live.set([self._band] if self._band is not None else [])
            return
        fields = [_box(n) for n in nodes if n.password or _editable(n) or self._node_shows(n)]
        self.live.set(fields)

    def moving(self, last: np.ndarray | None) -> None:
        """The screen is about to move (an action): while armed, the live view holds the step's
        frame until the next settled one is read: a masked copy as it is; the frame a secret is
        about to be typed on (taken before ``arm``) with what the live view hides now (the
        phone's fields) and what a read of it found (the held frame gets no boxes of its own)."""
        if not self._armed or last is None:
            return
        with self._lock:
            masked = any(out is last for out, _, _ in self._clean)
        self.live.hold(last if masked else black_out(last, [*self.live.boxes(), *(self.known(last) or [])]))

    def _node_shows(self, node: AccessibilityNode) -> bool:
        return self.text.shows(node.text) or self.text.shows(node.content_desc)

    def _lines(self, pixels: np.ndarray) -> list[TextLine]:
        try:
            return self._reader().ocr(pixels)
        except Exception as exc:  # noqa: BLE001 - masking must never lose the run; say so in the log
            log.warning("could not read a frame to mask secrets: %s", exc)
            return []

    def known(self, pixels: np.ndarray) -> list[Box] | None:
        """The boxes of a frame read already (by identity), else None."""
        with self._lock:
            for frame, boxes in self._frames:
                if frame is pixels:
                    return boxes
        return None

    def boxes(self, pixels: np.ndarray, device: DeviceLike | None = None, *, late: bool = False) -> list[Box]:
        """Where ``pixels`` (a frame of ``device``, captured now) shows a secret: its OCR lines
        that show one, and, once armed, the dump's password fields and nodes that hold one,
        and the band. Remembered for the frame; the live view's boxes from now on, unless ``late``
        (the trajectory writer's thread, behind the run) and a secret was typed meanwhile."""
        if not self.active:
            return []
        known = self.known(pixels)
        if known is not None:
            return known
        found = [(int(b.left) - _MARGIN, int(b.top) - _MARGIN, int(b.right) + _MARGIN, int(b.bottom) + _MARGIN)
                 for b in (line.box for line in self._lines(pixels) if self.text.shows(line.text))]
        if self._armed and device is not None:
            nodes = screen_nodes(device)
            if nodes is not None:
                found += [_box(n) for n in nodes if n.password or self._node_shows(n)]
        if self._band is not None:
            found.append(self._band)
        with self._lock:
            self._frames = [(pixels, found), *self._frames][:_FRAMES_KEPT]
            if not (late and self._armed):  # an older frame's boxes must not replace the typed field's
                self.live.set(found)
        return found

    def masked(self, pixels: np.ndarray, device: DeviceLike | None = None, *, late: bool = False) -> np.ndarray:
        """``pixels`` with what shows a secret blacked out (the same array when nothing does)."""
        boxes = self.boxes(pixels, device, late=late)
        out = black_out(pixels, boxes)
        if out is not pixels:
            with self._lock:
                self._clean = [(out, pixels, boxes), *self._clean][:_FRAMES_KEPT]
        return out

    def read(self, pixels: np.ndarray, read: Callable[[np.ndarray], list[TextLine]]) -> list[TextLine]:
        """The text lines of ``pixels`` by ``read`` (OCR); for a masked copy made here, its frame's
        lines (read already, cached) less those under a box: a copy is never read again (the plan
        cache fingerprints the frame the planner was given)."""
        with self._lock:
            source = next(((raw, boxes) for out, raw, boxes in self._clean if out is pixels), None)
        if source is None:
            return read(pixels)
        raw, boxes = source
        return [line for line in read(raw) if not any(_overlaps(line.box, box) for box in boxes)]

    def saved_copy(self, pixels: np.ndarray) -> np.ndarray:
        """The copy of a frame the trajectory writes: a masked copy as it is, a frame read
        already masked by its boxes, else read now (on the writer's thread: a frame before any
        secret was typed)."""
        with self._lock:
            if any(out is pixels for out, _, _ in self._clean):
                return pixels
        return self.masked(pixels, late=True)


# serial -> the masks of the runs on that phone in this process, newest last (an MCP session's,
# then a run it started: the run's applies while it lasts, then the session's again)
_shown: dict[str, list[LiveMask]] = {}
_shown_lock = threading.Lock()


@contextmanager
def masking_live_frames(serial: str | None, mask: LiveMask) -> Iterator[None]:
    """While the block runs, ``mask_live_frame(serial, ...)`` applies ``mask`` (a run's phone)."""
    if not serial:
        yield
        return
    show_live_mask(serial, mask)
    try:
        yield
    finally:
        hide_live_mask(serial, mask)


def show_live_mask(serial: str, mask: LiveMask) -> None:
    """``mask_live_frame(serial, ...)`` applies ``mask`` until ``hide_live_mask`` (an MCP session's span)."""
    with _shown_lock:
        _shown.setdefault(serial, []).append(mask)


def hide_live_mask(serial: str, mask: LiveMask) -> None:
    with _shown_lock:
        masks = [m for m in _shown.get(serial, []) if m is not mask]
        if masks:
            _shown[serial] = masks
        else:
            _shown.pop(serial, None)


def hide_secrets_shown(settings: Settings, pixels: np.ndarray, reader: Callable[[], TextReader]) -> np.ndarray:
    """``pixels`` with every OCR line that shows one of the settings' secrets, or a part of one,
    filled black (a copy when any; unchanged when no secret is configured): the masking step's
    reading rule for a capture that no run masks (a free phone's screen, which shows what the
    last run left there)."""
    mask = SecretMask(secret_values(settings), reader)
    return black_out(pixels, mask.boxes(pixels)) if mask.active else pixels


def mask_live_frame(serial: str, pixels: np.ndarray) -> np.ndarray:
    """``pixels`` (a capture of phone ``serial``) as the run on it would keep them: what its
    mask blacks out, filled black (a copy when any); unchanged when no run shows one."""
    with _shown_lock:
        masks = _shown.get(serial)
        mask = masks[-1] if masks else None
    return mask(pixels) if mask is not None else pixels
