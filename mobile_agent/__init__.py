"""mobile-agent: an Android device-control agent driven by a multimodal LLM.

Public API (pinned by tests/unit/test_public_api.py)::

    from mobile_agent import Agent, load_settings
    result = Agent(load_settings()).run("Turn on the dark mode")
    result.status, result.trajectory_dir

The agent's names are imported on first use, so that ``import mobile_agent`` (and the
CLI's start) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mobile_agent.errors import MobileAgentError
from mobile_agent.settings import Settings, load_settings

if TYPE_CHECKING:
    from mobile_agent.agent import Agent, AgentEvent, RunResult, RunStatus, StepRecord, run_script

__version__ = "0.1.0"

_AGENT_NAMES = ("Agent", "AgentEvent", "RunResult", "RunStatus", "StepRecord", "run_script")

__all__ = [
    "Agent",
    "AgentEvent",
    "MobileAgentError",
    "RunResult",
    "RunStatus",
    "Settings",
    "StepRecord",
    "__version__",
    "load_settings",
    "run_script",
]


def __getattr__(name: str) -> Any:
    if name in _AGENT_NAMES:
        import mobile_agent.agent as agent

        return getattr(agent, name)
    raise AttributeError(f"module 'mobile_agent' has no attribute {name!r}")
