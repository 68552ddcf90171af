"""The agent: step loop, self-reflection, completion check, budgets, trajectories.

``Agent(settings).run(instruction) -> RunResult`` drives a device with the planner;
``run_script(settings, script_text)`` runs the model's action syntax with no LLM. Both
go through one run template (``carry_out``: a ``RunSession`` stepping a ``RunBody``,
``PlannedRun`` or ``ScriptedRun``) and write a trajectory folder (``trajectory.jsonl``, screenshots, ``report.html``) and
report ``AgentEvent``s to an ``on_event`` callback.

May import: the rest of ``mobile_agent`` and ``perception``; never ``server`` or ``eval``.
"""

from mobile_agent.agent.disk import free_mb
from mobile_agent.agent.loop import NO_EFFECT_NOTE, Agent, PlannedRun
from mobile_agent.agent.mask import hide_secrets_shown, mask_live_frame
from mobile_agent.agent.paths import inside_paths, relative_inside, server_path
from mobile_agent.agent.people import REPLY_KINDS, ReplyKind, UserChannel, UserReply, UserRequest
from mobile_agent.agent.records import (
    SCHEMA_VERSION,
    AgentEvent,
    EventKind,
    LocationSummary,
    RunResult,
    RunStatus,
    RunUsage,
    StepRecord,
    StepTimings,
    history_lines,
    jsonable,
)
from mobile_agent.agent.redact import Redactor
from mobile_agent.agent.screen_diff import change_ratio, screen_changed
from mobile_agent.agent.script import ScriptedRun, parse_script, run_script, script_app_platforms
from mobile_agent.agent.session import EventCallback, RunSession, carry_out
from mobile_agent.agent.step import RunBody, StepDraft, StepEnd
from mobile_agent.agent.trajectory import load_trajectory, write_report
from mobile_agent.apps.platforms import PinnedApps, PlatformPinError

__all__ = [
    "NO_EFFECT_NOTE",
    "REPLY_KINDS",
    "SCHEMA_VERSION",
    "Agent",
    "AgentEvent",
    "EventCallback",
    "EventKind",
    "LocationSummary",
    "PinnedApps",
    "PlannedRun",
    "PlatformPinError",
    "Redactor",
    "ReplyKind",
    "RunBody",
    "RunResult",
    "RunSession",
    "RunStatus",
    "RunUsage",
    "ScriptedRun",
    "StepDraft",
    "StepEnd",
    "StepRecord",
    "StepTimings",
    "UserChannel",
    "UserReply",
    "UserRequest",
    "carry_out",
    "change_ratio",
    "free_mb",
    "history_lines",
    "inside_paths",
    "jsonable",
    "load_trajectory",
    "hide_secrets_shown",
    "mask_live_frame",
    "parse_script",
    "relative_inside",
    "run_script",
    "screen_changed",
    "script_app_platforms",
    "server_path",
    "write_report",
]
