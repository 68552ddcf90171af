"""The REST schema family: what clients send (``*Create``) and get back (``*Public``).

Limits that depend on settings (instruction length, max_steps) are checked by the
route against ``Settings.server``; the static ones are here.

May import: pydantic, the standard library, ``server.farm.routing`` (standard library only).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "MAX_ID",
    "ConnectRequest",
    "ReplyCreate",
    "StoredOptions",
    "DeviceListPublic",
    "DevicePublic",
    "EventPublic",
    "TaskCreate",
    "TaskListPublic",
    "TaskOptions",
    "TaskPublic",
    "TaskStatus",
]

TaskStatus = Literal[
    "queued", "running", "waiting_for_user", "completed", "not_completed", "budget_exhausted", "error", "cancelled",
    "interrupted",
]

# adb serials: emulator-5554, 0123456789ABCDEF, 10.0.0.5:5555, [::1]:5555
# The largest id a client may name: the ids are INTEGER columns (32-bit on Postgres).
MAX_ID = 2**31 - 1

_PACKAGE = r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$"  # an Android package name
_SERIAL = re.compile(r"^[A-Za-z0-9._:\-\[\]]{1,200}$")
_ADDRESS = re.compile(r"^[A-Za-z0-9.\-\[\]:]{1,253}:\d{1,5}$")


class TaskOptions(BaseModel):
    """A task's options: what a client may set besides the instruction and the phone. The one
    record that crosses every boundary of a task — the REST body (``TaskCreate``), the row the
    store keeps (``StoredOptions``, JSON), the farm's job (its worker reads the row) and the
    runner (``server.runner.TaskSpec``, ``task_settings``) — so a new option is declared once,
    and ``tests/service/test_task_options.py`` fails until the runner uses it."""

    model_config = ConfigDict(extra="forbid")

    script: str | None = Field(
        None,
        min_length=1,
        description="operations to run with no model, one per line in the model's syntax "
        '(e.g. "Open App (Settings)", "Click text (Display)"); runs without a planner endpoint',
    )
    flow: str | None = Field(
        None,
        min_length=1,
        description="a test flow (YAML, the format of `mobile-agent test`, docs/testing.md) to run instead of "
        "an instruction: its steps, one report, and the verdict in the result",
    )
    record: bool | None = Field(None, description="with a flow: keep a video of its run (video.mp4 in the task's files)")
    model: str | None = Field(None, min_length=1, max_length=200, description="planner model override")
    base_url: str | None = Field(None, max_length=2000, description="planner endpoint override")
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    max_steps: int | None = Field(None, ge=1)
    reflection: bool | None = None
    cache: bool | None = Field(
        None, description="replay a cached plan of this instruction without the model, and cache this run's (cache.enabled)"
    )
    platform: Literal["android", "ios"] | None = Field(
        None, description='run on a phone of this platform: "android", or "ios" (an iPhone of ios.devices, docs/ios.md)'
    )
    # routing on a farm (docs/farm.md): every part given must hold for the phone
    host: str | None = Field(None, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._\-]+$",
                             description="run on a phone of this worker host")
    requires: list[str] | None = Field(
        None, max_length=20, description='properties the phone must have: "android>=13", "profile=tablet", "lab=berlin"'
    )
    labels: dict[str, str] | None = Field(None, max_length=20, description="labels the phone's host must have")
    retries: int | None = Field(None, ge=0, le=10, description="times to run again if the host dies mid-run (farm)")
    # a person in the loop (mobile_agent.agent.guard, POST /v1/tasks/{id}/reply)
    confirmations: Literal["ask", "approve", "deny"] | None = Field(
        None, description="sensitive operations: ask the person (default), or approve / deny them all unasked"
    )
    deny_apps: list[Annotated[str, Field(pattern=_PACKAGE)]] | None = Field(None, max_length=100)
    allow_apps: list[Annotated[str, Field(pattern=_PACKAGE)]] | None = Field(None, max_length=100)
    user_timeout_s: float | None = Field(None, gt=0, le=86400, description="how long the task waits for a reply")
    callback_url: str | None = Field(
        None, max_length=2000, pattern=r"^https?://[^\s]+$",
        description="POSTed (HMAC-signed, server.webhook_secret) when the task waits for its person and when it ends",
    )

    @field_validator("script")
    @classmethod
    def _script_has_no_nul(cls, value: str | None) -> str | None:
        if value is not None and "\x00" in value:
            raise ValueError("script contains a NUL character")
        return value

    @field_validator("flow")
    @classmethod
    def _flow_loads(cls, value: str | None) -> str | None:
        if value is not None:
            from mobile_agent.testing import FlowError, parse_flow

            try:
                parse_flow(value)
            except FlowError as exc:  # a 422 naming the step, not a failed task
                raise ValueError(exc.message) from None
        return value

    @field_validator("requires")
    @classmethod
    def _requirements_parse(cls, value: list[str] | None) -> list[str] | None:
        from server.farm.routing import Requirement, RouteError

        for text in value or []:
            try:
                Requirement.parse(text)
            except RouteError as exc:
                raise ValueError(str(exc)) from exc
        return value

    @field_validator("labels")
    @classmethod
    def _labels_parse(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for key, label in (value or {}).items():
            if not re.match(r"^[A-Za-z][A-Za-z0-9_.\-]{0,63}$", key) or not re.match(r"^\S{1,200}$", label):
                raise ValueError(f"label {key}={label!r}: keys are words, values have no spaces")
        return value

    @field_validator("base_url")
    @classmethod
    def _base_url_is_http(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^\s]+$", value):
            raise ValueError("base_url must be an http(s) URL")
        return value

    def stored(self) -> dict[str, Any]:
        """The options as the store keeps them (JSON; options not given are left out)."""
        return self.model_dump(exclude_none=True)


class StoredOptions(TaskOptions):
    """A stored task's options: the client's, and what the server adds — whose task it is
    (``server.auth``), the schedule that made it, the running limit its quota holds it to
    (``server.quota``). Read from a row, keys another version wrote are ignored."""

    model_config = ConfigDict(extra="ignore")

    owner: str | None = None
    team: str | None = None
    # the named secrets its owner may type, decided where the tokens are (the API server: a farm's
    # workers hold none); None on a row from before: the run's server decides (ServerSettings.may_type)
    secrets: list[str] | None = None
    schedule_id: int | None = None
    quota_running_limit: int | None = None


class TaskCreate(TaskOptions):
    """``POST /v1/tasks``: an instruction (or a script), the phone, and the task's options."""

    instruction: str | None = Field(
        None, min_length=1, description="what the agent should do, in words (with a script: its name)"
    )
    device: str = Field("any", description='a serial (ios:NAME: an iPhone), or "any" for the first free phone '
                        "(of the platform given)")

    @model_validator(mode="after")
    def _instruction_or_script(self) -> TaskCreate:
        if self.instruction is None and self.script is None and self.flow is None:
            raise ValueError("give an instruction, a script (one operation per line) or a flow")
        if self.script is not None and self.flow is not None:
            raise ValueError("give a script or a flow, not both")
        return self

    @field_validator("instruction")
    @classmethod
    def _instruction_has_text(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not value.strip():
            raise ValueError("instruction is blank")
        if "\x00" in value:
            raise ValueError("instruction contains a NUL character")
        return value

    @field_validator("device")
    @classmethod
    def _device_is_serial(cls, value: str) -> str:
        if value != "any" and not _SERIAL.match(value):
            raise ValueError('device must be "any" or an adb serial')
        return value

    def options(self) -> TaskOptions:
        """The body's options. Copied, not validated again: this body was (validating a flow
        parses it, a submission's hot path would parse it once per copy)."""
        return TaskOptions.model_construct(**self.model_dump(exclude={"instruction", "device"}))

    def stored_options(self, owner: str, team: str | None, secrets: list[str] | None = None) -> dict[str, Any]:
        """The options to store the task with, owned by ``owner`` (of ``team``), who may type the
        named ``secrets``."""
        return StoredOptions.model_construct(**self.options().stored(), owner=owner, team=team,
                                             secrets=secrets).stored()


class TaskPublic(BaseModel):
    id: int
    instruction: str
    device_request: str
    device: str | None
    status: TaskStatus
    options: dict[str, Any]
    error: dict[str, Any] | None
    result: dict[str, Any] | None = Field(None, description="how the run ended: reason, run id, duration")
    steps: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    created_at: float
    started_at: float | None
    finished_at: float | None
    queued_s: float | None = Field(None, description="time between submission and start")
    run_s: float | None = Field(None, description="time between start and finish")
    links: dict[str, str] = Field(default_factory=dict)
    waiting_reason: str | None = Field(None, description="why a queued task has not started (farm)")
    asking: dict[str, Any] | None = Field(
        None, description="what a waiting_for_user task asks: kind (question / confirm), question, reason, operation"
    )


class TaskListPublic(BaseModel):
    data: list[TaskPublic]
    count: int = Field(..., description="tasks matching the filter, all pages")
    offset: int
    limit: int


class EventPublic(BaseModel):
    id: int
    task_id: int
    kind: str
    data: dict[str, Any]
    created_at: float


class DevicePublic(BaseModel):
    serial: str
    platform: Literal["android", "ios"] = Field("android", description='"ios": an iPhone (serial ios:NAME, docs/ios.md)')
    state: str
    model: str | None
    width: int | None
    height: int | None
    busy: bool
    current_task: int | None
    screenshot_url: str
    host: str | None = Field(None, description="the worker host the phone is attached to (farm)")
    properties: dict[str, str] | None = Field(None, description="model, android, sdk, profile, labels (farm)")


class DeviceListPublic(BaseModel):
    data: list[DevicePublic]
    count: int


class ConnectRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    address: str = Field(..., description="host:port of a phone's adb-over-TCP")

    @field_validator("address")
    @classmethod
    def _address_is_host_port(cls, value: str) -> str:
        if not _ADDRESS.match(value):
            raise ValueError("address must be host:port")
        port = int(value.rsplit(":", 1)[1])
        if not 1 <= port <= 65535:
            raise ValueError("port out of range")
        return value


def is_serial(value: str) -> bool:
    return bool(_SERIAL.match(value))


class ReplyCreate(BaseModel):
    """A person's reply to a task waiting for one (``POST /v1/tasks/{id}/reply``).

    ``answer`` (with ``text``) or ``done`` ("I did it on the phone") answer a question;
    ``approve`` / ``deny`` a confirmation (``deny`` also declines a question); ``touch``
    is a tap at (``x``, ``y``) or a swipe (``x``, ``y``) → (``x2``, ``y2``) on the phone
    during a takeover, in **screen pixels**."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["answer", "approve", "deny", "done", "touch"]
    text: str = Field("", max_length=2000)
    x: int | None = Field(None, ge=0, le=100_000)
    y: int | None = Field(None, ge=0, le=100_000)
    x2: int | None = Field(None, ge=0, le=100_000)
    y2: int | None = Field(None, ge=0, le=100_000)

    @model_validator(mode="after")
    def _fits_the_action(self) -> ReplyCreate:
        if "\x00" in self.text:
            raise ValueError("text contains a NUL character")
        if self.action == "answer" and not self.text.strip():
            raise ValueError("an answer needs a text")
        if self.action == "touch" and (self.x is None or self.y is None):
            raise ValueError("a touch needs x and y (screen pixels)")
        if (self.x2 is None) != (self.y2 is None):
            raise ValueError("a swipe needs both x2 and y2")
        return self
