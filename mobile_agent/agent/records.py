"""Typed records of a run: statuses, steps, events, results.

Steps are frozen dataclasses, never dicts: the prompt history is a fold over them
(``history_lines``) and the trajectory file is their JSON dump (``to_dict``). Every
record is JSON-able as is (no numpy, no images: screenshots are referenced by path).

May import: the standard library, ``perception.types``, ``mobile_agent.planner.types``,
``mobile_agent.operations.context`` (``LocationSummary``, re-exported here).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from mobile_agent.operations.context import LocationSummary
from mobile_agent.planner.types import Usage

__all__ = [
    "SCHEMA_VERSION",
    "AgentEvent",
    "EventKind",
    "LocationSummary",
    "RunResult",
    "RunStatus",
    "RunUsage",
    "StepRecord",
    "StepTimings",
    "history_lines",
    "jsonable",
]

def jsonable(value: Any) -> Any:
    """``value`` with only JSON types: dict keys as text, tuples as lists, enums as their
    value, dataclasses and pydantic models as dicts, anything else (paths, numpy
    scalars) as its ``str``."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, Enum):
        return jsonable(value.value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "model_dump"):
        return jsonable(value.model_dump(mode="json"))
    if is_dataclass(value) and not isinstance(value, type):
        return jsonable(asdict(value))
    return str(value)


# Bumped whenever a field of the trajectory lines changes meaning or disappears.
SCHEMA_VERSION = 1


class RunStatus(str, Enum):
    """How a run ended. Every run ends with exactly one."""

    COMPLETED = "completed"  # Stop, confirmed by the completion check when enabled
    NOT_COMPLETED = "not_completed"  # the model stopped, the check kept saying "not done"; or a script step failed
    BUDGET_EXHAUSTED = "budget_exhausted"  # steps, identical actions or consecutive failures
    ERROR = "error"  # device lost, planner unreachable…: ``RunResult.error`` says which
    CANCELLED = "cancelled"  # the cancel event was set

    def __str__(self) -> str:  # print(result.status) shows "completed", as the trajectory and the API do
        return self.value


class EventKind(str, Enum):
    RUN_STARTED = "run_started"
    STEP_STARTED = "step_started"
    STEP_FINISHED = "step_finished"
    RUN_FINISHED = "run_finished"
    WAITING_FOR_USER = "waiting_for_user"  # the run asks its person (agent.people) and waits
    USER_REPLIED = "user_replied"


