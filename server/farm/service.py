"""The API server's side of the farm (``serve --farm``): it holds no phone.

``FarmPhones`` stands where the embedded ``DevicePool`` stands (the routes read phones the
same way) but reads every host's phones from the database; ``FarmDispatcher`` stands where
the embedded ``Scheduler`` stands: a submission becomes a procrastinate job in its route's
queue, a cancel goes through the store (the worker running it acts on the flag). A loop
thread holds the procrastinate app, runs the farm's maintenance worker and LISTENs for the
workers' event notifications, which wake the event streams.

May import: procrastinate, ``server.*``, the standard library.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from mobile_agent.device import platform_of
from mobile_agent.errors import DeviceError
from mobile_agent.settings import Settings
from server.devices import DeviceSlot
from server.farm.maintenance import FarmMaintenance
from server.farm.notify import PgListener, PgNotifier
from server.farm.queue import (
    MAINTENANCE_QUEUE,
    build_jobs_app,
    build_maintenance_app,
    conninfo,
    defer_task,
    install_schema,
)
from server.farm.registry import FarmRegistry, PhoneRow
from server.farm.routing import Route, RouteError
from server.metrics import Metrics
from server.runner import tell_ends
from server.shutdown import shutdown_step
from server.store import TaskRow, TaskStore
from server.webhooks import WebhookSender

__all__ = ["FarmDispatcher", "FarmPhones", "FarmSlot", "build_farm"]

log = logging.getLogger(__name__)


@dataclass
class FarmSlot(DeviceSlot):
    """A phone of some host, as the device routes show it."""

    host: str = ""
    host_lost: bool = False
    properties: dict[str, str] = field(default_factory=dict)
    farm_state: str = ""
    held: bool = False  # by another interface's run on its host, as its worker wrote (``PhoneRow.held``)

    def public(self) -> dict[str, Any]:
        return {**super().public(), "state": self.farm_state, "host": self.host, "properties": self.properties,
                "busy": self.task_id is not None or self.held}


def _slot(row: PhoneRow) -> FarmSlot:
    props = row.properties
    width = int(props["width"]) if props.get("width", "").isdigit() else None
    height = int(props["height"]) if props.get("height", "").isdigit() else None
    return FarmSlot(
        serial=row.serial, state=row.state if not row.host_lost else "offline", model=props.get("model"),
        platform=props.get("platform") or platform_of(row.serial),
        width=width, height=height, task_id=row.task_id, lost=row.host_lost, present=True, ever_ready=True,
        host=row.host, host_lost=row.host_lost, properties=dict(props), farm_state=row.public_state,
        held=row.held,
    )


class _NoLocalPhones:
    """The API server has no adb of its own: a screenshot or ``adb connect`` is the host's job."""

    def screenshot(self, serial: str, fmt: str) -> bytes:
        raise DeviceError(f"{serial} is attached to a worker host, not to this API server (serve --farm)",
                          serial=serial)

    def connect(self, address: str) -> str:
        raise DeviceError("the API server of a farm holds no phone: connect it on a worker host", address=address)


class FarmPhones:
    """Every host's phones, read from the database (the ``DevicePool`` interface)."""

    allow: frozenset[str] = frozenset()

    def __init__(self, registry: FarmRegistry) -> None:
        self.registry = registry
        self.source = _NoLocalPhones()

    def refresh(self) -> None:
        return  # each worker refreshes its own phones

    def slots(self) -> list[DeviceSlot]:
        return [_slot(r) for r in self.registry.phones()]

    def get(self, serial: str) -> DeviceSlot | None:
        row = self.registry.phone(serial)
        return _slot(row) if row is not None else None

    def close(self) -> None:
        return  # no phone is opened here: each worker host closes its own (``FarmHost``)

    def knows(self, serial: str) -> bool:
        return self.registry.phone(serial) is not None

    def held(self, serial: str) -> bool:
        """As the phone's worker last saw it: this server cannot look at another host's locks."""
        row = self.registry.phone(serial)
        return row is not None and row.held

    def held_unlisted(self, slot: DeviceSlot) -> bool:
        """Never: a farm slot's ``public()`` counts a held phone busy already (``FarmSlot.held``, read
        with it), so a device listing reads no phone a second time."""
        return False

    def any_free(self) -> bool:
        return any(r.public_state == "free" for r in self.registry.phones())


