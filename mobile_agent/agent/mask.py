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

May import: numpy, rapidfuzz, the standard library, ``perception.text_match`` (folding),
``perception.accessibility`` and ``mobile_agent.device.hierarchy`` (the password fields).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np
from rapidfuzz import fuzz

from mobile_agent.operations.context import Locator
from perception.text_match import fold

__all__ = ["ScreenSecretMasker", "black_out", "password_boxes"]

log = logging.getLogger(__name__)

_NEAR = 85  # rapidfuzz partial_ratio that counts as "shows the secret" despite OCR noise


def _norm(text: str) -> str:
    # perception's folding (case, width, punctuation), then no spaces at all: OCR splits
    # and joins words at will
    return fold(text).replace(" ", "")


class ScreenSecretMasker:
    """``mask(pixels) -> pixels`` with secret text lines blacked out (a copy when any)."""

    def __init__(self, secrets: list[str], locator: Callable[[], Locator]) -> None:
        self._secrets = [s for s in (_norm(x) for x in secrets) if len(s) >= 3]
        self._locator = locator

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
        hits = [line.box for line in lines if self._shows_secret(line.text)]
        if not hits:
            return pixels
        out = np.array(pixels, copy=True)
        height, width = out.shape[:2]
        for box in hits:
            left, top = max(0, int(box.left) - 4), max(0, int(box.top) - 4)
            right, bottom = min(width, int(box.right) + 4), min(height, int(box.bottom) + 4)
            out[top:bottom, left:right] = 0
        return out


def password_boxes(device: object) -> list[tuple[int, int, int, int]]:
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


def black_out(pixels: np.ndarray, boxes: list[tuple[int, int, int, int]]) -> np.ndarray:
    """``pixels`` with ``boxes`` (screen pixels) filled black: a copy when any."""
    if not boxes:
        return pixels
    out = np.array(pixels, copy=True)
    height, width = out.shape[:2]
    for left, top, right, bottom in boxes:
        out[max(0, top) : min(height, bottom), max(0, left) : min(width, right)] = 0
    return out
