"""Running the Mobile-Eval suite on one or more phones.

For each task: reset the phone (``PhoneEnvironment``), read the state before, run the agent
(or the task's reference solution through scripted mode), read the state after, judge,
and append one ``TaskResult`` line to ``results.jsonl`` at once. Tasks go to the phones
through a queue, one task per phone at a time. The results file makes a suite resumable:
task ids already in it are skipped. One task's crash is a failed record and the suite goes
on; a phone that is lost stops taking tasks, and the others carry on.

Judging: a phone with readable state is judged by its state (validator) and its steps
against the reference actions (``matching``); otherwise by the MLLM judge when asked,
else the record is ``pending`` until ``mobile-agent eval annotate`` judges the run.

May import: mobile_agent (public API: settings, agent, operations, errors), mobile_eval.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from eval.mobile_eval.app_validators import derive
from eval.mobile_eval.effects import StepEffects
from eval.mobile_eval.environment import PhoneEnvironment, environment_for
from eval.mobile_eval.errors import JudgeError
from eval.mobile_eval.judges import MllmJudge, result_from_annotation
from eval.mobile_eval.matching import STOP_NAMES, ActionRef, judge_steps, parse_reference
from eval.mobile_eval.records import ResultsFile, TaskResult
from eval.mobile_eval.schema import EvalTask
from eval.mobile_eval.validators import MissingPath, validate
from mobile_agent.errors import DeviceError, MobileAgentError

if TYPE_CHECKING:
    from mobile_agent.operations import AgentDevice, Locator
from mobile_agent.settings import Settings

__all__ = ["EvalConfig", "SuiteRunner", "parse_action_ref"]

log = logging.getLogger(__name__)

Mode = Literal["agent", "reference"]


def _subclass_names(cls: type) -> set[str]:
    names = {cls.__name__}
    subclass: type
    for subclass in cls.__subclasses__():
        names |= _subclass_names(subclass)
    return names


# A run that ended on one of these lost its phone: the worker stops taking tasks.
_DEVICE_ERRORS = _subclass_names(DeviceError)


def parse_action_ref(text: str) -> ActionRef:
    """A reference action line, parsed by the operations' own parser."""
    from mobile_agent.operations import parse_action

    parsed = parse_action(f"Action: {text}")
    return ActionRef(parsed.name, parsed.params.model_dump(), parsed.text)


@dataclass
class EvalConfig:
    output_dir: Path
    mode: Mode = "agent"
    label: str = ""
    seed: int = 0
    params: dict[str, str] = field(default_factory=dict)  # e.g. {"address": "..."}
    judge: Literal["auto", "mllm"] = "auto"  # auto: state when readable, else pending (annotate)
    max_steps: int | None = None  # overrides each task's budget


