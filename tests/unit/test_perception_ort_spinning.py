"""ONNX Runtime's OCR threads do not busy-wait (perception/ort_spinning.py), and the recognizer
is loaded with the detector, before the first frame with text."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from perception.config import PerceptionConfig
from perception.ocr import RapidOcrBackend
from perception.ort_spinning import allow_spinning, spinning_allowed

pytest.importorskip("rapidocr")


@pytest.fixture
def restore_spinning() -> Iterator[None]:
    yield
    allow_spinning(False)  # the package default (perception.config.ocr_spinning)


def _sessions(backend: RapidOcrBackend) -> list[object]:
    engine = backend._load()
    return [engine.text_det.session.session, engine.text_rec.session.session]


def _words() -> np.ndarray:
    image = Image.new("RGB", (540, 300), "white")
    ImageDraw.Draw(image).text((30, 100), "Battery saver", fill="black", font=ImageFont.load_default(size=44))
    return np.asarray(image)


def test_the_ocr_sessions_do_not_spin_and_the_recognizer_is_loaded_up_front(restore_spinning: None) -> None:
    backend = RapidOcrBackend(PerceptionConfig())
    sessions = _sessions(backend)  # both exist right after loading: no first-frame load
    assert [spinning_allowed(s) for s in sessions] == [False, False]
    assert [line.text for line in backend.read(_words())] == ["Battery saver"]


def test_spinning_can_be_asked_for(restore_spinning: None) -> None:
    backend = RapidOcrBackend(PerceptionConfig(ocr_spinning=True))
    allow_spinning(True)
    assert [spinning_allowed(s) for s in _sessions(backend)] == [True, True]
    assert [line.text for line in backend.read(_words())] == ["Battery saver"]


def test_a_renamed_rapidocr_hook_is_said_not_hidden(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
                                                    restore_spinning: None) -> None:
    from rapidocr.inference_engine.onnxruntime.main import OrtInferSession

    monkeypatch.delattr(OrtInferSession, "_init_sess_opts")
    assert allow_spinning(False) is False
    assert "keep spinning" in caplog.text


def test_the_settings_reach_the_ocr_config() -> None:
    from mobile_agent.locate import perception_config
    from mobile_agent.settings import Settings

    config = perception_config(Settings.model_validate({"perception": {"ocr_threads": 1, "ocr_spinning": True}}).perception)
    assert (config.ocr_threads, config.ocr_spinning) == (1, True)
    assert perception_config(Settings().perception).ocr_spinning is False
