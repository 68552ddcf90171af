"""mobile_agent.locate: settings -> PerceptionConfig, and failures as PerceptionError."""

from __future__ import annotations

import numpy as np
import pytest

from mobile_agent.errors import PerceptionError
from mobile_agent.locate import PerceptionLocator, build_locator, perception_config
from mobile_agent.settings import load_settings
from perception import PerceptionConfig


def test_settings_become_the_library_config() -> None:
    settings = load_settings(overrides={"perception.max_text_candidates": 6, "perception.detector": "proposals"})
    config = perception_config(settings.perception)
    assert isinstance(config, PerceptionConfig)
    assert config.max_text_candidates == 6 and config.detector == "proposals"
    assert build_locator(settings) is build_locator(settings.perception)  # one per configuration
    assert isinstance(build_locator(settings), PerceptionLocator)


def test_missing_paddle_models_raise_perception_error(tmp_path) -> None:
    settings = load_settings(
        overrides={"perception.ocr_backend": "paddleocr", "perception.paddle_det_dir": str(tmp_path / "nope")}
    )
    locator = build_locator(settings)
    with pytest.raises(PerceptionError) as info:
        locator.find_text(np.full((64, 64, 3), 255, np.uint8), "OK")
    err = info.value
    assert err.backend == "paddleocr" and "paddle_det_dir" in err.hint
    assert err.to_dict()["type"] == "PerceptionError"


def test_missing_grounding_dino_weights_name_the_file_and_the_fix() -> None:
    settings = load_settings(
        overrides={
            "perception.detector": "grounding-dino",
            "perception.grounding_dino_path": "someone/not-in-the-cache",
            "perception.compute_device": "cpu",
        }
    )
    locator = build_locator(settings)
    with pytest.raises(PerceptionError) as info:
        locator.find_icon(np.full((64, 64, 3), 255, np.uint8), "red heart", None)
    assert info.value.backend == "grounding-dino"
    assert "hf download someone/not-in-the-cache" in info.value.hint
    import sys
    from pathlib import Path

    command = info.value.hint.split()[0]  # the hub CLI the hint names is the one installed
    assert (Path(sys.executable).parent / command).exists(), command
    assert "someone/not-in-the-cache" in info.value.message


def test_bad_input_is_a_perception_error() -> None:
    locator = build_locator(load_settings())
    with pytest.raises(PerceptionError) as info:
        locator.find_text(np.zeros((10, 10, 3), np.float32), "x")
    assert info.value.backend == "input"


def test_optional_backends_say_what_to_install(tmp_path) -> None:
    import importlib.util

    from perception import BackendUnavailableError, PerceptionConfig, WeightsMissingError
    from perception.ml import GroundingDinoPyDetector
    from perception.ocr import PaddleOcrBackend

    det, rec = tmp_path / "det", tmp_path / "rec"
    for folder in (det, rec):
        folder.mkdir()
        (folder / "inference.yml").write_text("Global:\n  model_name: test\n")
    if importlib.util.find_spec("paddleocr") is None:
        with pytest.raises(BackendUnavailableError) as info:
            PaddleOcrBackend(PerceptionConfig(ocr_backend="paddleocr", paddle_det_dir=det, paddle_rec_dir=rec)).read(
                np.full((64, 64, 3), 255, np.uint8)
            )
        assert "mobile-agent[paddle]" in info.value.hint
    with pytest.raises(WeightsMissingError) as missing:
        GroundingDinoPyDetector(PerceptionConfig(groundingdino_py_checkpoint=tmp_path / "groundingdino_swint_ogc.pth"))
    assert "groundingdino_swint_ogc.pth" in missing.value.hint
    if importlib.util.find_spec("groundingdino") is None:
        ckpt, cfg = tmp_path / "g.pth", tmp_path / "g.py"
        ckpt.write_bytes(b"0")
        cfg.write_text("")
        with pytest.raises(BackendUnavailableError) as info:
            GroundingDinoPyDetector(
                PerceptionConfig(groundingdino_py_checkpoint=ckpt, groundingdino_py_config=cfg, compute_device="cpu")
            )
        assert "mobile-agent[groundingdino]" in info.value.hint


def test_half_precision_setting_reaches_the_library() -> None:
    assert perception_config(load_settings().perception).half_precision is None  # on CUDA only
    settings = load_settings(overrides={"perception.half_precision": False})
    assert perception_config(settings.perception).half_precision is False


def test_a_region_is_read_alone_and_matched_with_the_facades_settings() -> None:
    """``find_text_in_region`` (the replay's band reads): lines of the region only, in the
    frame's coordinates, matched by the same settings as ``find_text`` (one home for them)."""
    from perception import Box, LocateStatus
    from simphone import Phone

    phone = Phone()
    phone.launch("com.android.settings")
    frame = np.asarray(phone.screenshot().convert("RGB"))
    (row,) = [e for e in phone.ground_truth() if e["text"] == "Display & brightness"]
    top = row["box"][1] - 60
    band = Box(0, top, frame.shape[1], top + 190)
    locator = build_locator(load_settings(overrides={"perception.detector": "proposals"}))
    lines = locator.ocr_region(frame, band)
    assert lines and all(band.top <= line.box.top and line.box.bottom <= band.bottom + 2 for line in lines)
    found = locator.find_text_in_region(frame, "Display & brightness", band, "recorded band")
    assert found.status is LocateStatus.FOUND and "recorded band" in found.backend
    assert abs(found.point[1] - (row["box"][1] + row["box"][3]) / 2) < 30
    elsewhere = Box(0, 0, frame.shape[1], 100)  # the status bar's strip: not there
    assert locator.find_text_in_region(frame, "Display & brightness", elsewhere).status is not LocateStatus.FOUND
    with pytest.raises(PerceptionError):
        locator.ocr_region(frame, (0, 0, 10, 10))  # type: ignore[arg-type]
