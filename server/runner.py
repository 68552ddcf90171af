"""The seam between the scheduler and the agent: run one task on one leased phone.

A ``TaskRunner`` is any callable ``(spec, *, cancel, emit) -> TaskOutcome``. The default,
``AgentTaskRunner``, drives the real ``mobile_agent.agent.Agent`` on the leased device,
with the perception models loaded once per process and shared by every run.

It runs in a worker thread, never in a request. It may raise: the scheduler turns an
exception into an ``error`` outcome (a device error also marks the phone lost).

May import: ``mobile_agent`` (public API), the standard library, ``server.people``, ``server.webhooks``,
``server.schemas`` (the task's typed options), ``server.store`` (its row).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mobile_agent.agent import AgentEvent, EventCallback, UserChannel, jsonable
from mobile_agent.locate import LazyLocator, PerceptionLocator
from mobile_agent.operations import AgentDevice
from mobile_agent.settings import Settings
from server.schemas import StoredOptions
from server.store import TaskRow, TaskStore
from server.webhooks import WebhookSender, task_finished

__all__ = [
    "OPTIONS_USED_ELSEWHERE",
    "OPTION_SETTINGS",
    "AgentTaskRunner",
    "Emit",
    "TaskOutcome",
    "TaskRunner",
    "TaskSpec",
    "cache_namespace",
    "task_settings",
    "tell_unrun_end",
]

Emit = Callable[[str, dict[str, Any]], None]
log = logging.getLogger(__name__)
PHONE_WAIT_S = 600.0  # a task whose phone another interface holds waits this long for it


@dataclass(frozen=True)
class TaskSpec:
    """What one run needs: the task as submitted (its typed options, ``server.schemas``) and
    the phone it was given."""

    task_id: int
    instruction: str
    serial: str
    options: StoredOptions
    output_dir: Path

    @classmethod
    def of(cls, task: TaskRow, serial: str, output_dir: Path) -> TaskSpec:
        """The spec of a stored task (the embedded scheduler's, or a farm worker's from its job)."""
        return cls(task.id, task.instruction, serial, StoredOptions.model_validate(task.options), output_dir)


@dataclass(frozen=True)
class TaskOutcome:
    """How a run ended, in the store's terms."""

    status: str
    error: dict[str, Any] | None = None
    steps: int = 0
    trajectory_dir: Path | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class TaskRunner(Protocol):
    """What the scheduler, the app's lifespan, a farm worker and ``/readyz`` use of a runner."""

    def __call__(self, spec: TaskSpec, *, cancel: threading.Event, emit: Emit) -> TaskOutcome: ...

    def prepare(self) -> None:
        """Load what the first runs would otherwise wait for (called once at start-up when
        ``server.preload_perception`` is on); a runner with nothing to load does nothing."""
        ...

    def describe(self) -> dict[str, str]:
        """What ``/readyz`` shows of the runner (the perception backends once loaded)."""
        ...


# Which setting each option of a task overrides for its run. Every field of TaskOptions is here
# or in OPTIONS_USED_ELSEWHERE (tests/service/test_task_options.py holds the two to the model).
OPTION_SETTINGS: dict[str, str] = {
    "model": "planner.model",
    "base_url": "planner.base_url",
    "temperature": "planner.temperature",
    "max_steps": "agent.max_steps",
    "reflection": "agent.reflection",
    "cache": "cache.enabled",
    "confirmations": "agent.safety.confirmations",
    "deny_apps": "agent.safety.deny_apps",
    "allow_apps": "agent.safety.allow_apps",
    "user_timeout_s": "agent.user_timeout_s",
}
OPTIONS_USED_ELSEWHERE = {
    "script": "the runner runs it instead of planning (AgentTaskRunner._run)",
    "flow": "the runner runs the flow's steps (AgentTaskRunner._run_flow)",
    "record": "the flow's video (AgentTaskRunner._run_flow; mobile_agent.testing.FlowRunner)",
    "callback_url": "webhooks (AgentTaskRunner, server.people.StoreChannel)",
    "host": "routing (server.farm.routing)",
    "platform": "routing: a free phone of that platform (DevicePool.lease; server.farm.routing's platform property)",
    "requires": "routing (server.farm.routing)",
    "labels": "routing (server.farm.routing)",
    "retries": "the farm's queue (server.farm.queue)",
}


