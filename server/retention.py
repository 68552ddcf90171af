"""Retention: what the service deletes, and when (``server.retention``).

- Finished tasks (a terminal status and a ``finished_at``) older than ``task_days``: their row,
  their events and their trajectory folder; then, while the task folders together are over
  ``runs_max_mb``, the oldest finished tasks the same way. A queued, running or waiting task is
  never touched: the delete of a row is conditional on its status still being terminal, and its
  folder goes only after that row did, and only when it lies inside the runs folder.
- Cached plans not replayed (or, never replayed, not made) for ``cache_unused_days``.
- Rows of the audit trail (``GET /v1/audit``) older than ``audit_days``.
- The farm's live-view relay files (``<runs>/.live``) older than ``relay_max_age_s``, except
  those of a task that is still running or waiting.

``Retention.plan(now)`` says what would go and why (``mobile-agent gc --dry-run``),
``Retention.run(now)`` deletes it; ``now`` may be moved forward to see what a later day
deletes. ``RetentionTimer`` runs it every ``interval_s`` in the API server (the embedded
service and a farm's API server alike: the database and the runs folder are shared, and every
delete is idempotent). ``disk_refusal`` is the 507 of a submission while the runs folder's
disk has less than ``min_free_mb`` free.

May import: sqlalchemy, ``server.store``, ``server.tables``, ``server.farm.live``,
``mobile_agent`` (public API), the standard library.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import sqlalchemy as sa

from mobile_agent.agent import free_mb as disk_free_mb
from mobile_agent.replay import PlanStore, default_cache_url
from mobile_agent.settings import RetentionSettings, Settings
from server.farm.live import LIVE_DIR
from server.store import TaskStore
from server.tables import ACTIVE_STATUSES, TERMINAL_STATUSES, audit_table, events_table, tasks_table

__all__ = ["Doomed", "Retention", "RetentionTimer", "folder_bytes"]

log = logging.getLogger(__name__)

DAY_S = 86400.0
_RELAY_NAME = re.compile(r"^\.?task-(\d+)\.")


@dataclass(frozen=True)
class Doomed:
    """One thing the cleanup deletes: ``kind`` and ``key`` (a task id, a plan id, a relay file's
    name; for the audit trail, the rows before a time), ``why`` in words, and the bytes its files hold."""

    kind: Literal["task", "plan", "relay", "audit"]
    key: str
    why: str
    bytes: int = 0

    def line(self) -> str:
        size = f" ({self.bytes / 1e6:.1f} MB)" if self.bytes else ""
        return f"{self.kind} {self.key}{size}: {self.why}"


def folder_bytes(path: Path) -> int:
    """The bytes of the files under ``path`` (0 when it is gone)."""
    total = 0
    stack = [path]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return total


class Retention:
    def __init__(self, settings: Settings, store: TaskStore, runs_dir: Path) -> None:
        self.settings = settings
        self.limits: RetentionSettings = settings.server.retention
        self.store = store
        self.runs_dir = Path(runs_dir).resolve()

    # --- the disk ------------------------------------------------------------------------

    def disk_refusal(self) -> str | None:
        """Why a new task must be refused now (the runs folder's disk nearly full), or None."""
        if not self.limits.min_free_mb:
            return None
        free_mb = disk_free_mb(self.runs_dir)
        if free_mb is None or free_mb >= self.limits.min_free_mb:
            return None
        # no path in the text: it goes to the client (a 507) and into a schedule's history
        return (f"the disk of the runs folder (agent.output_dir) has {free_mb:.0f} MB free, under "
                f"server.retention.min_free_mb = {self.limits.min_free_mb:g}: free space (or lower "
                "server.retention.task_days / runs_max_mb and run `mobile-agent gc`)")

    # --- what goes -----------------------------------------------------------------------

    def _inside(self, folder: str | None) -> Path | None:
        if not folder:
            return None
        path = Path(folder).resolve()
        return path if path.is_relative_to(self.runs_dir) and path != self.runs_dir else None

    def plan(self, now: float | None = None) -> list[Doomed]:
        """Everything the cleanup would delete at ``now``, oldest first within each kind."""
        now = time.time() if now is None else now
        return self._tasks(now) + self._plans(now) + self._relay(now) + self._audit(now)

    def _tasks(self, now: float) -> list[Doomed]:
        t = tasks_table.c
        with self.store.engine.connect() as conn:
            rows = conn.execute(sa.select(t.id, t.status, t.finished_at, t.trajectory_dir).order_by(t.id)).all()
        finished = sorted((r for r in rows if r.status in TERMINAL_STATUSES and r.finished_at is not None),
                          key=lambda r: (r.finished_at, r.id))
        sized = rows if self.limits.runs_max_mb else []  # walking every folder only when a size limit is set
        sizes = {r.id: folder_bytes(path) if (path := self._inside(r.trajectory_dir)) else 0 for r in sized}

        def size(task_id: int, folder: str | None) -> int:
            if task_id not in sizes:
                sizes[task_id] = folder_bytes(path) if (path := self._inside(folder)) else 0
            return sizes[task_id]

        doomed: list[Doomed] = []
        gone: set[int] = set()
        if self.limits.task_days:
            cutoff = now - self.limits.task_days * DAY_S
            for r in finished:
                if r.finished_at < cutoff:
                    age = (now - r.finished_at) / DAY_S
                    doomed.append(Doomed("task", str(r.id), f"{r.status} {age:.1f} days ago, over "
                                         f"server.retention.task_days = {self.limits.task_days:g}", size(r.id, r.trajectory_dir)))
                    gone.add(r.id)
        if self.limits.runs_max_mb:
            limit = self.limits.runs_max_mb * 1e6
            total = sum(held for task_id, held in sizes.items() if task_id not in gone)
            for r in finished:
                if total <= limit:
                    break
                if r.id in gone:
                    continue
                doomed.append(Doomed("task", str(r.id), f"the task folders hold {total / 1e6:.1f} MB, over "
                                     f"server.retention.runs_max_mb = {self.limits.runs_max_mb:g}; oldest first",
                                     size(r.id, r.trajectory_dir)))
                gone.add(r.id)
                total -= size(r.id, r.trajectory_dir)
        return doomed

    def _plan_store(self) -> PlanStore | None:
        url = self.settings.cache.database_url or default_cache_url(Path(self.settings.agent.output_dir))
        if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
            return None  # no cache was ever made: do not make one to find it empty
        return PlanStore(url, namespace=None)

    def _plans(self, now: float) -> list[Doomed]:
        if not self.limits.cache_unused_days:
            return []
        store = self._plan_store()
        if store is None:
            return []
        cutoff = now - self.limits.cache_unused_days * DAY_S
        return [Doomed("plan", str(plan_id), f"{template!r} unused {(now - last) / DAY_S:.1f} days, over "
                       f"server.retention.cache_unused_days = {self.limits.cache_unused_days:g}")
                for plan_id, template, last in store.unused_since(cutoff)]

    def _relay(self, now: float) -> list[Doomed]:
        folder = self.runs_dir / LIVE_DIR
        if not self.limits.relay_max_age_s or not folder.is_dir():
            return []
        cutoff = now - self.limits.relay_max_age_s
        old = []
        for path in sorted(folder.iterdir()):
            try:
                stat = path.stat()
            except OSError:
                continue
            if path.is_file() and stat.st_mtime < cutoff:
                old.append((path, stat))
        ids = {int(m.group(1)) for path, _ in old if (m := _RELAY_NAME.match(path.name))}
        active = self._active(ids)
        doomed = []
        for path, stat in old:
            match = _RELAY_NAME.match(path.name)
            if match and int(match.group(1)) in active:
                continue  # its task still runs: a viewer may come back
            doomed.append(Doomed("relay", path.name, f"untouched {(now - stat.st_mtime):.0f} s, over "
                                 f"server.retention.relay_max_age_s = {self.limits.relay_max_age_s:g}", stat.st_size))
        return doomed

    def _audit_cutoff(self, now: float) -> float:
        return now - self.limits.audit_days * DAY_S

    def _audit(self, now: float) -> list[Doomed]:
        """The audit rows older than ``audit_days``, as one item (they go in one statement)."""
        if not self.limits.audit_days:
            return []
        cutoff = self._audit_cutoff(now)
        with self.store.engine.connect() as conn:
            old = int(conn.execute(sa.select(sa.func.count()).select_from(audit_table)
                                   .where(audit_table.c.at < cutoff)).scalar_one())
        if not old:
            return []
        before = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(cutoff))
        return [Doomed("audit", f"rows before {before}", f"{old} rows, over server.retention.audit_days = "
                       f"{self.limits.audit_days:g}")]

    def _active(self, ids: set[int]) -> set[int]:
        if not ids:
            return set()
        t = tasks_table.c
        with self.store.engine.connect() as conn:
            found = conn.execute(sa.select(t.id).where(t.id.in_(sorted(ids)), t.status.in_(sorted(ACTIVE_STATUSES))))
            return {int(r[0]) for r in found}

    # --- deleting ------------------------------------------------------------------------

    def run(self, now: float | None = None, *, dry_run: bool = False) -> list[Doomed]:
        """Delete what ``plan(now)`` lists (nothing with ``dry_run``); what was deleted."""
        doomed = self.plan(now)
        if dry_run:
            return doomed
        done: list[Doomed] = []
        for item in doomed:
            try:
                if item.kind == "task" and self._delete_task(int(item.key)):
                    done.append(item)
                elif item.kind == "relay":
                    (self.runs_dir / LIVE_DIR / item.key).unlink(missing_ok=True)
                    done.append(item)
                elif item.kind == "audit":
                    with self.store.write() as conn:
                        conn.execute(audit_table.delete().where(
                            audit_table.c.at < self._audit_cutoff(time.time() if now is None else now)))
                    done.append(item)
            except (OSError, sa.exc.SQLAlchemyError) as exc:  # the next run tries again
                log.warning("retention: %s not deleted: %s", item.line(), exc)
        plans = [item for item in doomed if item.kind == "plan"]
        store = self._plan_store() if plans else None
        if store is not None:
            cutoff = (time.time() if now is None else now) - self.limits.cache_unused_days * DAY_S
            store.forget_unused(cutoff)
            done.extend(plans)
        if done:
            freed = sum(item.bytes for item in done)
            log.info("retention: deleted %d tasks, %d plans, %d relay files (%.1f MB)%s",
                     sum(i.kind == "task" for i in done), sum(i.kind == "plan" for i in done),
                     sum(i.kind == "relay" for i in done), freed / 1e6,
                     "".join(f"; audit {i.why}" for i in done if i.kind == "audit"))
        return done

    def _delete_task(self, task_id: int) -> bool:
        """The row and events of a finished task, then its folder; False when it is not finished
        (any more) or already gone."""
        t = tasks_table.c
        with self.store.write() as conn:
            found = conn.execute(sa.select(t.trajectory_dir).where(
                t.id == task_id, t.status.in_(sorted(TERMINAL_STATUSES)))).one_or_none()
            if found is None:
                return False
            folder = found[0]
            conn.execute(events_table.delete().where(events_table.c.task_id == task_id))
            conn.execute(tasks_table.delete().where(t.id == task_id, t.status.in_(sorted(TERMINAL_STATUSES))))
        path = self._inside(folder)
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)
        return True


class RetentionTimer:
    """A thread: ``Retention.run`` every ``interval_s`` (the first a minute after the start)."""

    def __init__(self, retention: Retention, interval_s: float, first_after_s: float = 60.0) -> None:
        self.retention = retention
        self.interval_s = interval_s
        self.first_after_s = min(first_after_s, interval_s)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="retention", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def _run(self) -> None:
        wait = self.first_after_s
        while not self._stop.wait(wait):
            wait = self.interval_s
            try:
                self.retention.run()
            except Exception:  # the database away for a moment: the next period tries again
                log.exception("retention failed")
