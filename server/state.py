"""What one running service holds: store, device pool, scheduler, live-event hub, metrics.

``EventHub`` wakes the event streams of a task when the store gets a new event for it;
the store remains the source of truth (streams re-read it), so a missed wake-up costs
latency, never an event.

May import: the other ``server`` modules, asyncio, the standard library.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mobile_agent.agent import Redactor
from mobile_agent.locate import LazyLocator
from mobile_agent.settings import Settings
from server.devices import DeviceSlot
from server.live import LiveHub
from server.metrics import Metrics
from server.retention import Retention
from server.runner import TaskRunner
from server.store import TaskRow, TaskStore
from server.webhooks import WebhookSender

if TYPE_CHECKING:
    from mobile_agent.locate import PerceptionLocator
    from server.farm.recurring import Schedules

__all__ = ["Dispatcher", "EventHub", "PhoneAccess", "Phones", "ServiceState"]

STREAM_STALE_S = 30.0  # an event stream not seen this long is not counted (a live one is seen every 2 s)


class PhoneAccess(Protocol):
    """What the API asks of a phone directly: a screenshot, ``adb connect``."""

    def screenshot(self, serial: str, fmt: str) -> bytes: ...

    def connect(self, address: str) -> str: ...


class Phones(Protocol):
    """The phones as the API sees them: the embedded ``server.devices.DevicePool``, or the
    farm's ``server.farm.service.FarmPhones`` (every host's, read from the database)."""

    @property
    def allow(self) -> frozenset[str]: ...

    @property
    def source(self) -> PhoneAccess: ...

    def refresh(self) -> None: ...

    def slots(self) -> list[DeviceSlot]: ...

    def get(self, serial: str) -> DeviceSlot | None: ...

    def knows(self, serial: str) -> bool: ...

    def held(self, serial: str) -> bool:
        """Another interface's run holds the phone (its ``PhoneLease``: ``mobile-agent run``, MCP,
        the pytest plugin): the embedded pool asks the lock; the farm reads what the phone's worker
        saw on its host."""
        ...

    def held_unlisted(self, slot: DeviceSlot) -> bool:
        """Whether another interface's run holds ``slot``'s phone where ``slot.public()`` does not
        already count it busy: the embedded pool asks the lock (``held``); a farm slot carries what
        the phone's worker saw (``FarmSlot.held``, read with the slot), so the farm asks nothing more."""
        ...

    def close(self) -> None:
        """The service stops: close the phones opened here (after the scheduler has stopped)."""
        ...


class Dispatcher(Protocol):
    """The queue as the API sees it: the embedded ``server.scheduler.Scheduler``, or the farm's
    ``server.farm.service.FarmDispatcher`` (procrastinate jobs for the worker hosts)."""

    @property
    def running_count(self) -> int: ...

    def start(self) -> None: ...

    def stop(self, timeout_s: float = 10.0) -> None: ...

    def hold(self) -> None: ...

    def wake(self) -> None: ...

    def submit(self, task: TaskRow) -> None: ...

    def cancel(self, task_id: int) -> bool: ...

    def route_refusal(self, device: str, options: dict[str, Any]) -> str | None: ...

    def waiting_reason(self, task: TaskRow) -> str | None:
        """Why a queued ``task`` has not started, beyond its quota (the farm's routing), or None."""
        ...


