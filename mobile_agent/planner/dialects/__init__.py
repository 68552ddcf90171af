"""Planner dialects: how a model is prompted and how its reply is read.

One module per dialect, each naming its sources at the top:

- ``paper``: the paper's Observation / Thought / Action with text-and-look operations;
- ``function_calling``: the same operations as OpenAI tools;
- ``ui_tars``: UI-TARS ``Thought:`` / ``Action: click(start_box=…)``;
- ``mobile_use``: Qwen2.5-VL / Qwen3-VL / GUI-Owl ``<tool_call>`` with the ``mobile_use`` function;
- ``autoglm``: AutoGLM-Phone ``<think>`` / ``<answer>do(action=…)</answer>``.

``dialect_for(planner_settings)`` picks one from ``planner.dialect`` (``auto``: from the
model's name, ``planner.models``) and returns it with the model's profile.

Each dialect also ``write``s the reply its model gives for an action (``parse(write(a))``
is ``a``): the data engine's per-step training targets; ``profile_named`` gives the profile
of a dialect or model name for it.

May import: mobile_agent.errors/operations/settings, planner.geometry/models/replies.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from mobile_agent.planner.dialects.autoglm import AutoGlmDialect
from mobile_agent.planner.dialects.base import Dialect, DialectReply, UnwritableAction, build_action
from mobile_agent.planner.dialects.function_calling import FunctionCallingDialect
from mobile_agent.planner.dialects.mobile_use import MobileUseDialect
from mobile_agent.planner.dialects.paper import PaperDialect
from mobile_agent.planner.dialects.ui_tars import UiTarsDialect
from mobile_agent.planner.geometry import GRID_1000, IMAGE, QWEN25_FACTOR, ImageRule
from mobile_agent.planner.models import PAPER, PROFILES, ModelProfile, profile_for

if TYPE_CHECKING:
    from mobile_agent.settings import PlannerSettings

__all__ = [
    "DIALECTS",
    "AutoGlmDialect",
    "Dialect",
    "DialectReply",
    "FunctionCallingDialect",
    "MobileUseDialect",
    "PaperDialect",
    "UiTarsDialect",
    "UnwritableAction",
    "build_action",
    "dialect_for",
    "make_dialect",
    "profile_named",
]

DIALECTS = ("paper", "function_calling", "ui_tars", "mobile_use", "autoglm")

# What a dialect chosen by name gets when the model's profile is of another dialect
_DEFAULTS: dict[str, ModelProfile] = {
    "paper": PAPER,
    "function_calling": ModelProfile("general", "", "function_calling", PAPER.space, PAPER.image),
    "ui_tars": ModelProfile("ui-tars", "", "ui_tars", IMAGE, ImageRule(long_side=None, factor=QWEN25_FACTOR)),
    "mobile_use": ModelProfile(
        "qwen2.5-vl", "", "mobile_use", IMAGE, ImageRule(long_side=None, factor=QWEN25_FACTOR)
    ),
    "autoglm": ModelProfile("autoglm-phone", "", "autoglm", GRID_1000, ImageRule(long_side=1280)),
}


def dialect_for(settings: PlannerSettings) -> tuple[Dialect, ModelProfile]:
    """(dialect, profile) for ``PlannerSettings``: ``dialect`` (auto = by the model's name)."""
    chosen = settings.dialect
    profile = profile_for(settings.model)
    if chosen != "auto" and profile.dialect != chosen:
        profile = _DEFAULTS[chosen]
    if profile.image.long_side is not None and profile.image.factor is None:
        # the paper's image size is the settings' own
        profile = ModelProfile(profile.key, profile.pattern, profile.dialect, profile.space,
                               ImageRule(long_side=settings.image_long_side), profile.temperature)  # fmt: skip
    max_pixels = settings.image_max_pixels
    if (
        max_pixels and profile.image.factor is not None
    ):  # the server's limit, when it is lower than the model's
        image = dataclasses.replace(
            profile.image, max_pixels=max_pixels, min_pixels=min(profile.image.min_pixels, max_pixels)
        )
        profile = dataclasses.replace(profile, image=image)
    return make_dialect(profile), profile


def profile_named(name: str) -> ModelProfile:
    """A dialect's default profile (``ui_tars``: UI-TARS-1.5's pixels) or a model profile by
    its key (``ui-tars-1.0``: its 0-1000 grid; ``qwen3-vl``; ``gui-owl``…): the data
    engine writes one set of targets per name."""
    if name in _DEFAULTS:
        return _DEFAULTS[name]
    for profile in PROFILES:
        if profile.key == name:
            return profile
    known = ", ".join([*DIALECTS, *(p.key for p in PROFILES)])
    raise ValueError(f"unknown dialect or model profile {name!r}; one of {known}")


def make_dialect(profile: ModelProfile) -> Dialect:
    name = profile.dialect
    if name == "paper":
        return PaperDialect()
    if name == "function_calling":
        return FunctionCallingDialect()
    if name == "ui_tars":
        return UiTarsDialect(space=profile.space, rule=profile.image)
    if name == "mobile_use":
        return MobileUseDialect(space=profile.space, rule=profile.image)
    if name == "autoglm":
        return AutoGlmDialect(space=profile.space, rule=profile.image)
    raise ValueError(f"unknown dialect {name!r}; one of {', '.join(DIALECTS)}")
