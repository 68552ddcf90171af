"""What every run shares, planned or scripted: its id, trajectory folder, events, usage,
the locator wrapper that times perception, and the mapping of errors to a final status.

May import: the standard library, ``mobile_agent`` (settings, errors, device, locate),
``perception.errors``, and this package's modules.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from mobile_agent.agent.mask import ScreenSecretMasker
from mobile_agent.agent.records import (
    AgentEvent,
    EventKind,
    RunResult,
    RunStatus,
    RunUsage,
    StepRecord,
    StepTimings,
)
from mobile_agent.agent.redact import Redactor
from mobile_agent.agent.screen_diff import screen_changed
from mobile_agent.agent.trajectory import TrajectoryWriter
from mobile_agent.errors import (
    AdbKeyboardMissingError,
    AppNotFoundError,
    ConfigError,
    DeviceError,
    DeviceLostError,
    MobileAgentError,
    OperationError,
    PerceptionError,
    PlannerError,
    PlannerUnreachableError,
    RunCancelled,
)
from mobile_agent.locate import call_perception
from mobile_agent.settings import Settings
from perception.types import Location

__all__ = [
    "Acted",
    "EventCallback",
    "RunSession",
    "Settled",
    "TimedLocator",
    "build_locator",
    "elapsed_ms",
    "error_cause",
    "open_run_device",
]

log = logging.getLogger(__name__)

EventCallback = Callable[[AgentEvent], None]

_STEP_FIELDS = frozenset(f.name for f in fields(StepRecord))
_UNAVAILABLE_STATUS = frozenset({408, 425, 429})  # with 5xx: the endpoint did not serve us, retries spent
_CANCEL_POLL_S = 0.05  # how often a model call's wait looks at the cancel event


def elapsed_ms(start: float) -> float:
    """Milliseconds since ``start`` (a ``time.perf_counter()`` value)."""
    return (time.perf_counter() - start) * 1000.0


def build_locator(settings: Settings) -> Any:
    """The perception locator of ``settings`` (one per configuration per process)."""
    from mobile_agent.locate import build_locator as build

    return build(settings)


@dataclass(frozen=True)
class Acted:
    """An operation carried out (or refused as a model mistake), with its timings."""

    outcome: Any  # operations.Outcome
    total_ms: float  # the whole call, perception included
    perception_ms: float


@dataclass(frozen=True)
class Settled:
    """The screen after an action had settled, compared with the one before it."""

    frame: Any  # device.Screenshot
    changed: bool
    ratio: float
    settle_ms: float


def error_cause(exc: BaseException) -> str:
    """A stable, machine-readable name for why a run ended with an error.

    An endpoint that kept answering 408, 425, 429 or 5xx through every retry is as
    good as unreachable for the run: ``planner_unreachable``, like refused connections
    and timeouts; the error keeps its ``status_code`` and ``attempts``. Other HTTP
    errors (401, 404: fix the settings) are ``planner``.
    """
    if isinstance(exc, PlannerError) and not isinstance(exc, PlannerUnreachableError):
        status = exc.fields.get("status_code")
        if isinstance(status, int) and (status in _UNAVAILABLE_STATUS or status >= 500):
            return "planner_unreachable"
    if isinstance(exc, (RunCancelled, KeyboardInterrupt)):
        return "cancelled"
    ordered: list[tuple[type[BaseException], str]] = [
        (DeviceLostError, "device_lost"),
        (AdbKeyboardMissingError, "adb_keyboard_missing"),
        (DeviceError, "device"),
        (PlannerUnreachableError, "planner_unreachable"),
        (PlannerError, "planner"),
        (PerceptionError, "perception"),
        (ConfigError, "config"),
        (MobileAgentError, "agent"),
    ]
    for kind, cause in ordered:
        if isinstance(exc, kind):
            return cause
    return "internal"


def _error_dict(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, MobileAgentError):
        data = exc.to_dict()
    else:
        data = {"type": type(exc).__name__, "message": str(exc)}
    data["cause"] = error_cause(exc)
    return _jsonable(data)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def open_run_device(settings: Settings) -> Any:
    """The device of ``settings.adb`` (``open_device`` connects ``adb.connect`` first)."""
    from mobile_agent.device import open_device

    return open_device(settings.adb, settings.adb.serial)


class TimedLocator:
    """The run's locator, built on first use and timed: perception runs on demand,
    inside operations, so its time is measured here rather than around them."""

    def __init__(self, locator: Any | None, factory: Callable[[], Any]) -> None:
        self._locator = locator
        self._factory = factory
        self._lock = threading.Lock()
        self._elapsed = 0.0

    def _get(self) -> Any:
        with self._lock:
            if self._locator is None:
                self._locator = self._factory()
            return self._locator

    def _timed(self, method: str, *args: Any) -> Location:
        start = time.perf_counter()
        try:
            # any locator (a bare perception.Perception too) raises the agent's errors only
            return call_perception(lambda: getattr(self._get(), method)(*args))
        finally:
            self._elapsed += time.perf_counter() - start

    def find_text(self, image: np.ndarray, text: str) -> Location:
        return self._timed("find_text", image, text)

    def find_icon(self, image: np.ndarray, description: str, position: str | None) -> Location:
        return self._timed("find_icon", image, description, position)

    def untimed(self) -> Any:
        """The locator itself (for work outside the steps' timings, such as masking)."""
        return self._get()

    def take_ms(self) -> float:
        """Milliseconds spent since the last call."""
        elapsed, self._elapsed = self._elapsed, 0.0
        return elapsed * 1000.0


class RunSession:
    """One run's bookkeeping: steps, usage, events, trajectory, final result."""

    def __init__(
        self,
        settings: Settings,
        *,
        instruction: str,
        mode: str,
        device: Any | None,
        on_event: EventCallback | None,
        output_dir: Path | None,
        cancel: threading.Event | None,
        locator: Callable[[], Any] | None = None,
    ) -> None:
        self.settings = settings
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
        secrets = [x.get_secret_value() for x in settings.agent.secrets]
        masker = ScreenSecretMasker(secrets, locator) if locator is not None else None
        self.writer = TrajectoryWriter(
            root,
            self.run_id,
            self.redact,
            self._header(mode, device),
            mask=masker if masker is not None and masker.active else None,
        )
        self.trajectory_dir = self.writer.folder
        self._emit_now(
            EventKind.RUN_STARTED,
            None,
            {"instruction": instruction, "mode": mode, "trajectory_dir": str(self.trajectory_dir)},
        )

    def _header(self, mode: str, device: Any | None) -> dict[str, Any]:
        planner = self.settings.planner
        agent = self.settings.agent
        info: dict[str, Any] = {"serial": getattr(device, "serial", None) or self.settings.adb.serial}
        if device is not None:
            try:
                screen = device.screen_info()
                info.update(width=screen.width, height=screen.height, density=getattr(screen, "density", None))
            except DeviceError as exc:  # the first step will meet the same error and end the run
                info["error"] = exc.message
        return {
            "run_id": self.run_id,
            "instruction": self.instruction,
            "mode": mode,
            "model": planner.model if mode == "planned" else None,
            "base_url": planner.base_url if mode == "planned" else None,
            "device": info,
            "started_at": self.started_at,
            "settings": {
                "agent": {
                    "max_steps": agent.max_steps,
                    "reflection": agent.reflection,
                    "completion_check": agent.completion_check,
                    "max_completion_checks": agent.max_completion_checks,
                    "max_identical_actions": agent.max_identical_actions,
                    "max_consecutive_failures": agent.max_consecutive_failures,
                    "change_threshold": agent.change_threshold,
                },
                "planner": {
                    "model": planner.model,
                    "temperature": planner.temperature,
                    "max_tokens": planner.max_tokens,
                    "image_long_side": planner.image_long_side,
                },
                "perception": {
                    "ocr_backend": self.settings.perception.ocr_backend,
                    "detector": self.settings.perception.detector,
                    "ranker": self.settings.perception.ranker,
                },
            },
        }

    # -- events ----------------------------------------------------------------------

    def _emit_now(self, kind: EventKind, step: int | None, data: dict[str, Any]) -> None:
        if self.on_event is None:
            return
        event = AgentEvent(kind=kind.value, run_id=self.run_id, step=step, data=self.redact(_jsonable(data)))
        try:
            self.on_event(event)
        except Exception:  # a broken listener must not break the run
            log.exception("on_event listener failed for %s", kind.value)

    def step_started(self, index: int) -> None:
        self._emit_now(EventKind.STEP_STARTED, index, {"index": index})

    def check_cancel(self) -> None:
        if self.cancel.is_set():
            raise RunCancelled("the run was cancelled")

    def ask_model(self, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)`` (a planner request) on a helper thread, waited for while
        watching the cancel event: a cancel ends the wait at once (``RunCancelled``)
        instead of after the model's answer, which may take a minute with retries. The
        abandoned request finishes in the background and its answer is dropped."""
        self.check_cancel()
        future: Future[Any] = Future()

        def work() -> None:
            future.set_running_or_notify_cancel()
            try:
                future.set_result(call(*args))
            except BaseException as exc:  # handed to the waiting step loop
                future.set_exception(exc)

        # a daemon thread, not an executor: interpreter exit joins executor threads, so
        # an abandoned request would hold the process (the CLI after Ctrl-C) until it ends
        threading.Thread(target=work, name=f"planner-{self.run_id}", daemon=True).start()
        while not wait([future], timeout=_CANCEL_POLL_S).done:
            self.check_cancel()
        return future.result()

    # -- steps -----------------------------------------------------------------------

    def add_usage(self, usage: Any, step_usage: dict[str, Any] | None = None) -> dict[str, Any]:
        """Count one model call; returns the step record's usage: ``step_usage`` (the
        step's calls so far) plus this call's."""
        total = dict(step_usage or {})
        if usage is None:
            return total
        self.usage = self.usage.plus(usage)
        call = {
            "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
            "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
            "cost_usd": float(getattr(usage, "cost_usd", 0.0) or 0.0),
        }
        return {k: total.get(k, 0) + v for k, v in call.items()}

    def record(self, step: StepRecord, pixels: np.ndarray) -> StepRecord:
        """Write a finished step (images queued, line written) and announce it."""
        annotated = self.writer.save_annotated(step, pixels)
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
        }
        # after the images: a listener may fetch the screenshot as soon as it hears of it
        self.writer.after_files(self._emit_now, EventKind.STEP_FINISHED, step.index, payload)
        return step

    def record_interrupted(
        self, partial: dict[str, Any], pixels: np.ndarray, exc: BaseException, timings: StepTimings
    ) -> None:
        """The step in flight when ``exc`` ended the run, with what it had so far (the
        model's reply and tokens, the operation, what was done) and the error, so that
        none of it is lost. Nothing when that step is already recorded."""
        index = partial["index"]
        if self.steps and self.steps[-1].index == index:
            return
        error = _error_dict(exc)
        values = {k: v for k, v in partial.items() if k in _STEP_FIELDS}
        values["timings"] = timings
        message = error.get("message") or type(exc).__name__
        values["feedback"] = f"the run ended during this step ({error['cause']}): {message}"
        try:
            self.record(StepRecord(**values, error=error), pixels)
        except Exception:  # never hide the error that ended the run
            log.exception("could not record step %s of run %s", index, self.run_id)

    def screenshot_name(self, index: int, pixels: np.ndarray) -> str:
        self._last_frame = self._last_step_frame = pixels
        self._last_shot = self.writer.save_screenshot(index, pixels)
        return self._last_shot

    def note_frame(self, pixels: np.ndarray) -> None:
        """A frame seen after the last step's (a settled screen): the run's end state."""
        self._last_frame = pixels

    # -- the parts of a step that planned and scripted runs share -------------------

    def capture(self, device: Any, frame: Any | None, index: int) -> tuple[Any, str, float]:
        """Step ``index``'s frame: ``frame`` (the previous step's settled screen) when
        given, else a fresh capture. Returns (frame, its file name, capture ms)."""
        capture_ms = 0.0
        if frame is None:
            start = time.perf_counter()
            frame = device.screenshot()
            capture_ms = elapsed_ms(start)
        return frame, self.screenshot_name(index, frame.pixels), capture_ms

    def act(self, action: Any, ctx: Any, locator: TimedLocator) -> Acted:
        """Carry out a parsed action. What the model asked for but cannot be done (an
        operation's refusal, an unknown app) is an unsuccessful outcome, not an error."""
        from mobile_agent.operations import Outcome, execute

        locator.take_ms()
        start = time.perf_counter()
        try:
            outcome = execute(action, ctx)
        except (OperationError, AppNotFoundError) as exc:
            outcome = Outcome(ok=False, feedback=exc.message)
        return Acted(outcome, elapsed_ms(start), locator.take_ms())

    def settle(self, device: Any, before: Any) -> Settled:
        """Wait for the screen to settle after an action and compare it with ``before``."""
        agent = self.settings.agent
        start = time.perf_counter()
        after = device.wait_settled(
            agent.settle_timeout_s, agent.settle_interval_s, agent.settle_tolerance, cancel=self.cancel
        )
        settle_ms = elapsed_ms(start)
        self.note_frame(after.pixels)
        changed, ratio = screen_changed(before.pixels, after.pixels, agent.change_threshold)
        return Settled(after, changed, round(ratio, 5), settle_ms)

    # -- the end ---------------------------------------------------------------------

    def finish(self, status: RunStatus, reason: str, exc: BaseException | None = None) -> RunResult:
        error = _error_dict(exc) if exc is not None and status is RunStatus.ERROR else None
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
