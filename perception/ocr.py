"""OCR backends: image in, ``TextLine``s (image pixels) out.

``RapidOcrBackend`` is the default: PP-OCR detection + recognition models shipped inside
the ``rapidocr`` wheel, run by ONNX Runtime (CUDA when its provider is there, CPU
otherwise). ``PaddleOcrBackend`` runs the design's original package when it is installed
and local model folders are given. Both are loaded lazily, once, under a lock.

May import: numpy, the standard library, ``perception.*``; rapidocr / paddleocr lazily.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, Protocol

import cv2
import numpy as np

from perception.config import PerceptionConfig
from perception.errors import BackendUnavailableError, PerceptionFailure, WeightsMissingError
from perception.types import Box, TextLine

__all__ = ["OcrBackend", "PaddleOcrBackend", "RapidOcrBackend", "detector_side", "make_ocr_backend", "rapidocr_params"]

log = logging.getLogger(__name__)


def _quiet_onnxruntime() -> None:
    # onnxruntime makes telemetry lookups at import unless told not to (for this process only).
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


_quiet_onnxruntime()  # as early as possible: before anything in this process imports onnxruntime


class _EmptyResultFilter(logging.Filter):
    """rapidocr logs a WARNING (its ``RapidOCRError``) for every frame where it finds no
    text; on a phone screen that is a result, not a problem."""

    def __init__(self, empty_result: type[Exception]) -> None:
        super().__init__()
        self._empty_result = empty_result

    def filter(self, record: logging.LogRecord) -> bool:
        return not isinstance(record.msg, self._empty_result)


def _quiet_rapidocr_empty_results() -> None:
    try:
        from rapidocr.main import RapidOCRError
    except ImportError:  # another rapidocr layout: its warnings stay
        return
    logger = logging.getLogger("RapidOCR")
    if not any(isinstance(f, _EmptyResultFilter) for f in logger.filters):
        logger.addFilter(_EmptyResultFilter(RapidOCRError))


class OcrBackend(Protocol):
    name: str

    def read(self, image: np.ndarray) -> list[TextLine]:
        """OCR an RGB uint8 HxWx3 image."""
        ...

    def describe(self) -> str: ...


def _box_of(points: Any, width: int, height: int) -> Box:
    """The axis-aligned box of a text polygon, clipped to the image (the detector's
    unclip step can push a polygon past the edge)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    xs, ys = np.clip(pts[:, 0], 0, width), np.clip(pts[:, 1], 0, height)
    return Box(float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max()))


# rapidocr shrinks the long side to 2000 px and rounds sides to multiples of 32: a side
# under 1/64 of the long one rounds to 0 and it raises ResizeImgError.
_MAX_ASPECT = 64


