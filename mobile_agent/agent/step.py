"""One step while it happens: ``StepDraft`` collects what the step learns (the reply,
the operation, its outcome, the settled screen, the time each phase took) and becomes
the ``StepRecord`` once the step ends. A run's body (planned or scripted) is a
``RunBody``: the session's run template calls its ``step`` once per step.

May import: the standard library, ``mobile_agent.operations`` (types),
``mobile_agent.planner.types`` and this package's records.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Protocol

from mobile_agent.agent.protected import BlankScreen
from mobile_agent.agent.records import LocationSummary, RunResult, StepRecord, StepTimings
from mobile_agent.operations.context import AgentDevice, Outcome, ScreenshotLike
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.planner.types import PlanReply, Usage

if TYPE_CHECKING:
    from mobile_agent.agent.session import RunSession

__all__ = ["RunBody", "Settled", "StepDraft", "StepEnd", "usage_dict"]

# the record's fields that a draft fills under the same name
_COPIED = tuple(f.name for f in fields(StepRecord) if f.name not in ("annotated", "timings"))


def usage_dict(usage: Usage) -> dict[str, Any]:
    """The per-step usage of a trajectory line (``StepRecord.usage``)."""
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens, "cost_usd": usage.cost_usd}


@dataclass(frozen=True)
class Settled:
    """The screen after an action had settled, compared with the one before it."""

    frame: ScreenshotLike
    changed: bool
    ratio: float
    settle_ms: float


@dataclass
class StepDraft:
    """A step in flight. ``to_record`` turns it into its ``StepRecord`` at any moment:
    when the step ends, or when an error ends the run in the middle of it."""

    index: int
    screenshot: str  # the frame's file name in the trajectory folder
    frame: ScreenshotLike
    started_at: float
    capture_ms: float = 0.0
    # the reply (planned) or the script line
    observation: str = ""
    thought: str = ""
    action_text: str = ""
    raw_reply: str = ""
    operation: dict[str, Any] | None = None
    # the outcome
    ok: bool = False
    feedback: str = ""
    tap_point: tuple[int, int] | None = None
    swipe: tuple[int, int, int, int] | None = None
    location: LocationSummary | None = None
    chosen_candidate: int | None = None
    # the screen after it, a Stop's check, a model mistake
    screen_changed: bool | None = None
    change_ratio: float | None = None
    reflection_note: str | None = None
    completion: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    perception_ms: float = 0.0
    model_ms: float = 0.0
    action_ms: float = 0.0
    settle_ms: float = 0.0
    by: str = "model"
    snap: dict[str, Any] | None = None
    asked_user: dict[str, Any] | None = None
    linked_run: dict[str, Any] | None = None
    # the frame as the trajectory keeps it (password fields hidden), when it differs from ``frame``
    kept_pixels: Any = None
    # the frame stayed blank: what the model is told of it, what the tree listed (``agent.protected``)
    blank: BlankScreen | None = None
    # the step has something worth keeping if the run ends now (a reply, an operation);
    # a step that ends while waiting for its first answer leaves no record
    begun: bool = False

    def took_reply(self, reply: PlanReply) -> None:
        self.begun = True
        self.observation = reply.observation or ""
        self.thought = reply.thought or ""
        self.action_text = reply.action_text or ""
        self.raw_reply = reply.raw or ""
        self.by = reply.source

    def took_usage(self, usage: Usage) -> None:
        """One more model call of this step."""
        call = usage_dict(usage)
        self.usage = {k: self.usage.get(k, 0) + v for k, v in call.items()}

    def took_action(self, action: ParsedAction) -> None:
        self.begun = True
        self.operation = {"name": action.name, "params": action.params.model_dump()}

    def took_outcome(self, outcome: Outcome) -> None:
        self.ok = outcome.ok
        self.feedback = outcome.feedback
        self.tap_point = outcome.tap_point
        self.swipe = outcome.swipe
        self.location = LocationSummary.from_location(outcome.location)
        self.snap = outcome.snap

    def took_settle(self, settled: Settled) -> None:
        self.screen_changed = settled.changed
        self.change_ratio = settled.ratio
        self.settle_ms = settled.settle_ms

    def timings(self) -> StepTimings:
        return StepTimings(self.capture_ms, self.perception_ms, self.model_ms, self.action_ms, self.settle_ms)

    def to_record(self) -> StepRecord:
        values = {name: getattr(self, name) for name in _COPIED}
        return StepRecord(**values, timings=self.timings())


@dataclass(frozen=True)
class StepEnd:
    """How a step ended: the frame the next step starts from (None: capture anew, in
    case the screen moved on) and the run's result when the step ended the run."""

    next_frame: ScreenshotLike | None = None
    result: RunResult | None = None


class RunBody(Protocol):
    """What makes a run planned or scripted, plugged into ``RunSession.run``."""

    @property
    def device(self) -> AgentDevice | None:
        """The device, once known (the trajectory's header names it)."""
        ...

    @property
    def max_steps(self) -> int: ...

    def open(self) -> AgentDevice:
        """Build what the run needs (device, planner); an error ends the run ``error``."""
        ...

    def step(self, session: RunSession, draft: StepDraft) -> StepEnd:
        """Carry out one step on ``draft.frame``, recording it with ``session.record``."""
        ...

    def out_of_steps(self, session: RunSession) -> RunResult:
        """The run's end when ``max_steps`` steps went by without ending it."""
        ...
