"""The app factory: ``create_app(settings)`` wires store, phones, scheduler and routes.

The lifespan opens the database (tasks left running by a dead process become
``interrupted``), discovers phones, loads the perception models once, then starts the
scheduler; on shutdown it stops dispatching and asks running tasks to stop.

Run with ``mobile-agent serve`` or ``uvicorn --factory server.app:app_from_env``.

May import: fastapi, starlette, ``server.*``, ``mobile_agent`` (public API).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import math
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mobile_agent.errors import ConfigError
from mobile_agent.settings import Settings, load_settings
from server.devices import AdbDeviceSource, DevicePool, DeviceSource
from server.metrics import Metrics
from server.quota import Quota
from server.runner import AgentTaskRunner, TaskRunner
from server.scheduler import Scheduler
from server.shutdown import shutdown_step
from server.state import Dispatcher, EventHub, Phones, ServiceState
from server.store import TaskStore, check_database_url
from server.webhooks import WebhookSender

__all__ = ["app_from_env", "check_exposure", "create_app"]

log = logging.getLogger(__name__)

API_VERSION = "v1"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings) -> None:
    """Refuse to serve beyond localhost without an API token (server.api_token, or any of
    server.tokens: with none, every request would be the local admin, ``server.auth``)."""
    from server.auth import principals

    if not is_loopback(settings.server.host) and not principals(settings.server):
        raise ConfigError(
            f"server.host is {settings.server.host!r} (beyond localhost) but no server.api_token is set; "
            "set MOBILE_AGENT_SERVER__API_TOKEN (or server.tokens) or listen on 127.0.0.1",
            host=settings.server.host,
        )


class BodyLimitMiddleware:
    """413 for request bodies over ``max_bytes``, declared or streamed."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    await _send_json(send, 413, {"detail": f"request body over {self.max_bytes} bytes"})
                    return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(413, f"request body over {self.max_bytes} bytes")
            return message

        await self.app(scope, limited, send)


