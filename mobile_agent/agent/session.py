"""What every run shares, planned or scripted: the run template (``carry_out``), its id,
trajectory folder, events, usage, the parts of a step both kinds of run take (capture,
act, settle, record) and the mapping of errors to a final status.

The template::

    body.open() ─▶ RunSession ─▶ for each step: capture ─▶ body.step(draft) ─▶ StepEnd
                                 ─▶ body.out_of_steps()      (or an error: finish_from_exception)

Before the first step a locked phone is unlocked where no credential is needed, or its
person asked to unlock it; without one the run ends there, saying the phone is locked.

May import: the standard library, ``mobile_agent`` (settings, errors, operations,
planner types), ``perception.types``, and this package's modules.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from mobile_agent.agent.background import start_in_background, wait_for
from mobile_agent.agent.causes import error_cause, error_dict
from mobile_agent.agent.mask import MASKED_NOTE, MaskedFrame, SecretMask, masking_live_frames, secret_values
from mobile_agent.agent.parts import TimedLocator, elapsed_ms
from mobile_agent.agent.people import NoPersonChannel, UserChannel, UserReply, UserRequest
from mobile_agent.agent.protected import look_again, tree_texts
from mobile_agent.agent.records import (
    AgentEvent,
    EventKind,
    RunResult,
    RunStatus,
    RunUsage,
    StepRecord,
    jsonable,
)
from mobile_agent.agent.redact import Redactor, redacted_logs
from mobile_agent.agent.screen_diff import screen_changed
from mobile_agent.agent.step import RunBody, Settled, StepDraft
from mobile_agent.agent.trajectory import TrajectoryWriter, run_header
from mobile_agent.errors import AppNotFoundError, MobileAgentError, OperationError, RunCancelled
from mobile_agent.locate import build_locator
from mobile_agent.operations import execute
from mobile_agent.operations.context import (
    AgentDevice,
    Chooser,
    Locator,
    OperationContext,
    Outcome,
    ScreenshotLike,
)
from mobile_agent.operations.keyguard import LOCKED_REASON, unlock
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.operations.secrets import SECRET_REFERENCE
from mobile_agent.planner.types import Usage
from mobile_agent.settings import Settings

__all__ = ["EventCallback", "RunSession", "carry_out", "error_cause"]

log = logging.getLogger(__name__)

EventCallback = Callable[[AgentEvent], None]
T = TypeVar("T")

_STEP_FIELDS = frozenset(f.name for f in fields(StepRecord))
_CANCEL_POLL_S = 0.05  # how often a model call's wait looks at the cancel event


def carry_out(
    settings: Settings,
    body: RunBody,
    *,
    instruction: str,
    mode: str,
    locator: TimedLocator,
    on_event: EventCallback | None,
    output_dir: Path | None,
    cancel: threading.Event | None,
    channel: UserChannel | None = None,
) -> RunResult:
    """The run template: open the body's parts, then step until the body ends the run
    or runs out of steps. Always returns a result and writes a trajectory; an error
    (opening the device included) ends the run ``error``, a cancel ``cancelled``."""
    opening_error: Exception | None = None
    device: AgentDevice | None = None
    try:
        device = body.open()
    except Exception as exc:  # recorded like any other run-ending error
        opening_error = exc
    session = RunSession(
        settings,
        instruction=instruction,
        mode=mode,
        device=body.device,
        on_event=on_event,
        output_dir=output_dir,
        cancel=cancel,
        locator=locator.untimed,
        channel=channel,
    )
    serial = device.serial if device is not None else None
    # the run's secrets never reach a log line, nor a live frame of its phone
    with redacted_logs(session.redact), masking_live_frames(serial, session.live_mask):
        if opening_error is not None or device is None:
            return session.finish_from_exception(opening_error or RuntimeError("the run has no device"))
        try:
            return session.run_steps(body, device)
        except BaseException as exc:
            if not isinstance(exc, Exception):  # KeyboardInterrupt & co.: write, then let it go
                session.finish_from_exception(exc)
                raise
            return session.finish_from_exception(exc)


class RunSession:
    """One run's bookkeeping: steps, usage, events, trajectory, final result."""

    def __init__(
        self,
        settings: Settings,
        *,
        instruction: str,
        mode: str,
        device: AgentDevice | None,
        on_event: EventCallback | None,
        output_dir: Path | None,
        cancel: threading.Event | None,
        locator: Callable[[], Locator] | None = None,
        channel: UserChannel | None = None,
    ) -> None:
        self.settings = settings
        self.channel: UserChannel = channel or NoPersonChannel("the run has no way to ask a person")
        self.device = device
        self._next_index = 0  # steps are numbered in the order they happen, the person's included
        self.instruction = instruction
        self.run_id = uuid.uuid4().hex[:12]
        self.cancel = cancel or threading.Event()
        self.on_event = on_event
        self.redact = Redactor.from_settings(settings)
        self.steps: list[StepRecord] = []
        self._last_frame: np.ndarray | None = None  # the newest frame seen
        self._last_step_frame: np.ndarray | None = None  # the frame of the newest step
        self._last_shot: str | None = None  # its file name
        self.usage = RunUsage()
        self.started_at = time.time()
        root = Path(output_dir) if output_dir is not None else Path(settings.agent.output_dir)
        # the one masking step of every image that leaves the run (``agent.mask``); it reads frames
        # through the run's locator, or this process's for the settings (a session given none)
        self.mask = SecretMask(secret_values(settings), locator if locator is not None else lambda: build_locator(settings))
        self.live_mask = self.mask.live  # what the kept frames hide, for the phone's live frames too
        header = run_header(
            settings, run_id=self.run_id, instruction=instruction, mode=mode, device=device, started_at=self.started_at
        )
        self.writer = TrajectoryWriter(
            root, self.run_id, self.redact, header, mask=self.mask.saved_copy if self.mask.active else None
        )
        self.trajectory_dir = self.writer.folder
        self._emit_now(
            EventKind.RUN_STARTED,
            None,
            {"instruction": instruction, "mode": mode, "trajectory_dir": str(self.trajectory_dir)},
        )

    # -- the steps -------------------------------------------------------------------

    def run_steps(self, body: RunBody, device: AgentDevice) -> RunResult:
        """Step ``body`` until it ends the run; the step in flight when an error ends
        the run is recorded with what it had so far."""
        frame: ScreenshotLike | None = None
        self.device = device
        stopped = self._through_keyguard(device)
        if stopped is not None:
            return stopped
        for _ in range(body.max_steps):  # the budget counts the run's own steps, not the person's
            index = self.take_index()
            self.check_cancel()
            self.step_started(index)
            draft = self.capture(device, frame, index)
            try:
                end = body.step(self, draft)
            except BaseException as exc:  # the run ends here: keep the reply, its tokens and what was done
                self.record_interrupted(draft, exc)
                raise
            if end.result is not None:
                return end.result
            frame = end.next_frame
        return body.out_of_steps(self)

    # -- events ----------------------------------------------------------------------

    def _emit_now(self, kind: EventKind, step: int | None, data: dict[str, Any]) -> None:
        if self.on_event is None:
            return
        event = AgentEvent(kind=kind.value, run_id=self.run_id, step=step, data=self.redact(jsonable(data)))
        try:
            self.on_event(event)
        except Exception:  # a broken listener must not break the run
            log.exception("on_event listener failed for %s", kind.value)

    def take_index(self) -> int:
        self._next_index += 1
        return self._next_index

    def step_started(self, index: int) -> None:
        self._emit_now(EventKind.STEP_STARTED, index, {"index": index})

    def check_cancel(self) -> None:
        if self.cancel.is_set():
            raise RunCancelled("the run was cancelled")

    def ask_model(self, call: Callable[[], T]) -> T:
        """``call()`` (a planner request) on a helper thread, waited for while watching
        the cancel event: a cancel ends the wait at once (``RunCancelled``) instead of
        after the model's answer, which may take a minute with retries. The abandoned
        request finishes in the background and its answer is dropped."""
        self.check_cancel()
        future = start_in_background(call, f"planner-{self.run_id}")
        return wait_for(future, every_s=_CANCEL_POLL_S, between=self.check_cancel)

    def count(self, draft: StepDraft, usage: Usage) -> None:
        """One model call of ``draft``'s step: into the run's usage and the step's."""
        self.usage = self.usage.plus(usage)
        draft.took_usage(usage)

    # -- the parts of a step that planned and scripted runs share -------------------

    def capture(self, device: AgentDevice, frame: ScreenshotLike | None, index: int) -> StepDraft:
        """Step ``index``'s draft on ``frame`` (the previous step's settled screen) when
        given, else on a fresh capture."""
        started_at = time.time()
        capture_ms = 0.0
        start = time.perf_counter()
        if frame is None:
            frame = device.screenshot()
        # a blank frame: captured again (bounded); still blank, the model is told why (a protected screen)
        frame, blank = look_again(device, frame, self.cancel)
        capture_ms = elapsed_ms(start)
        kept = self._kept(device, frame.pixels)
        self._last_frame = self._last_step_frame = kept
        self._last_shot = self.writer.save_screenshot(index, kept)
        draft = StepDraft(index=index, screenshot=self._last_shot, frame=frame, started_at=started_at, capture_ms=capture_ms)
        draft.kept_pixels = kept if kept is not frame.pixels else None
        draft.blank = blank
        return draft

    def _kept(self, device: AgentDevice, pixels: np.ndarray) -> np.ndarray:
        """The copy of a frame the run keeps and shows: once a secret was typed, masked now (the
        frame's OCR and the phone's fields: ``agent.mask``); before, the writer masks its copy."""
        if not self.mask.armed:
            return pixels
        return self.mask.masked(pixels, device)

    def model_frame(self, draft: StepDraft) -> ScreenshotLike:
        """The step's frame as the model sees it: masked where it shows a secret."""
        if draft.kept_pixels is None:
            return draft.frame
        return MaskedFrame(draft.kept_pixels, draft.frame.width, draft.frame.height)

    def model_notes(self, draft: StepDraft) -> list[str]:
        """What the model is told of its image: that a black box hides a secret it typed; that
        the screen is protected from capture, and what its accessibility tree says (``agent.protected``)."""
        notes = [MASKED_NOTE] if draft.kept_pixels is not None else []
        return [*notes, draft.blank.note] if draft.blank is not None else notes

    def model_text(self, text: str) -> str:
        """``text`` (history, feedback) as the model may read it: no secret, nor a part of one
        (the run's ``Redactor``: the key, the values, and the masking's text rule for their parts)."""
        return self.redact.text(text)

    def act(
        self, draft: StepDraft, action: ParsedAction, device: AgentDevice, locator: TimedLocator, choose: Chooser
    ) -> Outcome:
        """Carry out a parsed action on ``draft.frame``. What the model asked for but
        cannot be done (an operation's refusal, an unknown app) is an unsuccessful
        outcome, not an error. ``choose`` (several candidates) may ask the model: the
        time it adds to ``draft.model_ms`` is not the action's."""
        draft.took_action(action)
        ctx = OperationContext(
            device=device, locator=locator, screenshot=draft.frame, settings=self.settings, choose=choose, cancel=self.cancel
        )
        typed = action.typed_text
        if typed is not None and SECRET_REFERENCE.search(typed):
            tapped = next((s.tap_point for s in reversed(self.steps) if s.tap_point is not None), None)
            self.mask.arm(device, tapped, draft.frame.width)  # the fields hidden live before the first character shows
        # the screen moves now: the live view holds this masked frame until the next one is read
        self.mask.moving(draft.kept_pixels if draft.kept_pixels is not None else draft.frame.pixels)
        locator.take_ms()
        model_ms = draft.model_ms
        start = time.perf_counter()
        try:
            outcome = execute(action, ctx)
        except (OperationError, AppNotFoundError) as exc:
            outcome = Outcome(ok=False, feedback=exc.message)
        total_ms = elapsed_ms(start)
        draft.perception_ms = locator.take_ms()
        draft.action_ms = max(0.0, total_ms - draft.perception_ms - (draft.model_ms - model_ms))
        draft.took_outcome(outcome)
        return outcome

    def settle(self, device: AgentDevice, draft: StepDraft) -> Settled:
        """Wait for the screen to settle after the action and compare it with the step's frame."""
        agent = self.settings.agent
        start = time.perf_counter()
        after = device.wait_settled(
            agent.settle_timeout_s, agent.settle_interval_s, agent.settle_tolerance, cancel=self.cancel
        )
        settle_ms = elapsed_ms(start)
        self._last_frame = self._kept(device, after.pixels)  # a frame after the last step's: the run's end state
        changed, ratio = screen_changed(draft.frame.pixels, after.pixels, agent.change_threshold)
        if draft.blank is not None and draft.blank.texts and not changed:
            # a protected screen's pixels never change: its tree says whether the action did anything
            changed = tree_texts(device, after) != draft.blank.texts
            ratio = 1.0 if changed else 0.0
        settled = Settled(after, changed, round(ratio, 5), settle_ms)
        draft.took_settle(settled)
        return settled

    def record(self, draft: StepDraft) -> StepRecord:
        """Write a finished step (images queued, line written) and announce it."""
        step = draft.to_record()
        annotated = self.writer.save_annotated(step, draft.kept_pixels if draft.kept_pixels is not None else draft.frame.pixels)
        if annotated is not None:
            step = replace(step, annotated=annotated)
        self.steps.append(step)
        data = self.writer.write_step(step)
        folder = self.trajectory_dir
        payload = {
            "screenshot_path": str(folder / step.screenshot),
            "annotated_path": str(folder / step.annotated) if step.annotated else None,
            "observation": data.get("observation"),
            "thought": data.get("thought"),
            "action": data.get("action_text"),
            "operation": data.get("operation"),
            "ok": step.ok,
            "feedback": data.get("feedback"),
            "screen_changed": step.screen_changed,
            "timings": step.timings.to_dict(),
            "usage": step.usage,
            "by": step.by,
            "asked_user": step.asked_user,
        }
        # after the images: a listener may fetch the screenshot as soon as it hears of it
        self.writer.after_files(self._emit_now, EventKind.STEP_FINISHED, step.index, payload)
        return step

    def record_interrupted(self, draft: StepDraft, exc: BaseException) -> None:
        """The step in flight when ``exc`` ended the run, with what it had so far (the
        model's reply and tokens, the operation, what was done) and the error, so that
        none of it is lost. Nothing when that step is already recorded, or had
        nothing yet (no reply, no operation)."""
        if not draft.begun or (self.steps and self.steps[-1].index == draft.index):
            return
        error = error_dict(exc)
        message = error.get("message") or type(exc).__name__
        draft.feedback = f"the run ended during this step ({error['cause']}): {message}"
        draft.error = error
        try:
            self.record(draft)
        except Exception:  # never hide the error that ended the run
            log.exception("could not record step %s of run %s", draft.index, self.run_id)

    def _through_keyguard(self, device: AgentDevice) -> RunResult | None:
        """Before the first step: a phone behind its lock screen is unlocked where no
        credential is needed (``operations.keyguard``); with one, the run's person is asked
        to unlock it and the run goes on once they have, else it ends here saying so."""
        info = device.screen_info()
        size = (int(info.width), int(info.height))
        outcome = unlock(device, self.settings, size, self.cancel)
        if outcome is None:
            return None
        if outcome.question is None:  # the screen stays dark: nobody can help from here
            return self.finish(RunStatus.NOT_COMPLETED, outcome.stop_reason or outcome.feedback)
        request = UserRequest("question", outcome.question, run_id=self.run_id, reason="the phone is locked",
                              timeout_s=self.settings.agent.user_timeout_s)
        reply = self.ask_user(request)
        if reply is not None and reply.kind != "deny" and unlock(device, self.settings, size, self.cancel) is None:
            return None
        why = self.nobody_reason() if reply is None else "it is still locked"
        return self.finish(RunStatus.NOT_COMPLETED, f"{LOCKED_REASON}; {why}")

    # -- the person behind the run -------------------------------------------------

    def ask_user(self, request: UserRequest) -> UserReply | None:
        """Ask the run's person and wait (``agent.people``): the reply, or None when none
        came in time. Touches the person makes on the phone meanwhile (a question only)
        are carried out and recorded as their steps; the wait goes on after each."""
        self._emit_now(EventKind.WAITING_FOR_USER, request.step, request.to_dict())
        self.live_mask.hold(None)  # the person watches the phone live while the run waits (its boxes still apply)
        deadline = time.monotonic() + request.timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                reply = None
                break
            reply = self.channel.ask(replace(request, timeout_s=left), self.cancel)
            if reply is None or reply.kind != "touch":
                break
            if request.kind == "question" and self.device is not None:
                self.person_touch(self.device, reply)
        self._emit_now(
            EventKind.USER_REPLIED, request.step, {"request": request.kind, "reply": reply.to_dict() if reply else None}
        )
        return reply

    def nobody_reason(self) -> str:
        """Why no reply came: the channel's own reason (nobody to ask), else the time."""
        if self.channel.reason:
            return self.channel.reason
        return f"no reply within {self.settings.agent.user_timeout_s:g} s"

    def person_touch(self, device: AgentDevice, reply: UserReply) -> StepRecord:
        """A tap or swipe the person made on the live view: done on the phone, recorded as
        their step (``by="person"``)."""
        touch = reply.touch
        draft = self.capture(device, None, self.take_index())
        draft.by, draft.begun = "person", True
        if {"x1", "y1", "x2", "y2"} <= touch.keys():
            stroke = (int(touch["x1"]), int(touch["y1"]), int(touch["x2"]), int(touch["y2"]))
            device.swipe(*stroke, duration_ms=300)
            draft.action_text = "Swipe points ({}, {}, {}, {})".format(*stroke)
            draft.operation = {"name": "swipe_points", "params": dict(zip(("x1", "y1", "x2", "y2"), stroke, strict=True))}
            draft.swipe = stroke
        else:
            point = (int(touch.get("x", 0)), int(touch.get("y", 0)))
            device.tap(*point)
            draft.action_text = f"Tap point ({point[0]}, {point[1]})"
            draft.operation = {"name": "tap_point", "params": {"x": point[0], "y": point[1]}}
            draft.tap_point = point
        draft.ok, draft.feedback = True, "the user did this on the phone"
        self.settle(device, draft)
        return self.record(draft)

    def person_reply(self, device: AgentDevice, request: UserRequest, reply: UserReply) -> StepRecord:
        """The person's reply to a question, as their step on the screen it left."""
        draft = self.capture(device, None, self.take_index())
        draft.by, draft.begun, draft.ok = "person", True, True
        if reply.kind == "done":
            draft.action_text = f"Done on the phone ({reply.text})" if reply.text else "Done on the phone"
            draft.feedback = "the user says they did it on the phone" + (f": {reply.text}" if reply.text else "")
        elif reply.kind == "deny":
            draft.action_text = f"Decline ({reply.text})" if reply.text else "Decline"
            draft.feedback = "the user declined" + (f": {reply.text}" if reply.text else "")
        else:
            draft.action_text = f"Answer ({reply.text})"
            draft.feedback = f"the user answered: {reply.text}"
        draft.operation = {"name": "user_reply", "params": reply.to_dict()}
        draft.asked_user = {"kind": request.kind, "question": request.question, "reason": request.reason,
                            "reply": reply.to_dict()}
        return self.record(draft)

    # -- the end ---------------------------------------------------------------------

    def finish(self, status: RunStatus, reason: str, exc: BaseException | None = None) -> RunResult:
        error = error_dict(exc) if exc is not None and status is RunStatus.ERROR else None
        final = None
        if self._last_frame is not None and self._last_frame is not self._last_step_frame:
            final = self.writer.save_final(self._last_frame)
        elif self._last_shot is not None and all(s.screenshot != self._last_shot for s in self.steps):
            final = self._last_shot  # the run ended before this frame's step had a record
        result = RunResult(
            status=status,
            error=self.redact(error),
            steps=list(self.steps),
            trajectory_dir=self.trajectory_dir,
            usage=self.usage,
            started_at=self.started_at,
            finished_at=time.time(),
            run_id=self.run_id,
            instruction=self.instruction,
            reason=self.redact.text(reason),
            final_screenshot=final,
        )
        self.writer.finish(result)
        self._emit_now(EventKind.RUN_FINISHED, None, result.to_dict())
        return result

    def finish_from_exception(self, exc: BaseException) -> RunResult:
        """The run's end when ``exc`` escaped the step loop."""
        if isinstance(exc, RunCancelled):
            return self.finish(RunStatus.CANCELLED, "cancelled on request")
        if isinstance(exc, KeyboardInterrupt):
            return self.finish(RunStatus.CANCELLED, "interrupted (KeyboardInterrupt)")
        if not isinstance(exc, MobileAgentError):
            log.exception("run %s ended by an unexpected error", self.run_id, exc_info=exc)
        message = exc.message if isinstance(exc, MobileAgentError) else f"{type(exc).__name__}: {exc}"
        return self.finish(RunStatus.ERROR, f"{error_cause(exc)}: {message}", exc)
