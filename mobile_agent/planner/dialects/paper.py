"""The paper's dialect (Mobile-Agent, today's default): Observation / Thought / Action with
the operations of ``catalog.py`` (Click text, Click icon, Type…), named by text and look,
located by perception. For general models (GPT-4o, Claude, Gemini, Qwen-VL-Max).

Source: the Mobile-Agent paper (arXiv 2401.16158) and its reference code; the prompt is the
planner's package files (``mobile_agent/planner/prompts``), the parser ``operations.parser``.

May import: mobile_agent.operations, planner.dialects.base, planner.geometry, planner.replies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mobile_agent.operations.parser import ParsedAction
from mobile_agent.operations.registry import REGISTRY
from mobile_agent.planner.dialects.base import DialectReply, PaperPrompt, UnwritableAction
from mobile_agent.planner.geometry import SCREEN, CoordinateSpace, ImageRule, Viewport
from mobile_agent.planner.replies import split_plan_reply

__all__ = ["PaperDialect"]


@dataclass
class PaperDialect(PaperPrompt):
    """Observation / Thought / Action; the planner's own prompt files."""

    name: str = "paper"
    space: CoordinateSpace = SCREEN  # no points: perception finds the targets
    registry = REGISTRY

    def image_rule(self, default: ImageRule) -> ImageRule:
        return default

    def tools(self) -> list[dict[str, Any]] | None:
        return None

    def parse(
        self, text: str, viewport: Viewport, tool_calls: Sequence[Mapping[str, Any]] = ()
    ) -> DialectReply:
        observation, thought, action_text = split_plan_reply(text or "")
        action = self.registry.parse(text or action_text)
        return DialectReply(action=action, thought=thought, observation=observation, raw=text or "")

    def write(self, action: ParsedAction, viewport: Viewport, thought: str = "") -> str:
        """``Thought: …`` / ``Action: Click text (Compose)``: the card's canonical text, the
        form the paper's prompt asks for (points are perception's job, not the model's)."""
        if any(isinstance(v, str) and "\n" in v for v in action.params.model_dump().values()):
            raise UnwritableAction(self.name, action.name, "its action is one line: no line break in a parameter")
        text = self.registry.get(action.name).render(action.params)
        return (f"Thought: {thought.strip()}\n" if thought.strip() else "") + f"Action: {text}"