def task_settings(base: Settings, options: StoredOptions, serial: str) -> Settings:
    """The settings of one run: the server's, with the task's overrides applied."""
    given = options.model_dump(include=set(OPTION_SETTINGS), exclude_none=True)
    overrides: dict[str, Any] = {OPTION_SETTINGS[name]: value for name, value in given.items()}
    overrides["adb.serial"] = serial
    overrides["cache.namespace"] = cache_namespace(base, options.owner, options.team)
    overrides.update(narrowed_policy(base, options))
    settings = base.with_overrides(overrides)
    # the run may type only the secrets its owner may (server.tokens.NAME.secrets; an admin's all): no
    # variable, model reply or cached plan of the run can put in another's. The others' values stay
    # among those it hides (agent.secrets: masked and redacted, never typed)
    agent = settings.agent
    allowed = set(options.secrets) if options.secrets is not None else {
        name for name in agent.named_secrets if base.server.may_type(options.owner, name)}
    named = {name: value for name, value in agent.named_secrets.items() if name in allowed}
    hidden = [value for name, value in agent.named_secrets.items() if name not in named]
    return settings.model_copy(update={"agent": agent.model_copy(
        update={"named_secrets": named, "secrets": [*agent.secrets, *hidden]})})


def task_lease_holder(task_id: int, owner: str | None) -> str:
    """How a REST task's run names itself as its phone's lease holder (``PhoneLease``): the live
    view and the device screenshot show the phone to the task's viewers only while this holds it."""
    return f"REST task {task_id} of {owner or 'anonymous'}"


def narrowed_policy(base: Settings, options: StoredOptions) -> dict[str, Any]:
    """A task's app policy as its run applies it: the server's (``agent.safety``, the operator's)
    is a floor that a task narrows and never widens. Its ``deny_apps`` join the server's; its
    ``allow_apps`` keep only apps the server allows too (the server's list when none is left: a
    task row from before ``checked_task`` refused that); ``confirmations = "deny"`` on the server
    is kept whatever the task says (``ask`` and ``approve`` are the person's to choose)."""
    safety = base.agent.safety
    deny = [*safety.deny_apps, *(a for a in options.deny_apps or [] if a not in safety.deny_apps)]
    allow = list(options.allow_apps or safety.allow_apps)
    if safety.allow_apps and options.allow_apps:
        allow = [a for a in options.allow_apps if a in safety.allow_apps] or list(safety.allow_apps)
    confirmations = "deny" if safety.confirmations == "deny" else options.confirmations or safety.confirmations
    return {"agent.safety.deny_apps": deny, "agent.safety.allow_apps": allow,
            "agent.safety.confirmations": confirmations}


def cache_namespace(base: Settings, owner: str | None, team: str | None) -> str:
    """Whose cached plans a task replays and adds to (``server.auth``): its team's, else its
    owner's; "" (the local user's, as ``mobile-agent run``) with ``cache.shared`` or on a service
    with no tokens."""
    if base.cache.shared or not owner or owner == "anonymous":
        return ""
    return f"team:{team}" if team else f"token:{owner}"


def tell_unrun_end(webhooks: WebhookSender, task: TaskRow, status: str, *, result: dict[str, Any] | None = None,
                   error: dict[str, Any] | None = None) -> threading.Thread | None:
    """The ``task_finished`` webhook of a task that ended before any run took it (cancelled while
    queued, refused at start for its owner): no runner tells that end. The same sender and payload
    as a run's end (``tell_ends``); the caller calls it once, after the store's queued -> final
    transition succeeded, so the task hears its end exactly once."""
    try:
        callback_url = StoredOptions.model_validate(task.options).callback_url
    except ValueError as exc:  # a row another version wrote (pydantic's ValidationError): it ends all the same
        log.warning("task %s ended %s; its stored options cannot be read, so no task_finished "
                    "webhook: %s", task.id, status, exc)
        return None
    return webhooks.send(callback_url, "task_finished", task_finished(task.id, status, result=result, error=error))


