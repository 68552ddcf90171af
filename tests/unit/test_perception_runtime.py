"""Perception's runtime pieces: the process-wide model registry under threads, the
per-frame cache, the config's validation, and the facade used from several threads."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from perception import PerceptionConfig
from perception.cache import FrameCache, frame_key
from perception.registry import shared


def test_registry_builds_once_under_threads() -> None:
    calls = []

    def factory() -> object:
        calls.append(1)
        time.sleep(0.05)  # long enough for every thread to arrive while it loads
        return object()

    key = ("test-registry", id(calls))
    results = []
    threads = [threading.Thread(target=lambda: results.append(shared(key, factory))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len(results) == 8 and all(r is results[0] for r in results)


def test_frame_key_sees_one_pixel_and_shape() -> None:
    frame = np.zeros((40, 30, 3), np.uint8)
    same = frame.copy()
    changed = frame.copy()
    changed[39, 29, 2] = 1
    assert frame_key(frame) == frame_key(same)
    assert frame_key(frame) != frame_key(changed)
    assert frame_key(frame) != frame_key(np.zeros((30, 40, 3), np.uint8))  # same bytes, other shape
    view = np.zeros((80, 30, 3), np.uint8)[::2]  # non-contiguous
    assert frame_key(view) == frame_key(frame)


def test_frame_cache_is_a_small_lru() -> None:
    cache = FrameCache(2)
    computed = []

    def compute(tag: str):
        return lambda: computed.append(tag) or tag

    assert cache.get_or_compute("a", "ocr", compute("a")) == "a"
    cache.get_or_compute("b", "ocr", compute("b"))
    cache.get_or_compute("a", "ocr", compute("a-again"))  # hit: a is now the newest
    cache.get_or_compute("c", "ocr", compute("c"))  # evicts b
    cache.get_or_compute("a", "ocr", compute("a-third"))
    cache.get_or_compute("b", "ocr", compute("b-again"))
    assert computed == ["a", "b", "c", "b-again"]
    assert cache.get_or_compute("b", "icons", compute("b-icons")) == "b-icons"  # kinds apart
    off = FrameCache(0)
    off.get_or_compute("a", "ocr", compute("x"))
    off.get_or_compute("a", "ocr", compute("y"))
    assert computed[-2:] == ["x", "y"]


@pytest.mark.parametrize(
    "bad",
    [
        {"max_text_candidates": 0},
        {"max_box_fraction": 0.0},
        {"max_box_fraction": 1.5},
        {"ocr_limit_side_len": 10},
        {"ocr_rec_min_width": 8},
        {"ocr_rec_batch": 0},
        {"ocr_min_short_side": 0},
        {"ocr_screen_side_len": 16},
        {"cache_size": -1},
        {"nms_iou": 2.0},
    ],
)
def test_config_rejects_nonsense(bad: dict) -> None:
    with pytest.raises(ValueError):
        PerceptionConfig(**bad)


def test_facade_from_threads_gives_one_answer() -> None:
    from PIL import Image, ImageDraw, ImageFont

    from perception import LocateStatus, Perception

    image = Image.new("RGB", (720, 1280), "white")
    ImageDraw.Draw(image).text(
        (80, 600), "Bluetooth", fill="black", font=ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 40)
    )
    frame = np.asarray(image)
    perception = Perception(PerceptionConfig())
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(perception.find_text(frame, "Bluetooth"))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(answers) == 3 and all(a.status is LocateStatus.FOUND for a in answers)
    assert len({a.point for a in answers}) == 1
    assert perception.cache.misses == 1  # the other threads waited for the one OCR run


def test_any_layout_of_one_frame_gives_one_answer() -> None:
    """Grey, RGBA, Fortran order, views and read-only buffers are the same frame: same
    answers, one OCR and one proposal run between them (OpenCV rejected Fortran order)."""
    from PIL import Image, ImageDraw, ImageFont

    from perception import LocateStatus, Perception

    drawing = Image.new("L", (720, 1280), 255)
    draw = ImageDraw.Draw(drawing)
    draw.text((80, 600), "Bluetooth", fill=0, font=ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 40))
    draw.rectangle((500, 100, 599, 199), fill=0)
    grey = np.asarray(drawing)
    rgb = np.repeat(grey[:, :, None], 3, axis=2)
    perception = Perception(PerceptionConfig(detector="proposals", ranker="heuristic"))
    text = perception.find_text(rgb, "Bluetooth")
    icon = perception.find_icon(rgb, "black square", "top right")
    assert text.status is LocateStatus.FOUND and icon.status is LocateStatus.FOUND
    assert 500 <= icon.point[0] < 600 and 100 <= icon.point[1] < 200
    computed = perception.cache.misses  # OCR, proposals and the app area, once each
    assert computed >= 2
    padded = np.zeros((1300, 760, 3), np.uint8)
    padded[10:1290, 20:740] = rgb
    read_only = rgb.copy()
    read_only.flags.writeable = False
    layouts = {
        "grey": grey,
        "grey HxWx1": grey[:, :, None],
        "rgba": np.dstack([rgb, np.full_like(grey, 255)]),
        "fortran order": np.asfortranarray(rgb),
        "view into a larger buffer": padded[10:1290, 20:740],
        "channels reversed (a view)": rgb[:, :, ::-1],
        "read-only": read_only,
    }
    for name, frame in layouts.items():
        assert perception.find_text(frame, "Bluetooth").point == text.point, name
        assert perception.find_icon(frame, "black square", "top right").point == icon.point, name
    assert perception.cache.misses == computed, "each layout should have hit the cached OCR and proposals"


def test_backend_choice_is_whole_and_single_under_threads() -> None:
    """Threads racing on a fresh Perception see one icon locator and a whole backend
    choice (a half-set choice read as detector set, ranker unset -> 'heuristic')."""
    import sys

    from perception import Perception

    config = PerceptionConfig(detector="proposals", ranker="clip", compute_device="cpu")
    Perception(config).describe_backends()  # torch imported once, outside the race
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        for _ in range(1000):
            perception = Perception(config)
            barrier = threading.Barrier(6)
            locators, rankers = [], []

            def ask(p=perception, b=barrier, locators=locators, rankers=rankers) -> None:
                b.wait()
                locators.append(p._icon_locator())
                rankers.append(p.describe_backends()["icon_ranker"])

            threads = [threading.Thread(target=ask) for _ in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len({id(loc) for loc in locators}) == 1
            assert all(r.startswith("clip") for r in rankers), rankers
    finally:
        sys.setswitchinterval(interval)


def test_a_frame_without_text_logs_no_warning() -> None:
    import logging

    from perception import Perception

    class Recorder(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.DEBUG)
            self.records: list[logging.LogRecord] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.records.append(record)

    recorder = Recorder()
    rapidocr_log = logging.getLogger("RapidOCR")  # rapidocr's own logger, with its own stderr handler
    rapidocr_log.addHandler(recorder)
    try:
        assert Perception(PerceptionConfig()).ocr(np.full((96, 96, 3), 255, dtype=np.uint8)) == []
    finally:
        rapidocr_log.removeHandler(recorder)
    assert [r.getMessage() for r in recorder.records if r.levelno >= logging.WARNING] == []
