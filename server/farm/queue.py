"""The farm's queue on procrastinate (a maintained Postgres job library; docs/farm.md says
why it and not PgQueuer): one job per task, in the queue of the task's route.

- ``jobs_app``: the ``run_task`` job. Each phone of a host runs its own procrastinate
  ``Worker`` (concurrency 1) on the queues that phone can serve, so a phone runs one task at
  a time and a task is taken only by a free phone that matches it; procrastinate's
  ``FOR UPDATE SKIP LOCKED`` fetch makes the take exclusive.
- ``maintenance_app``: a periodic job (procrastinate's cron, every few seconds, deduplicated
  by procrastinate across every process that runs it) that recovers the jobs of a host that
  died (procrastinate's worker heartbeats, ``get_stalled_jobs``), defers recurring tasks, and
  re-defers a task whose job was never written.

The job rows are procrastinate's; the task rows and events stay in ``server.store``, so the
API, the event stream and the run logic are the same as with the embedded default.

May import: procrastinate, psycopg, sqlalchemy, ``server.store``, ``server.farm.*``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import procrastinate
import sqlalchemy as sa
from procrastinate import jobs as pjobs
from procrastinate.manager import JobManager
from procrastinate.retry import BaseRetryStrategy, RetryDecision

from server.store import TaskRow, TaskStore, tasks_table

if TYPE_CHECKING:
    from server.farm.registry import FarmRegistry

__all__ = [
    "MAINTENANCE_QUEUE",
    "RUN_TASK",
    "PhoneUnavailable",
    "build_jobs_app",
    "build_maintenance_app",
    "conninfo",
    "install_schema",
    "recover_stalled",
]

log = logging.getLogger(__name__)

RUN_TASK = "mobile_agent.run_task"
MAINTENANCE = "mobile_agent.farm_maintenance"
MAINTENANCE_QUEUE = "farm.maintenance"
_SCHEMA_LOCK = 7_272_013  # pg_advisory_lock key: one process installs the schema at a time


class PhoneUnavailable(Exception):
    """The phone went away between the fetch and the lease: the job goes back to the queue."""


class _RunRetry(BaseRetryStrategy):
    """Only a phone that vanished under a fetched job puts it back (in a second); a run's own
    failure is the task's outcome, recorded in the store, never a silent second run."""

    def get_retry_decision(self, *, exception: BaseException, job: pjobs.Job) -> RetryDecision | None:
        if isinstance(exception, PhoneUnavailable):
            return RetryDecision(retry_in={"seconds": 1})
        return None


def conninfo(url: str) -> str:
    """libpq's form of a SQLAlchemy URL (``postgresql+psycopg://`` -> ``postgresql://``)."""
    parsed = sa.engine.make_url(url)
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


def install_schema(url: str) -> None:
    """procrastinate's tables, once per database (an advisory lock serializes the processes
    that start together)."""
    import psycopg
    from procrastinate.schema import SchemaManager

    with psycopg.connect(conninfo(url), autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
        try:
            row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
            if row is None or row[0] is None:
                conn.execute(SchemaManager.get_schema())
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))


def _connector(url: str, max_size: int) -> procrastinate.PsycopgConnector:
    return procrastinate.PsycopgConnector(conninfo=conninfo(url), min_size=1, max_size=max_size)


def build_jobs_app(url: str, *, max_connections: int = 10) -> procrastinate.App:
    """The app that defers and runs tasks. A worker's job context carries ``run_task``: the
    coroutine of its phone (``await run_task(task_id)``)."""
    app = procrastinate.App(connector=_connector(url, max_connections))

    @app.task(name=RUN_TASK, pass_context=True, retry=_RunRetry())
    async def run_task(context: procrastinate.JobContext, task_id: int) -> None:
        runner: Callable[[int], Awaitable[None]] = context.additional_context["run_task"]
        await runner(task_id)

    return app


def build_maintenance_app(url: str, *, every_s: int) -> procrastinate.App:
    """The app of the periodic maintenance job; its worker's context carries ``maintenance``
    (``await maintenance()``)."""
    app = procrastinate.App(connector=_connector(url, 4))
    every_s = max(1, min(59, int(every_s)))

    # croniter's sixth field is seconds: "every N seconds"
    @app.periodic(cron=f"* * * * * */{every_s}", periodic_id="farm-maintenance")
    @app.task(name=MAINTENANCE, queue=MAINTENANCE_QUEUE, pass_context=True, queueing_lock="farm-maintenance")
    async def maintenance(context: procrastinate.JobContext, timestamp: int) -> None:
        job: Callable[[], Awaitable[None]] = context.additional_context["maintenance"]
        await job()

    return app


