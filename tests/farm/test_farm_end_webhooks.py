"""On a farm, each end of a task is told to its ``callback_url`` once, with what the task says:
the ends no run tells (a worker's start storing the tasks it left running ``interrupted``; the
farm's maintenance ending a lost host's tasks, ``HostLost``, on the API server or a worker), a
run interrupted by its worker's SIGTERM (``interrupted``, as stored), and a run whose host was
taken for lost and came back (its late end tells nothing more). Real PostgreSQL, real
``mobile-agent worker`` processes, the farm's API server on real uvicorn, a signed webhook
receiver on loopback; the maintenance pass whose task's run ends while it reads it runs in this
process on the same database, with procrastinate's real job rows."""

from __future__ import annotations

import asyncio
import functools
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from procrastinate import jobs as pjobs

from server.farm.maintenance import FarmMaintenance
from server.farm.queue import build_jobs_app, defer_task, install_schema
from server.farm.registry import FarmRegistry
from server.runner import tell_ends
from server.store import TaskRow, TaskStore
from server.webhooks import WebhookSender
from tests.farm_fixtures import farm_settings, start_farm_api, start_worker, until, wait_free
from tests.webhook_receiver import WebhookReceiver

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(300)]

SECRET = "farm-end-webhook-secret"
HOOKS = {"webhook_secret": SECRET, "webhook_allow": ["127.0.0.1"]}
API = {"server.api_token": "farm-end-admin", **{f"server.{k}": v for k, v in HOOKS.items()}}
GUARD_S = 90  # a guard for a broken build only


def _submit(api, url: str, **body: Any) -> int:
    answer = api.client.post("/v1/tasks", json={"callback_url": url, **body})
    assert answer.status_code == 202, answer.text
    return int(answer.json()["id"])


def _task(api, task_id: int) -> dict[str, Any]:
    return api.client.get(f"/v1/tasks/{task_id}").json()


def _sentinel(api, hook: WebhookReceiver, serial: str) -> None:
    """A task for the phone of the worker that stopped, cancelled while queued on the API: its
    webhook is sent after every end above, so a second one of theirs would be here by now."""
    later = _submit(api, hook.url, script="Home", device=serial)
    assert api.client.post(f"/v1/tasks/{later}/cancel").status_code == 202
    hook.wait_finished(later)


def test_a_worker_tells_the_ends_it_stores_as_stored(pg_database: str, tmp_path: Path, adb_server, sim_phones) -> None:
    """Its start stores the task it left running ``interrupted`` and tells it; its SIGTERM
    interrupts a run, stored and told ``interrupted`` (the run's own end said ``cancelled``)."""
    hook = WebhookReceiver(SECRET)
    (phone,) = sim_phones(1, width=540, height=1200)
    left = TaskStore(pg_database, instance="h1")  # the worker h1 before it died, mid-run
    try:
        stale = left.create_task("Home", "any", {"owner": "admin", "script": "Home", "callback_url": hook.url})
        assert left.claim(stale.id, phone.serial, tmp_path / "shared-runs" / "dead")
    finally:
        left.close()
    api = start_farm_api(tmp_path, pg_database, **API)
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[phone.serial],
                          server=HOOKS)
    try:
        told = hook.wait_finished(stale.id, timeout=GUARD_S)
        assert told["status"] == "interrupted" and told["error"]["type"] == "Interrupted", told
        assert _task(api, stale.id)["error"] == told["error"]
        wait_free(api, [phone.serial], workers=[worker])
        running = _submit(api, hook.url, script="Wait (10)\n" * 12)
        until(lambda: _task(api, running)["steps"] >= 1, GUARD_S, "a step made")
        worker.stop()  # SIGTERM: the run stops at its next step
        stored = _task(api, running)
        assert stored["status"] == "interrupted" and stored["error"]["type"] == "Interrupted", stored
        told = hook.wait_finished(running, timeout=GUARD_S)
        assert told["status"] == "interrupted" and told["error"] == stored["error"], told
        _sentinel(api, hook, phone.serial)
        assert len(hook.finished(stale.id)) == 1 and len(hook.finished(running)) == 1, hook.bodies
        assert hook.unsigned == 0
    finally:
        api.stop()
        worker.stop()
        hook.close()


