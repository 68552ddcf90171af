"""What the agent loop asks of a planner: ``PlannerLike``.

The loop never parses a reply itself: it hands the planner's ``PlanReply`` back to the
planner's ``parse``. The paper's Observation / Thought / Action planner (``Planner``)
parses the action text with ``operations.parse_action``; a planner that speaks another
dialect (coordinates, function calls) plans its own way and parses its own replies,
returning the same ``ParsedAction`` (or raising ``OperationParseError``, which the loop
records as a model mistake and feeds back).

May import: the standard library, ``mobile_agent.operations`` (the parsed action),
``perception.types`` and this package's types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from mobile_agent.operations.context import ScreenshotLike
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.planner.types import CompletionVerdict, PlanReply, PlanRequest, Usage
from perception.types import Location

__all__ = ["PlannerLike"]


@runtime_checkable
class PlannerLike(Protocol):
    """A planner the agent loop can drive (``Planner`` is one)."""

    def plan(self, request: PlanRequest) -> PlanReply:
        """The next step's answer; its ``usage`` counts the tokens of this call."""
        ...

    def parse(self, reply: PlanReply) -> ParsedAction:
        """The operation ``reply`` asks for; ``OperationParseError`` (an ``OperationError``)
        when it asks for none the agent knows."""
        ...

    def choose_candidate(
        self, instruction: str, location: Location, screenshot: ScreenshotLike | None = None
    ) -> int | None:
        """Which of ``location.candidates`` (1-based) to use, or None."""
        ...

    def check_completion(
        self, instruction: str, history: Sequence[str], screenshot: ScreenshotLike
    ) -> CompletionVerdict:
        """Whether the instruction is carried out on ``screenshot``."""
        ...

    @property
    def last_choice_usage(self) -> Usage:
        """The usage of the calling thread's last ``choose_candidate``."""
        ...
