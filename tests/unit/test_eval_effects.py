"""``eval.mobile_eval.effects``: a grounded dialect's tap is scored by what it hits, the
reference's text located on the step's own screenshot (RapidOCR with its real weights on a
Pillow-drawn screen). The end-to-end tests (tests/device/test_eval_grounded.py) play only
right taps; here a tap on another element of the same screen scores 0."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from eval.mobile_eval.effects import effect_ref
from eval.mobile_eval.matching import ActionRef, ReferenceStep, best_args
from mobile_agent.locate import build_locator
from mobile_agent.settings import PerceptionSettings

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _screen() -> np.ndarray:
    image = Image.new("RGB", (1080, 2400), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, 56)
    draw.text((80, 400), "Wi-Fi", fill="black", font=font)
    draw.text((80, 800), "Bluetooth", fill="black", font=font)
    return np.asarray(image)


def test_a_tap_scores_by_the_element_under_its_point():
    pixels = _screen()
    locator = build_locator(PerceptionSettings(detector="proposals", ranker="heuristic"))
    reference = ReferenceStep((ActionRef("click_text", {"text": "Wi-Fi"}, "Click text (Wi-Fi)"),))

    def tap(x: int, y: int) -> ActionRef:
        return effect_ref("tap_point", {"x": x, "y": y}, f"click({x},{y})", point=(x, y),
                          frame=lambda: pixels, locator=lambda: locator)  # fmt: skip

    assert best_args(tap(150, 430), reference) == 1.0  # on "Wi-Fi"
    assert best_args(tap(200, 830), reference) == 0.0  # on "Bluetooth": the right act, the wrong target
    assert best_args(tap(900, 1600), reference) == 0.0  # on nothing
    unreadable = effect_ref("tap_point", {"x": 150, "y": 430}, "", point=(150, 430), frame=lambda: None,
                            locator=lambda: locator)  # fmt: skip
    assert best_args(unreadable, reference) == 0.0  # no screenshot: no proof it landed
