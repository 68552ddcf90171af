"""The planner's requests and answers (frozen records).

May import: the standard library only (images are whatever the device layer gives:
a ``Screenshot`` with ``pixels``, or an RGB uint8 numpy array), and the device protocol's
``Platform`` and the planner's image type (``planner.images.Picture``) for type checking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

    from mobile_agent.operations.context import Platform
    from mobile_agent.planner.images import Picture

__all__ = ["CompletionVerdict", "PlanReply", "PlanRequest", "Usage"]


@dataclass(frozen=True)
class Usage:
    """Tokens of one call (or a sum of calls) and what they cost, from ``PlannerSettings.prices``."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Self:
        """The sum, of the left operand's type (a run's ``RunUsage`` stays one)."""
        if not isinstance(other, Usage):
            return NotImplemented
        return type(self)(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
            self.calls + other.calls,
        )

    def plus(self, other: Usage | None) -> Self:
        return self if other is None else self + other

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "calls": self.calls,
        }


@dataclass(frozen=True)
class PlanRequest:
    """What the planner is asked at one step.

    ``history``: one line per past step (its action and outcome or feedback), oldest
    first. ``feedback``: what went wrong with the last step (text not found, several
    candidates, screen unchanged). ``notes``: what the model is told about this screen
    that is no failure (a black box hides a secret it typed, the app protects its screen
    and its accessibility tree lists these texts): shown with the feedback, but a planner
    that replays a plan (``replay``) goes on. ``previous_screenshot`` and
    ``reflection_note`` are set only when reflecting on a step that had no effect: then
    the model sees two images, otherwise one. ``platform``: the phone's
    (``DeviceLike.platform``), so the prompt says an iPhone is one (``planner.phones``).
    """

    instruction: str
    screenshot: Picture
    history: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    previous_screenshot: Picture | None = None
    reflection_note: str | None = None
    notes: list[str] = field(default_factory=list)
    platform: Platform = "android"


@dataclass(frozen=True)
class PlanReply:
    """The model's answer: the paper's Observation / Thought / Action.

    ``action_text`` is the text after the last ``Action:`` marker (the whole reply when
    there is none); give it, or ``raw``, to ``operations.parse_action``.
    """

    observation: str
    thought: str
    action_text: str
    raw: str
    usage: Usage = field(default_factory=Usage)
    source: str = "model"  # who planned it: "model", or "replay" (a cached plan, no model call)
    # function calling: the reply's tool calls ({"function": {"name", "arguments"}}), as sent
    tool_calls: tuple[dict[str, Any], ...] = ()
    # a grounded dialect: the frame's planner.geometry.Viewport the reply's points refer to
    viewport: Any = None


@dataclass(frozen=True)
class CompletionVerdict:
    """Whether the instruction is complete, by a separate check after Stop."""

    done: bool
    reason: str
    raw: str = ""
    usage: Usage = field(default_factory=Usage)
