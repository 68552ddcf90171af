"""``PerceptionConfig``: the perception library's own frozen configuration.

``perception`` is a leaf library and reads no environment or settings object; the
agent builds this from ``Settings.perception`` (see ``mobile_agent.locate``).

May import: the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["PerceptionConfig"]

OcrBackendName = Literal["rapidocr", "paddleocr"]
DetectorName = Literal["auto", "grounding-dino", "groundingdino-py", "proposals"]
RankerName = Literal["auto", "clip", "heuristic"]
ComputeDevice = Literal["auto", "cpu", "cuda"]


@dataclass(frozen=True)
class PerceptionConfig:
    """How perception runs. Every field has a default tuned for phone screens."""

    # --- OCR ---------------------------------------------------------------------------
    ocr_backend: OcrBackendName = "rapidocr"
    paddle_det_dir: Path | None = None
    paddle_rec_dir: Path | None = None
    # Longest side fed to the text detector (RapidOCR ``Det.limit_type=max``; smaller
    # images are not enlarged): ~1.3x faster than the defaults on 1080x2400, same text.
    ocr_limit_side_len: int = 1280
    # A screen (not a thin strip) goes to the detector smaller still, at most this long...
    # 1088 shows a 1080x1920 screen's text at about the scale of a 540x960 screen's, which
    # reads well: on the Rico dev screens it kept every target of 1280 for ~30% less
    # detection work; 960 lost a keypad digit (issue 11).
    ocr_screen_side_len: int = 1088
    # ...but never under this many pixels across: text size follows a phone's width, and
    # 540-wide screens (Mobile-Agent's runs) shrunk further had lines merged or split.
    ocr_min_short_side: int = 540
    # The orientation classifier turns short words upside down ("Off" -> "HO"); phone
    # screens are upright, so it stays off.
    ocr_use_cls: bool = False
    # Recognition pads each batch of text crops (48 px high) to at least this width; RapidOCR's
    # 320 made short phone labels ("Off", "Wi-Fi") cost 3-5x their size. 64 measured 1.4-1.7x
    # faster OCR on 1080x2400 screens with the same hits (simulated 395/395, real 59/59).
    ocr_rec_min_width: int = 64
    # Recognition reads crops this many at a time. A batch pads every crop to its widest
    # member, so a "Wi-Fi" batched with a sentence costs a sentence: one at a time measured
    # ~1.9x faster recognition on the Rico dev screens, same accuracy (issue 11).
    ocr_rec_batch: int = 1
    # ONNX Runtime's memory arena keeps tensor buffers between calls instead of allocating
    # them for every frame (RapidOCR turns it off to save memory): ~10-20% faster OCR for
    # ~35 MB more peak memory (442 vs 408 MB reading Rico screens; 487 MB with the old settings).
    ocr_memory_arena: bool = True
    ocr_min_score: float = 0.5
    ocr_threads: int = 0  # 0 = ONNX Runtime's choice (all cores)
    # ONNX Runtime's threads busy-wait between operators by default; on a host that drives
    # several phones they burn the cores the other runs need (perception/ort_spinning.py):
    # off, same latency alone and 13% less CPU; with three OCRs at once, 30-40% less.
    ocr_spinning: bool = False
    # Between frames, OCR again only the rows whose pixels changed and keep the previous
    # lines elsewhere (a toggle or a typed character re-reads a strip, not the screen).
    ocr_reuse_unchanged: bool = True

    # --- text localization (the paper's rules) ----------------------------------------
    max_text_candidates: int = 4  # N: 2..N hits -> candidates
    # More than N hits ("LIVE" on every row) are still offered, the first ones in reading
    # order up to this many; beyond it -> "too many". 0 = the paper's rule (none offered).
    max_text_candidates_listed: int = 12
    # Short targets ("1", "-", "...") OCR missed: read the lines that hold their characters
    # again at 3x (a few small crops, tens of milliseconds).
    zoom_short_targets: bool = True
    # The accessibility tree (``uiautomator dump``) as a second source where it agrees with
    # the pixels; off = vision only, as in the paper.
    accessibility: bool = False
    max_box_fraction: float = 0.25  # ignore OCR boxes larger than this share of the image
    # Candidate crops grow outward by this share of the image's short side on each side,
    # so the planner sees the target in its surroundings (the box is drawn on the crop).
    crop_margin: float = 0.12

    # --- icon localization ------------------------------------------------------------
    detector: DetectorName = "auto"
    ranker: RankerName = "auto"
    grounding_dino_path: str = "IDEA-Research/grounding-dino-tiny"
    groundingdino_py_checkpoint: Path | None = None
    groundingdino_py_config: Path | None = None
    clip_model: str = "ViT-B-32"
    clip_checkpoint: str | None = None
    box_threshold: float = 0.05
    text_threshold: float = 0.5
    detector_prompt: str = "icon"
    icon_min_side_fraction: float = 0.012  # boxes thinner than this share of the short side are noise
    icon_max_area_fraction: float = 0.05  # boxes larger than this share of the screen are panels, not icons
    nms_iou: float = 0.5
    max_icon_candidates: int = 60

    # --- runtime ----------------------------------------------------------------------
    compute_device: ComputeDevice = "auto"
    # Grounding DINO and CLIP under fp16 autocast (weights stay fp32: a model cast whole to
    # fp16 gives NaN boxes in Grounding DINO's deformable attention). None = on CUDA only.
    half_precision: bool | None = None
    allow_hub_downloads: bool = False
    cache_size: int = 8  # screenshots whose OCR / proposals are kept (LRU)

    def __post_init__(self) -> None:
        if self.max_text_candidates < 1:
            raise ValueError("max_text_candidates must be >= 1")
        if self.max_text_candidates_listed < 0:
            raise ValueError("max_text_candidates_listed must be >= 0")
        if not 0 < self.max_box_fraction <= 1:
            raise ValueError("max_box_fraction must be in (0, 1]")
        if self.ocr_limit_side_len < 32:
            raise ValueError("ocr_limit_side_len must be >= 32")
        if self.ocr_rec_min_width < 16:
            raise ValueError("ocr_rec_min_width must be >= 16")
        if self.ocr_screen_side_len < 32:
            raise ValueError("ocr_screen_side_len must be >= 32")
        if self.ocr_min_short_side < 32:
            raise ValueError("ocr_min_short_side must be >= 32")
        if self.ocr_rec_batch < 1:
            raise ValueError("ocr_rec_batch must be >= 1")
        if self.cache_size < 0:
            raise ValueError("cache_size must be >= 0")
        if not 0 <= self.nms_iou <= 1:
            raise ValueError("nms_iou must be in [0, 1]")
