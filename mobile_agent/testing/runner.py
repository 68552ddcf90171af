"""Running flows: one trajectory and report per flow, a suite summary.

``FlowRunner(settings, device).run(flow) -> FlowResult``. A flow's steps are the steps of
one trajectory (``RunSession`` with ``mode = "flow"``, each step ``by = "flow"``): an
assertion is recorded on the screen it judged, with its verdict as the feedback; a
``run:`` or ``do:`` step is a run of its own (its own trajectory, a sibling folder) that
the flow's step links (``linked_run``), as an MCP session links its runs. The first step
that fails ends the flow (``failed``); a lost phone or an unreachable model ends it
``error``; the rest are not run.

The plan cache: ``run:`` steps run with the cache on (``cache.enabled``), so a re-run of a
flow replays what its last green run learned and the step says so ("replayed N of M
steps from the plan cache, no model call"); a flow that fails forgets the plans its runs
taught the cache, so only green flows are ever replayed.

``--record``: ``video.ScreenRecorder`` records the flow; ``video.mp4`` lies in the
trajectory folder, linked from its report.html, the JUnit output and ``FlowResult``.

May import: ``mobile_agent`` (agent, device, replay, settings, errors), this package.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mobile_agent.agent import RunStatus, UserChannel, parse_script, run_script, script_app_platforms
from mobile_agent.agent.mask import SecretMask, secret_values
from mobile_agent.agent.parts import run_locator
from mobile_agent.agent.records import AgentEvent, EventKind, RunResult
from mobile_agent.agent.report import VIDEO_NAME
from mobile_agent.agent.session import EventCallback, RunSession
from mobile_agent.apps.platforms import PinnedApps, app_id_platform
from mobile_agent.device import Platform
from mobile_agent.errors import MobileAgentError, OperationError, RunCancelled
from mobile_agent.operations.context import AgentDevice
from mobile_agent.replay import PlanStore, default_cache_url
from mobile_agent.settings import Settings
from mobile_agent.testing.agent import Agent, CheckFailedError
from mobile_agent.testing.flows import (
    AssertIconStep,
    AssertNotVisibleStep,
    AssertStep,
    AssertVisibleStep,
    DoStep,
    ExtractStep,
    Flow,
    FlowError,
    FlowStep,
    IconSpec,
    RunStep,
    WaitForStep,
    WaitForTextStep,
    fields_model,
    substitute,
)
from mobile_agent.testing.judge import AnswerSchema, ExtractionError
from mobile_agent.testing.phone import Phone, ScreenAssertionError
from mobile_agent.testing.video import ScreenRecorder

__all__ = ["FlowResult", "FlowRunner", "StepOutcome", "SuiteResult", "flow_pins"]

log = logging.getLogger(__name__)

PASSED, FAILED, ERROR = "passed", "failed", "error"


@dataclass
class StepOutcome:
    """One flow step as it went."""

    number: int
    kind: str
    text: str
    passed: bool
    message: str
    seconds: float
    screenshot: str | None = None  # the file in the flow's trajectory folder
    linked_run: str | None = None  # the folder of a run: / do: step's own trajectory
    replayed: int = 0  # steps of a run: step replayed from the plan cache

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class FlowResult:
    """A flow's outcome: ``status`` passed / failed / error, the first failure's ``message``."""

    name: str
    source: str | None
    status: str
    message: str
    steps: list[StepOutcome]
    trajectory_dir: Path
    started_at: float
    seconds: float
    run_id: str
    video: Path | None = None
    cache_note: str = ""
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    @property
    def report_path(self) -> Path:
        return self.trajectory_dir / "report.html"

    @property
    def failure_screenshot(self) -> Path | None:
        failed = [s for s in self.steps if not s.passed and s.screenshot]
        return self.trajectory_dir / failed[-1].screenshot if failed and failed[-1].screenshot else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "source": self.source, "status": self.status, "message": self.message,
            "steps": [s.to_dict() for s in self.steps], "trajectory_dir": str(self.trajectory_dir),
            "report": str(self.report_path), "video": str(self.video) if self.video else None,
            "started_at": self.started_at, "seconds": round(self.seconds, 3), "run_id": self.run_id,
            "cache_note": self.cache_note,
        }  # fmt: skip


@dataclass
class SuiteResult:
    flows: list[FlowResult]
    started_at: float
    seconds: float

    @property
    def passed(self) -> int:
        return sum(1 for f in self.flows if f.status == PASSED)

    @property
    def failed(self) -> int:
        return sum(1 for f in self.flows if f.status == FAILED)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.flows if f.status == ERROR)

    def summary(self) -> str:
        return f"{self.passed} passed, {self.failed} failed" + (f", {self.errors} errors" if self.errors else "") + (
            f" in {self.seconds:.1f} s"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "failed": self.failed, "errors": self.errors, "seconds": round(self.seconds, 3),
                "started_at": self.started_at, "flows": [f.to_dict() for f in self.flows]}  # fmt: skip


class _StepFailed(Exception):
    """A step that did not hold (an assertion, a run that did not complete)."""

    def __init__(self, message: str, linked: RunResult | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.linked = linked


class FlowRunner:
    """Runs flows on one device, one at a time. ``record``: keep a video of each flow."""

    def __init__(
        self,
        settings: Settings,
        device: AgentDevice,
        *,
        output_dir: Path | None = None,
        record: bool = False,
        cache: bool = True,
        variables: dict[str, str] | None = None,
        agent: Agent | None = None,
        on_event: EventCallback | None = None,
        cancel: threading.Event | None = None,
        channel: UserChannel | None = None,
        app_policy: bool = False,
    ) -> None:
        root = Path(output_dir) if output_dir is not None else Path(settings.agent.output_dir)
        agent_settings = settings.agent.model_copy(update={"output_dir": root})
        cache_settings = settings.cache.model_copy(update={"enabled": cache})
        self.settings = settings.model_copy(update={"agent": agent_settings, "cache": cache_settings})
        self.device = device
        self.output_dir = root
        self.record = record
        self.variables = dict(variables or {})
        self.on_event = on_event  # the flow's own trajectory events (run_started, step_finished, run_finished)
        self._flow_dir: Path | None = None  # the running flow's folder: its schema files are relative to it
        # set (a REST flow task's cancel): the step under way ends as a failed step and no other runs
        self.cancel = cancel
        self.app_policy = app_policy  # agent.safety's app lists bind its do: steps (run_script's app_policy)
        self.locator = run_locator(self.settings, None)
        if agent is None:
            phone = Phone(self.settings, device, evidence_dir=root / "evidence", cancel=cancel)
            # channel: whom a run: step's agent asks (a REST flow task's person); none: nobody to ask
            agent = Agent(self.settings, device=device, locator=self.locator, phone=phone, channel=channel,
                          on_event=self._person_events if channel is not None else None)
        self.agent = agent

    def _person_events(self, event: AgentEvent) -> None:
        """A run: step's run asking its person and the reply (a REST flow task's ``asking``): the
        flow's events, which carry the flow's own steps, get these of the inner run only."""
        if self.on_event is not None and event.kind in (EventKind.WAITING_FOR_USER, EventKind.USER_REPLIED):
            self.on_event(event)

    def run_suite(self, flows: list[Flow], on_result: Any = None) -> SuiteResult:
        started, clock = time.time(), time.monotonic()
        results = []
        for flow in flows:
            result = self.run(flow)
            results.append(result)
            if on_result is not None:
                on_result(result)
        return SuiteResult(results, started, time.monotonic() - clock)

    def run(self, flow: Flow) -> FlowResult:
        """Run ``flow``: always returns a result and writes the flow's trajectory."""
        values: dict[str, Any] = {**flow.vars, **self.variables}
        self._flow_dir = flow.source.parent if flow.source is not None else None
        session = RunSession(self.settings, instruction=f"flow: {flow.name}", mode="flow", device=self.device,
                             on_event=self.on_event, output_dir=self.output_dir, cancel=None,
                             locator=self.locator.untimed)  # fmt: skip
        recorder: ScreenRecorder | None = None
        if self.record:
            # the video leaves the run as its screenshots do: masked the same way where secrets are set
            mask = SecretMask(secret_values(self.settings), lambda: self.agent.phone.reader)
            recorder = ScreenRecorder(self.device, session.trajectory_dir / VIDEO_NAME, mask=mask)
            recorder.start()
        started, clock = session.started_at, time.monotonic()
        outcomes: list[StepOutcome] = []
        status, message = PASSED, ""
        run_ids: list[str] = []
        try:
            if flow.start_home:
                self.device.key("home")
            for number, step in enumerate(flow.steps, start=1):
                outcome = self._step(session, flow, number, step, values, run_ids, recorder)
                outcomes.append(outcome)
                if not outcome.passed:
                    status, message = FAILED, f"step {number} ({outcome.kind}): {outcome.message}"
                    break
        except MobileAgentError as exc:
            status, message = ERROR, f"{type(exc).__name__}: {exc.message}"
        except Exception as exc:  # a bug must not stop the suite: the flow is an error, the next runs
            log.exception("flow %r failed with an unexpected error", flow.name)
            status, message = ERROR, f"{type(exc).__name__}: {exc}"
        video = None
        if recorder is not None:
            video = recorder.stop()
        replayed = sum(o.replayed for o in outcomes)
        cache_note = ""
        if replayed:
            cache_note = f"replayed {replayed} step{'s' if replayed != 1 else ''} from the plan cache of an earlier green run"
        if status != PASSED:
            self._forget_plans(run_ids)
        reason = "every step held" if status == PASSED else message
        session.finish(RunStatus.COMPLETED if status == PASSED else RunStatus.NOT_COMPLETED, reason)
        result = FlowResult(
            name=flow.name, source=str(flow.source) if flow.source else None, status=status, message=message,
            steps=outcomes, trajectory_dir=session.trajectory_dir, started_at=started,
            seconds=time.monotonic() - clock, run_id=session.run_id, video=video, cache_note=cache_note,
            values={k: v for k, v in values.items() if k not in flow.vars},
        )  # fmt: skip
        text = json.dumps(session.redact(result.to_dict()), indent=2, ensure_ascii=False, default=str)
        (session.trajectory_dir / "flow.json").write_text(text, encoding="utf-8")
        return result

    # -- one step ---------------------------------------------------------------------

    def _step(
        self, session: RunSession, flow: Flow, number: int, step: FlowStep, values: dict[str, Any], run_ids: list[str],
        recorder: ScreenRecorder | None = None,
    ) -> StepOutcome:
        kind = flow.kind_of(step)
        clock = time.monotonic()
        text = ""
        linked: RunResult | None = None
        replayed = 0
        try:
            text, linked, message = self._do(step, values)
            passed = True
        except (_StepFailed, ScreenAssertionError, CheckFailedError, ExtractionError, FlowError, RunCancelled) as exc:
            passed = False
            message = exc.message if isinstance(exc, (_StepFailed, MobileAgentError)) else str(exc)
            linked = exc.linked if isinstance(exc, _StepFailed) else None
            text = text or _describe(step, values)
        if linked is not None:
            run_ids.append(linked.run_id)
            replayed = sum(1 for s in linked.steps if s.by == "replay")
            if replayed:
                message += f"; replayed {replayed} of {len(linked.steps)} steps from the plan cache (no model call)"
        # a failure lists the screen's texts, which may show a typed secret: redacted like the trajectory
        message, text = session.redact.text(message), session.redact.text(text)
        index = session.take_index()
        draft = session.capture(self.device, None, index)
        if recorder is not None:
            recorder.add_frame(draft.kept_pixels if draft.kept_pixels is not None else draft.frame.pixels)
        draft.begun, draft.by, draft.ok = True, "flow", passed
        draft.action_text = f"{kind}: {text}"
        draft.operation = {"name": kind, "params": {"step": number, "text": text, **({"name": step.name} if step.name else {})}}
        draft.feedback = message
        if linked is not None:
            draft.linked_run = {"run_id": linked.run_id, "status": linked.status.value, "reason": linked.reason,
                                "folder": linked.trajectory_dir.name}  # fmt: skip
        record = session.record(draft)
        return StepOutcome(number, kind, text, passed, message, time.monotonic() - clock, record.screenshot,
                           str(linked.trajectory_dir) if linked is not None else None, replayed)  # fmt: skip

    def _do(self, step: FlowStep, values: dict[str, Any]) -> tuple[str, RunResult | None, str]:
        """Carry out one step: (its text, the run it made, what happened); ``_StepFailed``
        and the assertion errors when it does not hold; ``RunCancelled`` once the flow is cancelled."""
        if self.cancel is not None and self.cancel.is_set():
            raise RunCancelled("the flow was cancelled")
        agent = self.agent
        if isinstance(step, RunStep):
            instruction = substitute(step.run, values)
            runner = agent
            if step.max_steps is not None:
                settings = agent.settings.model_copy(
                    update={"agent": agent.settings.agent.model_copy(update={"max_steps": step.max_steps})}
                )
                runner = Agent(settings, device=self.device, locator=self.locator, phone=agent.phone,
                               channel=agent.channel, on_event=agent.on_event)
            result = runner.run(instruction, cancel=self.cancel, output_dir=self.output_dir)
            if result.status is not RunStatus.COMPLETED:
                raise _StepFailed(f"the run ended {result.status.value}: {result.reason}", result)
            return instruction, result, f"completed in {len(result.steps)} steps: {result.reason}"
        if isinstance(step, DoStep):
            script = substitute(step.do, values)
            result = run_script(self.settings, script, device=self.device, locator=self.locator, cancel=self.cancel,
                                output_dir=self.output_dir, instruction=step.name or None,
                                app_policy=self.app_policy)  # fmt: skip
            if result.status is not RunStatus.COMPLETED:
                raise _StepFailed(f"the script ended {result.status.value}: {result.reason}", result)
            return _one_line(script), result, f"{len(result.steps)} operations done"
        if isinstance(step, AssertVisibleStep):
            target = substitute(step.assert_visible, values)
            found = agent.phone.assert_visible(target)
            return target, None, f"{target!r} is on the screen at {found.point}" if found.point else f"{target!r} is on the screen"
        if isinstance(step, AssertNotVisibleStep):
            target = substitute(step.assert_not_visible, values)
            agent.phone.assert_not_visible(target)
            return target, None, f"{target!r} is not on the screen"
        if isinstance(step, AssertIconStep):
            spec = step.assert_icon if isinstance(step.assert_icon, IconSpec) else IconSpec(description=step.assert_icon)
            description = substitute(spec.description, values)
            found = agent.phone.assert_icon(description, spec.position)
            return description, None, f"an icon like {description!r} at {found.point}"
        if isinstance(step, AssertStep):
            statement = substitute(step.assert_, values)
            verdict = agent.verify(statement)
            return statement, None, f"the model: {verdict.reason}"
        if isinstance(step, WaitForTextStep):
            text, timeout = _wait(step.wait_for_text, 10.0)
            target = substitute(text, values)
            agent.phone.wait_for_text(target, timeout=timeout)
            return target, None, f"{target!r} appeared"
        if isinstance(step, WaitForStep):
            text, timeout = _wait(step.wait_for, 30.0)
            statement = substitute(text, values)
            verdict = agent.wait_for(statement, timeout=timeout)
            return statement, None, f"the model: {verdict.reason}"
        if isinstance(step, ExtractStep):
            return self._extract(step, values)
        raise TypeError(f"unknown flow step {type(step).__name__}")  # the loader only makes the kinds above

    def _extract(self, step: ExtractStep, values: dict[str, Any]) -> tuple[str, RunResult | None, str]:
        spec = step.extract
        instruction = substitute(spec.instruction, values)
        schema: AnswerSchema[Any]
        if spec.schema_file is not None:
            base = self._flow_dir
            path = (base / spec.schema_file) if base is not None else Path(spec.schema_file)
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise FlowError(f"cannot read the schema file {path}: {exc}") from exc
            schema = AnswerSchema.of_json_schema(loaded, name=path.stem)
        elif spec.fields:
            model = fields_model(dict(spec.fields))
            schema = AnswerSchema.of_model(model)
        else:
            raise FlowError("an extract step needs fields: or schema:")
        answer = self.agent.extract(instruction, schema, attempts=spec.attempts)
        data = answer.model_dump() if isinstance(answer, BaseModel) else answer
        if spec.save_as:
            values[spec.save_as] = data
        if spec.expect:
            expected = {k: _expected(substitute(v, values) if isinstance(v, str) else v) for k, v in spec.expect.items()}
            wrong = {k: v for k, v in expected.items() if not isinstance(data, dict) or data.get(k) != v}
            if wrong:
                got = {k: data.get(k) if isinstance(data, dict) else None for k in wrong}
                raise _StepFailed(f"extracted {json.dumps(got, ensure_ascii=False)}, expected {json.dumps(wrong, ensure_ascii=False)}")
        return instruction, None, f"extracted {json.dumps(data, ensure_ascii=False, default=str)[:300]}"

    def _forget_plans(self, run_ids: list[str]) -> None:
        """A flow that failed leaves nothing in the plan cache: the plans its runs taught it go."""
        if not run_ids or not self.settings.cache.enabled:
            return
        try:
            cache = self.settings.cache  # the namespace the runs saved in (a REST task's: its principal's)
            store = PlanStore(cache.database_url or default_cache_url(self.settings.agent.output_dir), cache.namespace)
            for plan in store.list(limit=1000):
                if plan.source_run in run_ids and plan.id is not None:
                    store.delete(plan.id)
        except Exception:  # the cache is an optimisation: a failure to prune it is logged, not raised
            log.exception("could not forget the plans of a failed flow")


