"""The live view's fan-out: one capture loop per phone, whatever the number of viewers.

``GET /v1/tasks/{id}/live`` joins the task's ``Broadcast`` (made by the first viewer, ended
with the last one or the run): an asyncio task on the server's loop captures the phone at
the phone's rate (``server.live_fps``) in a worker thread, keeps the latest JPEG and wakes
every viewer; each viewer sends the frames it has not sent yet, no faster than it asked
(``fps``). A frame is captured (and masked: ``AdbDeviceSource.screenshot`` hides the run's
secrets) once, however many watch it; the task's status is read once per tick, not per
viewer. The number of viewers is capped per phone (``server.live_viewers_per_phone``) and per
token (``server.live_viewers_per_token``): ``LiveLimit`` (a 429 naming the setting).

A viewer whose client never started reading (the response was dropped before its first
frame) is not counted for long: a viewer that has not asked for a frame for ``STALE_S`` is
dropped from the counts.

May import: asyncio, the standard library.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

__all__ = ["Broadcast", "LiveHub", "LiveLimit", "Viewer"]

log = logging.getLogger(__name__)

STALE_S = 30.0  # a viewer that asked for no frame this long is not counted any more


class LiveLimit(Exception):
    """Too many viewers; ``setting`` names the limit."""

    def __init__(self, message: str, setting: str) -> None:
        super().__init__(message)
        self.setting = setting


@dataclass
class Viewer:
    id: int
    owner: str
    broadcast: Broadcast
    last_seen: float = field(default_factory=time.monotonic)

    async def frames(self, fps: float, max_s: float) -> AsyncIterator[bytes]:
        """Each new frame of the broadcast once, at most ``fps`` a second, until the run or the
        broadcast ends, or ``max_s`` passes."""
        b = self.broadcast
        seen = 0
        every = 1.0 / fps
        started = last_sent = time.monotonic()
        while time.monotonic() - started < max_s:
            self.last_seen = time.monotonic()
            if b.seq == seen and not b.ended:
                try:  # an Event, not a Condition: a viewer cancelled mid-wait (its client left) holds no lock
                    await asyncio.wait_for(b.fresh.wait(), timeout=5.0)
                except TimeoutError:
                    continue  # nothing new (a phone not answering): look again
            if b.ended:
                return
            wait = every - (time.monotonic() - last_sent)
            if wait > 0:  # a viewer slower than the phone skips frames, never queues them
                await asyncio.sleep(wait)
            frame, seen = b.frame, b.seq
            if frame is not None:
                last_sent = time.monotonic()
                yield frame


@dataclass
class Broadcast:
    serial: str
    task_id: int
    capture: Callable[[], bytes | None]  # blocking: runs in a worker thread
    still_live: Callable[[], bool]  # blocking: is the task still running or waiting?
    fresh: asyncio.Event = field(default_factory=asyncio.Event)  # set (and replaced) at each new frame
    viewers: dict[int, Viewer] = field(default_factory=dict)
    frame: bytes | None = None
    seq: int = 0
    captures: int = 0
    ended: bool = False
    loop_task: asyncio.Task[None] | None = None


class LiveHub:
    """The broadcasts of one service. Used from the server's event loop only."""

    def __init__(self, *, fps: float = 3.0, per_phone: int = 20, per_token: int = 10,
                 closing: Callable[[], bool] = lambda: False) -> None:
        self.every_s = 1.0 / fps
        self.per_phone = per_phone
        self.per_token = per_token
        self.closing = closing
        self._broadcasts: dict[int, Broadcast] = {}  # by task: a phone runs one task at a time
        self._ids = itertools.count(1)
        self.captured = 0  # frames captured for live views since the start, all phones

    def _prune(self, broadcast: Broadcast) -> None:
        stale = time.monotonic() - STALE_S
        for viewer_id in [v.id for v in broadcast.viewers.values() if v.last_seen < stale]:
            del broadcast.viewers[viewer_id]

    def viewers_of(self, owner: str) -> int:
        return sum(1 for b in self._broadcasts.values() for v in b.viewers.values() if v.owner == owner)

    def join(self, serial: str, task_id: int, owner: str, capture: Callable[[], bytes | None],
             still_live: Callable[[], bool]) -> Viewer:
        """A new viewer of ``serial`` (running ``task_id``), starting its capture loop if it is
        the first; ``LiveLimit`` over a cap."""
        broadcast = self._broadcasts.get(task_id)
        if broadcast is not None and (broadcast.ended or (broadcast.loop_task is not None and broadcast.loop_task.done())):
            broadcast = None  # a loop that is ending: a new one
        for b in self._broadcasts.values():
            self._prune(b)
        if broadcast is not None and self.per_phone and len(broadcast.viewers) >= self.per_phone:
            raise LiveLimit(f"the phone {serial} has {len(broadcast.viewers)} live viewers, its limit "
                            f"(server.live_viewers_per_phone = {self.per_phone})", "server.live_viewers_per_phone")
        held = self.viewers_of(owner)
        if self.per_token and held >= self.per_token:
            raise LiveLimit(f"the token {owner!r} has {held} live views open, its limit "
                            f"(server.live_viewers_per_token = {self.per_token})", "server.live_viewers_per_token")
        if broadcast is None:
            broadcast = Broadcast(serial, task_id, capture, still_live)
            self._broadcasts[task_id] = broadcast
            broadcast.loop_task = asyncio.get_running_loop().create_task(self._run(broadcast), name=f"live-{serial}")
        viewer = Viewer(next(self._ids), owner, broadcast)
        broadcast.viewers[viewer.id] = viewer
        return viewer

    def leave(self, viewer: Viewer) -> None:
        viewer.broadcast.viewers.pop(viewer.id, None)

    async def _run(self, b: Broadcast) -> None:
        """The capture loop of one phone: while anyone watches and the run goes on."""
        failing = False  # a phone that stops giving frames is said once (a warning), until one comes again
        try:
            while b.viewers and not self.closing():
                begun = time.monotonic()
                try:
                    frame = await asyncio.to_thread(b.capture)
                except Exception as exc:  # noqa: BLE001 - a frame missed; the run says if the phone is gone
                    if failing:
                        log.debug("live frame of %s: %s", b.serial, exc)
                    else:
                        log.warning("live view of task %s: no frame from %s (%s); its viewers see the last "
                                    "frame until one comes", b.task_id, b.serial, exc)
                    failing, frame = True, None
                b.captures += 1
                self.captured += 1
                # the task's status is read once a tick, after the capture (the first tick's frame
                # follows the route's own check): a task that ended while the frame was taken may
                # have freed the phone for another principal's run, whose screen is not for these viewers
                try:
                    if not await asyncio.to_thread(b.still_live):
                        break
                except Exception as exc:  # noqa: BLE001 - the task is gone (deleted) or unreadable: the view ends
                    log.info("live view of task %s ends: %s", b.task_id, exc)
                    break
                if frame is not None:
                    if failing:
                        log.info("live view of task %s: frames from %s again", b.task_id, b.serial)
                    failing = False
                    b.frame, b.seq = frame, b.seq + 1
                    self._wake(b)
                await asyncio.sleep(max(0.0, self.every_s - (time.monotonic() - begun)))
                self._prune(b)
        finally:
            b.ended = True
            self._wake(b)
            if self._broadcasts.get(b.task_id) is b:
                del self._broadcasts[b.task_id]

    @staticmethod
    def _wake(b: Broadcast) -> None:
        woken, b.fresh = b.fresh, asyncio.Event()
        woken.set()

    def stats(self) -> dict[str, int]:
        """Capture loops running, viewers, frames captured (readable from another thread: /metrics)."""
        broadcasts = list(self._broadcasts.values())
        return {"loops": sum(1 for b in broadcasts if not b.ended), "viewers": sum(len(b.viewers) for b in broadcasts),
                "captures": self.captured}
