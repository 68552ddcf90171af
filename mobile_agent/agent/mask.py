"""Secrets on screen: black out the text lines that show a secret before a frame is saved.

Texts in ``settings.agent.secrets`` (a password the instruction asked to type, say) are
redacted from every text file of a trajectory by ``Redactor``; a screenshot can show
them too. When secrets are configured, each saved frame is read with the run's OCR
(``locator.ocr``, cached per frame, so mostly free for frames a step already read) and
every line that contains a secret — exactly, or nearly for OCR misreads — is filled
black in the raw and the annotated image. Best effort: text that OCR does not see
(password dots, tiny print) is not found; without an ``ocr`` method nothing is masked.

Password fields: once a run has typed a ``{{secret:name}}``, the session reads the phone's
password fields (``password_boxes``, from the accessibility tree) with each frame it keeps
and blacks them out (``black_out``) in the saved copies: Android shows the last typed
character of a password for a moment, and a "show password" toggle shows all of it.

Live frames: the dashboard's live view and ``/v1/devices/{serial}/screenshot`` capture the
phone outside the run, while it runs. The run keeps what it blacks out of its own frames in
a ``LiveMask`` (the secret lines of the last frame read, the password fields of the last
dump — taken before a secret is typed, too) and shows it for its phone's serial
(``masking_live_frames``); ``mask_live_frame`` applies it to any capture of that phone in
this process (the embedded service, or the farm worker that runs the task and relays its
frames). Reading the screen again for every live frame (OCR, an accessibility dump) would
cost a live view its frame rate; the boxes cost one fill. The boxes are those of the run's
latest frame, so a field that moved since is covered again with the next step's frame.

May import: numpy, rapidfuzz, the standard library, ``perception.text_match`` (folding),
``perception.accessibility`` and ``mobile_agent.device.hierarchy`` (the password fields).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
from rapidfuzz import fuzz

from mobile_agent.operations.context import Locator
from perception.text_match import fold

__all__ = ["LiveMask", "ScreenSecretMasker", "black_out", "mask_live_frame", "masking_live_frames", "password_boxes"]

Box = tuple[int, int, int, int]  # left, top, right, bottom in screen pixels

log = logging.getLogger(__name__)

_NEAR = 85  # rapidfuzz partial_ratio that counts as "shows the secret" despite OCR noise


def _norm(text: str) -> str:
    # perception's folding (case, width, punctuation), then no spaces at all: OCR splits
    # and joins words at will
    return fold(text).replace(" ", "")


class ScreenSecretMasker:
    """``mask(pixels) -> pixels`` with secret text lines blacked out (a copy when any)."""

    def __init__(
        self, secrets: list[str], locator: Callable[[], Locator], on_boxes: Callable[[list[Box]], None] | None = None
    ) -> None:
        self._secrets = [s for s in (_norm(x) for x in secrets) if len(s) >= 3]
        self._locator = locator
        self._on_boxes = on_boxes  # told the boxes of each frame read (the run's LiveMask)

    @property
    def active(self) -> bool:
        return bool(self._secrets)

    def _shows_secret(self, text: str) -> bool:
        line = _norm(text)
        if not line:
            return False
        for secret in self._secrets:
            if secret in line:
                return True
            if len(line) >= len(secret) - 1 and fuzz.partial_ratio(secret, line) >= _NEAR:
                return True
        return False

    def __call__(self, pixels: np.ndarray) -> np.ndarray:
        if not self._secrets:
            return pixels
        try:
            locator = self._locator()
            ocr = getattr(locator, "ocr", None)
            if ocr is None:
                return pixels
            lines = ocr(pixels)
        except Exception as exc:  # masking must never lose the run; say so in the log
            log.warning("could not read a frame to mask secrets: %s", exc)
            return pixels
        # 4 pixels around each line: OCR boxes hug the glyphs, anti-aliasing spills past them
        hits = [(int(b.left) - 4, int(b.top) - 4, int(b.right) + 4, int(b.bottom) + 4)
                for b in (line.box for line in lines if self._shows_secret(line.text))]
        if self._on_boxes is not None:
            self._on_boxes(hits)
        return black_out(pixels, hits)


def password_boxes(device: object) -> list[Box]:
    """The screen boxes of the password fields on the phone now (``password="true"`` nodes of
    its accessibility tree, AOSP's ``AccessibilityNodeInfoDumper`` attribute); none when the
    device cannot say (no ``uiautomator``, not an adb device)."""
    if not hasattr(device, "run"):
        return []
    from mobile_agent.device.hierarchy import dump_hierarchy
    from perception.accessibility import parse_uiautomator_dump

    try:
        xml = dump_hierarchy(device).xml  # type: ignore[arg-type]
        nodes = parse_uiautomator_dump(xml) if xml else []
    except Exception as exc:  # noqa: BLE001 - masking is best effort; the OCR pass still runs
        log.warning("could not read the password fields: %s", exc)
        return []
    return [(int(n.bounds.left), int(n.bounds.top), int(n.bounds.right), int(n.bounds.bottom)) for n in nodes if n.password]


def black_out(pixels: np.ndarray, boxes: list[Box]) -> np.ndarray:
    """``pixels`` with ``boxes`` (screen pixels) filled black: a copy when any."""
    if not boxes:
        return pixels
    out = np.array(pixels, copy=True)
    height, width = out.shape[:2]
    for left, top, right, bottom in boxes:
        out[max(0, top) : min(height, bottom), max(0, left) : min(width, right)] = 0
    return out


class LiveMask:
    """What one run blacks out of its phone's screen now, by kind (``"secrets"``: the lines OCR
    found in its latest frame; ``"passwords"``: the password fields of its latest dump), for
    frames the run does not take itself. Thread-safe: the run sets, the live view applies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._boxes: dict[str, list[Box]] = {}

    def set(self, kind: str, boxes: list[Box]) -> None:
        with self._lock:
            self._boxes[kind] = list(boxes)

    def boxes(self) -> list[Box]:
        with self._lock:
            return [box for kind in sorted(self._boxes) for box in self._boxes[kind]]

    def __call__(self, pixels: np.ndarray) -> np.ndarray:
        return black_out(pixels, self.boxes())


_shown: dict[str, LiveMask] = {}  # serial -> the mask of the run on that phone, in this process
_shown_lock = threading.Lock()


@contextmanager
def masking_live_frames(serial: str | None, mask: LiveMask) -> Iterator[None]:
    """While the block runs, ``mask_live_frame(serial, ...)`` applies ``mask`` (a run's phone)."""
    if not serial:
        yield
        return
    with _shown_lock:
        _shown[serial] = mask
    try:
        yield
    finally:
        with _shown_lock:
            if _shown.get(serial) is mask:
                del _shown[serial]


def mask_live_frame(serial: str, pixels: np.ndarray) -> np.ndarray:
    """``pixels`` (a capture of phone ``serial``) as the run on it would keep them: what its
    mask blacks out, filled black (a copy when any); unchanged when no run shows one."""
    with _shown_lock:
        mask = _shown.get(serial)
    return mask(pixels) if mask is not None else pixels
