"""The farm's periodic job: what no single host can do for itself.

- a host that died (its procrastinate worker heartbeats and its own heartbeat both stale):
  its running tasks are retried or end ``interrupted`` (``server.farm.queue.recover_stalled``);
- a queued task whose job was never written (the API died between the two) gets its job.

Every API server and worker runs it (procrastinate defers one job per period for all of them).

May import: ``server.farm.*``, ``server.store``, the standard library.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import procrastinate
import sqlalchemy as sa

from server.farm.queue import recover_stalled
from server.farm.registry import FarmRegistry
from server.store import TaskStore, tasks_table

__all__ = ["FarmMaintenance"]

log = logging.getLogger(__name__)

# a queued task older than this with no job is re-deferred (its queueing lock makes it idempotent)
ORPHAN_AFTER_S = 10.0


class FarmMaintenance:
    def __init__(
        self,
        jobs_app: procrastinate.App,
        store: TaskStore,
        registry: FarmRegistry,
        *,
        host_timeout_s: float,
        default_retries: int,
        notify: Callable[[int], None],
        defer: Callable[[Any], Any],
        told: Callable[[list[int]], None] | None = None,
    ) -> None:
        self.jobs_app = jobs_app
        self.store = store
        self.registry = registry
        self.host_timeout_s = host_timeout_s
        self.default_retries = default_retries
        self.notify = notify
        self.defer = defer  # async (task row) -> None
        self.told = told  # the task_finished webhook of tasks that ended here (their run's host is gone)
        self.log: list[tuple[int, str]] = []

    async def __call__(self) -> None:
        lost = set(await asyncio.to_thread(self.registry.lost_hosts))
        try:
            done = await recover_stalled(
                self.jobs_app, self.store, heartbeat_timeout_s=self.host_timeout_s, lost_hosts=lost,
                default_retries=self.default_retries, notify=self.notify,
            )
        except Exception:
            log.exception("recovering stalled jobs failed")
            done = []
        for task_id, what in done:
            log.warning("task %s: its host was lost; %s", task_id, what)
        ended = [task_id for task_id, what in done if what == "interrupted"]
        if ended and self.told is not None:
            try:
                await asyncio.to_thread(self.told, ended)
            except Exception:
                log.exception("telling the end of tasks %s failed", ended)
        self.log.extend(done)
        await self._orphans()

    async def _orphans(self) -> None:
        """Queued tasks with no todo/doing job: deferred again."""
        cutoff = time.time() - ORPHAN_AFTER_S
        query = sa.select(tasks_table.c.id).where(tasks_table.c.status == "queued", tasks_table.c.created_at < cutoff)
        with self.store.engine.connect() as conn:
            queued = [int(r[0]) for r in conn.execute(query)]
        if not queued:
            return
        with self.store.engine.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT (args->>'task_id')::int FROM procrastinate_jobs WHERE task_name = :name "
                        "AND status IN ('todo', 'doing') AND (args->>'task_id')::int = ANY(:ids)"),
                {"name": "mobile_agent.run_task", "ids": queued},
            )
            have = {int(r[0]) for r in rows}
        for task_id in queued:
            if task_id not in have:
                task = await asyncio.to_thread(self.store.get_task, task_id)
                if task is not None and task.status == "queued":
                    log.warning("task %s was queued with no job: deferring it again", task_id)
                    await self.defer(task)