def _requeue(store: TaskStore, task_id: int, reason: str) -> bool:
    """running -> queued (a retry after its host died), said in an event."""
    now = time.time()
    with store._write_lock, store.engine.begin() as conn:
        result = conn.execute(
            tasks_table.update()
            .where(tasks_table.c.id == task_id, tasks_table.c.status.in_(("running", "waiting_for_user")))
            .values(status="queued", device=None, started_at=None, instance=None, cancel_requested=False)
        )
        if result.rowcount != 1:
            return False
        store._insert_event(conn, task_id, "status", {"status": "queued", "reason": reason}, now)
    return True


async def recover_stalled(
    app: procrastinate.App,
    store: TaskStore,
    *,
    heartbeat_timeout_s: float,
    lost_hosts: set[str],
    default_retries: int,
    notify: Callable[[int], None],
) -> list[tuple[int, str]]:
    """Jobs whose worker stopped sending heartbeats: the task is retried (its ``retries``
    policy, counted by procrastinate's attempts) or ends ``interrupted``. A running task is
    touched only when its host's own heartbeat is stale as well, so a slow host is never
    taken for a dead one. Returns (task id, what happened), each only where this call made it
    happen: two maintenance passes may handle one stalled job (a pass that outlasts its period
    overlaps the next one's, in another process), and a host taken for lost may end its run
    itself meanwhile; the one whose store transition succeeded reports (and so tells) the end.
    A job that fails to recover is logged and the others go on."""
    manager = app.job_manager
    done: list[tuple[int, str]] = []
    for job in await manager.get_stalled_jobs(task_name=RUN_TASK, seconds_since_heartbeat=heartbeat_timeout_s):
        given = job.task_kwargs.get("task_id", 0)
        task_id = int(given) if isinstance(given, (int, float, str)) else 0
        try:
            what = await _recover(manager, store, job, task_id, heartbeat_timeout_s=heartbeat_timeout_s,
                                  lost_hosts=lost_hosts, default_retries=default_retries)
        except Exception:  # one job's failure (the database, a row another version wrote) keeps no other's report
            log.exception("recovering the stalled job %s of task %s failed", job.id, task_id)
            continue
        if what is not None:
            done.append((task_id, what))
            notify(task_id)
    return done


async def _recover(manager: JobManager, store: TaskStore, job: pjobs.Job, task_id: int, *,
                   heartbeat_timeout_s: float, lost_hosts: set[str], default_retries: int) -> str | None:
    """One stalled job (``recover_stalled``): what this call did to its task, or None."""
    task = await asyncio.to_thread(store.get_task, task_id)
    if task is None or task.terminal:
        await _fail_job(manager, job)
        return None
    if task.status == "queued":  # taken, never started: back in its queue
        await manager.retry_job(job)
        return "requeued"
    # a run paused for its person (waiting_for_user) still runs on its host
    if task.status not in ("running", "waiting_for_user") or (task.instance or "") not in lost_hosts:
        return None
    retries = int(task.options.get("retries", default_retries) or 0)
    reason = f"host {task.instance!r} stopped answering (no heartbeat for {heartbeat_timeout_s:g} s)"
    if job.attempts < retries:
        if not await asyncio.to_thread(_requeue, store, task_id, f"{reason}: retry {job.attempts + 1} of {retries}"):
            return None  # no longer running: another pass retried or ended it, or its run ended; that one said so
        await manager.retry_job(job)
        return "retried"
    error = {"type": "HostLost", "message": reason, "reason": "host lost"}
    ended = await asyncio.to_thread(store.finish, task_id, "interrupted", error=error)
    await _fail_job(manager, job)
    # False: another pass, or the host's own run, ended it first and told that end
    return "interrupted" if ended else None


async def _fail_job(manager: JobManager, job: pjobs.Job) -> None:
    """The stalled job ends ``failed`` (kept to be looked at); one another pass (or its own
    worker, back) already ended is left as it is."""
    try:
        await manager.finish_job(job, pjobs.Status.FAILED, delete_job=False)
    except procrastinate.exceptions.ConnectorException as exc:
        log.info("the stalled job %s was not ended here (another pass or its worker did?): %s", job.id, exc)


def job_args(task_id: int) -> dict[str, Any]:
    return {"task_id": task_id}


async def defer_task(app: procrastinate.App, registry: FarmRegistry, task: TaskRow, *, after_s: float = 0.0) -> str:
    """The job of a queued task, in its route's queue (to be taken ``after_s`` from now); a
    second defer of the same task while its job waits is a no-op (procrastinate's queueing
    lock). Returns the queue."""
    from server.farm.routing import Route

    route = Route.from_options(task.device_request, task.options)
    queue = await asyncio.to_thread(registry.route_queue, route)
    later: dict[str, Any] = {"schedule_in": {"seconds": after_s}} if after_s > 0 else {}
    deferrer = app.configure_task(name=RUN_TASK, queue=queue, queueing_lock=f"task-{task.id}", **later)
    try:
        await deferrer.defer_async(**job_args(task.id))
    except procrastinate.exceptions.AlreadyEnqueued:
        pass
    return queue
