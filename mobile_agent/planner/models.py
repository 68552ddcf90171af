"""Model profiles: which dialect, image size rule and temperature a known model gets, so
that ``--model`` alone just works.

Matched on the served model name however the server reports it: a hub id
(``ByteDance-Seed/UI-TARS-1.5-7B``), a lower-case alias (``ui-tars-1.5-7b``), an Ollama tag
(``qwen2.5vl:7b``), a GGUF file name. The name is folded (case, the ``org/`` prefix and every
separator dropped) and the first profile whose pattern matches wins; unknown models get
the paper's dialect.

Sources for the image rules: Qwen2.5-VL's processor (factor 28, max_pixels 12845056 =
16384·28·28) as repeated in bytedance/UI-TARS ``codes/ui_tars/action_parser.py``; Qwen3-VL's
(patch 16 merged 2x2: factor 32); UI-TARS 1.0 answered on a 0–1000 grid, 1.5 in absolute
pixels of the resized image (UI-TARS README, "coordinates"); AutoGLM-Phone on 0–999
(zai-org/Open-AutoGLM prompts). GUI-Owl (X-PLUG/MobileAgent, Mobile-Agent-v3) is
Qwen2.5-VL-based and uses ``mobile_use``.

May import: the standard library, planner.geometry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mobile_agent.planner.geometry import (
    GRID_1000,
    IMAGE,
    QWEN3_FACTOR,
    QWEN25_FACTOR,
    SCREEN,
    CoordinateSpace,
    ImageRule,
)

__all__ = ["PROFILES", "ModelProfile", "fold_model_name", "profile_for"]

# Qwen2.5-VL's processor default; servers often set less (see docs/local-serving.md)
QWEN25_MAX_PIXELS = 16384 * 28 * 28
# Qwen3-VL: the grid does not depend on the image size; ~1280 visual tokens is plenty for a phone
QWEN3_MAX_PIXELS = 1280 * 32 * 32


@dataclass(frozen=True)
class ModelProfile:
    """What a family of models gets."""

    key: str  # a name for doctor and logs
    pattern: str  # a regular expression on the folded model name
    dialect: str  # paper | function_calling | ui_tars | mobile_use | autoglm
    space: CoordinateSpace
    image: ImageRule
    temperature: float | None = None  # None: the settings' own

    def describe(self) -> str:
        return f"{self.dialect} ({self.space.describe()}; image {self.image.describe()})"


PROFILES: tuple[ModelProfile, ...] = (
    # UI-TARS 1.0 (2B/7B/72B -SFT/-DPO): relative 0-1000 coordinates
    ModelProfile(
        "ui-tars-1.0",
        r"uitars(?!15|2)(\d+b)",
        "ui_tars",
        GRID_1000,
        ImageRule(long_side=None, factor=QWEN25_FACTOR, max_pixels=QWEN25_MAX_PIXELS),
    ),  # fmt: skip
    # UI-TARS 1.5 / 2 (Qwen2.5-VL based): pixels of the smart-resized image
    ModelProfile(
        "ui-tars-1.5",
        r"uitars",
        "ui_tars",
        IMAGE,
        ImageRule(long_side=None, factor=QWEN25_FACTOR, max_pixels=QWEN25_MAX_PIXELS),
    ),  # fmt: skip
    ModelProfile(
        "autoglm-phone", r"autoglm", "autoglm", GRID_1000, ImageRule(long_side=1280), temperature=0.0
    ),
    ModelProfile(
        "gui-owl",
        r"guiowl|mobileagentv3",
        "mobile_use",
        IMAGE,
        ImageRule(long_side=None, factor=QWEN25_FACTOR, max_pixels=QWEN25_MAX_PIXELS),
    ),  # fmt: skip
    ModelProfile(
        "qwen3-vl",
        r"qwen3vl",
        "mobile_use",
        GRID_1000,
        ImageRule(long_side=None, factor=QWEN3_FACTOR, max_pixels=QWEN3_MAX_PIXELS),
    ),  # fmt: skip
    ModelProfile(
        "qwen2.5-vl",
        r"qwen25vl",
        "mobile_use",
        IMAGE,
        ImageRule(long_side=None, factor=QWEN25_FACTOR, max_pixels=QWEN25_MAX_PIXELS),
    ),  # fmt: skip
)

PAPER = ModelProfile("general", r"", "paper", SCREEN, ImageRule(long_side=1280))


def fold_model_name(name: str) -> str:
    """``"ByteDance-Seed/UI-TARS-1.5-7B"`` → ``"uitars157b"``; ``"qwen2.5vl:7b"`` → ``"qwen25vl7b"``."""
    base = name.strip().lower()
    base = base.rsplit("/", 1)[-1]  # the hub organisation, or a path to weights
    base = re.sub(r"\.(gguf|safetensors)$", "", base)
    return re.sub(r"[^a-z0-9]+", "", base)


def profile_for(model: str) -> ModelProfile:
    """The profile of a served model name; the paper's for an unknown model."""
    folded = fold_model_name(model)
    for profile in PROFILES:
        if re.search(profile.pattern, folded):
            return profile
    return PAPER
