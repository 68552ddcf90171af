"""The agent: the self-planning, self-reflecting step loop of Mobile-Agent.

One step (``PlannedRun.step``)::

    plan ─▶ parse ─▶ act (perception on demand) ─▶ settle and record
                      └─ Stop ─▶ completion check

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
  the model (``RunSession.ask_model``); the step in flight is recorded with the error.

The run around the steps (trajectory, events, errors, the capture before each step) is
the session's template, ``session.carry_out``, shared with scripted runs.

May import: ``mobile_agent`` (settings, errors, device, operations, planner, locate),
``perception.types`` and this package's modules. Never ``server`` or ``eval``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from mobile_agent.agent.clearance import clear_operation
from mobile_agent.agent.guard import Guard, guard_on
from mobile_agent.agent.mask import SecretMask, SecretText, secret_values
from mobile_agent.agent.parts import close_run_device, elapsed_ms, open_run_device, run_locator
from mobile_agent.agent.people import UserChannel, UserRequest, run_channel
from mobile_agent.agent.records import RunResult, RunStatus, history_lines
from mobile_agent.agent.session import EventCallback, RunSession, carry_out
from mobile_agent.agent.speculation import SpeculationGate
from mobile_agent.agent.step import StepDraft, StepEnd
from mobile_agent.errors import ConfigError, OperationError
from mobile_agent.operations.catalog import find_text_on
from mobile_agent.operations.context import AgentDevice, Locator, Outcome, ScreenshotLike
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.operations.secrets import check_secret_references
from mobile_agent.planner.protocol import PlannerLike
from mobile_agent.planner.types import PlanReply, PlanRequest
from mobile_agent.replay import PlanStore, ReplayingPlanner, default_cache_url
from mobile_agent.settings import Settings
from perception.types import Location, TextLine

if TYPE_CHECKING:
    from mobile_agent.device import Phone

__all__ = ["NO_EFFECT_NOTE", "Agent", "PlannedRun"]

log = logging.getLogger(__name__)

_AgentT = TypeVar("_AgentT", bound="Agent")

# a model that answers sooner than this (a local scripted one) needs no OCR in the meantime
PREFETCH_DELAY_S = 0.3

NO_EFFECT_NOTE = (
    'The last operation "{action}" had no effect: the screen did not change. '
    "Compare the previous screenshot with the current one, and try another operation or other parameters."
)

# a system alert over the app (an iPhone's, DeviceLike.alert_text): its exact text, for the model
ALERT_NOTE = "A system alert is open over the app: \u201c{text}\u201d. Answer it by tapping one of its buttons."


def validate_instruction(instruction: object) -> str:
    if not isinstance(instruction, str) or not instruction.strip():
        raise ConfigError("the instruction must be a non-empty text", instruction=repr(instruction)[:80])
    return instruction.strip()


class Agent:
    """Runs instructions on one device with one planner.

    ``device``, ``planner`` and ``locator`` default to the ones ``settings`` describe,
    built on first use; pass your own to share them (the REST service shares one
    perception stack between every device). ``on_event`` receives ``AgentEvent``s.
    One ``Agent`` runs one instruction at a time.

    A device the agent opened itself (no ``device`` given) stays open for its next runs
    and is closed by ``close()``, or at the end of a ``with`` block::

        with Agent(settings) as agent:
            agent.run("Turn on the dark mode")
            agent.run("Open Settings")

    (an iPhone's WebDriverAgent connections, a USB iPhone's forward). A ``device`` passed
    in is never closed here: it stays its owner's.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        device: AgentDevice | None = None,
        planner: PlannerLike | None = None,
        locator: Locator | None = None,
        on_event: EventCallback | None = None,
        channel: UserChannel | None = None,
    ) -> None:
        self.settings = settings
        self.device = device
        self.planner = planner
        self.locator = run_locator(settings, locator)
        self.on_event = on_event
        self.channel = channel
        self._running = threading.Lock()
        self._opened: Phone | None = None  # the device open_device() opened: this agent's to close

    def __enter__(self: _AgentT) -> _AgentT:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:  # fmt: skip
        try:
            self.close()
        except RuntimeError:
            if error is None:
                raise
            # a run in another thread still drives the phone (close once it returns): the
            # exception leaving the block is the caller's, not replaced by close's refusal

    def close(self) -> None:
        """Close the device this agent opened (none given to it); a later run opens it again.
        A device passed in stays open: its owner closes it. ``RuntimeError`` while a run is
        in progress (cancel it, and close once ``run`` has returned)."""
        if not self._running.acquire(blocking=False):
            raise RuntimeError("this Agent is running an instruction: cancel it and close it once run() returns")
        try:
            opened, self._opened = self._opened, None
            if opened is not None and self.device is opened:
                self.device = None
        finally:
            self._running.release()
        if opened is not None:
            close_run_device(opened)

    def open(self) -> tuple[PlannerLike, AgentDevice]:
        """The planner and the device, built from the settings when not given."""
        return self.open_planner(), self.open_device()

    def open_planner(self) -> PlannerLike:
        """The planner, built from the settings when not given (``ConfigError`` without
        an endpoint)."""
        if self.planner is None:
            from mobile_agent.planner import Planner

            if not self.settings.planner.configured:
                raise ConfigError(
                    "no planner endpoint configured: set MOBILE_AGENT_PLANNER__BASE_URL and "
                    "MOBILE_AGENT_PLANNER__API_KEY (or --base-url / --api-key), or run a script with --script"
                )
            self.planner = Planner(self.settings.planner)
        return self.planner

    def open_device(self) -> AgentDevice:
        """The device, opened from the settings when not given (kept for the next runs,
        closed by ``close()``)."""
        if self.device is None:
            opened = open_run_device(self.settings)
            self.device, self._opened = opened, opened
        return self.device

    def run(
        self,
        instruction: str,
        *,
        cancel: threading.Event | None = None,
        output_dir: str | Path | None = None,
    ) -> RunResult:
        """Carry out ``instruction``; always returns a result and writes a trajectory."""
        instruction = validate_instruction(instruction)
        check_secret_references(instruction, self.settings)
        if not self._running.acquire(blocking=False):
            raise RuntimeError("this Agent is already running an instruction; use one Agent per run")
        try:
            body = PlannedRun(self, instruction)
            with SpeculationGate.shared().running():
                result = carry_out(
                    self.settings,
                    body,
                    instruction=instruction,
                    mode="planned",
                    locator=self.locator,
                    on_event=self.on_event,
                    output_dir=Path(output_dir) if output_dir is not None else None,
                    cancel=cancel,
                    channel=run_channel(self.settings, self.channel),
                )
            body.finish(result)
            return result
        finally:
            self._running.release()


