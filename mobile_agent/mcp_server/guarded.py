"""One operation asked for by an MCP client, with the planned run's safety check.

A script line typed by the person at the terminal is their own decision, so a scripted run
does not ask again; an MCP client is another program (often a model), so its operations
get what a planned run's get: ``agent.guard.Guard`` (app allow/deny/confirm lists,
sensitive words, password fields, ``{{secret:name}}`` typing) and a confirmation asked
through the run's channel, behind the ``agent.safety.confirmations`` policy.

May import: ``mobile_agent`` (agent, operations, settings).
"""

from __future__ import annotations

from mobile_agent.agent.clearance import clear_operation
from mobile_agent.agent.guard import Guard, screen_reader
from mobile_agent.agent.records import RunStatus
from mobile_agent.agent.script import ScriptedRun
from mobile_agent.agent.session import RunSession
from mobile_agent.agent.step import StepDraft, StepEnd

__all__ = ["GuardedOperation"]


class GuardedOperation(ScriptedRun):
    """A one-line scripted run whose line first passes the safety guard."""

    def step(self, session: RunSession, draft: StepDraft) -> StepEnd:
        line = self.lines[draft.index - 1]
        device = self.open()
        guard = Guard(
            self.settings.agent.safety,
            read_screen=screen_reader(self.locator.untimed()),
            current_app=getattr(device, "current_app", None),
            app_package=getattr(device, "resolve_app_label", None),
        )
        refused = clear_operation(session, draft, guard, line.action, timeout_s=self.settings.agent.user_timeout_s)
        refusal = None if refused is None else (f"{line.action.text} was not done: {refused}" if refused.asked else str(refused))
        if refusal is None:
            return super().step(session, draft)
        draft.action_text = line.text
        draft.by = "script"
        draft.took_action(line.action)
        draft.ok, draft.feedback = False, refusal
        session.record(draft)
        return StepEnd(draft.frame, session.finish(RunStatus.NOT_COMPLETED, refusal))