def test_a_lost_host_s_task_is_told_once_by_the_api_s_maintenance_and_not_again_by_its_late_run(
        pg_database: str, tmp_path: Path, adb_server, sim_phones) -> None:
    """The worker is frozen (SIGSTOP: no heartbeat) mid-run; the API server's maintenance, the
    only one running, ends its task ``HostLost`` and tells it. Thawed, the worker's run goes on
    to its end, which the store refuses (the task ended): it tells nothing more."""
    hook = WebhookReceiver(SECRET)
    (phone,) = sim_phones(1, width=540, height=1200)
    api = start_farm_api(tmp_path, pg_database, **API)
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[phone.serial],
                          server=HOOKS)
    assert worker.process is not None
    try:
        wait_free(api, [phone.serial], workers=[worker])
        running = _submit(api, hook.url, script="Wait (0.5)\n" * 16)
        until(lambda: _task(api, running)["steps"] >= 1, GUARD_S, "a step made")
        os.kill(worker.process.pid, signal.SIGSTOP)
        try:
            told = hook.wait_finished(running, timeout=GUARD_S)
        finally:
            os.kill(worker.process.pid, signal.SIGCONT)
        stored = _task(api, running)
        assert stored["status"] == told["status"] == "interrupted", (stored, told)
        assert told["error"]["type"] == "HostLost" and told["error"] == stored["error"], told
        wait_free(api, [phone.serial], timeout=GUARD_S, workers=[worker])  # its run came to its end
        done = _submit(api, hook.url, script="Home", device=phone.serial)  # and it runs the next task
        # told after the late run's end: a second webhook of the lost task would be here by now
        assert hook.wait_finished(done, timeout=GUARD_S)["status"] == "completed"
        assert len(hook.finished(running)) == 1 and hook.unsigned == 0, hook.bodies
        assert _task(api, running)["status"] == "interrupted"
    finally:
        api.stop()
        worker.stop()
        hook.close()


def test_a_lost_host_s_task_is_told_by_another_worker_s_maintenance(pg_database: str, tmp_path: Path, adb_server,
                                                                     sim_phones) -> None:
    """The API server is down and h1 is SIGKILLed mid-run: h2's maintenance, the only one running,
    ends h1's task ``HostLost`` and tells it, once."""
    hook = WebhookReceiver(SECRET)
    mine, other = sim_phones(2, width=540, height=1200)
    api = start_farm_api(tmp_path, pg_database, **API)
    h1 = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[mine.serial],
                      server=HOOKS)
    h2 = start_worker(tmp_path, "h2", database=pg_database, adb_port=adb_server.port, serials=[other.serial],
                      server=HOOKS)
    try:
        wait_free(api, [mine.serial, other.serial], workers=[h1, h2])
        running = _submit(api, hook.url, script="Wait (10)\n" * 12, device=mine.serial)
        until(lambda: _task(api, running)["steps"] >= 1, GUARD_S, "a step made")
        api.stop()
        h1.kill()
        told = hook.wait_finished(running, timeout=GUARD_S)
        assert told["status"] == "interrupted" and told["error"]["type"] == "HostLost", told
        assert "h1" in told["error"]["message"], told
        api = start_farm_api(tmp_path, pg_database, **API)
        assert _task(api, running)["error"] == told["error"]
        _sentinel(api, hook, mine.serial)
        assert len(hook.finished(running)) == 1 and hook.unsigned == 0, hook.bodies
    finally:
        api.stop()
        h1.stop()
        h2.stop()
        hook.close()


class _EndsOnRead(TaskStore):
    """The maintenance's store: right after its ``nth`` read of one of ``watched`` tasks' rows,
    ``ends(task_id)`` ends that task elsewhere (once), between the pass's read and its finish."""

    def __init__(self, url: str, watched: set[int], nth: int, ends: Callable[[int], None]) -> None:
        super().__init__(url, instance="api")
        self.watched, self.nth, self.reads = watched, nth, 0
        self.ends: Callable[[int], None] | None = ends

    def get_task(self, task_id: int) -> TaskRow | None:
        row = super().get_task(task_id)
        if task_id in self.watched and self.ends is not None:
            self.reads += 1
            if self.reads == self.nth:
                ends, self.ends = self.ends, None
                ends(task_id)
        return row


async def _stalled(jobs: Any, registry: FarmRegistry, host: TaskStore, tasks: list[TaskRow],
                   tmp_path: Path) -> dict[int, Any]:
    """Each task's job taken by the worker of ``host``'s instance and the task claimed, then
    silence: both heartbeats older than the 0.5 s timeout. The jobs by task id."""
    for task in tasks:
        await defer_task(jobs, registry, task)
    worker_id = await jobs.job_manager.register_worker()
    taken = {}
    for _ in tasks:
        job = await jobs.job_manager.fetch_job(queues=None, worker_id=worker_id)
        assert job is not None
        taken[int(job.task_kwargs["task_id"])] = job
    for task in tasks:
        assert host.claim(task.id, f"phone-{task.id}", tmp_path / f"task-{task.id}")
    registry.heartbeat(host.instance, {}, None, starting=True)
    await asyncio.sleep(1.0)
    return taken


def _maintenance(jobs: Any, store: TaskStore, registry: FarmRegistry, webhooks: WebhookSender) -> FarmMaintenance:
    return FarmMaintenance(jobs, store, registry, host_timeout_s=0.5, default_retries=0,
                           notify=lambda task_id: None, defer=lambda task: None,
                           told=functools.partial(tell_ends, webhooks, store))