@dataclass
class _LoopState:
    """What the loop carries from one step to the next."""

    feedback: list[str] = field(default_factory=list)
    reflection_note: str | None = None
    previous_screenshot: ScreenshotLike | None = None
    consecutive_failures: int = 0
    identical_streak: int = 0
    last_action_key: str | None = None
    rejected_stops: int = 0


def _without_secrets(
    read: Callable[[np.ndarray], list[TextLine]], settings: Settings, mask: Callable[[], SecretMask | None]
) -> Callable[[np.ndarray], list[TextLine]]:
    """``read`` (OCR) less the lines that show a secret or a part of one (``agent.mask``): what
    the plan cache keeps of a screen never holds one. A frame the run masked for the planner is
    not read again: its frame's lines are (``SecretMask.read``)."""
    secret = SecretText(secret_values(settings))
    if not secret.active:
        return read

    def lines(pixels: np.ndarray) -> list[TextLine]:
        masking = mask()
        found = masking.read(pixels, read) if masking is not None else read(pixels)
        return [line for line in found if not secret.shows(line.text)]

    return lines


class PlannedRun:
    """The body of a planned run (a ``RunBody``): one step per model answer."""

    def __init__(self, agent: Agent, instruction: str = "") -> None:
        self.agent = agent
        self.instruction = instruction
        self.settings = agent.settings
        self.locator = agent.locator
        self.max_steps = agent.settings.agent.max_steps
        self.state = _LoopState()
        self._planner: PlannerLike | None = None
        self._device: AgentDevice | None = None
        self._replay: ReplayingPlanner | None = None
        self._guard: Guard | None = None
        self._mask: SecretMask | None = None  # the run's masking step, once the session is open

    @property
    def device(self) -> AgentDevice | None:
        return self.agent.device

    def open(self) -> AgentDevice:
        cache = self.settings.cache
        if not cache.enabled:
            self._planner, self._device = self.agent.open()
            return self._device
        store = PlanStore(cache.database_url or default_cache_url(self.settings.agent.output_dir), cache.namespace)
        replay = ReplayingPlanner(
            store,
            self.instruction,
            inner_factory=self.agent.open_planner,
            locator=self.locator,
            ocr=_without_secrets(self.locator.untimed().ocr, self.settings, lambda: self._mask),
            min_similarity=cache.min_similarity,
            # a cached step's target is found as its operation finds it (the tree too, where used)
            find_text=lambda pixels, text: find_text_on(self._opened_device(), self.locator, pixels, text,
                                                        self.settings),
        )
        if not replay.replaying:
            replay.plan_with_model()  # nothing to replay: a missing planner fails now, before the device
        self._planner, self._replay = replay, replay
        self._device = self.agent.open_device()
        return self._device

    def finish(self, result: RunResult) -> None:
        """After the run: no speculative OCR left to start, and the plan cache keeps what worked (when on)."""
        self.locator.cancel_prefetches()
        if self._replay is not None:
            plan_id = self._replay.learn(result)
            if plan_id is not None:
                log.info("cached plan #%d for %r", plan_id, self.instruction)

    @property
    def planner(self) -> PlannerLike:
        if self._planner is None:
            raise RuntimeError("PlannedRun.open() comes first")
        return self._planner

    def out_of_steps(self, session: RunSession) -> RunResult:
        return session.finish(
            RunStatus.BUDGET_EXHAUSTED, f"the step budget ({self.max_steps} steps) ran out before a confirmed Stop"
        )

    # -- one step --------------------------------------------------------------------

    def step(self, session: RunSession, draft: StepDraft) -> StepEnd:
        self._mask = session.mask
        reply = self._plan(session, draft)
        action = self._parse(draft, reply)
        if action is None:
            return self._failed(session, draft)
        session.check_cancel()  # between the model and the action
        if not self._allowed(session, draft, action):
            return self._failed(session, draft)
        outcome = session.act(draft, action, self._opened_device(), self.locator, self._chooser(session, draft))
        if outcome.terminal and outcome.question is not None:  # Hand over: ask the person, wait
            return self._hand_over(session, draft, outcome)
        if outcome.terminal and outcome.stop_reason:  # Give up: stop and report, no check
            session.record(draft)
            return StepEnd(draft.frame, session.finish(RunStatus.NOT_COMPLETED, outcome.stop_reason))
        if outcome.terminal:
            return self._stop(session, draft)
        if not outcome.ok:  # could not be done: feedback, no device change to wait for
            return self._failed(session, draft)
        self.state.consecutive_failures = 0
        return self._settle_and_record(session, draft, action)

    # -- the person ----------------------------------------------------------------

    def guard(self) -> Guard:
        if self._guard is None:
            self._guard = guard_on(self.settings, self._opened_device(), self.locator.untimed())
        return self._guard

    def _allowed(self, session: RunSession, draft: StepDraft, action: ParsedAction) -> bool:
        """The safety check before an operation (``agent.guard``): False, with the reason
        in the draft for the model, when the app policy refuses it or the person does not
        confirm it."""
        guard = self.guard()
        # a replayed Type reads around its recorded field for the password check, not the whole screen
        narrower = self._replay.password_reader(guard.rules.shows_password) if self._replay is not None else None
        refusal = clear_operation(session, draft, guard, action, timeout_s=self.settings.agent.user_timeout_s,
                                  read_screen=narrower)
        if refusal is None:
            return True
        draft.ok = False
        draft.feedback = (f"{action.text} was not done: {refusal}. Find another way, or stop if there is none."
                          if refusal.asked else str(refusal))
        return False

    def _hand_over(self, session: RunSession, draft: StepDraft, outcome: Outcome) -> StepEnd:
        """The model asked the person: the run waits for an answer (fed back to the model),
        "done" (the person did it on the phone: look again) or no reply (the run ends)."""
        question = outcome.question or "the model asked for the user's help"
        request = UserRequest(
            "question", question, run_id=session.run_id, step=draft.index, reason="the model handed over",
            operation=draft.action_text, timeout_s=self.settings.agent.user_timeout_s,
        )
        draft.feedback = f"asked the user: {question}"
        draft.asked_user = {"kind": "question", "question": question, "reason": request.reason}
        session.record(draft)  # first: the person's steps come after it
        reply = session.ask_user(request)
        if reply is None:
            reason = f"handed over to the user: {question}; {session.nobody_reason()}"
            return StepEnd(result=session.finish(RunStatus.NOT_COMPLETED, reason))
        step = session.person_reply(self._opened_device(), request, reply)
        if reply.kind == "deny":
            return StepEnd(result=session.finish(RunStatus.NOT_COMPLETED, f"handed over to the user: {step.feedback}"))
        self.state.consecutive_failures = 0
        if reply.kind == "done":
            self.state.feedback = [f"The user took over and {step.feedback.removeprefix('the user ')}. "
                                   "Look at the current screen and go on."]
        else:
            self.state.feedback = [f"You asked the user: {question} The user answered: {reply.text}"]
        return StepEnd()

    def _opened_device(self) -> AgentDevice:
        if self._device is None:
            raise RuntimeError("PlannedRun.open() comes first")
        return self._device

    def _plan(self, session: RunSession, draft: StepDraft) -> PlanReply:
        state = self.state
        reflecting = state.reflection_note is not None
        # what leaves for the model: the frame masked where it shows a typed secret (and the
        # model told so), texts without a secret or a part of one (``agent.mask``)
        request = PlanRequest(
            instruction=session.instruction,
            history=[session.model_text(line) for line in history_lines(session.steps)],
            feedback=[session.model_text(line) for line in state.feedback],
            notes=[session.model_text(line) for line in [*session.model_notes(draft), *self._alert_notes()]],
            screenshot=session.model_frame(draft),
            previous_screenshot=state.previous_screenshot if reflecting else None,
            reflection_note=session.model_text(state.reflection_note) if state.reflection_note is not None else None,
            platform=self._opened_device().platform,  # the prompt says an iPhone is one
        )
        start = time.perf_counter()
        prefetch = None
        if self.settings.agent.prefetch_perception and (self._replay is None or not self._replay.replaying):
            # a model takes seconds: OCR the frame meanwhile (a fast answer cancels it)
            prefetch = self.locator.prefetch(draft.frame.pixels, delay_s=PREFETCH_DELAY_S,
                                             min_idle=self.settings.agent.prefetch_min_idle)
        try:
            reply = session.ask_model(lambda: self.planner.plan(request))
        finally:
            if prefetch is not None:
                prefetch.cancel()
        draft.model_ms += elapsed_ms(start)
        draft.took_reply(reply)
        session.count(draft, reply.usage)
        state.feedback = []
        state.reflection_note, state.previous_screenshot = None, None
        return reply

    def _alert_notes(self) -> list[str]:
        """The open system alert's text (an iPhone's; an Android phone's dialogs are in its frame)."""
        text = self._opened_device().alert_text()
        return [ALERT_NOTE.format(text=" ".join(text.split()))] if text else []

    def _parse(self, draft: StepDraft, reply: PlanReply) -> ParsedAction | None:
        """The reply's operation, read by the planner (each dialect reads its own);
        None, with the parser's feedback in the draft, when it names none."""
        try:
            action = self.planner.parse(reply)
        except OperationError as exc:
            draft.feedback = exc.message
            draft.error = exc.to_dict()
            return None
        draft.took_action(action)
        return action

    def _chooser(self, session: RunSession, draft: StepDraft) -> Callable[[Location], int | None]:
        planner = self.planner

        def ask(location: Location) -> int | None:
            index = planner.choose_candidate(session.instruction, location, session.model_frame(draft))
            usage = planner.last_choice_usage  # read on the thread that asked: the planner keeps it per thread
            if usage.calls:
                session.count(draft, usage)
            return index

        def choose(location: Location) -> int | None:
            start = time.perf_counter()
            try:
                draft.chosen_candidate = session.ask_model(lambda: ask(location))
            finally:
                draft.model_ms += elapsed_ms(start)
            return draft.chosen_candidate

        return choose

    def _failed(self, session: RunSession, draft: StepDraft) -> StepEnd:
        """A step that did nothing on the device: no settled frame, the next step
        captures anew, in case the screen moved on."""
        session.record(draft)
        state = self.state
        state.consecutive_failures += 1
        state.feedback = [draft.feedback] if draft.feedback else []
        limit = self.settings.agent.max_consecutive_failures
        if state.consecutive_failures < limit:
            return StepEnd()
        return StepEnd(
            result=session.finish(
                RunStatus.BUDGET_EXHAUSTED, f"{state.consecutive_failures} consecutive steps failed (limit {limit})"
            )
        )

    def _settle_and_record(self, session: RunSession, draft: StepDraft, action: ParsedAction) -> StepEnd:
        agent, state = self.settings.agent, self.state
        settled = session.settle(self._opened_device(), draft)
        if not settled.changed and agent.reflection:
            draft.reflection_note = NO_EFFECT_NOTE.format(action=(draft.action_text or action.raw).strip())
            state.reflection_note, state.previous_screenshot = draft.reflection_note, session.model_frame(draft)
        landed = self.guard().landed_in()
        if landed is not None:  # the app policy: the step stops here, with the reason
            draft.ok, draft.feedback = False, landed
            return self._failed(session, draft)
        session.record(draft)

        key = json.dumps(draft.operation, sort_keys=True, default=str)
        if settled.changed:
            state.identical_streak = 0
        elif key == state.last_action_key and state.identical_streak > 0:
            state.identical_streak += 1
        else:
            state.identical_streak = 1
        state.last_action_key = key
        if state.identical_streak < agent.max_identical_actions:
            return StepEnd(next_frame=settled.frame)
        reason = f"the same action was repeated {state.identical_streak} times without changing the screen"
        return StepEnd(settled.frame, session.finish(RunStatus.BUDGET_EXHAUSTED, reason))

    def _stop(self, session: RunSession, draft: StepDraft) -> StepEnd:
        """Stop, confirmed by a separate completion check when the settings ask for one."""
        agent, state = self.settings.agent, self.state
        if not agent.completion_check:
            session.record(draft)
            return StepEnd(draft.frame, session.finish(RunStatus.COMPLETED, "the model answered Stop"))
        start = time.perf_counter()
        history = [session.model_text(line) for line in history_lines(session.steps)]
        shown = session.model_frame(draft)
        verdict = session.ask_model(lambda: self.planner.check_completion(session.instruction, history, shown))
        draft.model_ms += elapsed_ms(start)
        session.count(draft, verdict.usage)
        draft.completion = {"done": bool(verdict.done), "reason": verdict.reason or ""}
        reason = draft.completion["reason"]
        if verdict.done:
            draft.feedback = "confirmed done"
            session.record(draft)
            said = "the model answered Stop and the completion check confirmed it"
            return StepEnd(draft.frame, session.finish(RunStatus.COMPLETED, f"{said}: {reason}".rstrip(": ")))
        draft.ok, draft.feedback = False, f"You answered Stop, but the task is not complete yet: {reason}"
        session.record(draft)
        state.rejected_stops += 1
        if state.rejected_stops > agent.max_completion_checks:
            return StepEnd(
                draft.frame,
                session.finish(
                    RunStatus.NOT_COMPLETED,
                    f"the model stopped {state.rejected_stops} times but the task is not done: {reason}",
                ),
            )
        state.feedback = [draft.feedback]
        return StepEnd()