@dataclass(frozen=True)
class StepTimings:
    """Milliseconds spent in each phase of one step.

    ``capture`` is 0 when the step reuses the frame that the previous step's settle
    returned (that capture is counted in the previous step's ``settle``).
    """

    capture_ms: float = 0.0
    perception_ms: float = 0.0
    model_ms: float = 0.0
    action_ms: float = 0.0
    settle_ms: float = 0.0

    @property
    def overhead_ms(self) -> float:
        """Everything outside the model."""
        return self.capture_ms + self.perception_ms + self.action_ms + self.settle_ms

    def to_dict(self) -> dict[str, float]:
        return {k: round(v, 1) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class RunUsage(Usage):
    """Tokens and cost summed over every model call of a run (``usage.plus(call)``
    stays a ``RunUsage``)."""


@dataclass(frozen=True)
class StepRecord:
    """One step: what was seen, what the model said, what was done, what came of it."""

    index: int  # 1-based
    screenshot: str  # path relative to the trajectory folder
    annotated: str | None = None
    observation: str = ""
    thought: str = ""
    action_text: str = ""  # the model's Action line (or the script line), as written
    raw_reply: str = ""
    operation: dict[str, Any] | None = None  # {"name": ..., "params": {...}} once parsed
    ok: bool = False  # the operation was carried out
    feedback: str = ""  # what the next prompt is told about this step
    tap_point: tuple[int, int] | None = None  # screen pixels
    swipe: tuple[int, int, int, int] | None = None  # screen pixels x1, y1, x2, y2
    location: LocationSummary | None = None
    chosen_candidate: int | None = None
    screen_changed: bool | None = None  # None: nothing was done on the device
    change_ratio: float | None = None
    reflection_note: str | None = None  # sent with the next request when the screen did not change
    completion: dict[str, Any] | None = None  # {"done": bool, "reason": str} for a checked Stop
    error: dict[str, Any] | None = None  # a model mistake (parse error…), as data
    timings: StepTimings = field(default_factory=StepTimings)
    usage: dict[str, Any] = field(default_factory=dict)
    started_at: float = 0.0
    # who chose the action: "model", "replay" (a cached plan), "script", "person" or "mcp" (an MCP client's tool call)
    by: str = "model"
    # a grounded model's tap: {"model_point", "point", "moved", "reason", "target"} (perception.snapping)
    snap: dict[str, Any] | None = None
    # what the person was asked before or by this step, and the reply:
    # {"kind": "confirm"|"question", "question", "reason", "reply": {"kind", "text", "by"} | None}
    asked_user: dict[str, Any] | None = None
    # a run of its own this step started (an MCP session's run_instruction), with its own
    # trajectory: {"run_id", "status", "reason", "folder": its folder's name, a sibling of this one}
    linked_run: dict[str, Any] | None = None

    @property
    def operation_name(self) -> str | None:
        return self.operation["name"] if self.operation else None

    def history_line(self) -> str:
        """This step as one line of the operation history shown to the planner."""
        action = self.action_text.strip() or "(no action)"
        if self.error is not None:
            result = f"invalid: {self.feedback}"
        elif self.completion is not None and not self.completion.get("done", False):
            result = f"stop rejected: {self.completion.get('reason', '')}"
        elif not self.ok:
            result = f"failed: {self.feedback}"
        elif self.screen_changed is False:
            result = "done, but the screen did not change"
        else:
            result = self.feedback or "done"
        who = " (done by the user, not you)" if self.by == "person" else ""
        return f"Step {self.index}{who}: {action} -> {result}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["timings"] = self.timings.to_dict()
        data["location"] = self.location.to_dict() if self.location else None
        data["tap_point"] = list(self.tap_point) if self.tap_point else None
        data["swipe"] = list(self.swipe) if self.swipe else None
        return data


def history_lines(steps: list[StepRecord]) -> list[str]:
    """The operation history for the next prompt: a fold over the step records."""
    return [step.history_line() for step in steps]


@dataclass(frozen=True)
class AgentEvent:
    """Something that happened in a run, for live displays (the CLI, the REST service's SSE).

    ``data`` holds only JSON-able values.
    """

    kind: str  # an EventKind value
    run_id: str
    step: int | None
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "run_id": self.run_id, "step": self.step, "data": self.data}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


@dataclass(frozen=True)
class RunResult:
    """The outcome of ``Agent.run`` / ``run_script``."""

    status: RunStatus
    error: dict[str, Any] | None  # {"type", "message", "cause", ...fields} when status is error
    steps: list[StepRecord]
    trajectory_dir: Path
    usage: RunUsage
    started_at: float
    finished_at: float
    run_id: str = ""
    instruction: str = ""
    reason: str = ""  # one sentence: why the run ended
    final_screenshot: str | None = None  # the screen after the last action, when no step shows it

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.COMPLETED

    @property
    def report_path(self) -> Path:
        return self.trajectory_dir / "report.html"

    @property
    def trajectory_path(self) -> Path:
        return self.trajectory_dir / "trajectory.jsonl"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "instruction": self.instruction,
            "status": self.status.value,
            "reason": self.reason,
            "error": self.error,
            "steps": len(self.steps),
            "usage": self.usage.to_dict(),
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration_s": round(self.finished_at - self.started_at, 3),
            "trajectory_dir": str(self.trajectory_dir),
            "final_screenshot": self.final_screenshot,
        }
