"""The planner client: a multimodal chat model behind an OpenAI-compatible endpoint.

``Planner(settings.planner)``: ``plan(PlanRequest) -> PlanReply``,
``choose_candidate(instruction, location, screenshot) -> int | None``,
``check_completion(instruction, history, screenshot) -> CompletionVerdict``.
Prompts are package files in ``mobile_agent/planner/prompts/``.

May import: openai, numpy, Pillow, mobile_agent.errors/settings/operations, perception.types.
"""

from __future__ import annotations

from mobile_agent.planner.client import Planner, load_prompt
from mobile_agent.planner.images import EncodedImage, encode_image
from mobile_agent.planner.replies import parse_choice, parse_verdict, split_plan_reply
from mobile_agent.planner.types import CompletionVerdict, PlanReply, PlanRequest, Usage

__all__ = [
    "CompletionVerdict",
    "EncodedImage",
    "PlanReply",
    "PlanRequest",
    "Planner",
    "Usage",
    "encode_image",
    "load_prompt",
    "parse_choice",
    "parse_verdict",
    "split_plan_reply",
]
