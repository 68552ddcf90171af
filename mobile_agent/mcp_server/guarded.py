"""One operation asked for by an MCP client, as a step of the session's trajectory, with
the planned run's safety check.

A script line typed by the person at the terminal is their own decision, so a scripted run
does not ask again; an MCP client is another program (often a model), so its operations
get what a planned run's get: ``agent.guard.Guard`` (app allow/deny/confirm lists,
sensitive words, password fields, ``{{secret:name}}`` typing) and a confirmation asked
through the run's channel, behind the ``agent.safety.confirmations`` policy.

The step is the scripted step's (``RunSession.act``, ``settle``, ``record``: the same
localization, secrets and records), but it never ends the trajectory: a failed or refused
operation is the client's to react to, and the session goes on.

May import: ``mobile_agent`` (agent, operations, settings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mobile_agent.agent.clearance import clear_operation
from mobile_agent.agent.guard import guard_on
from mobile_agent.agent.parts import TimedLocator
from mobile_agent.agent.session import RunSession
from mobile_agent.agent.step import StepDraft
from mobile_agent.operations.context import AgentDevice
from mobile_agent.operations.parser import ParsedAction

if TYPE_CHECKING:
    from perception.types import Location

__all__ = ["guarded_step"]


def guarded_step(session: RunSession, draft: StepDraft, action: ParsedAction, candidate: int | None,
                 device: AgentDevice, locator: TimedLocator) -> None:
    """Carry out ``action`` on ``draft.frame`` once the guard clears it, and record the step
    (``by="mcp"``). ``candidate``: the place to use when several match (there is no model
    to choose). A refusal is recorded as a step that did nothing, with the reason."""
    settings = session.settings
    draft.action_text = action.text
    draft.by = "mcp"
    guard = guard_on(settings, device, locator.untimed())
    refused = clear_operation(session, draft, guard, action, timeout_s=settings.agent.user_timeout_s)
    if refused is not None:
        draft.took_action(action)
        draft.ok = False
        draft.feedback = f"{action.text} was not done: {refused}" if refused.asked else str(refused)
        session.record(draft)
        return

    def choose(location: Location) -> int | None:
        draft.chosen_candidate = candidate
        return candidate

    outcome = session.act(draft, action, device, locator, choose)
    if outcome.ok and not outcome.terminal:
        session.settle(device, draft)
    session.record(draft)
