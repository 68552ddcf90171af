"""One trajectory per MCP session: the client's tool calls as the steps of one run record.

A client (a desktop assistant, an agent framework) drives the phone with many small tool
calls; read one by one they mean little, so the operations of one MCP session (one client
connection: a stdio process, or one ``Mcp-Session-Id`` over streamable HTTP) on one phone
are the steps of one trajectory, written as they come by the agent's own ``RunSession``
and ``TrajectoryWriter``: the same step records, masked screenshots, redaction and report
as any run. Its header says ``mode = "mcp"``; each step says ``by = "mcp"``.

- A step's line and images are on disk before its tool call answers (``writer.flush``): a
  server killed between two calls leaves every step whole, and ``write_report(folder)``
  makes the report afterwards.
- ``run_instruction`` is a run of its own with its own trajectory; the session's gets a
  step for it (the screen the run left) whose ``linked_run`` names that run's folder.
- ``close`` ends every trajectory of the session (the result line, the final screen, the
  report) when the session ends: stdio closed, the HTTP session deleted or idle, the
  server stopped. Looking (screenshots, find_text) adds no step.

May import: ``mobile_agent`` (agent, operations, settings, errors).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mobile_agent.agent.mask import hide_live_mask, show_live_mask
from mobile_agent.agent.parts import run_locator
from mobile_agent.agent.people import NoPersonChannel, UserChannel
from mobile_agent.agent.records import RunResult, RunStatus, StepRecord
from mobile_agent.agent.redact import redacted_logs
from mobile_agent.agent.session import RunSession
from mobile_agent.errors import MobileAgentError
from mobile_agent.mcp_server.guarded import guarded_step
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.settings import Settings

if TYPE_CHECKING:
    from mobile_agent.operations.context import AgentDevice

__all__ = ["McpSession", "SessionTrajectory"]

log = logging.getLogger(__name__)

NOBODY = "the MCP client cannot be asked"


class SessionTrajectory:
    """The trajectory of one MCP session on one phone; its steps one at a time."""

    def __init__(self, settings: Settings, device: AgentDevice, title: str) -> None:
        self.device = device
        self.locator = run_locator(settings, None)
        self.run = RunSession(settings, instruction=title, mode="mcp", device=device, on_event=None,
                              output_dir=None, cancel=None, locator=self.locator.untimed)
        self._lock = threading.Lock()  # one step at a time: calls of one session may overlap
        # the phone's live view and MCP screenshots hide what this session's steps hide, while it is open
        show_live_mask(device.serial, self.run.live_mask)
        self.result: RunResult | None = None

    @property
    def run_id(self) -> str:
        return self.run.run_id

    def operate(self, action: ParsedAction, candidate: int | None, channel: UserChannel | None) -> dict[str, Any]:
        """``action`` as the next step (guarded, recorded); answers the step."""
        with self._lock, redacted_logs(self.run.redact):
            self._check_open()
            self.run.channel = channel or NoPersonChannel(NOBODY)
            index = self.run.take_index()
            self.run.step_started(index)
            try:
                draft = self.run.capture(self.device, None, index)
                try:
                    guarded_step(self.run, draft, action, candidate, self.device, self.locator)
                except BaseException as exc:  # the step is kept with the error; the session goes on
                    self.run.record_interrupted(draft, exc)
                    raise
            finally:
                self.run.writer.flush()
            step = self.run.steps[-1]
            self.run.writer.embed_later(step.annotated or step.screenshot)  # not waited for: the next flush does
            return self._answer(step)

    def linked(self, instruction: str, start: Callable[[], RunResult]) -> RunResult:
        """``start()`` (a run of its own), then a step naming it, on the screen it left.
        The session's other calls on this phone wait for the run: its steps come in order."""
        with self._lock:
            self._check_open()
            result = start()
            with redacted_logs(self.run.redact):
                try:
                    step = self._record_run(instruction, result)
                except MobileAgentError as exc:  # the phone is gone: the run's own trajectory says so
                    log.warning("the run %s is not linked from %s: %s", result.run_id, self.run_id, exc.message)
                else:
                    self.run.writer.embed_later(step.screenshot)
                finally:
                    self.run.writer.flush()
        return result

    def _record_run(self, instruction: str, result: RunResult) -> StepRecord:
        index = self.run.take_index()
        draft = self.run.capture(self.device, None, index)
        draft.begun, draft.by = True, "mcp"
        draft.action_text = f"Run instruction ({instruction})"
        draft.operation = {"name": "run_instruction", "params": {"instruction": instruction}}
        draft.ok = result.ok
        draft.feedback = f"run {result.run_id} ended {result.status.value}: {result.reason}"
        draft.linked_run = {"run_id": result.run_id, "status": result.status.value, "reason": result.reason,
                            "folder": result.trajectory_dir.name}
        return self.run.record(draft)

    def close(self, reason: str) -> RunResult | None:
        """End the trajectory (result line, final screen, report); once."""
        with self._lock, redacted_logs(self.run.redact):
            if self.result is None:
                self.result = self.run.finish(RunStatus.COMPLETED, reason)
                hide_live_mask(self.device.serial, self.run.live_mask)
            return self.result

    def _check_open(self) -> None:
        if self.result is not None:
            raise MobileAgentError("this MCP session has ended")

    def _answer(self, step: StepRecord) -> dict[str, Any]:
        """What an operation tool answers: did it happen, the feedback, where it is recorded."""
        answer = {
            "ok": step.ok and step.error is None,
            "status": "completed" if step.ok and step.error is None else "not_completed",
            "feedback": step.feedback,
            "action": step.action_text,
            "tap_point": list(step.tap_point) if step.tap_point else None,
            "screen_changed": step.screen_changed,
            "asked_user": step.asked_user,
            "error": step.error,
            "step": step.index,
            "run_id": self.run_id,
            "trajectory_dir": str(self.run.trajectory_dir.resolve()),
        }
        redacted: dict[str, Any] = self.run.redact(answer)  # values and their parts (``agent.redact``)
        return redacted


class McpSession:
    """What one MCP session keeps: its trajectory on each phone it drove."""

    def __init__(self, settings: Settings, title: str) -> None:
        self.settings = settings
        self.title = title
        self._trajectories: dict[str, SessionTrajectory] = {}
        self._lock = threading.Lock()
        self.closed = False

    def trajectory(self, device: AgentDevice, remember: Callable[[str, SessionTrajectory], None]) -> SessionTrajectory:
        """The session's trajectory on ``device``, begun on its first operation
        (``remember`` is told of a new one)."""
        with self._lock:
            if self.closed:
                raise MobileAgentError("this MCP session has ended")
            known = self._trajectories.get(device.serial)
            if known is None:
                known = self._trajectories[device.serial] = SessionTrajectory(self.settings, device, self.title)
                remember(known.run_id, known)
            return known

    def close(self, reason: str) -> list[RunResult]:
        """End every trajectory of the session; a call still running finishes its step first."""
        with self._lock:
            self.closed = True
            trajectories = list(self._trajectories.values())
        results = []
        for trajectory in trajectories:
            try:
                result = trajectory.close(reason)
            except Exception:  # one phone's trajectory must not keep the others open
                log.exception("could not close the trajectory %s", trajectory.run_id)
                continue
            if result is not None:
                results.append(result)
        return results