def _pad_thin_strip(bgr: np.ndarray) -> np.ndarray:
    """A very thin strip padded on its bottom/right edge (coordinates unchanged)."""
    height, width = bgr.shape[:2]
    short = -(-max(height, width) // _MAX_ASPECT)
    if min(height, width) >= short:
        return bgr
    bottom, right = (short - height, 0) if height < width else (0, short - width)
    return cv2.copyMakeBorder(bgr, 0, bottom, 0, right, cv2.BORDER_REPLICATE)


# Longer than this many times its short side, an image is a strip (a band of changed rows,
# a banner), not a screen: its short side says nothing of the text's size.
_STRIP_ASPECT = 4


def detector_side(height: int, width: int, config: PerceptionConfig) -> int:
    """The longest side the text detector sees for a ``height`` x ``width`` image (RapidOCR
    does not enlarge under ``Det.limit_type=max``): a screen at most
    ``ocr_screen_side_len``, unless its short side would go under ``ocr_min_short_side``;
    a strip, and anything, at most ``ocr_limit_side_len``."""
    long, short = max(height, width), min(height, width)
    if long > _STRIP_ASPECT * short:
        return config.ocr_limit_side_len
    floor = min(long, -(-long * config.ocr_min_short_side // short))
    return min(config.ocr_limit_side_len, max(config.ocr_screen_side_len, floor))


def _cuda_in_onnxruntime() -> bool:
    _quiet_onnxruntime()
    try:
        import onnxruntime
    except ImportError:
        return False
    return "CUDAExecutionProvider" in onnxruntime.get_available_providers()


def rapidocr_params(config: PerceptionConfig, *, tuned: bool = True, use_cuda: bool = False) -> dict[str, Any]:
    """RapidOCR's parameters: the phone-screen tuning, or (``tuned=False``) its defaults."""
    params: dict[str, Any] = {"Global.log_level": "warning"}
    if tuned:
        params.update(
            {
                "Global.use_cls": config.ocr_use_cls,
                "Global.text_score": config.ocr_min_score,
                "Det.limit_type": "max",
                "Det.limit_side_len": config.ocr_limit_side_len,
                "Rec.rec_img_shape": [3, 48, config.ocr_rec_min_width],
                "Rec.rec_batch_num": config.ocr_rec_batch,
                "EngineConfig.onnxruntime.enable_cpu_mem_arena": config.ocr_memory_arena,
            }
        )
    if config.ocr_threads > 0:
        params["EngineConfig.onnxruntime.intra_op_num_threads"] = config.ocr_threads
    if use_cuda:
        params["EngineConfig.onnxruntime.use_cuda"] = True
    return params


class RapidOcrBackend:
    """PP-OCR through ``rapidocr`` + ONNX Runtime; the models ship inside the wheel."""

    name = "rapidocr"

    def __init__(self, config: PerceptionConfig, *, tuned: bool = True) -> None:
        self._config = config
        self._tuned = tuned
        self._engine: Any = None
        self._device = "cpu"
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._engine is None:
                _quiet_onnxruntime()
                try:
                    from rapidocr import RapidOCR
                except ImportError as exc:
                    raise BackendUnavailableError(
                        "rapidocr is not installed",
                        backend=self.name,
                        hint="pip install rapidocr onnxruntime",
                    ) from exc
                use_cuda = self._config.compute_device != "cpu" and _cuda_in_onnxruntime()
                if self._config.compute_device == "cuda" and not use_cuda:
                    log.warning("compute_device=cuda but onnxruntime has no CUDA provider; OCR runs on CPU")
                _quiet_rapidocr_empty_results()
                if not self._config.ocr_spinning:
                    from perception.ort_spinning import allow_spinning

                    allow_spinning(False)
                params = rapidocr_params(self._config, tuned=self._tuned, use_cuda=use_cuda)
                try:
                    self._engine = RapidOCR(params=params)
                except Exception as exc:  # a broken wheel or missing model file inside it
                    raise PerceptionFailure(
                        f"rapidocr failed to start: {exc}", backend=self.name, hint="reinstall rapidocr"
                    ) from exc
                if self._tuned:
                    # loaded now, so that read() can set the detector's side for each frame,
                    # and the recognizer too: RapidOCR loads it at the first frame with text,
                    # which would be a run's first OCR rather than the warm-up (server prepare)
                    self._engine._load_det_model()
                    self._engine._load_rec_model()
                self._device = "cuda" if use_cuda else "cpu"
                log.info("OCR backend rapidocr loaded on %s (tuned=%s)", self._device, self._tuned)
            return self._engine

    def read(self, image: np.ndarray) -> list[TextLine]:
        engine = self._load()
        bgr = _pad_thin_strip(np.ascontiguousarray(image[:, :, ::-1]))  # rapidocr takes numpy arrays as BGR
        # One call at a time: rapidocr keeps per-call flags on the engine.
        with self._lock:
            if self._tuned:
                height, width = bgr.shape[:2]
                engine.text_det.limit_side_len = detector_side(height, width, self._config)
            result = engine(bgr)
        if result.boxes is None or result.txts is None:
            return []
        lines = []
        for points, text, score in zip(result.boxes, result.txts, result.scores, strict=False):
            if text and text.strip():
                lines.append(TextLine(text=str(text), box=_box_of(points, image.shape[1], image.shape[0]), score=float(score)))
        return lines

    def describe(self) -> str:
        state = f"on {self._device}" if self._engine is not None else "not loaded yet"
        mode = "phone-tuned" if self._tuned else "defaults"
        return f"rapidocr (PP-OCR ONNX, {mode}, {state})"


class PaddleOcrBackend:
    """PaddleOCR 3.x with local model folders (no hub access)."""

    name = "paddleocr"

    def __init__(self, config: PerceptionConfig) -> None:
        self._config = config
        self._engine: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._engine is None:
                cfg = self._config
                for label, folder in (("paddle_det_dir", cfg.paddle_det_dir), ("paddle_rec_dir", cfg.paddle_rec_dir)):
                    if folder is None or not (folder / "inference.yml").is_file():
                        raise WeightsMissingError(
                            f"PaddleOCR model folder {label}={folder} is missing or has no inference.yml",
                            backend=self.name,
                            path=str(folder) if folder else None,
                            hint="download PP-OCR inference models (e.g. PP-OCRv5_mobile_det / _rec) and set "
                            "perception.paddle_det_dir / paddle_rec_dir",
                        )
                # Skip PaddleX's model-hub probing: the folders are local.
                os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")
                try:
                    from paddleocr import PaddleOCR
                except ImportError as exc:
                    raise BackendUnavailableError(
                        "paddleocr is not installed", backend=self.name, hint="pip install 'mobile-agent[paddle]'"
                    ) from exc
                kwargs: dict[str, Any] = {
                    "text_detection_model_dir": str(cfg.paddle_det_dir),
                    "text_recognition_model_dir": str(cfg.paddle_rec_dir),
                    "use_doc_orientation_classify": False,
                    "use_doc_unwarping": False,
                    "use_textline_orientation": cfg.ocr_use_cls,
                    "text_det_limit_type": "max",
                    "text_det_limit_side_len": cfg.ocr_limit_side_len,
                    "text_rec_score_thresh": cfg.ocr_min_score,
                }
                if cfg.compute_device != "auto":
                    kwargs["device"] = "gpu:0" if cfg.compute_device == "cuda" else "cpu"
                self._engine = PaddleOCR(**kwargs)
                log.info("OCR backend paddleocr loaded from %s / %s", cfg.paddle_det_dir, cfg.paddle_rec_dir)
            return self._engine

    def read(self, image: np.ndarray) -> list[TextLine]:
        engine = self._load()
        bgr = np.ascontiguousarray(image[:, :, ::-1])
        with self._lock:
            results = engine.predict(bgr)
        lines: list[TextLine] = []
        for res in results:
            texts = res["rec_texts"]
            scores = res["rec_scores"]
            polys = res["rec_polys"]
            for text, score, poly in zip(texts, scores, polys, strict=False):
                if text and text.strip():
                    lines.append(TextLine(text=str(text), box=_box_of(poly, image.shape[1], image.shape[0]), score=float(score)))
        return lines

    def describe(self) -> str:
        return "paddleocr (local models)" if self._engine is not None else "paddleocr (not loaded yet)"


def make_ocr_backend(config: PerceptionConfig) -> OcrBackend:
    if config.ocr_backend == "paddleocr":
        return PaddleOcrBackend(config)
    return RapidOcrBackend(config)


class ReusingReader:
    """OCR that reuses the previous frame's lines where the pixels did not change.

    Between two agent steps most of a screen often stays as it was (a toggled switch, a
    typed character, the status bar's clock). The rows that changed are found on a
    subsampled grey difference; only full-width strips around them are read again, and
    the previous lines outside those strips are kept. More than ``max_changed`` of the
    rows changed (a scroll, a new screen): one full read, as without reuse. Pixels decide,
    not where the frame came from, so frames of different phones interleaving stay correct.
    """

    def __init__(self, backend: OcrBackend, *, max_changed: float = 0.5, threshold: int = 16) -> None:
        self.backend = backend
        self.name = backend.name
        self._max_changed = max_changed
        self._threshold = threshold
        self._last: tuple[np.ndarray, list[TextLine]] | None = None
        self._lock = threading.Lock()
        self.reused_rows = 0.0  # share of rows reused on the last read, for logs and benchmarks

    def describe(self) -> str:
        return self.backend.describe()

    def _changed_strips(self, before: np.ndarray, after: np.ndarray, lines: list[TextLine]) -> list[tuple[int, int]] | None:
        step = 4
        a = before[::step, ::step].astype(np.int16)
        b = after[::step, ::step].astype(np.int16)
        rows = np.abs(a - b).max(axis=2).max(axis=1) > self._threshold
        if not rows.any():
            return []
        if rows.mean() > self._max_changed:
            return None
        height = after.shape[0]
        pad = max(24, height // 80)
        strips: list[list[int]] = []
        for r in np.flatnonzero(rows):
            top, bottom = max(0, r * step - pad), min(height, (r + 1) * step + pad)
            if strips and top <= strips[-1][1] + pad:
                strips[-1][1] = max(strips[-1][1], bottom)
            else:
                strips.append([top, bottom])
        # a strip takes in every old line it cuts, so no line is read half
        grown = True
        while grown:
            grown = False
            for strip in strips:
                for ln in lines:
                    if ln.box.top < strip[1] and ln.box.bottom > strip[0] and (ln.box.top < strip[0] or ln.box.bottom > strip[1]):
                        strip[0], strip[1] = min(strip[0], int(ln.box.top) - 2), max(strip[1], int(ln.box.bottom) + 2)
                        strip[0], strip[1] = max(0, strip[0]), min(height, strip[1])
                        grown = True
        merged: list[tuple[int, int]] = []
        for top, bottom in sorted(strips):
            if merged and top <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], bottom))
            else:
                merged.append((top, bottom))
        if sum(b - t for t, b in merged) > self._max_changed * height:
            return None
        return merged

    def read(self, image: np.ndarray) -> list[TextLine]:
        with self._lock:
            last = self._last
        strips = None
        if last is not None and last[0].shape == image.shape:
            strips = self._changed_strips(last[0], image, last[1])
        if strips is None:
            lines = self.backend.read(image)
            self.reused_rows = 0.0
        else:
            assert last is not None
            lines = [ln for ln in last[1] if not any(ln.box.top < b and ln.box.bottom > t for t, b in strips)]
            for top, bottom in strips:
                for ln in self.backend.read(image[top:bottom]):
                    box = Box(ln.box.left, ln.box.top + top, ln.box.right, ln.box.bottom + top)
                    lines.append(TextLine(ln.text, box, ln.score))
            lines.sort(key=lambda ln: (ln.box.top, ln.box.left))
            self.reused_rows = 1.0 - sum(b - t for t, b in strips) / image.shape[0]
        with self._lock:
            self._last = (image.copy(), lines)
        return lines