def tell_ends(webhooks: WebhookSender, store: TaskStore, task_ids: Iterable[int]) -> None:
    """The ``task_finished`` webhook of ended tasks, as the store now holds them (status, result,
    error: what the webhook says is what GET /v1/tasks/{id} says): a run's end, told by the
    scheduler once its ``finish`` stored it (``Scheduler(told=)``), and the ends no run tells:
    left running by a process that died (``interrupted`` when its service or worker starts again)
    or by a farm host that stopped answering. The caller calls it once per task, only after its
    own transition to the end succeeded, so each end is told exactly once."""
    for task_id in task_ids:
        task = store.get_task(task_id)
        if task is not None and task.terminal:
            tell_unrun_end(webhooks, task, task.status, result=task.result, error=task.error)


class AgentTaskRunner:
    """Runs the real agent. The locator (perception) is built once per process, in the
    app's lifespan via ``prepare()`` or when a step first needs it, and shared by every
    run (it is thread-safe)."""

    def __init__(self, settings: Settings, *, store: Any = None, webhooks: WebhookSender | None = None) -> None:
        self.settings = settings
        # with the task store, a run can ask its person (server/people.py) and tell its callback_url
        # (waiting_for_user) through ``webhooks``: the process's sender, which its stop waits for
        self.store = store
        self.webhooks = webhooks or WebhookSender(settings, report=store.add_event if store is not None else None)
        self._locator: PerceptionLocator | None = None
        self._locator_lock = threading.Lock()

    def prepare(self) -> None:
        """Load the perception models now (the app's lifespan calls this): one OCR pass
        over a blank frame makes the lazy backends load their weights. The planner's client
        (openai and its HTTP stack, a second or more of imports) is loaded and its shared
        client built here too, so that the first tasks of a fresh worker, which start
        together on every phone, do not pay for it."""
        from mobile_agent.planner import prepare

        prepare(self.settings.planner)  # its client too: the TLS context reads the CA bundle
        import numpy as np

        self._get_locator().ocr(np.full((96, 96, 3), 255, dtype=np.uint8))

    def describe(self) -> dict[str, str]:
        """The perception backends, once loaded (for /readyz)."""
        with self._locator_lock:
            locator = self._locator
        return dict(locator.describe_backends()) if locator is not None else {}

    def _get_locator(self) -> PerceptionLocator:
        with self._locator_lock:
            if self._locator is None:
                from mobile_agent.locate import build_locator

                self._locator = build_locator(self.settings)
            return self._locator

    def __call__(self, spec: TaskSpec, *, cancel: threading.Event, emit: Emit) -> TaskOutcome:
        # the end's task_finished webhook is the scheduler's, sent once the store holds the end
        # (``Scheduler(told=)``): a shutdown stores a cancelled run ``interrupted``, and a run
        # whose task another process already ended (a farm host taken for lost) tells nothing
        return self._leased(spec, cancel=cancel, emit=emit)

    def _leased(self, spec: TaskSpec, *, cancel: threading.Event, emit: Emit) -> TaskOutcome:
        """The run, holding the phone's lease (``mobile_agent.device.PhoneLease``): an MCP session
        or ``mobile-agent run`` on the same phone makes it wait, never interleave."""
        from mobile_agent.device import PhoneLease, lease_holder
        from mobile_agent.errors import PhoneBusyError

        lease = PhoneLease(self.settings.adb, spec.serial, task_lease_holder(spec.task_id, spec.options.owner),
                           wait_s=PHONE_WAIT_S, cancel=cancel)
        try:
            if lease_holder(self.settings.adb, spec.serial) is not None:
                # who holds it is an admin's business (the log); the task says it waits
                emit("waiting_for_phone", {"serial": spec.serial, "wait_s": PHONE_WAIT_S})
            lease.acquire()
        except PhoneBusyError as exc:
            log.warning("task %s: phone %s stayed busy: %s", spec.task_id, spec.serial, exc.message)
            if cancel.is_set():
                return TaskOutcome(status="cancelled", extra={"reason": "cancelled while waiting for the phone"})
            return TaskOutcome(status="error", error={"type": "PhoneBusyError", "serial": spec.serial,
                                                      "message": f"phone {spec.serial} stayed busy with another "
                                                                 f"run for {PHONE_WAIT_S:g} s"})
        try:
            return self._run(spec, cancel=cancel, emit=emit)
        finally:
            lease.release()

    def _run_flow(self, spec: TaskSpec, settings: Settings, device: AgentDevice, text: str,
                  on_event: EventCallback, cancel: threading.Event,
                  channel: UserChannel | None) -> TaskOutcome:  # fmt: skip
        """A test flow as the task (``mobile_agent.testing``): its steps in one trajectory, the
        flow's verdict as the task's status (a failed step: ``not_completed``), the video in the
        task's files with ``record``. The flow runs to its end, its first failure, or the task's
        cancel (the step under way ends; the task is ``cancelled``)."""
        from mobile_agent.testing import FlowRunner, parse_flow

        flow = parse_flow(text)  # checked when the task was submitted
        runner = FlowRunner(settings, device, output_dir=spec.output_dir, record=bool(spec.options.record),
                            cache=bool(settings.cache.enabled), on_event=on_event, cancel=cancel,
                            channel=channel, app_policy=True)  # fmt: skip  # a user's flow: the server's app lists bind it
        result = runner.run(flow)
        status = "completed" if result.passed else ("error" if result.status == "error" else "not_completed")
        if cancel.is_set() and not result.passed:
            status = "cancelled"
        # paths under the task's folder, as GET /v1/tasks/{id}/files/{path} takes them
        folder = result.trajectory_dir.name
        files = {"report": f"{folder}/report.html", "flow": f"{folder}/flow.json",
                 **({"video": f"{folder}/{result.video.name}"} if result.video else {})}  # fmt: skip
        return TaskOutcome(
            status=status,
            error={"type": "FlowError", "message": result.message} if result.status == "error" else None,
            steps=len(result.steps),
            trajectory_dir=result.trajectory_dir,
            extra={"reason": result.message or "every step held", "run_id": result.run_id,
                   "duration_s": round(result.seconds, 3), "flow": result.name, "flow_status": result.status,
                   "files": files, **({"cache": result.cache_note} if result.cache_note else {})},
        )  # fmt: skip

    def _run(self, spec: TaskSpec, *, cancel: threading.Event, emit: Emit) -> TaskOutcome:
        from mobile_agent.device import close_phone, open_phone

        settings = task_settings(self.settings, spec.options, spec.serial)
        # an Android phone, or the iPhone ios:NAME (docs/ios.md); a cancel ends a wait for a lost phone
        device = open_phone(settings, spec.serial, cancel=cancel)
        try:
            return self._drive(spec, settings, device, cancel=cancel, emit=emit)
        finally:
            close_phone(device)  # an iPhone's connections to its WDA end with the run

    def _drive(self, spec: TaskSpec, settings: Settings, device: AgentDevice, *, cancel: threading.Event,
               emit: Emit) -> TaskOutcome:
        from mobile_agent.agent import Agent

        def on_event(event: AgentEvent) -> None:
            data = jsonable(event.data)
            if event.step is not None:
                data = {"step": event.step, **data}
            data.setdefault("run_id", event.run_id)
            emit(event.kind, data)

        channel = None  # whom the run asks: the task's person (POST /v1/tasks/{id}/reply)
        if self.store is not None:
            from server.people import StoreChannel

            channel = StoreChannel(self.store, spec.task_id, webhooks=self.webhooks,
                                   callback_url=spec.options.callback_url)
        if spec.options.flow:  # its steps' events are the flow trajectory's; its run: steps ask the person
            return self._run_flow(spec, settings, device, spec.options.flow, on_event, cancel, channel)

        script = spec.options.script
        if script:  # no model: the operations as written
            from mobile_agent.agent import run_script

            result = run_script(settings, script, device=device, locator=LazyLocator(self._get_locator),
                                on_event=on_event, cancel=cancel, output_dir=spec.output_dir,
                                instruction=spec.instruction, app_policy=True)  # a user's script: the app lists bind it
        else:
            agent = Agent(settings, device=device, locator=LazyLocator(self._get_locator), on_event=on_event,
                          channel=channel)
            result = agent.run(spec.instruction, cancel=cancel, output_dir=spec.output_dir)
        usage = result.usage
        return TaskOutcome(
            status=result.status.value,
            error=result.error,
            steps=len(result.steps),
            trajectory_dir=Path(result.trajectory_dir) if result.trajectory_dir else None,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost_usd=usage.cost_usd,
            extra={
                "reason": result.reason,
                "run_id": result.run_id,
                "duration_s": round(result.finished_at - result.started_at, 3),
            },
        )
