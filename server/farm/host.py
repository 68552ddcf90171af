"""``mobile-agent worker``: one per host; drives the phones of this host's own adb server.

It registers the host and its phones (serial, platform, model, android or ios version, sdk,
screen size, profile, and the host's labels; the iPhones of its ``ios.devices`` too) in the database, heartbeats, and runs one procrastinate worker per free
phone on the queues that phone can serve (``any``, its serial's, and every recorded route it
satisfies; its serial's only while another interface's run holds it, as ``DevicePool(held=)``
passes such a phone over for "any"). A job runs with the embedded service's own run logic (``server.scheduler``:
claim, events, finish, the phone given back), so a task runs the same on one machine and on
a farm. Events go to the shared database (with a NOTIFY to wake the API's streams);
trajectories to ``agent.output_dir``, a folder the API server reads at the same path
(docs/farm.md: a shared folder and why).

May import: procrastinate, ``server.*``, ``mobile_agent`` (public API), the standard library.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from procrastinate.worker import Worker

from mobile_agent.device import lease_holder
from mobile_agent.settings import Settings
from server.devices import AdbDeviceSource, DevicePool, DeviceSlot, DeviceSource
from server.farm.live import LiveRelay
from server.farm.maintenance import FarmMaintenance
from server.farm.notify import PgNotifier
from server.farm.queue import (
    MAINTENANCE_QUEUE,
    PhoneUnavailable,
    build_jobs_app,
    build_maintenance_app,
    conninfo,
    defer_task,
    install_schema,
)
from server.farm.registry import FarmRegistry
from server.farm.routing import ANY_QUEUE, Route, phone_profile, queue_for
from server.quota import QuotaExceeded
from server.runner import AgentTaskRunner, TaskRunner, tell_ends
from server.scheduler import Scheduler
from server.shutdown import shutdown_step, shutdown_step_async
from server.store import TaskRow, TaskStore
from server.webhooks import STOP_WAIT_S, WebhookSender

__all__ = ["FarmHost", "HostScheduler", "host_name", "run_host"]

log = logging.getLogger(__name__)

# how long a task held back by its token's quota waits before a phone looks at it again
QUOTA_RETRY_S = 2.0


def host_name(settings: Settings) -> str:
    return settings.farm.host or socket.gethostname()


class HostScheduler(Scheduler):
    """The embedded scheduler's run logic, with procrastinate in place of its claim loop: the
    loop still refreshes the phones and applies cancel requests, and dispatches nothing."""

    def _dispatch(self) -> None:
        return

    def run_leased(self, task: TaskRow, serial: str) -> None:
        """Claim and run ``task`` on the leased ``serial``; returns when the run has ended."""
        self._start(task, serial)
        with self._lock:
            run = self._running.get(task.id)
        if run is not None and run.thread is not None and run.thread.ident is not None:
            run.thread.join()


@dataclass
class _PhoneWorker:
    serial: str
    queues: list[str]
    worker: Worker | None = None
    task: asyncio.Task[None] | None = None
    busy: bool = False
    stopping: bool = False


@dataclass
class FarmHost:
    settings: Settings
    runner: TaskRunner | None = None
    device_source: DeviceSource | None = None
    name: str = ""
    phones: dict[str, _PhoneWorker] = field(default_factory=dict)
    properties: dict[str, dict[str, str]] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    held: set[str] = field(default_factory=set)  # phones another interface's run holds (their PhoneLease)
    _maintenance_worker: Worker | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        settings = self.settings
        self.name = self.name or host_name(settings)
        self.farm = settings.farm
        url = settings.server.database_url
        self.store = TaskStore(url, instance=self.name)
        self.registry = FarmRegistry(self.store.engine, host_timeout_s=self.farm.host_timeout_s)
        self.registry.create_tables()
        install_schema(url)
        self.notifier = PgNotifier(conninfo(url))
        self.pool = DevicePool(self.device_source or AdbDeviceSource(settings), allow=settings.server.devices)
        # the end of each task: its run's, and those no run tells (left running by a worker that died, its host lost)
        self.webhooks = WebhookSender(settings, report=self.store.add_event)
        self.task_runner: TaskRunner = self.runner or AgentTaskRunner(settings, store=self.store, webhooks=self.webhooks)
        self.scheduler = HostScheduler(
            self.store, self.pool, self.task_runner, runs_dir=Path(settings.agent.output_dir).resolve(),
            refresh_interval_s=settings.server.device_refresh_s, notify=self.notifier.notify,
            told=functools.partial(tell_ends, self.webhooks, self.store),  # a run's end, as stored
        )
        source = self.pool.source
        self.live = LiveRelay(Path(settings.agent.output_dir).resolve(), lambda serial: source.screenshot(serial, "jpeg"),
                              fps=settings.server.live_fps)  # the phone's rate, as the embedded service's
        self.jobs_app = build_jobs_app(url, max_connections=4 + 3 * max(4, len(settings.server.devices)))
        self.maintenance_app = build_maintenance_app(url, every_s=max(1, int(self.farm.heartbeat_s)))
        self._stop = asyncio.Event()

    # --- the phones -----------------------------------------------------------------

    def _probe(self, slot: DeviceSlot) -> dict[str, str]:
        """The phone's properties (``mobile_agent.device.phone_properties``: an Android phone's
        getprop, an iPhone's WDA status; the platform of both), its screen, profile and labels."""
        from mobile_agent.device import phone_properties

        found = phone_properties(self.settings, slot.serial)
        density = int(found["density"]) if found.get("density", "").isdigit() else None
        if slot.width and slot.height:
            found["width"], found["height"] = str(slot.width), str(slot.height)
        profile = phone_profile(slot.width, slot.height, density)
        if profile:
            found["profile"] = profile
        return {**found, **{k.lower(): v for k, v in self.farm.labels.items()}}

    def _queues(self, serial: str, routes: dict[str, Route]) -> list[str]:
        phone = {**self.properties.get(serial, {}), "serial": serial, "host": self.name}
        queues = [ANY_QUEUE, queue_for(Route(serial=serial))]
        queues += sorted(q for q, route in routes.items() if route.matches(phone))
        return queues

    async def _run_task(self, serial: str, task_id: int) -> None:
        phone = self.phones.get(serial)
        if phone is not None:
            phone.busy = True
        try:
            await asyncio.to_thread(self._run_sync, serial, task_id)
        except QuotaExceeded:
            # its token has enough tasks running (server.over_quota = "wait"): this job ends and a
            # new one is taken later, so the phone serves others meanwhile and procrastinate's
            # attempts (the count behind a task's `retries` after a host died) stay untouched
            task = await asyncio.to_thread(self.store.get_task, task_id)
            if task is not None and task.status == "queued":
                await defer_task(self.jobs_app, self.registry, task, after_s=QUOTA_RETRY_S)
        finally:
            if phone is not None:
                phone.busy = False

    def _run_sync(self, serial: str, task_id: int) -> None:
        task = self.store.get_task(task_id)
        if task is None or task.status != "queued":
            return  # cancelled while queued, or already run: never a second time
        if self.pool.lease(serial, task_id) is None:
            raise PhoneUnavailable(serial)
        self.registry.set_phone_task(self.name, serial, task_id)
        try:
            self.scheduler.run_leased(task, serial)
        finally:
            self.registry.set_phone_task(self.name, serial, None)

    async def _phone_loop(self, phone: _PhoneWorker) -> None:
        """A procrastinate worker for one phone; started again if it fails (Postgres restarted)."""
        while not phone.stopping and not self._stop.is_set():
            phone.worker = Worker(
                self.jobs_app,
                queues=phone.queues,  # this list is updated in place as routes appear
                name=f"{self.name}/{phone.serial}",
                concurrency=1,
                fetch_job_polling_interval=self.farm.poll_s,
                abort_job_polling_interval=max(1.0, self.farm.heartbeat_s),
                additional_context={"run_task": functools.partial(self._run_task, phone.serial)},
                delete_jobs="successful",  # the task row keeps the record; failed jobs stay to be looked at
                install_signal_handlers=False,
                update_heartbeat_interval=self.farm.heartbeat_s,
                stalled_worker_timeout=self.farm.host_timeout_s,
            )
            try:
                await phone.worker.run()
                problem = "its connection to the database broke"  # procrastinate stops a worker then
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                problem = str(exc) or type(exc).__name__
            if not phone.stopping and not self._stop.is_set():
                log.warning("the worker of %s stopped (%s); starting it again", phone.serial, problem)
                await asyncio.sleep(1.0)

    async def _maintenance_loop(self) -> None:
        maintenance = FarmMaintenance(
            self.jobs_app, self.store, self.registry, host_timeout_s=self.farm.host_timeout_s,
            default_retries=self.farm.retries, notify=self.notifier.notify,
            defer=functools.partial(defer_task, self.jobs_app, self.registry),
            told=functools.partial(tell_ends, self.webhooks, self.store),
        )
        while not self._stop.is_set():
            worker = Worker(
                self.maintenance_app, queues=[MAINTENANCE_QUEUE], name=f"{self.name}/maintenance",
                fetch_job_polling_interval=max(1.0, self.farm.heartbeat_s),
                additional_context={"maintenance": maintenance}, install_signal_handlers=False,
                delete_jobs="always",  # one row every few seconds otherwise, forever
                update_heartbeat_interval=self.farm.heartbeat_s, stalled_worker_timeout=self.farm.host_timeout_s,
            )
            self._maintenance_worker = worker
            try:
                await worker.run()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("the maintenance worker stopped (%s); starting it again", exc)
            if not self._stop.is_set():
                await asyncio.sleep(1.0)

    async def _note_holder(self, serial: str) -> None:
        """Is another interface's run (``mobile-agent run``, an MCP run, the pytest plugin: their
        PhoneLease) holding ``serial``? Such a phone takes no "any" (or route) task while held, as
        the embedded ``DevicePool(held=)`` passes it over: another free phone runs the task at
        once, or it waits queued instead of on the held phone. Its registry row says so (before
        the log line), so the API's device list shows it busy, as the embedded service's does."""
        holder = await asyncio.to_thread(lease_holder, self.settings.adb, serial)  # a file read: off the loop
        if holder is not None and serial not in self.held:
            await asyncio.to_thread(self.registry.set_phone_held, self.name, serial, True)
            self.held.add(serial)
            log.info("phone %s is held by %s: it takes tasks for its serial only", serial, holder)
        elif holder is None and serial in self.held:
            await asyncio.to_thread(self.registry.set_phone_held, self.name, serial, False)
            self.held.discard(serial)
            log.info("phone %s is no longer held: it takes 'any' tasks again", serial)

    async def _tick(self) -> None:
        await asyncio.to_thread(self.registry.heartbeat, self.name, self.farm.labels, os.getpid())
        await asyncio.to_thread(self.live.update, self.scheduler.running_serials())  # someone watching a run?
        slots = self.pool.slots()
        for slot in slots:
            if slot.available and slot.serial not in self.properties:
                try:
                    self.properties[slot.serial] = await asyncio.to_thread(self._probe, slot)
                except Exception as exc:  # answers later, or never: not registered until then
                    log.info("cannot read the properties of %s: %s", slot.serial, exc)
        listed = [(s.serial, s.public()["state"], self.properties[s.serial]) for s in slots if s.serial in self.properties]
        refused = await asyncio.to_thread(self.registry.claim_phones, self.name, listed)
        for serial, reason in refused.items():
            if serial not in self.refused:
                log.warning("%s: this worker leaves it alone (one phone, one worker; check server.devices)", reason)
        self.refused = refused
        routes = await asyncio.to_thread(self.registry.routes)
        for slot in slots:
            phone = self.phones.get(slot.serial)
            wanted = slot.available and slot.serial in self.properties and slot.serial not in refused
            if wanted:
                queues = self._queues(slot.serial, routes)
                if phone is None or not phone.busy:  # a run of its own holds it while busy
                    await self._note_holder(slot.serial)
                if slot.serial in self.held:
                    queues = [queue_for(Route(serial=slot.serial))]  # asked for by its serial only
                if phone is None or phone.stopping:
                    phone = self.phones[slot.serial] = _PhoneWorker(slot.serial, queues)
                    phone.task = asyncio.create_task(self._phone_loop(phone), name=f"phone {slot.serial}")
                    log.info("phone %s: taking tasks from %s", slot.serial, ", ".join(queues))
                elif phone.queues != queues:
                    phone.queues[:] = queues
            elif phone is not None and not phone.busy and not phone.stopping:
                log.info("phone %s is %s: no more tasks for it", slot.serial, slot.public()["state"])
                phone.stopping = True
                if phone.worker is not None:
                    phone.worker.stop()
                self.phones.pop(slot.serial, None)

    async def run(self) -> None:
        """Until ``stop()``: register, heartbeat, take tasks."""
        interrupted = await asyncio.to_thread(self.store.interrupt_running, instance=self.name)
        for task_id in interrupted:
            log.warning("task %s was running when this worker last stopped: now interrupted", task_id)
        try:  # no run tells their end: their callback_url hears it here
            await asyncio.to_thread(tell_ends, self.webhooks, self.store, interrupted)
        except Exception:  # a failure to tell must not keep the worker from starting
            log.exception("telling the end of interrupted tasks %s failed", interrupted)
        await asyncio.to_thread(self.registry.heartbeat, self.name, self.farm.labels, os.getpid(), starting=True)
        await asyncio.to_thread(self.registry.reset_host, self.name)
        await asyncio.to_thread(self.pool.refresh)
        if self.settings.server.preload_perception:
            try:  # once here, before any phone takes a task, as `serve` does
                await asyncio.to_thread(self.task_runner.prepare)
            except Exception as exc:  # runs will retry, and fail with a typed error
                log.warning("perception models not loaded at startup: %s", exc)
        await self.jobs_app.open_async()
        await self.maintenance_app.open_async()
        self.scheduler.start()
        maintenance = asyncio.create_task(self._maintenance_loop(), name="maintenance")
        tick_s = min(1.0, self.farm.heartbeat_s)
        log.info("worker %s started", self.name)
        try:
            while not self._stop.is_set():
                try:
                    await self._tick()
                except Exception as exc:  # the database restarting: try again next tick
                    log.warning("heartbeat failed: %s", exc)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), tick_s)
        finally:
            await self._shutdown(maintenance)

    async def _shutdown(self, maintenance: asyncio.Task[None]) -> None:
        """Each step runs whatever the one before did (``server.shutdown``): a live view or a
        scheduler that fails to stop must not leave the phones, the queue or the store open."""
        shutdown_step(log, "taking new tasks", self.scheduler.hold)
        await asyncio.to_thread(shutdown_step, log, "the live view", self.live.stop)
        # running tasks stop at their next step: interrupted
        await asyncio.to_thread(shutdown_step, log, "the scheduler", self.scheduler.stop)
        for phone in list(self.phones.values()):
            phone.stopping = True
            if phone.worker is not None:
                shutdown_step(log, f"the worker of {phone.serial}", phone.worker.stop)
        tasks = [p.task for p in self.phones.values() if p.task is not None]
        worker = self._maintenance_worker
        if worker is not None:
            shutdown_step(log, "the maintenance worker", worker.stop)
        for task in [*tasks, maintenance]:
            try:
                await asyncio.wait_for(task, 15)
            except (asyncio.TimeoutError, asyncio.CancelledError, Exception):  # noqa: B014 - stopping anyway
                task.cancel()
        # the webhooks of the ends just stored (the interrupted runs'), before the process takes their threads
        await asyncio.to_thread(shutdown_step, log, "the webhooks under way", lambda: self.webhooks.wait(STOP_WAIT_S))
        # the phones its device source kept open (a USB iPhone's forward)
        await asyncio.to_thread(shutdown_step, log, "the device source", self.pool.close)
        await asyncio.to_thread(shutdown_step, log, "the host's registration", lambda: self.registry.host_stopped(self.name))
        await shutdown_step_async(log, "the job queue", self.jobs_app.close_async)
        await shutdown_step_async(log, "the maintenance queue", self.maintenance_app.close_async)
        shutdown_step(log, "the notifier", self.notifier.close)
        shutdown_step(log, "the task store", self.store.close)
        log.info("worker %s stopped", self.name)

    def stop(self) -> None:
        self._stop.set()


def run_host(settings: Settings, **kwargs: Any) -> int:
    """Run a worker until SIGINT / SIGTERM."""
    import signal

    async def main() -> None:
        host = FarmHost(settings, **kwargs)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, host.stop)
        await host.run()

    asyncio.run(main())
    return 0

