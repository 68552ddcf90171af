"""The planner client: a multimodal chat model behind an OpenAI-compatible endpoint.

``Planner(settings.planner)``: ``plan(PlanRequest) -> PlanReply``,
``choose_candidate(instruction, location, screenshot) -> int | None``,
``check_completion(instruction, history, screenshot) -> CompletionVerdict``,
``parse(PlanReply) -> ParsedAction``: the ``PlannerLike`` protocol that the agent loop drives.
Prompts are package files in ``mobile_agent/planner/prompts/``.

May import: openai, numpy, Pillow, mobile_agent.errors/settings/operations, perception.types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mobile_agent.planner.images import EncodedImage, encode_image
from mobile_agent.planner.protocol import PlannerLike
from mobile_agent.planner.replies import parse_choice, parse_verdict, split_plan_reply
from mobile_agent.planner.types import CompletionVerdict, PlanReply, PlanRequest, Usage

if TYPE_CHECKING:
    from mobile_agent.planner.client import Planner, load_prompt

__all__ = [
    "CompletionVerdict",
    "EncodedImage",
    "PlanReply",
    "PlanRequest",
    "Planner",
    "PlannerLike",
    "Usage",
    "encode_image",
    "load_prompt",
    "parse_choice",
    "parse_verdict",
    "split_plan_reply",
]


def __getattr__(name: str) -> Any:
    # The client (and openai) load on first use: the agent's records import the types alone.
    if name in ("Planner", "load_prompt"):
        from mobile_agent.planner import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
