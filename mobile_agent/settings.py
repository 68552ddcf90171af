"""The one validated settings object.

Built once (``load_settings``) and passed down; nothing else in the project reads the
environment. Sources, strongest first:

1. explicit overrides (CLI flags, keyword arguments, REST overrides),
2. environment variables ``MOBILE_AGENT_<SECTION>__<FIELD>`` (e.g.
   ``MOBILE_AGENT_PLANNER__MODEL=gpt-4o``),
3. a TOML file (``--config FILE`` or ``MOBILE_AGENT_CONFIG=FILE``) with one table per
   section (``[planner]``, ``[agent]``…),
4. adb's own environment variables, as adb and adbutils read them:
   ``ANDROID_ADB_SERVER_PORT`` (adb.server_port), ``ANDROID_ADB_SERVER_HOST``
   (adb.server_host), ``ANDROID_SERIAL`` (adb.serial); any setting above wins,
5. the defaults below.

May import: pydantic, pydantic-settings. Nothing else of the project.
"""

from __future__ import annotations

import contextvars
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from mobile_agent.errors import ConfigError

__all__ = [
    "AdbSettings",
    "AgentSettings",
    "CacheSettings",
    "FarmSettings",
    "IosSettings",
    "PerceptionSettings",
    "PlannerSettings",
    "RetentionSettings",
    "SafetySettings",
    "ServerSettings",
    "Settings",
    "TokenSettings",
    "load_settings",
]

ENV_PREFIX = "MOBILE_AGENT_"

# A misspelt key (``adb.serail``, ``MOBILE_AGENT_AGENT__MAX_STEP``) is an error, not ignored.
_SECTION = ConfigDict(extra="forbid")

_toml_file: contextvars.ContextVar[Path | None] = contextvars.ContextVar("toml_file", default=None)


class AdbSettings(BaseModel):
    """Where the adb server is, and which phone to drive."""

    model_config = _SECTION

    server_host: str = "127.0.0.1"
    server_port: int = Field(5037, ge=1, le=65535)
    adb_path: Path | None = Field(None, description="adb binary; default: PATH, then the adbutils wheel's")
    serial: str | None = Field(None, description="device serial; None = the only attached device")
    connect: list[str] = Field(default_factory=list, description="host:port to `adb connect` first")
    command_timeout_s: float = Field(20.0, gt=0)
    list_timeout_s: float = Field(
        5.0, gt=0, le=3600,
        description="how long a look at the phones waits for an adb server that has gone silent: the device "
        "list (`adb devices`, the server's version), and the service's probes and captures (its device refresh, "
        "GET /v1/devices/{serial}/screenshot, the live view); a run's own commands wait command_timeout_s",
    )
    reconnect_s: float = Field(
        30.0, ge=0, le=3600,
        description="how long a run waits for its phone to come back (the adb server restarted, a network phone "
        "dropped) before it fails, naming the phone",
    )
    app_cache_dir: Path | None = Field(
        Path("~/.cache/mobile-agent/apps"), description="per-device cache of app labels read from APKs; None = memory only"
    )


class PlannerSettings(BaseModel):
    """The MLLM behind an OpenAI-compatible chat-completions endpoint."""

    model_config = _SECTION

    base_url: str | None = Field(None, description="e.g. https://api.openai.com/v1, http://localhost:11434/v1")
    api_key: SecretStr = SecretStr("")
    model: str = "gpt-4o"
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(1024, ge=16, le=32768)
    # What of a reply is kept (and so logged, stored, streamed): an endpoint that ignores
    # max_tokens must not turn one step into megabytes everywhere the reply goes.
    max_reply_bytes: int = Field(16384, ge=1024, le=1 << 20, description="longer replies are cut, marked truncated")
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(4, ge=0, le=20)
    backoff_base_s: float = Field(1.0, ge=0)
    backoff_max_s: float = Field(30.0, ge=0)
    image_long_side: int = Field(1280, ge=256, le=4096)
    # how the model is prompted and read (mobile_agent/planner/dialects); auto = by the model's name
    dialect: Literal["auto", "paper", "function_calling", "ui_tars", "mobile_use", "autoglm"] = "auto"
    # a grounded model's tap moves onto the element it most likely meant (perception/snapping.py)
    snap: bool = True
    # a grounded model's image (Qwen-style smart_resize): match the server's processor max_pixels
    image_max_pixels: int | None = Field(None, ge=28 * 28 * 4, le=64_000_000)
    snap_max_distance: float = Field(0.05, ge=0, le=0.5, description="farthest snap, as a share of the screen height")
    jpeg_quality: int = Field(80, ge=30, le=100)
    # USD per 1M tokens, by model name: {"gpt-4o": {"input": 2.5, "output": 10.0}}
    prices: dict[str, dict[str, float]] = Field(
        default_factory=lambda: {
            "gpt-4o": {"input": 2.5, "output": 10.0},
            "gpt-4o-mini": {"input": 0.15, "output": 0.6},
        }
    )

    @property
    def configured(self) -> bool:
        return bool(self.base_url) or bool(self.api_key.get_secret_value())