class SuiteRunner:
    """Runs tasks on phones in parallel; resumable through the results file."""

    def __init__(
        self,
        settings: Settings,
        devices: Sequence[Any],
        config: EvalConfig,
        *,
        locator: Locator | None = None,
        planner_factory: Callable[[], Any] | None = None,
        judge: MllmJudge | None = None,
        on_result: Callable[[TaskResult], None] | None = None,
    ) -> None:
        if not devices:
            raise ValueError("at least one device")
        self.settings = settings
        self.devices = list(devices)
        self.config = config
        self.locator = locator
        self.planner_factory = planner_factory
        if judge is None and config.judge == "mllm":
            judge = MllmJudge(settings.planner)  # one judge (one HTTP client) for the suite, connected on first use
        self.judge = judge
        self.on_result = on_result
        self.results = ResultsFile(Path(config.output_dir) / "results.jsonl")
        self.cancel = threading.Event()

    @property
    def trajectories_dir(self) -> Path:
        return Path(self.config.output_dir) / "trajectories"

    def run(self, tasks: Sequence[EvalTask], pinned: Mapping[str, str] | None = None) -> list[TaskResult]:
        """Run the tasks not yet in the results file; returns every record of the file.
        ``pinned`` (task id -> serial) keeps a task to one phone (the data engine's
        per-phone variants); the others go to whichever phone is free."""
        done = self.results.done_ids()
        shared: queue.Queue[EvalTask] = queue.Queue()
        own: dict[str, queue.Queue[EvalTask]] = {d.serial: queue.Queue() for d in self.devices}
        for task in tasks:
            if task.id in done:
                continue
            serial = (pinned or {}).get(task.id)
            if serial is not None and serial not in own:
                raise ValueError(f"task {task.id} is pinned to {serial}, which is not one of the suite's phones")
            (own[serial] if serial is not None else shared).put(task)
        workers = [threading.Thread(target=self._work, args=(device, own[device.serial], shared),
                                    name=f"eval-{device.serial}", daemon=True)  # fmt: skip
                   for device in self.devices]
        for worker in workers:
            worker.start()
        try:
            for worker in workers:
                worker.join()
        except KeyboardInterrupt:
            # Let the running tasks stop at their next step; their records are not written,
            # so that a resumed suite runs them again.
            self.cancel.set()
            for worker in workers:
                worker.join(timeout=30)
            raise
        return self.results.records()

    def _work(self, device: Any, own: queue.Queue[EvalTask], todo: queue.Queue[EvalTask]) -> None:
        environment = environment_for(device, self.settings.ios.devices)
        while not self.cancel.is_set():
            try:
                task = own.get_nowait() if not own.empty() else todo.get_nowait()
            except queue.Empty:
                return
            record, device_gone = self.run_task(task, environment)
            if self.cancel.is_set() and record.status in ("cancelled", "crashed"):
                return  # interrupted, not failed: left for the resumed suite
            self.results.append(record)
            if self.on_result is not None:
                self.on_result(record)
            if device_gone:
                log.warning("%s is lost; it takes no more tasks", device.serial)
                return

    # -- one task ----------------------------------------------------------------------------

    def run_task(self, task: EvalTask, environment: PhoneEnvironment) -> tuple[TaskResult, bool]:
        """One task, always a record; the flag says the phone is gone."""
        started = time.monotonic()
        try:
            return self._run_task(task, environment, started), False
        except Exception as exc:  # one task's crash is a failed record; the suite goes on
            log.exception("task %s crashed on %s", task.id, environment.serial)
            error = exc.to_dict() if isinstance(exc, MobileAgentError) else {"type": type(exc).__name__, "message": str(exc)}
            record = TaskResult(
                task_id=task.id, app=task.app, level=task.level, label=self.config.label,
                success=False, judged_by="harness",
                agent_steps=0, human_steps=task.human_steps, cr=0.0, status="crashed", error=error,
                device=environment.serial,
                reasons=[f"crashed: {error.get('message', '')}"[:300]],
                duration_s=round(time.monotonic() - started, 3), finished_at=datetime.now(timezone.utc),
            )
            return record, isinstance(exc, DeviceError)

    def _run_task(self, task: EvalTask, environment: PhoneEnvironment, started: float) -> TaskResult:
        environment.reset(seed=self.config.seed if task.seed is None else task.seed, apps=task.apps)
        stateful = environment.stateful
        if task.setup:
            environment.set_up(task.setup)
        before = environment.read_state() if stateful else None
        values = {k: v for k, v in self.config.params.items() if k in task.params}
        if task.derived:
            try:
                values.update(derive(task.derived, before) if before is not None else dict.fromkeys(task.derived, "?"))
            except MissingPath as exc:
                return TaskResult(
                    task_id=task.id, app=task.app, level=task.level, label=self.config.label, success=False,
                    judged_by="state", agent_steps=0, human_steps=task.human_steps, cr=0.0, status="not_started",
                    device=environment.serial,
                    reasons=[f"✗ the phone's state has no {exc.path!r} (is the app implemented?)"],
                    duration_s=round(time.monotonic() - started, 3), finished_at=datetime.now(timezone.utc),
                )
        instruction = task.render(values)
        # nobody sits by a benchmark: its tasks' installs and sends on the simulated phone are pre-approved
        settings = self.settings.with_overrides(
            {"agent.max_steps": self.config.max_steps or task.step_budget, "agent.safety.confirmations": "approve"}
        )
        output_dir = self.trajectories_dir / task.id
        if self.config.mode == "reference":
            from mobile_agent.agent import run_script

            run = run_script(settings, task.reference_script(values), device=cast("AgentDevice", environment.device),
                             locator=self.locator, output_dir=output_dir, instruction=instruction, cancel=self.cancel)
        else:
            from mobile_agent.agent import Agent

            planner = self.planner_factory() if self.planner_factory is not None else None
            agent = Agent(settings, device=cast("AgentDevice", environment.device), planner=planner, locator=self.locator)
            run = agent.run(instruction, cancel=self.cancel, output_dir=output_dir)
        if run.status.value == "error" and run.error and run.error.get("type") in _DEVICE_ERRORS:
            raise DeviceError(f"device failed during {task.id}: {run.error.get('message', '')}",
                              serial=environment.serial)
        extra = {
            "label": self.config.label, "instruction": instruction, "status": run.status.value,
            "error": run.error, "duration_s": round(time.monotonic() - started, 3), "device": environment.serial,
            "prompt_tokens": run.usage.prompt_tokens, "completion_tokens": run.usage.completion_tokens,
            "cost_usd": round(run.usage.cost_usd, 6), "finished_at": datetime.now(timezone.utc),
        }
        if not stateful:
            return self._judge_without_state(task, run, instruction, extra)
        after = environment.read_state()
        assert before is not None  # read above whenever the phone keeps state
        verdict = validate(task.validator.filled(task.resolved_params(values)), before, after)
        reference = parse_reference(task.reference_lines(values), parse_action_ref)
        effects = StepEffects(Path(run.trajectory_dir), self._judging_locator)
        scores = judge_steps([effects.action_ref(s) for s in run.steps], reference, [s.ok for s in run.steps])
        return TaskResult(
            task_id=task.id, app=task.app, level=task.level, success=verdict.success, judged_by="state",
            agent_steps=scores.agent_steps, human_steps=task.human_steps, ps=scores.ps,
            cr=scores.cr(verdict.success), sr_act=scores.sr_act, sr_args=scores.sr_args, sr=scores.sr,
            steps=scores.steps, reasons=list(verdict.reasons), trajectory_dir=str(run.trajectory_dir),
            replay=str(run.report_path), **extra,
        )

    def _judging_locator(self) -> Locator:
        """The perception that locates a reference target on a step's screenshot (the runs'
        own, or the settings' built on first need: ``effects``)."""
        if self.locator is None:
            from mobile_agent.locate import build_locator

            self.locator = build_locator(self.settings)
        return self.locator

    def _judge_without_state(self, task: EvalTask, run: Any, instruction: str, extra: dict[str, Any]) -> TaskResult:
        why = []
        if self.config.judge == "mllm" and self.judge is not None:
            try:
                annotation = self.judge.judge_run(run.trajectory_dir, instruction=instruction,
                                             human_steps=task.human_steps, task_id=task.id)
                return result_from_annotation(task, run.trajectory_dir, annotation, **extra)
            except JudgeError as exc:  # the run is fine; a person can still judge it
                log.warning("the MLLM judge failed on %s: %s", task.id, exc.message)
                why.append(f"the MLLM judge failed: {exc.message}"[:300])
        steps = [s for s in run.steps if s.operation_name not in STOP_NAMES or s is not run.steps[-1]]
        return TaskResult(
            task_id=task.id, app=task.app, level=task.level, success=False, judged_by="pending",
            agent_steps=len(steps), human_steps=task.human_steps, cr=0.0,
            reasons=why + [f"awaiting a judge: mobile-agent eval annotate {run.trajectory_dir}"],
            trajectory_dir=str(run.trajectory_dir), replay=str(run.report_path), **extra,
        )