def test_a_maintenance_pass_tells_only_the_ends_it_made(pg_database: str, tmp_path: Path) -> None:
    """Two tasks of a host whose heartbeats stopped, each with its procrastinate job taken by
    that host's worker: one's run ends on its host while the pass reads it (the pass's finish
    is refused), the other's does not. The pass ends and tells the second, ``HostLost``; the
    first is told once, by its run (before: the pass said 'interrupted' whatever its finish
    answered, and told the first's end a second time)."""
    hook = WebhookReceiver(SECRET)
    webhooks = WebhookSender(farm_settings(tmp_path, pg_database, **API))
    install_schema(pg_database)
    host = TaskStore(pg_database, instance="lost-host")
    registry = FarmRegistry(host.engine, host_timeout_s=0.5)
    registry.create_tables()
    options = {"owner": "admin", "script": "Home", "callback_url": hook.url}
    slow, gone = (host.create_task("Home", "any", options) for _ in range(2))

    def slow_run_ends(task_id: int) -> None:  # as the host's scheduler: its finish, then its tell
        assert host.finish(task_id, "completed", result={"reason": "the run ended on its host"})
        tell_ends(webhooks, host, [task_id])

    store = _EndsOnRead(pg_database, {slow.id}, 1, slow_run_ends)

    async def scenario() -> list[tuple[int, str]]:
        jobs = build_jobs_app(pg_database)
        await jobs.open_async()
        try:
            await _stalled(jobs, registry, host, [slow, gone], tmp_path)
            maintenance = _maintenance(jobs, store, registry, webhooks)
            await maintenance()
            return maintenance.log
        finally:
            await jobs.close_async()

    try:
        done = asyncio.run(scenario())
        assert done == [(gone.id, "interrupted")], done
        for delivery in webhooks.deliveries:  # every webhook sent has arrived
            delivery.join(30)
        assert [b["status"] for b in hook.finished(slow.id)] == ["completed"], hook.bodies
        told = hook.finished(gone.id)
        assert [b["status"] for b in told] == ["interrupted"] and told[0]["error"]["type"] == "HostLost", told
        assert store.get_task(slow.id).status == "completed" and store.get_task(gone.id).status == "interrupted"
        assert hook.unsigned == 0
    finally:
        store.close()
        host.close()
        hook.close()


def test_a_job_another_pass_ended_keeps_none_of_this_pass_s_ends_untold(pg_database: str, tmp_path: Path) -> None:
    """Two overlapping maintenance passes over one lost host's two tasks (a pass that outlasts its
    period overlaps the next one's, in another process). The other pass ends the second task this
    one reads, job included, between this one's read and its finish; procrastinate then refuses
    this pass's end of that job. Each task is told once: this pass still tells the first, which it
    ended (before: the refused job ended the whole pass, its report of the first went with it, and
    the first task was never told)."""
    hook = WebhookReceiver(SECRET)
    webhooks = WebhookSender(farm_settings(tmp_path, pg_database, **API))
    install_schema(pg_database)
    host = TaskStore(pg_database, instance="lost-host")
    registry = FarmRegistry(host.engine, host_timeout_s=0.5)
    registry.create_tables()
    options = {"owner": "admin", "script": "Home", "callback_url": hook.url}
    tasks = [host.create_task("Home", "any", options) for _ in range(2)]
    other = TaskStore(pg_database, instance="other-api")

    async def scenario() -> tuple[list[tuple[int, str]], list[int]]:
        jobs = build_jobs_app(pg_database)
        await jobs.open_async()
        loop = asyncio.get_running_loop()
        ended_there: list[int] = []
        try:
            taken = await _stalled(jobs, registry, host, tasks, tmp_path)

            def other_pass_ends(task_id: int) -> None:  # its finish, its job's end, its tell
                assert other.finish(task_id, "interrupted", error={"type": "HostLost", "message": "lost"})
                asyncio.run_coroutine_threadsafe(
                    jobs.job_manager.finish_job(taken[task_id], pjobs.Status.FAILED, delete_job=False), loop).result(30)
                tell_ends(webhooks, other, [task_id])
                ended_there.append(task_id)

            maintenance = _maintenance(jobs, _EndsOnRead(pg_database, {t.id for t in tasks}, 2, other_pass_ends),
                                       registry, webhooks)
            try:
                await maintenance()
            finally:
                maintenance.store.close()
            return maintenance.log, ended_there
        finally:
            await jobs.close_async()

    try:
        done, ended_there = asyncio.run(scenario())
        (first,) = [t.id for t in tasks if t.id not in ended_there]
        assert done == [(first, "interrupted")], done
        for delivery in webhooks.deliveries:
            delivery.join(30)
        for task in tasks:
            assert [b["status"] for b in hook.finished(task.id)] == ["interrupted"], hook.bodies
        assert hook.unsigned == 0
    finally:
        other.close()
        host.close()
        hook.close()