class PerceptionSettings(BaseModel):
    """Which perception backends run, and where their weights are."""

    model_config = _SECTION

    ocr_backend: Literal["rapidocr", "paddleocr"] = "rapidocr"
    paddle_det_dir: Path | None = None
    paddle_rec_dir: Path | None = None
    ocr_limit_side_len: int = Field(1280, ge=320, le=4096)
    detector: Literal["auto", "grounding-dino", "groundingdino-py", "proposals"] = "auto"
    ranker: Literal["auto", "clip", "heuristic"] = "auto"
    grounding_dino_path: str = "IDEA-Research/grounding-dino-tiny"
    groundingdino_py_checkpoint: Path | None = None
    groundingdino_py_config: Path | None = None
    clip_model: str = "ViT-B-32"
    clip_checkpoint: str | None = Field(None, description="local .pt/.bin file or open_clip pretrained tag")
    box_threshold: float = Field(0.05, ge=0, le=1)
    text_threshold: float = Field(0.5, ge=0, le=1)
    compute_device: Literal["auto", "cpu", "cuda"] = "auto"
    half_precision: bool | None = Field(None, description="fp16 autocast for Grounding DINO and CLIP; unset = on CUDA only")
    allow_hub_downloads: bool = False
    max_text_candidates: int = Field(4, ge=1, le=16)
    max_box_fraction: float = Field(0.25, gt=0, le=1, description="ignore OCR boxes larger than this share of the screen")
    max_text_candidates_listed: int = Field(
        12, ge=0, le=32, description="more hits than max_text_candidates are still offered up to this many; 0 = none"
    )
    accessibility: bool = Field(
        False, description="also read the phone's accessibility tree (uiautomator dump) where it agrees with the pixels"
    )
    ocr_threads: int = Field(0, ge=0, le=256, description="ONNX Runtime threads per OCR; 0 = its choice (all cores)")
    ocr_spinning: bool = Field(
        False, description="let ONNX Runtime's threads busy-wait between operators (burns the cores other phones need)"
    )


class SafetySettings(BaseModel):
    """A person in the loop (``mobile_agent.agent.guard``): which operations wait for a
    person's yes, and which apps a run may use."""

    model_config = _SECTION

    confirm_sensitive: bool = Field(True, description="ask before paying, sending, posting, deleting, installing…")
    confirmations: Literal["ask", "approve", "deny"] = Field(
        "ask", description="ask the person, or answer every confirmation so without asking (unattended runs)"
    )
    rules_file: Path | None = Field(None, description="a TOML file of extra sensitive-word rules (see sensitive.toml)")
    allow_apps: list[str] = Field(default_factory=list, description="packages a run may use; empty = any")
    deny_apps: list[str] = Field(default_factory=list, description="packages a run must never open or act in")
    confirm_apps: list[str] = Field(default_factory=list, description="packages where every action needs a yes")


