"""The agent: the self-planning, self-reflecting step loop of Mobile-Agent.

One step::

    capture ─▶ Planner.plan ─▶ parse_action ─▶ execute (perception on demand)
            ─▶ Device.wait_settled ─▶ compare before / after ─▶ StepRecord

- A reply that does not parse, a text not found, a candidate not chosen: the step is
  recorded with feedback for the next prompt (model mistakes are data).
- The screen did not change after an action: the next prompt carries a reflection
  note and the previous screenshot (never more than one old frame).
- Stop: a separate completion check; "not done" sends the reason back as feedback,
  at most ``settings.agent.max_completion_checks`` times, then the run ends
  ``not_completed``.
- Budgets: ``max_steps``, ``max_identical_actions`` without a screen change,
  ``max_consecutive_failures``; any of them ends the run ``budget_exhausted``.
- A device or planner error ends the run ``error`` with its cause; the cancel event is
  checked at step boundaries, between the model and the action, and while waiting for
  the model (plan, candidate choice, completion check: ``RunSession.ask_model``); the
  step in flight is recorded with the error.

May import: ``mobile_agent`` (settings, errors, device, operations, planner, locate),
``perception.types`` and this package's modules. Never ``server`` or ``eval``.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mobile_agent.agent.records import (
    LocationSummary,
    RunResult,
    RunStatus,
    StepRecord,
    StepTimings,
    history_lines,
)
from mobile_agent.agent.session import (
    EventCallback,
    RunSession,
    TimedLocator,
    build_locator,
    elapsed_ms,
    open_run_device,
)
from mobile_agent.errors import ConfigError, OperationError
from mobile_agent.settings import Settings
from perception.types import Location

__all__ = ["Agent", "NO_EFFECT_NOTE"]

NO_EFFECT_NOTE = (
    'The last operation "{action}" had no effect: the screen did not change. '
    "Compare the previous screenshot with the current one, and try another operation or other parameters."
)


def validate_instruction(instruction: Any) -> str:
    if not isinstance(instruction, str) or not instruction.strip():
        raise ConfigError("the instruction must be a non-empty text", instruction=repr(instruction)[:80])
    return instruction.strip()


@dataclass
class _LoopState:
    """What the loop carries from one step to the next."""

    feedback: list[str] = field(default_factory=list)
    reflection_note: str | None = None
    previous_screenshot: Any | None = None
    consecutive_failures: int = 0
    identical_streak: int = 0
    last_action_key: str | None = None
    rejected_stops: int = 0


class Agent:
    """Runs instructions on one device with one planner.

    ``device``, ``planner`` and ``locator`` default to the ones ``settings`` describe,
    built on first use; pass your own to share them (the REST service shares one
    perception stack between every device). ``on_event`` receives ``AgentEvent``s.
    One ``Agent`` runs one instruction at a time.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        device: Any | None = None,
        planner: Any | None = None,
        locator: Any | None = None,
        on_event: EventCallback | None = None,
    ) -> None:
        self.settings = settings
        self._device = device
        self._planner = planner
        self._locator = TimedLocator(locator, lambda: build_locator(settings))
        self.on_event = on_event
        self._running = threading.Lock()

    # -- parts, built lazily ---------------------------------------------------------

    def _get_planner(self) -> Any:
        if self._planner is None:
            from mobile_agent.planner import Planner

            if not self.settings.planner.configured:
                raise ConfigError(
                    "no planner endpoint configured: set MOBILE_AGENT_PLANNER__BASE_URL and "
                    "MOBILE_AGENT_PLANNER__API_KEY (or --base-url / --api-key), or run a script with --script"
                )
            self._planner = Planner(self.settings.planner)
        return self._planner

    # -- the run ---------------------------------------------------------------------

    def run(
        self,
        instruction: str,
        *,
        cancel: threading.Event | None = None,
        output_dir: str | Path | None = None,
    ) -> RunResult:
        """Carry out ``instruction``; always returns a result and writes a trajectory."""
        instruction = validate_instruction(instruction)
        if not self._running.acquire(blocking=False):
            raise RuntimeError("this Agent is already running an instruction; use one Agent per run")
        try:
            return self._run(instruction, cancel, Path(output_dir) if output_dir is not None else None)
        finally:
            self._running.release()

    def _run(self, instruction: str, cancel: threading.Event | None, output_dir: Path | None) -> RunResult:
        opening_error: BaseException | None = None
        try:
            planner = self._get_planner()
            if self._device is None:
                self._device = open_run_device(self.settings)
        except Exception as exc:  # recorded like any other run-ending error
            opening_error = exc
        session = RunSession(
            self.settings,
            instruction=instruction,
            mode="planned",
            device=self._device,
            on_event=self.on_event,
            output_dir=output_dir,
            cancel=cancel,
            locator=self._locator.untimed,
        )
        if opening_error is not None:
            return session.finish_from_exception(opening_error)
        try:
            return self._loop(session, planner, self._device)
        except BaseException as exc:
            if not isinstance(exc, Exception):  # KeyboardInterrupt & co.: write, then let it go
                session.finish_from_exception(exc)
                raise
            return session.finish_from_exception(exc)

    def _loop(self, session: RunSession, planner: Any, device: Any) -> RunResult:
        agent = self.settings.agent
        state = _LoopState()
        screenshot = None
        for index in range(1, agent.max_steps + 1):
            session.check_cancel()
            session.step_started(index)
            screenshot, shot_name, capture_ms = session.capture(device, screenshot, index)
            step, screenshot, ended = self._step(
                session, planner, device, state, index, screenshot, shot_name, capture_ms
            )
            if ended is not None:
                return ended
        return session.finish(
            RunStatus.BUDGET_EXHAUSTED, f"the step budget ({agent.max_steps} steps) ran out before a confirmed Stop"
        )

    def _plan(self, session: RunSession, planner: Any, state: _LoopState, screenshot: Any) -> Any:
        from mobile_agent.planner import PlanRequest

        reflecting = state.reflection_note is not None
        request = PlanRequest(
            instruction=session.instruction,
            history=history_lines(session.steps),
            feedback=list(state.feedback),
            screenshot=screenshot,
            previous_screenshot=state.previous_screenshot if reflecting else None,
            reflection_note=state.reflection_note,
        )
        return session.ask_model(planner.plan, request)

    def _chooser(self, session: RunSession, planner: Any, screenshot: Any, chosen: dict[str, Any]) -> Any:
        def ask(location: Location) -> tuple[int | None, Any]:
            index = planner.choose_candidate(session.instruction, location, screenshot)
            # read on the thread that asked: the planner keeps it per thread
            return index, getattr(planner, "last_choice_usage", None)

        def choose(location: Location) -> int | None:
            start = time.perf_counter()
            try:
                index, usage = session.ask_model(ask, location)
            finally:
                chosen["model_ms"] = chosen.get("model_ms", 0.0) + elapsed_ms(start)
            if usage is not None and getattr(usage, "calls", 1):
                chosen["usage"] = usage
            chosen["index"] = index
            return index

        return choose

    def _step(
        self,
        session: RunSession,
        planner: Any,
        device: Any,
        state: _LoopState,
        index: int,
        screenshot: Any,
        shot_name: str,
        capture_ms: float,
    ) -> tuple[StepRecord, Any, RunResult | None]:
        """One step. Returns (record, the next step's frame or None to capture a fresh
        one, the result when the run ended). A step that did nothing on the device has
        no settled frame: the next step captures anew, in case the screen moved on."""
        started_at = time.time()
        start = time.perf_counter()
        reply = self._plan(session, planner, state, screenshot)
        model_ms = elapsed_ms(start)
        usage = session.add_usage(getattr(reply, "usage", None))
        base = {
            "index": index,
            "screenshot": shot_name,
            "observation": reply.observation or "",
            "thought": reply.thought or "",
            "action_text": reply.action_text or "",
            "raw_reply": reply.raw or "",
            "usage": usage,
            "started_at": started_at,
        }
        state.feedback = []
        state.reflection_note, state.previous_screenshot = None, None
        try:
            return self._carry_out(session, planner, device, state, reply, base, screenshot, capture_ms, model_ms)
        except BaseException as exc:  # the run ends here: keep the reply, its tokens and what was done
            session.record_interrupted(base, screenshot.pixels, exc, StepTimings(capture_ms=capture_ms, model_ms=model_ms))
            raise

    def _carry_out(
        self,
        session: RunSession,
        planner: Any,
        device: Any,
        state: _LoopState,
        reply: Any,
        base: dict[str, Any],
        screenshot: Any,
        capture_ms: float,
        model_ms: float,
    ) -> tuple[StepRecord, Any, RunResult | None]:
        """The step once the model has answered. ``base`` holds the step's fields so far
        and is updated as they come, for ``record_interrupted``."""
        from mobile_agent.operations import OperationContext, parse_action

        agent = self.settings.agent

        # 1. the reply
        try:
            action = parse_action(reply.raw or reply.action_text or "")
        except OperationError as exc:
            state.consecutive_failures += 1
            step = StepRecord(
                **base,
                feedback=exc.message,
                error=exc.to_dict(),
                timings=StepTimings(capture_ms=capture_ms, model_ms=model_ms),
            )
            session.record(step, screenshot.pixels)
            state.feedback = [exc.message]
            return step, None, self._failure_budget(session, state)
        operation = {"name": action.name, "params": action.params.model_dump()}
        base["operation"] = operation
        session.check_cancel()  # between the model and the action

        # 2. the action (perception on demand, inside the operation)
        chosen: dict[str, Any] = {}
        ctx = OperationContext(
            device=device,
            locator=self._locator,
            screenshot=screenshot,
            settings=self.settings,
            choose=self._chooser(session, planner, screenshot, chosen),
            cancel=session.cancel,
        )
        acted = session.act(action, ctx, self._locator)
        outcome, perception_ms = acted.outcome, acted.perception_ms
        choose_ms = chosen.get("model_ms", 0.0)
        model_ms += choose_ms
        if "usage" in chosen:
            base["usage"] = session.add_usage(chosen["usage"], base["usage"])
        action_ms = max(0.0, acted.total_ms - perception_ms - choose_ms)
        common = dict(
            base,
            operation=operation,
            ok=outcome.ok,
            feedback=outcome.feedback,
            tap_point=outcome.tap_point,
            swipe=outcome.swipe,
            location=LocationSummary.from_location(outcome.location),
            chosen_candidate=chosen.get("index"),
        )
        base.update(common)

        # 3a. Stop: confirmed by a separate completion check
        if outcome.terminal:
            return self._stop(session, planner, state, screenshot, common, capture_ms, model_ms, perception_ms)

        # 3b. an operation that could not be done: feedback, no device change to wait for
        if not outcome.ok:
            state.consecutive_failures += 1
            step = StepRecord(
                **common,
                timings=StepTimings(capture_ms, perception_ms, model_ms, action_ms, 0.0),
            )
            session.record(step, screenshot.pixels)
            state.feedback = [outcome.feedback] if outcome.feedback else []
            return step, None, self._failure_budget(session, state)
        state.consecutive_failures = 0

        # 4. settle, then compare before / after
        settled = session.settle(device, screenshot)
        after, changed = settled.frame, settled.changed
        note = None
        if not changed and agent.reflection:
            note = NO_EFFECT_NOTE.format(action=(reply.action_text or action.raw).strip())
            state.reflection_note = note
            state.previous_screenshot = screenshot
        step = StepRecord(
            **common,
            screen_changed=changed,
            change_ratio=settled.ratio,
            reflection_note=note,
            timings=StepTimings(capture_ms, perception_ms, model_ms, action_ms, settled.settle_ms),
        )
        session.record(step, screenshot.pixels)

        key = json.dumps(operation, sort_keys=True, default=str)
        if changed:
            state.identical_streak = 0
        elif key == state.last_action_key and state.identical_streak > 0:
            state.identical_streak += 1
        else:
            state.identical_streak = 1
        state.last_action_key = key
        if state.identical_streak >= agent.max_identical_actions:
            return step, after, session.finish(
                RunStatus.BUDGET_EXHAUSTED,
                f"the same action was repeated {state.identical_streak} times without changing the screen",
            )
        return step, after, None

    def _failure_budget(self, session: RunSession, state: _LoopState) -> RunResult | None:
        limit = self.settings.agent.max_consecutive_failures
        if state.consecutive_failures >= limit:
            return session.finish(
                RunStatus.BUDGET_EXHAUSTED, f"{state.consecutive_failures} consecutive steps failed (limit {limit})"
            )
        return None

    def _stop(
        self,
        session: RunSession,
        planner: Any,
        state: _LoopState,
        screenshot: Any,
        common: dict[str, Any],
        capture_ms: float,
        model_ms: float,
        perception_ms: float,
    ) -> tuple[StepRecord, Any, RunResult | None]:
        agent = self.settings.agent
        if not agent.completion_check:
            step = StepRecord(**common, timings=StepTimings(capture_ms, perception_ms, model_ms, 0.0, 0.0))
            session.record(step, screenshot.pixels)
            return step, screenshot, session.finish(RunStatus.COMPLETED, "the model answered Stop")
        start = time.perf_counter()
        verdict = session.ask_model(
            planner.check_completion, session.instruction, history_lines(session.steps), screenshot
        )
        model_ms += elapsed_ms(start)
        common["usage"] = session.add_usage(getattr(verdict, "usage", None), common.get("usage"))
        completion = {"done": bool(verdict.done), "reason": verdict.reason or ""}
        if verdict.done:
            step = StepRecord(
                **dict(common, feedback="confirmed done"),
                completion=completion,
                timings=StepTimings(capture_ms, perception_ms, model_ms, 0.0, 0.0),
            )
            session.record(step, screenshot.pixels)
            reason = "the model answered Stop and the completion check confirmed it"
            return step, screenshot, session.finish(RunStatus.COMPLETED, f"{reason}: {completion['reason']}".rstrip(": "))
        feedback = f"You answered Stop, but the task is not complete yet: {completion['reason']}"
        step = StepRecord(
            **dict(common, ok=False, feedback=feedback),
            completion=completion,
            timings=StepTimings(capture_ms, perception_ms, model_ms, 0.0, 0.0),
        )
        session.record(step, screenshot.pixels)
        state.rejected_stops += 1
        if state.rejected_stops > agent.max_completion_checks:
            return step, screenshot, session.finish(
                RunStatus.NOT_COMPLETED,
                f"the model stopped {state.rejected_stops} times but the task is not done: {completion['reason']}",
            )
        state.feedback = [feedback]
        return step, None, None
