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

from mobile_agent.planner.geometry import Viewport, viewport_for
from mobile_agent.planner.images import EncodedImage, encode_image
from mobile_agent.planner.models import ModelProfile
from mobile_agent.planner.protocol import PlannerLike
from mobile_agent.planner.replies import parse_choice, parse_verdict, split_plan_reply
from mobile_agent.planner.types import CompletionVerdict, PlanReply, PlanRequest, Usage

if TYPE_CHECKING:
    from mobile_agent.planner.client import Planner, load_prompt
    from mobile_agent.planner.transport import ChatEndpoint, cap_reply, shared_client, shown_url
    from mobile_agent.settings import PlannerSettings

__all__ = [
    "ChatEndpoint",
    "CompletionVerdict",
    "EncodedImage",
    "ModelProfile",
    "PlanReply",
    "PlanRequest",
    "Planner",
    "PlannerLike",
    "Usage",
    "Viewport",
    "cap_reply",
    "encode_image",
    "load_prompt",
    "parse_choice",
    "parse_verdict",
    "prepare",
    "shared_client",
    "shown_url",
    "split_plan_reply",
    "viewport_for",
]

_CLIENT_NAMES = ("Planner", "load_prompt")
_TRANSPORT_NAMES = ("ChatEndpoint", "cap_reply", "shared_client", "shown_url")


def __getattr__(name: str) -> Any:
    # The client (and openai) load on first use: the agent's records import the types alone.
    if name in _CLIENT_NAMES:
        from mobile_agent.planner import client

        return getattr(client, name)
    if name in _TRANSPORT_NAMES:  # the chat endpoint (openai) for the judges beside the planner
        from mobile_agent.planner import transport

        return getattr(transport, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def prepare(settings: PlannerSettings) -> None:
    """Load the client (openai and its HTTP stack: a second or more of imports) and, with an
    endpoint configured, build its shared client (the TLS context reads the CA bundle), so
    that the first runs of a fresh process, which may start together, do not pay for it."""
    from mobile_agent.planner import client  # noqa: F401  (loaded now, not by the first run)

    if settings.configured:
        from mobile_agent.planner.transport import shared_client

        shared_client(settings)