class EventHub:
    """Thread-safe wake-ups for asyncio listeners, one channel per task."""

    def __init__(self, streams_per_token: int = 0) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[int, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self.streams_per_token = streams_per_token  # server.event_streams_per_token (0: no limit)
        self._streams: dict[int, tuple[str, float]] = {}  # open event streams: id -> (token, last seen)
        self._stream_ids = itertools.count(1)

    def open_stream(self, token: str) -> int | None:
        """One more event stream of ``token`` (its id), or None when the token has its limit open.
        A stream not seen (``stream_alive``) for ``STREAM_STALE_S`` is not counted: one whose
        response never started streaming (the client left at once) never reaches its ``finally``."""
        now = time.monotonic()
        with self._lock:
            for stale in [i for i, (_, seen) in self._streams.items() if now - seen > STREAM_STALE_S]:
                del self._streams[stale]
            held = sum(1 for owner, _ in self._streams.values() if owner == token)
            if self.streams_per_token and held >= self.streams_per_token:
                return None
            stream_id = next(self._stream_ids)
            self._streams[stream_id] = (token, now)
            return stream_id

    def stream_alive(self, stream_id: int, token: str) -> None:
        """Stream ``stream_id`` of ``token`` is still being served: counted from now on, also one
        dropped as stale meanwhile (a stream held up past ``STREAM_STALE_S`` that goes on)."""
        with self._lock:
            self._streams[stream_id] = (token, time.monotonic())

    def close_stream(self, stream_id: int) -> None:
        with self._lock:
            self._streams.pop(stream_id, None)

    def listen(self, task_id: int) -> asyncio.Event:
        event = asyncio.Event()
        with self._lock:
            self._listeners.setdefault(task_id, set()).add((asyncio.get_running_loop(), event))
        return event

    def unlisten(self, task_id: int, event: asyncio.Event) -> None:
        with self._lock:
            listeners = self._listeners.get(task_id, set())
            for item in [i for i in listeners if i[1] is event]:
                listeners.discard(item)
            if not listeners:
                self._listeners.pop(task_id, None)

    def notify(self, task_id: int) -> None:
        with self._lock:
            listeners = list(self._listeners.get(task_id, ()))
        for loop, event in listeners:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that loop has closed; its stream is gone
                pass

    def notify_all(self) -> None:
        with self._lock:
            task_ids = list(self._listeners)
        for task_id in task_ids:
            self.notify(task_id)

    @property
    def listener_count(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._listeners.values())


@dataclass
class ServiceState:
    settings: Settings
    store: TaskStore
    pool: Phones
    scheduler: Dispatcher
    hub: EventHub
    metrics: Metrics
    runner: TaskRunner
    runs_dir: Path
    api_token: str | None
    schedules: Schedules  # recurring tasks
    webhooks: WebhookSender  # the ends this process tells (server.runner.tell_ends); a stop waits for them
    ready: threading.Event = field(default_factory=threading.Event)
    closing: threading.Event = field(default_factory=threading.Event)
    started_at: float = field(default_factory=time.time)
    live: LiveHub = field(init=False)  # the live views' capture loops, one per phone
    retention: Retention = field(init=False)  # what is deleted, and the disk's free space
    # the server's secrets (agent.secrets, named secrets, the planner key), taken out of what a task row
    # shows: the row keeps the instruction as sent (its run needs it), the API, dashboard and audit do not
    redact: Redactor = field(init=False)
    # OCR for what the service itself reads on a screen (a free phone's screenshot, for secrets), built on first use
    reader: LazyLocator = field(init=False)

    def __post_init__(self) -> None:
        server = self.settings.server
        self.live = LiveHub(fps=server.live_fps, per_phone=server.live_viewers_per_phone,
                            per_token=server.live_viewers_per_token, closing=self.closing.is_set)
        self.retention = Retention(self.settings, self.store, self.runs_dir)
        self.redact = Redactor.from_settings(self.settings)
        self.reader = LazyLocator(self._build_reader)

    def _build_reader(self) -> PerceptionLocator:
        from mobile_agent.locate import build_locator

        return build_locator(self.settings)

    def drain(self) -> None:
        """The server is stopping: start no more tasks and end the event streams (clients
        reconnect with Last-Event-ID to the next server), so that the stop need not wait for
        them. Safe from a signal handler: it only sets flags and wakes loops."""
        self.closing.set()
        self.scheduler.hold()
        self.hub.notify_all()
