"""Secrets on screen: black out the text lines that show a secret before a frame is saved.

Texts in ``settings.agent.secrets`` (a password the instruction asked to type, say) are
redacted from every text file of a trajectory by ``Redactor``; a screenshot can show
them too. When secrets are configured, each saved frame is read with the run's OCR
(``locator.ocr``, cached per frame, so mostly free for frames a step already read) and
every line that contains a secret — exactly, or nearly for OCR misreads — is filled
black in the raw and the annotated image. Best effort: text that OCR does not see
(password dots, tiny print) is not found; without an ``ocr`` method nothing is masked.

May import: numpy, rapidfuzz, the standard library, ``perception.text_match`` (folding).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np
from rapidfuzz import fuzz

from mobile_agent.operations.context import Locator
from perception.text_match import fold

__all__ = ["ScreenSecretMasker"]

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