class AgentSettings(BaseModel):
    """Budgets and behaviour of the step loop."""

    model_config = _SECTION

    max_steps: int = Field(20, ge=1, le=500)
    reflection: bool = True
    completion_check: bool = True
    max_completion_checks: int = Field(2, ge=0, le=10)
    max_identical_actions: int = Field(3, ge=2, le=20)
    max_consecutive_failures: int = Field(5, ge=1, le=50)
    settle_timeout_s: float = Field(3.0, ge=0)
    settle_interval_s: float = Field(0.15, ge=0.01)
    settle_tolerance: float = Field(0.002, ge=0, le=1)
    # 0.0005: two typed characters change ~0.0017 of the screen body, a blinking cursor ~0.0001
    change_threshold: float = Field(0.0005, ge=0, le=1, description="share of changed pixels that counts as a change")
    output_dir: Path = Path("runs")
    secrets: list[SecretStr] = Field(default_factory=list, description="texts redacted from trajectories")
    # {{secret:name}} in an instruction: the model sees the name, the device types the value
    named_secrets: dict[str, SecretStr] = Field(default_factory=dict, description="values of {{secret:name}}")
    user_timeout_s: float = Field(600.0, gt=0, le=86400, description="how long a run waits for a person's reply")
    safety: SafetySettings = Field(default_factory=SafetySettings)
    prefetch_perception: bool = Field(
        True, description="run OCR on the screen while the model plans, so the operation finds it ready"
    )
    # speculation yields to real work: on a host busy with other phones' runs it waits for the lookup
    prefetch_min_idle: float = Field(
        0.5, ge=0, le=1,
        description="share of the machine's CPU that must be idle for that OCR to start (0: always)",
    )


class CacheSettings(BaseModel):
    """The plan cache: completed runs replay without the model (``mobile_agent.replay``)."""

    model_config = _SECTION

    enabled: bool = Field(False, description="replay cached plans and learn from completed runs")
    database_url: str | None = Field(None, description="default: a SQLite file plan-cache.sqlite3 in agent.output_dir")
    min_similarity: float = Field(
        0.5, gt=0, le=1, description="how alike a screen must be to the recorded one for a step to replay"
    )
    namespace: str = Field(
        "", max_length=200, description="whose plans a run may replay and adds to (the service sets each task's "
        "owner or team; empty: the local user's)"
    )
    shared: bool = Field(False, description="service: every token's tasks share one plan cache (an admin's choice)")


class TokenSettings(BaseModel):
    """One named API token of ``server.tokens``: whose it is and what it may do (docs/security.md).
    A bare token string in ``server.tokens`` is read as ``{token = "…", role = "admin"}``, what
    every token could do before roles existed."""

    model_config = _SECTION

    token: SecretStr
    role: Literal["admin", "user", "viewer"] = Field(
        "user", description="admin: everything; user: its own (and its team's) tasks; viewer: reads its team's tasks"
    )
    team: str | None = Field(None, min_length=1, max_length=100, description="members of a team share their tasks")
    secrets: list[str] = Field(
        default_factory=list, max_length=1000,
        description="the names of agent.named_secrets this token may have typed ({{secret:NAME}} in its tasks, "
        "schedules and scripts); an admin may use every one, a user or viewer none but these",
    )


class RetentionSettings(BaseModel):
    """What the service deletes, and when (``mobile-agent gc``, and a periodic cleanup: the API
    server's timer, the embedded service's and a farm's alike). Finished tasks only, oldest first; a queued,
    running or waiting task's row and files are never touched. 0 turns a limit off."""

    model_config = _SECTION

    task_days: float = Field(
        30.0, ge=0, le=36500, description="finished tasks older than this (their row, events, trajectory) go"
    )
    runs_max_mb: float = Field(
        0.0, ge=0, description="the task folders' total size: the oldest finished tasks go until it fits"
    )
    cache_unused_days: float = Field(90.0, ge=0, le=36500, description="cached plans unused this long go")
    audit_days: float = Field(365.0, ge=0, le=36500, description="audit trail rows (GET /v1/audit) older than this go")
    relay_max_age_s: float = Field(
        3600.0, ge=0, description="the farm's live-view relay files (<runs>/.live) older than this go"
    )
    interval_s: float = Field(3600.0, ge=10, le=7 * 86400, description="how often the cleanup runs")
    min_free_mb: float = Field(
        100.0, ge=0, description="new tasks are refused (507) while the runs folder's disk has less free space"
    )


