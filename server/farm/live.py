"""The live view of a task that runs on a farm worker, relayed through the shared folder.

The API server holds no phone, so ``GET /v1/tasks/{id}/live`` cannot capture the screen of a
task that a worker runs. While a client watches, the API writes ``<runs>/.live/task-N.want``
every tick (``want_frames``); the worker running task N sees a fresh request on its own tick
and captures its phone a few times a second into ``<runs>/.live/task-N.jpg`` (a temporary name,
then ``os.replace``: a reader never sees half a frame); the API streams each new file
(``read_frame``). Nobody watching, no capture: a frame costs the host CPU. ``<runs>`` is
``agent.output_dir``, the folder the trajectories are already shared in, at the same path on
every host (docs/farm.md), so the relay needs no other service and no credentials; the files
sit beside the task folders, not in them, so a trajectory's zip never holds them.

May import: the standard library.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["LIVE_DIR", "WANT_FRESH_S", "LiveRelay", "live_paths", "read_frame", "want_frames"]

log = logging.getLogger(__name__)

LIVE_DIR = ".live"
WANT_FRESH_S = 5.0  # a request older than this: the client went away, the worker stops capturing


def live_paths(runs_dir: Path, task_id: int) -> tuple[Path, Path]:
    """(the watch request, the latest frame) of a task."""
    folder = runs_dir / LIVE_DIR
    return folder / f"task-{task_id}.want", folder / f"task-{task_id}.jpg"


def want_frames(runs_dir: Path, task_id: int) -> None:
    """The API side: someone watches task ``task_id`` now (its mtime is the request's age)."""
    want, _ = live_paths(runs_dir, task_id)
    want.parent.mkdir(parents=True, exist_ok=True)
    want.write_bytes(b"")
    os.utime(want)


def read_frame(runs_dir: Path, task_id: int, seen_ns: int) -> tuple[bytes | None, int]:
    """The API side: the task's latest frame if it is newer than ``seen_ns`` (an mtime), and its mtime."""
    _, frame = live_paths(runs_dir, task_id)
    try:
        stamp = frame.stat().st_mtime_ns
        if stamp == seen_ns:
            return None, seen_ns
        return frame.read_bytes(), stamp
    except OSError:  # none yet, or renamed over while read: the next tick gets it
        return None, seen_ns


class LiveRelay:
    """The worker side: one capture thread per watched task of this host, while it is watched
    and running. ``update`` is called on the worker's tick with its running tasks."""

    def __init__(self, runs_dir: Path, capture: Callable[[str], bytes], *, fps: float = 3.0) -> None:
        self.runs_dir = runs_dir
        self.capture = capture  # serial -> JPEG bytes (raises when the phone cannot answer)
        self.every_s = 1.0 / fps
        self._running: dict[int, str] = {}
        self._threads: dict[int, threading.Thread] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def _wanted(self, task_id: int) -> bool:
        want, _ = live_paths(self.runs_dir, task_id)
        try:
            return time.time() - want.stat().st_mtime < WANT_FRESH_S
        except OSError:
            return False

    def update(self, running: dict[int, str]) -> None:
        """``running``: task id -> serial, the tasks this host runs now."""
        with self._lock:
            self._running = dict(running)
            for task_id, serial in running.items():
                thread = self._threads.get(task_id)
                if (thread is None or not thread.is_alive()) and self._wanted(task_id):
                    thread = threading.Thread(target=self._relay, args=(task_id, serial), daemon=True,
                                              name=f"live-{task_id}")
                    self._threads[task_id] = thread
                    thread.start()
            for task_id in [t for t, th in self._threads.items() if not th.is_alive()]:
                del self._threads[task_id]

    def _still(self, task_id: int) -> bool:
        with self._lock:
            running = task_id in self._running
        return running and not self._stop.is_set() and self._wanted(task_id)

    def _relay(self, task_id: int, serial: str) -> None:
        want, frame = live_paths(self.runs_dir, task_id)
        partial = frame.with_name(f".{frame.name}.{os.getpid()}")
        try:
            while self._still(task_id):
                begun = time.monotonic()
                try:
                    partial.write_bytes(self.capture(serial))
                    os.replace(partial, frame)
                except Exception as exc:  # noqa: BLE001 - a frame missed; the run says if the phone is gone
                    log.debug("live frame of task %s: %s", task_id, exc)
                self._stop.wait(max(0.0, self.every_s - (time.monotonic() - begun)))
        finally:
            for path in (partial, frame, want):
                path.unlink(missing_ok=True)

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(5)