class FarmDispatcher:
    """Submissions to the farm's queue (the ``Scheduler`` interface)."""

    def __init__(self, settings: Settings, store: TaskStore, registry: FarmRegistry, *, notify_local: Any,
                 metrics: Metrics | None = None, webhooks: WebhookSender | None = None) -> None:
        url = settings.server.database_url
        install_schema(url)
        self.settings = settings
        self.store = store
        self.registry = registry
        self.metrics = metrics or Metrics()
        # the ends this API server tells: a lost host's tasks (its maintenance), as a worker's does
        self.webhooks = webhooks or WebhookSender(settings, report=store.add_event)
        self.jobs_app = build_jobs_app(url, max_connections=8)
        self.maintenance_app = build_maintenance_app(url, every_s=max(1, int(settings.farm.heartbeat_s)))
        self.notifier = PgNotifier(conninfo(url))
        self.listener = PgListener(conninfo(url), notify_local)
        self._notify_local = notify_local
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._stop: asyncio.Event | None = None
        self._held = threading.Event()
        self.maintenance: FarmMaintenance | None = None

    # --- lifecycle ------------------------------------------------------------------

    def start(self) -> None:
        self.listener.start()
        self._thread = threading.Thread(target=self._run_loop, name="farm", daemon=True)
        self._thread.start()
        if not self._started.wait(30):
            raise RuntimeError("the farm's queue did not start in 30 s")

    def _run_loop(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        from procrastinate.worker import Worker

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        await self.jobs_app.open_async()
        await self.maintenance_app.open_async()
        farm = self.settings.farm
        self.maintenance = FarmMaintenance(
            self.jobs_app, self.store, self.registry, host_timeout_s=farm.host_timeout_s,
            default_retries=farm.retries, notify=self._notify_both,
            defer=functools.partial(defer_task, self.jobs_app, self.registry),
            told=functools.partial(tell_ends, self.webhooks, self.store),  # no run tells a lost host's ends
        )
        self._started.set()
        try:
            while not self._stop.is_set():
                worker = Worker(
                    self.maintenance_app, queues=[MAINTENANCE_QUEUE], name="api/maintenance",
                    fetch_job_polling_interval=max(1.0, farm.heartbeat_s),
                    additional_context={"maintenance": self.maintenance}, install_signal_handlers=False,
                    delete_jobs="always",  # one row every few seconds otherwise, forever
                    update_heartbeat_interval=farm.heartbeat_s, stalled_worker_timeout=farm.host_timeout_s,
                )
                runner = asyncio.create_task(worker.run())
                stopper = asyncio.create_task(self._stop.wait())
                await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)
                if self._stop.is_set():
                    worker.stop()
                    await asyncio.wait({runner}, timeout=10)
                    break
                stopper.cancel()
                if runner.exception() is not None:
                    log.warning("the maintenance worker stopped (%s); starting it again", runner.exception())
                await asyncio.sleep(1.0)
        finally:
            await self.jobs_app.close_async()
            await self.maintenance_app.close_async()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Each step through ``server.shutdown.shutdown_step``: one that raises is logged and the
        later ones still run (the queue's loop and its connections, the notifier's connection)."""
        shutdown_step(log, "the farm's notification listener", self.listener.stop)
        shutdown_step(log, "the farm's queue loop", lambda: self._stop_loop(timeout_s))
        shutdown_step(log, "the farm's notifier", self.notifier.close)

    def _stop_loop(self, timeout_s: float) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout_s)

    def hold(self) -> None:
        self._held.set()

    def wake(self) -> None:
        return  # the workers hear of new jobs from procrastinate's own notifications

    @property
    def running_count(self) -> int:
        return 0  # runs happen on the hosts

    def running_task(self, task_id: int) -> bool:
        return False

    def _notify_both(self, task_id: int) -> None:
        self._notify_local(task_id)
        self.notifier.notify(task_id)

    # --- requests -------------------------------------------------------------------

    def route_refusal(self, device: str, options: dict[str, Any]) -> str | None:
        """Why no phone could ever run a task routed so, or None."""
        try:
            route = Route.from_options(device, options)
        except RouteError as exc:
            return str(exc)
        if route.is_any:
            return None
        phones = self.registry.phones()
        if not any(route.matches(p.routable()) for p in phones):
            known = len(phones)
            return (f"no phone of the farm matches {route.describe()} ({known} phone{'s' if known != 1 else ''} "
                    "registered; GET /v1/devices lists them with their properties)")
        return None

    def waiting_reason(self, task: TaskRow) -> str | None:
        """Why a queued task has not started: the states of the phones that match it."""
        if task.status != "queued":
            return None
        try:
            route = Route.from_options(task.device_request, task.options)
        except RouteError:
            return None
        matching = [p for p in self.registry.phones() if route.matches(p.routable())]
        if not matching:
            return f"no phone matches {route.describe()}"
        states: dict[str, int] = {}
        for phone in matching:
            states[phone.public_state] = states.get(phone.public_state, 0) + 1
        summary = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
        if "free" in states:
            return f"starting: {summary}"
        if "busy" in states:
            return f"waiting for a phone ({summary})"
        return f"every matching phone is away ({summary}): the task waits until one comes back"

    def submit(self, task: TaskRow) -> None:
        if self._loop is None:
            raise RuntimeError("the farm's queue is not started")
        future = asyncio.run_coroutine_threadsafe(defer_task(self.jobs_app, self.registry, task), self._loop)
        future.result(30)

    def cancel(self, task_id: int) -> bool:
        """A queued task is cancelled here (its job then finds it cancelled and does nothing);
        a running one is flagged, and its host stops it at the next step."""
        if self.store.cancel_queued(task_id):
            self.metrics.observe_run("cancelled", None)
            self._notify_both(task_id)
            return True
        if not self.store.request_cancel(task_id):
            return False
        self._notify_both(task_id)
        return True


def build_farm(settings: Settings, store: TaskStore, notify_local: Any, metrics: Metrics, *,
               webhooks: WebhookSender | None = None) -> tuple[FarmPhones, FarmDispatcher]:
    """The phones and the dispatcher of ``serve --farm`` (``server.app`` builds the rest)."""
    registry = FarmRegistry(store.engine, host_timeout_s=settings.farm.host_timeout_s)
    registry.create_tables()
    dispatcher = FarmDispatcher(settings, store, registry, notify_local=notify_local, metrics=metrics,
                                webhooks=webhooks)
    return FarmPhones(registry), dispatcher