class MetricsMiddleware:
    """Counts requests and times them, labelled by route template (not raw path)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        answered = False

        def observe(status_code: int) -> None:
            route = scope.get("route")
            path = (route.path if isinstance(route, (Route, Mount, WebSocketRoute)) else "") or "unmatched"
            if route is not None and not scope["path"].startswith(path.split("{")[0]):
                path = f"/{API_VERSION}{path}"
            self.metrics.observe_request(scope["method"], path, status_code, time.perf_counter() - started)

        async def send_wrapper(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.start":
                answered = True
                observe(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        except Exception:
            # the 500 is sent by Starlette's outermost error middleware, outside this one
            if not answered:
                observe(500)
            raise


def _json_safe(value: Any) -> Any:
    """Non-finite floats as text: JSON has no Infinity, and a 422 that echoes one must not fail.
    Bytes (a body that is not UTF-8, echoed as the error's input) as text with replacements."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


class SafeJSONResponse(JSONResponse):
    """JSON as ASCII: a string a client sent may hold a lone surrogate ("\\ud800"), which
    is valid JSON but cannot be encoded as UTF-8; escaped, it goes back as it came."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own handler, with the safe encoding (a 404 may echo a path or serial)."""
    assert isinstance(exc, StarletteHTTPException)
    headers = exc.headers
    if exc.status_code in (204, 304):
        return Response(status_code=exc.status_code, headers=headers)
    return SafeJSONResponse({"detail": _json_safe(jsonable_encoder(exc.detail))}, status_code=exc.status_code,
                            headers=headers)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    """The usual 422 body; an echoed ``1e999`` or ``Infinity`` becomes the string "inf". A
    body that is not an object because it was not sent as JSON (``curl -d`` without a
    content-type sends a form) says so."""
    errors = list(exc.errors()) if isinstance(exc, RequestValidationError) else []
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        errors = [
            {**e, "msg": f"{e.get('msg')}: send the body as JSON, with content-type: application/json"}
            if tuple(e.get("loc", ())) == ("body",) else e
            for e in errors
        ]
    return SafeJSONResponse({"detail": _json_safe(jsonable_encoder(_json_safe(errors)))}, status_code=422)


async def _send_json(send: Send, status_code: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status_code,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def create_app(
    settings: Settings,
    *,
    runner: TaskRunner | None = None,
    device_source: DeviceSource | None = None,
) -> FastAPI:
    """The service. ``runner`` and ``device_source`` default to the real agent and adb; the
    service closes ``device_source`` when it stops (``DeviceSource.close``)."""
    check_exposure(settings)
    check_database_url(settings.server.database_url)
    if settings.farm.enabled and not settings.server.database_url.startswith(("postgresql", "postgres:")):
        raise ConfigError("farm.enabled (serve --farm) needs a PostgreSQL server.database_url: the farm's queue "
                          "lives there", setting="server.database_url")
    if settings.farm.enabled:
        try:
            import procrastinate  # noqa: F401
        except ImportError as exc:
            raise ConfigError("serve --farm needs the postgres extra: pip install 'mobile-agent[postgres]'") from exc
    from server.api import audit, cache, dashboard, devices, me, ops, people, schedules, tasks

    metrics = Metrics()
    token = settings.server.api_token.get_secret_value() if settings.server.api_token else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = _build_state(settings, runner, device_source, metrics, token or None)
        app.state.service = state
        # a farm's API server runs nothing (and may share its hostname with a worker's)
        interrupted = [] if settings.farm.enabled else await asyncio.to_thread(
            state.store.interrupt_running, instance=state.store.instance)
        for task_id in interrupted:
            log.warning("task %s was running when the server stopped: now interrupted", task_id)
        # no run will tell their end: their callback_url hears it here, once
        await asyncio.to_thread(_tell_interrupted, state.store, interrupted, state.webhooks)
        await asyncio.to_thread(_refuse_revoked_queued, settings, state.store, state.webhooks)
        await asyncio.to_thread(state.pool.refresh)
        _warn_about_setup(settings, state)
        if settings.server.preload_perception and not settings.farm.enabled:
            try:
                await asyncio.to_thread(state.runner.prepare)
            except Exception as exc:  # runs will retry, and fail with a typed error
                log.warning("perception models not loaded at startup: %s", exc)
        state.scheduler.start()
        from server.auth import submit_refusal, team_now
        from server.farm.recurring import ScheduleTicker

        ticker = ScheduleTicker(state.schedules, state.store, state.scheduler.submit,
                                quota=Quota.of(settings.server), refusal=state.retention.disk_refusal,
                                owner_refusal=lambda owner: submit_refusal(settings.server, owner),
                                owner_team=lambda owner, stored: team_now(settings.server, owner, stored))
        ticker.start()
        from server.retention import RetentionTimer

        cleanup = RetentionTimer(state.retention, settings.server.retention.interval_s)
        cleanup.start()
        state.ready.set()
        try:
            yield
        finally:  # each step runs whatever the one before did (an error is logged)
            state.ready.clear()
            _shutdown_step("the retention timer", cleanup.stop)
            _shutdown_step("the schedule ticker", ticker.stop)
            _shutdown_step("the event streams", state.drain)
            await asyncio.to_thread(_shutdown_step, "the scheduler", state.scheduler.stop)
            # the webhooks of the ends just stored (the interrupted runs'), before the process takes their threads
            await asyncio.to_thread(_shutdown_step, "the webhooks under way", _waiting_webhooks(state))
            # the phones kept for screenshots (a USB iPhone's forward)
            await asyncio.to_thread(_shutdown_step, "the device source", state.pool.close)
            _shutdown_step("the task store", state.store.close)

    app = FastAPI(
        title="mobile-agent",
        version="0.1.0",
        description="Submit instructions to Android phones, watch the runs, fetch their trajectories.",
        lifespan=lifespan,
        default_response_class=SafeJSONResponse,
        # served below behind the token: the schema maps every route of the API
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    _add_docs(app)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    if settings.server.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.server.cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
            allow_credentials=True,
        )
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.server.max_body_bytes)
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    app.include_router(tasks.router, prefix=f"/{API_VERSION}")
    app.include_router(people.router, prefix=f"/{API_VERSION}")
    app.include_router(devices.router, prefix=f"/{API_VERSION}")
    app.include_router(cache.router, prefix=f"/{API_VERSION}")
    app.include_router(schedules.router, prefix=f"/{API_VERSION}")
    app.include_router(audit.router, prefix=f"/{API_VERSION}")
    app.include_router(me.router, prefix=f"/{API_VERSION}")
    app.include_router(ops.router)
    app.include_router(dashboard.router)
    static_dir = Path(str(resources.files("server") / "static"))
    app.mount("/dashboard/static", StaticFiles(directory=static_dir), name="static")
    return app


def _add_docs(app: FastAPI) -> None:
    """/openapi.json and /docs (Swagger UI) behind the same token as the API (the
    dashboard's session cookie works too, so a signed-in browser can read them)."""
    from fastapi.openapi.docs import get_swagger_ui_html

    from server.deps import Authorized

    @app.get("/openapi.json", include_in_schema=False, dependencies=[Authorized])
    def openapi_schema() -> JSONResponse:
        return SafeJSONResponse(app.openapi())

    @app.get("/docs", include_in_schema=False, dependencies=[Authorized])
    def swagger_ui() -> Any:
        return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{app.title} API")


def _build_state(
    settings: Settings,
    runner: TaskRunner | None,
    device_source: DeviceSource | None,
    metrics: Metrics,
    token: str | None,
) -> ServiceState:
    instance = settings.server.instance_id or socket.gethostname()
    store = TaskStore(settings.server.database_url, instance=instance)
    webhooks = WebhookSender(settings, report=store.add_event)  # the ends this process tells
    runner = runner or AgentTaskRunner(settings, store=store, webhooks=webhooks)
    hub = EventHub(settings.server.event_streams_per_token)
    runs_dir = Path(settings.agent.output_dir).resolve()
    pool: Phones
    scheduler: Dispatcher
    if settings.farm.enabled:  # the phones are the worker hosts' (server/farm, docs/farm.md)
        from server.farm.service import build_farm

        pool, scheduler = build_farm(settings, store, hub.notify, metrics, webhooks=webhooks)
    else:
        from mobile_agent.device import lease_holder
        from server.runner import tell_ends

        local = DevicePool(device_source or AdbDeviceSource(settings), allow=settings.server.devices,
                           held=lambda serial: lease_holder(settings.adb, serial) is not None)
        pool = local
        scheduler = Scheduler(
            store,
            local,
            runner,
            runs_dir=runs_dir,
            max_workers=settings.server.workers,
            refresh_interval_s=settings.server.device_refresh_s,
            notify=hub.notify,
            metrics=metrics,
            # a run's end told to its callback_url as stored (the status GET /v1/tasks/{id} says)
            told=lambda ids: tell_ends(webhooks, store, ids),
        )
    from server.farm.recurring import Schedules

    return ServiceState(
        schedules=Schedules(store.engine),
        settings=settings,
        store=store,
        pool=pool,
        scheduler=scheduler,
        hub=hub,
        metrics=metrics,
        runner=runner,
        runs_dir=runs_dir,
        api_token=token,
        webhooks=webhooks,
    )


def app_from_env() -> FastAPI:
    """For ``uvicorn --factory``: settings from the environment / MOBILE_AGENT_CONFIG."""
    return create_app(load_settings())


def _shutdown_step(name: str, step: Callable[[], object]) -> None:
    """One step of the service's shutdown (``server.shutdown``): an error in it is logged and
    the next steps still run."""
    shutdown_step(log, name, step)


def _waiting_webhooks(state: ServiceState) -> Callable[[], object]:
    """The shutdown step that waits for the ``task_finished`` webhooks under way (``STOP_WAIT_S``
    at most): a run the stop interrupted is told so before the process ends their threads."""
    from server.webhooks import STOP_WAIT_S

    webhooks = state.webhooks
    return lambda: webhooks.wait(STOP_WAIT_S)


def _tell_interrupted(store: TaskStore, task_ids: list[int], webhooks: WebhookSender) -> None:
    """``webhooks``: the service's (``ServiceState.webhooks``), which its stop waits for."""
    from server.runner import tell_ends

    if task_ids:
        tell_ends(webhooks, store, task_ids)


def _refuse_revoked_queued(settings: Settings, store: TaskStore, webhooks: WebhookSender) -> None:
    """A queued task whose token was taken out of ``server.tokens`` (or made a viewer) ends
    ``error`` without running, before any phone takes it: it would run with the server's planner
    key for an owner who may no longer submit (``server.auth.submit_refusal``, as a schedule's
    occurrence). Tokens change only with a restart, so this runs at startup, before the
    scheduler, and on a farm's API server too: its workers hold no tokens and run what is queued."""
    from server.auth import submit_refusal
    from server.runner import tell_unrun_end

    for task in store.queued_tasks():
        refusal = submit_refusal(settings.server, task.owner)
        if refusal is None:
            continue
        error = {"type": "OwnerRefused", "message": f"not run: {refusal}"}
        if store.refuse_queued(task.id, error):
            log.warning("queued task %s not run: %s", task.id, refusal)
            tell_unrun_end(webhooks, task, "error", error=error)  # no run tells this end: its callback_url hears it here


def _warn_about_setup(settings: Settings, state: ServiceState) -> None:
    """What would make every task fail or wait, said once at startup rather than per task."""
    if not settings.planner.configured and not settings.server.planner_base_urls:
        log.warning(
            "no planner endpoint configured (MOBILE_AGENT_PLANNER__BASE_URL, MOBILE_AGENT_PLANNER__API_KEY): "
            "tasks will end in error"
        )
    known = {slot.serial for slot in state.pool.slots()}
    missing = [serial for serial in settings.server.devices if serial not in known]
    if missing:
        log.warning("server.devices not attached now: %s (a phone joins when the adb server lists it)", ", ".join(missing))
