"""The queue: queued tasks go to free phones, each run in its own worker thread.

One scheduler thread wakes on every submission, finish or device refresh, walks the
queued tasks oldest first and, for each, leases a phone (its serial, or the first free
one for "any") and claims the task in the store. A claimed task runs in a worker
thread through the ``TaskRunner``; its events go to the store, then to live listeners.

Cancel: a queued task is cancelled in the store; a running one gets its cancel event
set, and the agent stops at the next step boundary, keeping its trajectory.

A token over its quota (``server.over_quota = "wait"``): the claim refuses its task in the
database against the limit stored with the task (``server.quota``), the phone is given back,
and the task stays queued for a later pass.

May import: ``server.store``, ``server.quota``, ``server.devices``, ``server.runner``, ``mobile_agent``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mobile_agent.errors import MobileAgentError
from server.devices import LOST_ERROR_TYPES, DevicePool
from server.metrics import Metrics
from server.quota import QuotaExceeded
from server.runner import TaskOutcome, TaskRunner, TaskSpec
from server.store import TaskRow, TaskStore

__all__ = ["Scheduler"]

log = logging.getLogger(__name__)


@dataclass
class _Running:
    task_id: int
    serial: str
    cancel: threading.Event
    thread: threading.Thread | None
    user_cancelled: bool = False
    started: float = field(default_factory=time.monotonic)


class Scheduler:
    def __init__(
        self,
        store: TaskStore,
        pool: DevicePool,
        runner: TaskRunner,
        *,
        runs_dir: Path,
        max_workers: int = 0,
        refresh_interval_s: float = 5.0,
        notify: Callable[[int], None] | None = None,
        metrics: Metrics | None = None,
        told: Callable[[list[int]], None] | None = None,
    ) -> None:
        self.store = store
        self.pool = pool
        self.runner = runner
        self.runs_dir = Path(runs_dir)
        self.max_workers = max_workers
        self.refresh_interval_s = refresh_interval_s
        self._notify_listeners = notify or (lambda task_id: None)
        # the task_finished webhook of an end this scheduler stored (``server.runner.tell_ends``)
        self._told = told
        self._wake = threading.Condition()
        self._woken = False
        self._stopping = threading.Event()
        self._held = threading.Event()
        self._running: dict[int, _Running] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.metrics = metrics or Metrics()

    # --- lifecycle -----------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="scheduler", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop dispatching; ask running tasks to stop; wait for their workers."""
        self._stopping.set()
        self.wake()
        with self._lock:
            running = list(self._running.values())
        for run in running:
            run.cancel.set()
        deadline = time.monotonic() + timeout_s
        for run in running:
            if run.thread is not None and run.thread.ident is not None:
                run.thread.join(max(0.0, deadline - time.monotonic()))
        if self._thread is not None:
            self._thread.join(max(0.1, deadline - time.monotonic()))

    def hold(self) -> None:
        """Start no more tasks; running ones go on (the first step of a shutdown, taken as soon
        as it is asked: a task started while the server waits for open streams would be
        interrupted at once, where it could have stayed queued for the next start)."""
        self._held.set()

    def wake(self) -> None:
        with self._wake:
            self._woken = True
            self._wake.notify_all()

    @property
    def running_count(self) -> int:
        with self._lock:
            return len(self._running)

    def running_serials(self) -> dict[int, str]:
        """task id -> serial of the runs of this instance."""
        with self._lock:
            return {task_id: run.serial for task_id, run in self._running.items()}

    def running_task(self, task_id: int) -> bool:
        with self._lock:
            return task_id in self._running

    # --- requests ------------------------------------------------------------------

    def submit(self, task: TaskRow) -> None:
        """A task was stored as queued: the loop looks at the queue now."""
        self.wake()

    def route_refusal(self, device: str, options: dict[str, Any]) -> str | None:
        """Routing by host, labels or properties is the farm's (server/farm); here a serial or any."""
        if options.get("host") or options.get("requires") or options.get("labels"):
            return "routing by host, labels or properties needs the farm (serve --farm with `mobile-agent worker`)"
        return None

    def waiting_reason(self, task: TaskRow) -> str | None:
        """Nothing beyond the quota holds a queued task here (``Dispatcher.waiting_reason``)."""
        return None

    def cancel(self, task_id: int) -> bool:
        """True if the task was queued (now cancelled) or running (now stopping).

        The request goes through the store, so it reaches a run on another instance
        sharing the database; a run here stops at once."""
        if self.store.cancel_queued(task_id):
            self.metrics.observe_run("cancelled", None)  # never ran: no run time to count
            self._notify_listeners(task_id)
            return True
        if not self.store.request_cancel(task_id):
            return False
        self._apply_cancel_requests([task_id])
        self._notify_listeners(task_id)
        self.wake()  # a run of this instance not registered yet is cancelled on the next pass
        return True

    def _apply_cancel_requests(self, task_ids: list[int]) -> None:
        with self._lock:
            for task_id in task_ids:
                run = self._running.get(task_id)
                if run is not None and not run.cancel.is_set():
                    run.user_cancelled = True
                    run.cancel.set()

    # --- the loop ------------------------------------------------------------------

    def _loop(self) -> None:
        next_refresh = 0.0
        while not self._stopping.is_set():
            now = time.monotonic()
            if now >= next_refresh:
                next_refresh = now + self.refresh_interval_s
                try:
                    self.pool.refresh()
                except Exception:  # an unexpected answer from adb must not end the scheduler thread
                    log.exception("device refresh failed")
            try:
                if self.running_count:
                    self._apply_cancel_requests(self.store.cancel_requests(self.store.instance))
                self._dispatch()
            except Exception:  # keep scheduling; a broken row must not stop the queue
                log.exception("dispatch failed")
            with self._wake:
                if not self._woken:
                    self._wake.wait(timeout=min(1.0, max(0.05, next_refresh - time.monotonic())))
                self._woken = False

    def _dispatch(self) -> None:
        if self._held.is_set():
            return
        over_quota: set[str] = set()  # owners found at their limit in this pass: their other tasks wait too
        for task in self.store.queued_tasks():
            if self._stopping.is_set() or self._held.is_set():
                return
            if self.max_workers and self.running_count >= self.max_workers:
                return
            if not self.pool.any_free():
                return
            owner = task.owner or ""
            if owner in over_quota:
                continue
            platform = task.options.get("platform")  # the stored TaskOptions.platform (server.schemas)
            serial = self.pool.lease(task.device_request, task.id, platform=platform if isinstance(platform, str) else None)
            if serial is None:
                continue
            try:
                self._start(task, serial)
            except QuotaExceeded:
                over_quota.add(owner)

    def _start(self, task: TaskRow, serial: str) -> None:
        """Claim the leased task and start its worker; on any failure the lease is given back.

        The run is registered before the claim, so a cancel that lands between the claim and
        the worker's start finds it and sets its cancel event."""
        output_dir = self._fresh_output_dir(task.id)
        cancel = threading.Event()
        thread = threading.Thread(
            target=self._work,
            args=(task, serial, output_dir, cancel),
            name=f"task-{task.id}@{serial}",
            daemon=True,
        )
        with self._lock:
            self._running[task.id] = _Running(task.id, serial, cancel, thread)
        claimed = started = False
        try:
            # False: another instance or a cancel won; QuotaExceeded: its owner has enough running
            claimed = self.store.claim(task.id, serial, output_dir)
            if claimed:
                self._notify_listeners(task.id)
                thread.start()
                started = True
        finally:
            if not started:
                with self._lock:
                    self._running.pop(task.id, None)
                self.pool.release(serial, task.id)
                if claimed:  # claimed but no worker: end it here, or it would show running forever
                    if self.store.finish(
                        task.id, "error", error={"type": "WorkerStartError", "message": "could not start a worker"}
                    ):
                        self._tell(task.id)
                    self._notify_listeners(task.id)

    def _tell(self, task_id: int) -> None:
        """The end this scheduler just stored, told to the task's callback_url as stored: one
        status for the task and its webhook, once (only the caller whose ``finish`` succeeded
        tells). A failure to tell never keeps the phone or the worker slot."""
        if self._told is None:
            return
        try:
            self._told([task_id])
        except Exception:
            log.exception("telling the end of task %s failed", task_id)

    def _fresh_output_dir(self, task_id: int) -> Path:
        """``task-N``, or ``task-N.2``… when a folder of that name is left from an earlier
        database (ids start again at 1): its files must never be served as this task's."""
        candidate = self.runs_dir / f"task-{task_id}"
        n = 1
        while candidate.exists():
            n += 1
            candidate = self.runs_dir / f"task-{task_id}.{n}"
        return candidate

    def _work(self, task: TaskRow, serial: str, output_dir: Path, cancel: threading.Event) -> None:
        steps = 0

        def emit(kind: str, data: dict[str, Any]) -> None:
            nonlocal steps
            if kind == "step_finished":
                steps += 1
            self.store.add_event(task.id, kind, data, steps=steps if kind == "step_finished" else None)
            self._notify_listeners(task.id)

        started = time.monotonic()
        lost = False
        try:
            try:
                # inside: a stored row this version cannot read ends its task, and the phone is given back
                outcome = self.runner(TaskSpec.of(task, serial, output_dir), cancel=cancel, emit=emit)
            except MobileAgentError as exc:  # device errors included: they end the run, typed
                outcome = TaskOutcome(status="error", error=exc.to_dict(), steps=steps)
            except Exception as exc:  # a bug in a run ends that run, not the service
                log.exception("task %s crashed", task.id)
                outcome = TaskOutcome(
                    status="error", error={"type": type(exc).__name__, "message": str(exc)}, steps=steps
                )
            with self._lock:
                run = self._running.get(task.id)
            status = outcome.status
            error = outcome.error
            if status == "cancelled" and run is not None and not run.user_cancelled and self._stopping.is_set():
                status = "interrupted"  # as a task left running by a process that died (TaskStore.interrupt_running)
                error = error or {"type": "Interrupted", "message": "the server stopped while this task was running"}
            lost = error is not None and error.get("type") in LOST_ERROR_TYPES
            if lost and error is not None:
                error = {**error, "reason": "device lost"}
            ended = self.store.finish(
                task.id,
                status,
                error=error,
                result=dict(outcome.extra) or None,
                steps=max(outcome.steps, steps),
                prompt_tokens=outcome.prompt_tokens,
                completion_tokens=outcome.completion_tokens,
                cost_usd=outcome.cost_usd,
            )
            self.metrics.observe_run(status, time.monotonic() - started)
            if ended:  # False: another process ended it first (a farm host taken for lost) and told it
                self._tell(task.id)
        finally:
            # whatever happened above, the phone and the worker slot are given back
            with self._lock:
                self._running.pop(task.id, None)
            self.pool.release(serial, task.id, lost=lost)
            self._notify_listeners(task.id)
            self.wake()