class ServerSettings(BaseModel):
    """The REST service."""

    model_config = _SECTION

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    api_token: SecretStr | None = None
    database_url: str = "sqlite:///runs/mobile-agent.sqlite3"
    cors_origins: list[str] = Field(default_factory=list)
    session_hours: float = Field(12.0, gt=0, le=24 * 90, description="how long a dashboard sign-in lasts")
    max_instruction_chars: int = Field(2000, ge=1)
    webhook_secret: SecretStr | None = Field(None, description="signs task webhooks (callback_url) with HMAC-SHA256")
    webhook_attempts: int = Field(5, ge=1, le=20, description="tries per webhook delivery, with exponential backoff")
    webhook_backoff_s: float = Field(1.0, ge=0, le=600, description="the first retry's delay; doubled each time")
    max_body_bytes: int = Field(64 * 1024, ge=1024)
    max_steps_limit: int = Field(100, ge=1)
    workers: int = Field(0, ge=0, description="0 = one worker per device")
    instance_id: str = Field("", description="names this instance in a shared database; default: hostname")
    device_refresh_s: float = Field(5.0, gt=0, description="how often the device list is re-read")
    preload_perception: bool = Field(True, description="load the perception models at startup, not on first use")
    devices: list[str] = Field(default_factory=list, description="serials this instance drives; empty = every attached phone")
    planner_base_urls: list[str] = Field(
        default_factory=list,
        description="planner endpoints a task's base_url may name besides planner.base_url (they get the planner's API key)",
    )
    planner_models: list[str] = Field(
        default_factory=list, max_length=1000,
        description="models a user's task may name besides planner.model (the server's API key pays for them); "
        "an admin's task may name any",
    )
    tokens: dict[str, TokenSettings] = Field(
        default_factory=dict,
        description="more API tokens by name, besides api_token (an admin): a token string (an admin), or "
        "{token, role = admin | user | viewer, team} (docs/security.md)",
    )
    webhook_allow: list[str] = Field(
        default_factory=list,
        description="networks (10.0.0.0/8) or host names a callback_url may reach although they are not public",
    )
    max_active_per_token: int = Field(
        0, ge=0, description="tasks one token may have queued or running at once (0 = no limit)"
    )
    over_quota: Literal["refuse", "wait"] = Field(
        "refuse",
        description="refuse: a submission over max_active_per_token is a 429; wait: it is queued, and the "
        "limit counts running tasks (the others wait, saying why)",
    )
    schedule_min_interval_s: float = Field(
        60.0, ge=1.0, le=86400.0,
        description="the shortest time between two occurrences of a schedule (every_s, or a cron's closest two)",
    )
    max_schedules_per_token: int = Field(20, ge=0, description="schedules one token may have (0 = no limit)")
    live_fps: float = Field(3.0, gt=0, le=10, description="frames a second of a phone's live view, shared by its viewers")
    live_viewers_per_phone: int = Field(20, ge=0, description="live viewers of one phone at once (0 = no limit)")
    live_viewers_per_token: int = Field(10, ge=0, description="live views one token may have open (0 = no limit)")
    event_streams_per_token: int = Field(
        50, ge=0, description="task event streams (GET /v1/tasks/{id}/events) one token may have open (0 = no limit)"
    )
    mcp_sessions_per_token: int = Field(
        20, ge=0, description="MCP sessions over HTTP (`mobile-agent mcp --transport http`) one token may hold open "
        "(0 = no limit)"
    )
    retention: RetentionSettings = Field(default_factory=RetentionSettings)


    @field_validator("tokens", mode="before")
    @classmethod
    def _bare_token_is_admin(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {name: {"token": one, "role": "admin"} if isinstance(one, str | SecretStr) else one
                for name, one in value.items()}

    def may_type(self, owner: str | None, secret: str) -> bool:
        """Whether a task of ``owner`` may type ``{{secret:NAME}}`` (``agent.named_secrets``): an
        admin's (``api_token``'s "default", "anonymous" with no token, a token of role admin, a row
        from before owners) every one, another token's only those its ``secrets`` lists; a token no
        longer configured none (docs/security.md)."""
        if owner in (None, "default", "anonymous"):
            return True
        entry = self.tokens.get(owner)
        return entry is not None and (entry.role == "admin" or secret in entry.secrets)

    @field_validator("tokens")
    @classmethod
    def _token_names(cls, value: dict[str, TokenSettings]) -> dict[str, TokenSettings]:
        for name in value:
            # "anonymous" is the local admin of a service with no token (its tasks and plans are the
            # local user's: server.runner.cache_namespace), "local" MCP's stdio user (its runs use the
            # command line's plan cache and every secret); a token of either name would share them
            if not name or len(name) > 100 or not name.isprintable() or name in ("default", "anonymous", "local"):
                raise ValueError(f"token name {name!r}: 1-100 printable characters, not 'default' (api_token's), "
                                 "'anonymous' (the local admin's, with no token) nor 'local' (MCP's stdio user)")
        return value


class FarmSettings(BaseModel):
    """Many hosts, one queue (``mobile-agent worker`` on each host, ``serve --farm``; docs/farm.md)."""

    model_config = _SECTION

    enabled: bool = Field(False, description="serve: hold no phone, queue tasks for the hosts' workers")
    host: str = Field("", max_length=100, description="this worker's host name; default: the machine's hostname")
    labels: dict[str, str] = Field(default_factory=dict, description="labels of this host's phones, e.g. lab = \"berlin\"")
    heartbeat_s: float = Field(5.0, gt=0, description="how often a worker says it is alive")
    host_timeout_s: float = Field(30.0, gt=0, description="a host silent this long is lost; its running tasks end")
    retries: int = Field(0, ge=0, le=10, description="default: times a task whose host died is run again")
    poll_s: float = Field(0.5, gt=0, description="a phone's worker looks for a job at least this often")


def _check_iphone_name(name: str) -> None:
    """An iPhone's name (``ios:NAME``), in ``ios.devices`` and ``ios.usb_names`` alike."""
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", name):
        raise ValueError(f"an iPhone's name is letters, digits and . _ - (at most 64), got {name!r}")


class IosSettings(BaseModel):
    """iPhones reached through WebDriverAgent (docs/ios.md): ``--serial ios:NAME`` drives the
    WDA at ``devices[NAME]``."""

    model_config = _SECTION

    devices: dict[str, str] = Field(
        default_factory=dict, description='iPhone name -> its WDA URL, e.g. {"iphone-1" = "http://127.0.0.1:8100"}'
    )
    timeout_s: float = Field(30.0, gt=0, description="how long one WDA request may take")
    usb: Literal["auto"] | bool = Field(
        "auto", description='iPhones attached over USB (usbmuxd, as ios:UDID): "auto" where pymobiledevice3 is '
        "installed (the ios-usb extra), true to require it, false to ignore USB"
    )
    wda_port: int = Field(8100, ge=1, le=65535, description="the port WebDriverAgent listens on, on a USB iPhone")
    usbmuxd: str | None = Field(
        None, description="usbmuxd's socket: a unix socket path or HOST:PORT; default /var/run/usbmuxd "
        "(or USBMUXD_SOCKET_ADDRESS)"
    )
    usb_names: dict[str, str] = Field(
        default_factory=dict, description='a name for a USB iPhone, NAME -> its UDID: ios:NAME instead of ios:UDID'
    )

    @field_validator("usb_names")
    @classmethod
    def _check_usb_names(cls, names: dict[str, str]) -> dict[str, str]:
        for name, udid in names.items():
            _check_iphone_name(name)
            if not re.fullmatch(r"[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{16}|[0-9A-Fa-f]{40}", udid):
                raise ValueError(f"the UDID of {name!r} is 24 hex digits (8-16, a dash between) or 40, got {udid!r}")
        if len({udid.replace("-", "").upper() for udid in names.values()}) < len(names):
            raise ValueError("ios.usb_names names one UDID twice")
        return names

    @field_validator("usb", mode="before")
    @classmethod
    def _check_usb(cls, value: Any) -> Any:
        words = {"auto": "auto", "true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in words:
            return words[value.strip().lower()]
        raise ValueError(f'ios.usb is "auto", true or false, got {value!r}')

    @field_validator("usbmuxd")
    @classmethod
    def _check_usbmuxd(cls, address: str | None) -> str | None:
        if address is None or address.startswith("/") or re.fullmatch(r"[A-Za-z0-9.-]+:\d{1,5}", address):
            return address
        raise ValueError(f"usbmuxd's address is an absolute unix socket path or HOST:PORT, got {address!r}")

    @field_validator("devices")
    @classmethod
    def _check_devices(cls, devices: dict[str, str]) -> dict[str, str]:
        for name, url in devices.items():
            _check_iphone_name(name)
            if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
                raise ValueError(f"the WDA URL of {name!r} must be http(s)://host:port, got {url!r}")
        return devices

    @model_validator(mode="after")
    def _one_name_one_phone(self) -> IosSettings:
        both = sorted(set(self.devices) & set(self.usb_names))
        if both:
            raise ValueError(f"{', '.join(both)}: named in both ios.devices and ios.usb_names")
        return self


class Settings(BaseSettings):
    """Everything configurable, validated once."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    adb: AdbSettings = Field(default_factory=AdbSettings)
    planner: PlannerSettings = Field(default_factory=PlannerSettings)
    perception: PerceptionSettings = Field(default_factory=PerceptionSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    cache: CacheSettings = Field(default_factory=CacheSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    farm: FarmSettings = Field(default_factory=FarmSettings)
    ios: IosSettings = Field(default_factory=IosSettings)

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        toml_file = _toml_file.get()
        if toml_file is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_file))
        sources.append(_AdbEnvironmentSource(settings_cls))
        return tuple(sources)

    def with_overrides(self, overrides: dict[str, Any]) -> Settings:
        """A copy with dotted overrides applied and validated (``{"agent.max_steps": 5}``)."""
        data = self.model_dump()
        _apply_dotted(data, overrides)
        try:
            return Settings.model_validate(_reveal(data))
        except ValidationError as exc:
            raise ConfigError(f"invalid settings: {_summarize(exc)}", errors=exc.errors(include_url=False)) from exc


# adb's conventions (adb(1), adbutils): the weakest source, so explicit settings win.
ADB_ENVIRONMENT = {
    "ANDROID_ADB_SERVER_PORT": "server_port",
    "ANDROID_ADB_SERVER_HOST": "server_host",
    "ANDROID_SERIAL": "serial",
}


class _AdbEnvironmentSource(PydanticBaseSettingsSource):
    """``ANDROID_ADB_SERVER_PORT`` / ``ANDROID_ADB_SERVER_HOST`` / ``ANDROID_SERIAL``."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover - unused
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        adb = {key: os.environ[var] for var, key in ADB_ENVIRONMENT.items() if os.environ.get(var, "").strip()}
        return {"adb": adb} if adb else {}


def load_settings(config_file: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Build the settings from overrides, environment, TOML file and defaults.

    ``overrides`` takes dotted keys (``"planner.model"``) or nested dicts; values of
    ``None`` are ignored so that unset CLI flags fall through.
    """
    path = Path(config_file) if config_file else None
    if path is None and os.environ.get(f"{ENV_PREFIX}CONFIG"):
        path = Path(os.environ[f"{ENV_PREFIX}CONFIG"])
    if path is not None and not path.is_file():
        raise ConfigError(f"config file not found: {path}", path=str(path))
    nested: dict[str, Any] = {}
    _apply_dotted(nested, {k: v for k, v in (overrides or {}).items() if v is not None})
    token = _toml_file.set(path)
    try:
        return Settings(**nested)
    except ValidationError as exc:
        raise ConfigError(f"invalid settings: {_summarize(exc)}", errors=exc.errors(include_url=False)) from exc
    except (OSError, ValueError) as exc:  # unreadable or malformed TOML
        raise ConfigError(f"cannot read config file {path}: {exc}", path=str(path)) from exc
    finally:
        _toml_file.reset(token)


def _apply_dotted(target: dict[str, Any], overrides: dict[str, Any]) -> None:
    for key, value in overrides.items():
        parts = key.split(".")
        node = target
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        if isinstance(value, dict) and isinstance(node.get(parts[-1]), dict):
            _apply_dotted(node[parts[-1]], value)
        else:
            node[parts[-1]] = value


def _reveal(data: Any) -> Any:
    if isinstance(data, SecretStr):
        return data.get_secret_value()
    if isinstance(data, dict):
        return {k: _reveal(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_reveal(v) for v in data]
    return data


def _summarize(exc: ValidationError) -> str:
    parts = []
    from_env = {f"adb.{key}": var for var, key in ADB_ENVIRONMENT.items() if os.environ.get(var, "").strip()}
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"])
        origin = f" (is {from_env[loc]}={os.environ[from_env[loc]]!r} right?)" if loc in from_env else ""
        parts.append(f"{loc}: {err['msg']}{origin}")
    return "; ".join(parts)