def flow_pins(flows: Sequence[Flow], variables: Mapping[str, str] | None = None) -> PinnedApps:
    """The app ids of one platform that the flows' ``do:`` steps open (``PinnedApps``: the
    phone they are written for). Each step is parsed as written: its literal ids count, and an
    ``Open App ({{name}})`` whose whole argument is one variable counts with the value the run
    will give it (a flow's ``vars:``, then ``variables``: ``mobile-agent test --var``) when that
    value is a short string. Nothing else is filled in, so checking a request costs one parse of
    its text whatever its variables hold. A variable known only once the flow runs (an earlier
    extract's ``save_as``) pins nothing, and so does a ``vars:`` name from the first extract that
    saves over it on (the run gives it that extract's answer); a step that does not parse is left
    out: it fails its run as before."""
    found: dict[str, Platform] = {}
    for flow in flows:
        values: dict[str, Any] = {**flow.vars, **(variables or {})}
        for step in flow.steps:
            if isinstance(step, ExtractStep) and step.extract.save_as:
                values.pop(step.extract.save_as, None)
            if not isinstance(step, DoStep):
                continue
            try:
                lines = parse_script(step.do)
            except OperationError:
                continue
            found.update(script_app_platforms(lines))
            for line in lines:
                name = _whole_variable(line.action.opened_app or "")
                value = values.get(name) if name else None
                if isinstance(value, str) and len(value) <= _PINNED_VALUE_CHARS and (platform := app_id_platform(value)):
                    found[value.strip()] = platform
    return PinnedApps("flow" if len(flows) == 1 else "flows", found)


# An app id is short; a longer value is not one (and is never parsed to find out).
_PINNED_VALUE_CHARS = 256
_WHOLE_VARIABLE = re.compile(r"^\{\{\s*([A-Za-z_][\w-]*)\s*\}\}$")


def _whole_variable(argument: str) -> str | None:
    """``pkg`` for an argument that is exactly ``{{pkg}}`` (no field path, not a secret)."""
    match = _WHOLE_VARIABLE.match(argument.strip())
    return match.group(1) if match else None


def _wait(spec: Any, default_timeout: float) -> tuple[str, float]:
    if isinstance(spec, str):
        return spec, default_timeout
    return spec.text, spec.timeout


def _expected(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _describe(step: FlowStep, values: dict[str, Any]) -> str:
    for value in step.__dict__.values():
        if isinstance(value, str) and value and value != step.name:
            try:
                return _one_line(substitute(value, values))
            except FlowError:
                return _one_line(value)
    return type(step).__name__


def _one_line(text: str, limit: int = 200) -> str:
    text = " / ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return text if len(text) <= limit else text[: limit - 1] + "…"
