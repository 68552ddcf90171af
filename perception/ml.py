"""The torch backends: Grounding DINO (transformers, or the original groundingdino-py) as
the icon detector and CLIP (open_clip) as the ranker.

Every import of torch / transformers / open_clip / groundingdino happens inside a
function, so ``import perception`` stays light. Weights come from local paths or the
Hugging Face cache only, unless ``allow_hub_downloads``; a missing file is a
``WeightsMissingError`` saying how to get it. CUDA is used with half precision when
present (fp16 autocast over fp32 weights), CPU otherwise.

May import: numpy, PIL, the standard library, ``perception.*``; torch and friends lazily.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
from pathlib import Path
from typing import Any

import numpy as np

from perception.config import PerceptionConfig
from perception.errors import BackendUnavailableError, WeightsMissingError
from perception.types import Box, IconRegion

__all__ = [
    "ClipRanker",
    "GroundingDinoDetector",
    "GroundingDinoPyDetector",
    "clip_weights_available",
    "grounding_dino_weights_available",
    "gpu_driver_absent",
    "resolve_torch_device",
    "precision_name",
    "torch_installed",
    "uses_half_precision",
]

log = logging.getLogger(__name__)

_ML_HINT = "pip install 'mobile-agent[ml]'"


def torch_installed() -> bool:
    return importlib.util.find_spec("torch") is not None


def _import_torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise BackendUnavailableError("torch is not installed", backend="torch", hint=_ML_HINT) from exc
    return torch


# What a Linux GPU that torch could use leaves on the system: NVIDIA's kernel driver
# (/proc/driver/nvidia, /dev/nvidiactl), AMD's ROCm (/dev/kfd, which torch.cuda reports too),
# or WSL 2's GPU paravirtualisation (/dev/dxg: CUDA works there without NVIDIA's Linux driver).
_GPU_DRIVER_PATHS = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/kfd", "/dev/dxg")


def gpu_driver_absent() -> bool:
    """True only where it is certain that torch would see no GPU: Linux with neither NVIDIA's
    nor AMD's kernel driver. Asking torch costs its import (1.5-3 s on 2 cores), which every
    CLI start that resolves the icon backends paid on CPU-only machines."""
    import sys

    if not sys.platform.startswith("linux"):
        return False  # elsewhere only torch can tell
    return not any(Path(path).exists() for path in _GPU_DRIVER_PATHS)


def resolve_torch_device(config: PerceptionConfig) -> str:
    """'cuda' when asked for or 'auto' and a GPU is visible to torch; else 'cpu'. With 'auto'
    on a Linux machine with no GPU driver at all, 'cpu' without importing torch."""
    if config.compute_device == "cpu" or not torch_installed():
        return "cpu"
    if config.compute_device == "auto" and gpu_driver_absent():
        return "cpu"
    torch = _import_torch()
    if torch.cuda.is_available():
        return "cuda"
    if config.compute_device == "cuda":
        log.warning("compute_device=cuda but torch sees no GPU; running on CPU")
    return "cpu"


def _hf_cached(repo_id: str, filename: str) -> str | None:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(repo_id, filename)
    return found if isinstance(found, str) else None


def grounding_dino_weights_available(config: PerceptionConfig) -> bool:
    path = Path(config.grounding_dino_path).expanduser()
    if path.is_dir():
        return (path / "config.json").is_file()
    if "/" in config.grounding_dino_path and not path.exists():
        return _hf_cached(config.grounding_dino_path, "config.json") is not None
    return False


def _clip_local_file(config: PerceptionConfig) -> tuple[str, dict[str, Any]] | None:
    """A local checkpoint file for the configured CLIP, from a path or the HF cache, with
    what open_clip knows of that tag (QuickGELU, mean/std) when it came through one."""
    ckpt = config.clip_checkpoint
    if not ckpt:
        return None
    path = Path(ckpt).expanduser()
    if path.is_file():
        return str(path), {}
    try:
        from open_clip import pretrained
    except ImportError:
        return None
    cfg = pretrained.get_pretrained_cfg(config.clip_model, ckpt) or {}
    repo = (cfg.get("hf_hub") or "").strip("/")
    if repo:
        for filename in ("open_clip_model.safetensors", "open_clip_pytorch_model.bin"):
            found = _hf_cached(repo, filename)
            if found:
                return found, cfg
    return None


def _clip_build_options(tag_cfg: dict[str, Any]) -> dict[str, Any]:
    """open_clip applies a tag's settings only when it loads by tag; a file loaded by path
    needs them passed (OpenAI's weights were trained with QuickGELU: plain GELU skews them)."""
    options: dict[str, Any] = {"force_quick_gelu": bool(tag_cfg.get("quick_gelu", False))}
    for key, option in (("mean", "image_mean"), ("std", "image_std"), ("interpolation", "image_interpolation"),
                        ("resize_mode", "image_resize_mode")):  # fmt: skip
        if tag_cfg.get(key):
            options[option] = tag_cfg[key]
    return options


def _clip_hub_parts(clip_model: str) -> list[str]:
    """Hugging Face repos an open_clip architecture pulls while it is built (a RoBERTa / mT5
    text tower, a SigLIP tokenizer), beyond its checkpoint."""
    try:
        import open_clip
    except ImportError:
        return []
    text_cfg = (open_clip.get_model_config(clip_model) or {}).get("text_cfg", {})
    return list(dict.fromkeys(text_cfg[k] for k in ("hf_model_name", "hf_tokenizer_name") if text_cfg.get(k)))


def clip_weights_available(config: PerceptionConfig) -> bool:
    return _clip_local_file(config) is not None


def precision_name(half: bool) -> str:
    return "fp16 autocast" if half else "fp32"


def uses_half_precision(config: PerceptionConfig, device: str) -> bool:
    """fp16 autocast: as configured, else on CUDA only."""
    return device == "cuda" if config.half_precision is None else config.half_precision


class _TorchModel:
    """Device and precision shared by the torch backends: the weights stay fp32 and
    ``inference()`` runs under fp16 autocast when half precision is on (CUDA by default),
    so inputs always match the model's dtype and numerically fragile ops stay fp32."""

    def __init__(self, config: PerceptionConfig) -> None:
        self.config = config
        self.device = resolve_torch_device(config)
        self.half = uses_half_precision(config, self.device)

    def inference(self) -> contextlib.ExitStack:
        torch = _import_torch()
        stack = contextlib.ExitStack()
        stack.enter_context(torch.inference_mode())
        stack.enter_context(torch.autocast(device_type=self.device, dtype=torch.float16, enabled=self.half))
        return stack

    @property
    def precision(self) -> str:
        return precision_name(self.half)


class GroundingDinoDetector(_TorchModel):
    """Grounding DINO through ``transformers`` with a text prompt ("icon")."""

    name = "grounding-dino"

    def __init__(self, config: PerceptionConfig) -> None:
        super().__init__(config)
        _import_torch()
        try:
            from transformers import GroundingDinoForObjectDetection, GroundingDinoProcessor
        except ImportError as exc:
            raise BackendUnavailableError("transformers is not installed", backend=self.name, hint=_ML_HINT) from exc
        source = config.grounding_dino_path
        local = Path(source).expanduser()
        if local.exists():
            source = str(local)
        elif not config.allow_hub_downloads and not grounding_dino_weights_available(config):
            raise WeightsMissingError(
                f"Grounding DINO weights not found at {config.grounding_dino_path!r} (local folder or Hugging Face cache)",
                backend=self.name,
                path=config.grounding_dino_path,
                hint=f"hf download {config.grounding_dino_path if '/' in config.grounding_dino_path else 'IDEA-Research/grounding-dino-tiny'}"
                " (or set perception.grounding_dino_path to a local folder)",
            )
        offline = not config.allow_hub_downloads
        try:
            self.processor = GroundingDinoProcessor.from_pretrained(source, local_files_only=offline)
            model = GroundingDinoForObjectDetection.from_pretrained(source, local_files_only=offline)
        except OSError as exc:
            raise WeightsMissingError(
                f"cannot load Grounding DINO from {source!r}: {exc}",
                backend=self.name,
                path=source,
                hint="hf download IDEA-Research/grounding-dino-tiny (or set perception.grounding_dino_path to a complete local folder)",
            ) from exc
        self.model = model.to(self.device, dtype=_import_torch().float32).eval()
        log.info("detector grounding-dino loaded from %s on %s (%s)", source, self.device, self.precision)

    def detect(self, image: np.ndarray, settings: PerceptionConfig) -> list[IconRegion]:
        """Boxes for ``settings.detector_prompt`` above its thresholds (the model is shared
        between configurations that differ only in those, so they come per call)."""
        from PIL import Image

        height, width = image.shape[:2]
        prompt = settings.detector_prompt.strip().lower()
        if not prompt.endswith("."):
            prompt += "."  # Grounding DINO separates phrases with periods
        inputs = self.processor(images=Image.fromarray(image), text=prompt, return_tensors="pt")
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        with self.inference():
            outputs = self.model(**inputs)
        outputs.logits = outputs.logits.float()
        outputs.pred_boxes = outputs.pred_boxes.float()
        results = self.processor.post_process_grounded_object_detection(
            outputs,
            inputs["input_ids"],
            threshold=settings.box_threshold,
            text_threshold=settings.text_threshold,
            target_sizes=[(height, width)],
        )[0]
        regions = []
        for score, box in zip(results["scores"].tolist(), results["boxes"].tolist(), strict=True):
            left, top, right, bottom = box
            clipped = Box(max(0.0, left), max(0.0, top), min(float(width), right), min(float(height), bottom))
            if clipped.area > 0:
                regions.append(IconRegion(box=clipped, score=float(score), source=self.name))
        return regions

    def describe(self) -> str:
        return f"grounding-dino ({self.config.grounding_dino_path}, {self.device}, {self.precision})"


class GroundingDinoPyDetector:
    """The original ``groundingdino_swint_ogc.pth`` through groundingdino-py (optional).

    groundingdino-py 0.4 needs transformers 4.x and a local BERT; it always runs its slow
    PyTorch path. Imported lazily so that nothing else depends on it.
    """

    name = "groundingdino-py"

    def __init__(self, config: PerceptionConfig) -> None:
        self.config = config
        self.device = resolve_torch_device(config)
        ckpt, cfg_file = config.groundingdino_py_checkpoint, config.groundingdino_py_config
        for label, path in (("groundingdino_py_checkpoint", ckpt), ("groundingdino_py_config", cfg_file)):
            if path is None or not Path(path).is_file():
                raise WeightsMissingError(
                    f"{label}={path} is not a file",
                    backend=self.name,
                    path=str(path) if path else None,
                    hint="download groundingdino_swint_ogc.pth and GroundingDINO_SwinT_OGC.py "
                    "(hf download ShilongLiu/GroundingDINO groundingdino_swint_ogc.pth GroundingDINO_SwinT_OGC.py)",
                )
        try:
            from groundingdino.util.inference import load_model
        except Exception as exc:  # ImportError, or its import-time failures under transformers 5
            raise BackendUnavailableError(
                f"groundingdino-py is not usable: {exc}",
                backend=self.name,
                hint="pip install 'mobile-agent[groundingdino]' (needs transformers<5)",
            ) from exc
        self.model = load_model(str(cfg_file), str(ckpt), device=self.device)

    def detect(self, image: np.ndarray, settings: PerceptionConfig) -> list[IconRegion]:
        torch = _import_torch()
        import groundingdino.datasets.transforms as T
        from groundingdino.util.inference import predict
        from PIL import Image

        height, width = image.shape[:2]
        transform = T.Compose(
            [T.RandomResize([800], max_size=1333), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]
        )
        tensor, _ = transform(Image.fromarray(image), None)
        with torch.inference_mode():
            boxes, logits, _ = predict(
                self.model, tensor, settings.detector_prompt, settings.box_threshold,
                settings.text_threshold, device=self.device,
            )
        regions = []
        for (cx, cy, w, h), score in zip(boxes.tolist(), logits.tolist(), strict=True):
            box = Box((cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height)
            regions.append(IconRegion(box=box, score=float(score), source=self.name))
        return regions

    def describe(self) -> str:
        return f"groundingdino-py ({self.config.groundingdino_py_checkpoint}, {self.device})"


class ClipRanker(_TorchModel):
    """CLIP similarity between each crop and the description, all crops in one batch."""

    name = "clip"

    def __init__(self, config: PerceptionConfig) -> None:
        super().__init__(config)
        _import_torch()
        try:
            import open_clip
        except ImportError as exc:
            raise BackendUnavailableError("open_clip_torch is not installed", backend=self.name, hint=_ML_HINT) from exc
        local = _clip_local_file(config)
        options: dict[str, Any] = {}
        if local is not None:
            pretrained, tag_cfg = local
            options = _clip_build_options(tag_cfg)
        else:
            if config.allow_hub_downloads and config.clip_checkpoint:
                pretrained = config.clip_checkpoint  # by tag: open_clip applies its settings itself
            else:
                raise WeightsMissingError(
                    f"CLIP checkpoint {config.clip_checkpoint!r} for {config.clip_model} is not a local file "
                    "nor in the Hugging Face cache",
                    backend=self.name,
                    path=config.clip_checkpoint,
                    hint="set perception.clip_checkpoint to a local .pt/.bin/.safetensors file, or fetch one "
                    "(hf download timm/vit_base_patch32_clip_224.openai) and set clip_checkpoint=openai",
                )
        hub_parts = _clip_hub_parts(config.clip_model)
        if not config.allow_hub_downloads:
            for repo in hub_parts:
                if _hf_cached(repo, "config.json") is None and _hf_cached(repo, "tokenizer_config.json") is None:
                    raise WeightsMissingError(
                        f"CLIP model {config.clip_model} needs {repo} (its text tower or tokenizer), which is not "
                        "in the Hugging Face cache",
                        backend=self.name,
                        path=repo,
                        hint=f"hf download {repo} (or set perception.allow_hub_downloads = true)",
                    )
            if hub_parts and local is not None:
                options["pretrained_text"] = False  # the checkpoint holds the text tower: no second download
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(
                config.clip_model, pretrained=pretrained, precision="fp32", device=self.device, **options
            )
        except (RuntimeError, AssertionError, KeyError, ValueError, OSError) as exc:  # wrong file, or a hub part
            raise WeightsMissingError(
                f"CLIP checkpoint {pretrained} does not fit {config.clip_model}: {exc}",
                backend=self.name,
                path=pretrained,
                hint="clip_model and clip_checkpoint must name the same architecture",
            ) from exc
        self.model = model.eval()
        self.preprocess = preprocess
        self.tokenizer = open_clip.get_tokenizer(config.clip_model)
        log.info("ranker clip %s loaded from %s on %s (%s)", config.clip_model, pretrained, self.device, self.precision)

    def understands(self, description: str) -> bool:
        return True

    def score(self, image: np.ndarray, boxes: list[Box], description: str, prior: list[float]) -> list[float]:
        if not boxes:
            return []
        torch = _import_torch()
        from PIL import Image

        crops = []
        for box in boxes:
            left, top = int(box.left), int(box.top)
            right, bottom = max(left + 1, int(np.ceil(box.right))), max(top + 1, int(np.ceil(box.bottom)))
            crops.append(self.preprocess(Image.fromarray(np.ascontiguousarray(image[top:bottom, left:right]))))
        batch = torch.stack(crops).to(self.device)
        tokens = self.tokenizer([description]).to(self.device)
        with self.inference():
            image_features = self.model.encode_image(batch).float()
            text_features = self.model.encode_text(tokens).float()
        image_features = image_features / image_features.norm(dim=-1, keepdim=True).clamp_min(1e-6)
        text_features = text_features / text_features.norm(dim=-1, keepdim=True).clamp_min(1e-6)
        similarity = (image_features @ text_features.T).squeeze(1)
        scores: list[float] = similarity.cpu().tolist()
        return scores

    def describe(self) -> str:
        return f"clip ({self.config.clip_model}, {self.config.clip_checkpoint}, {self.device}, {self.precision})"
