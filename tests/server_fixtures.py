"""pytest fixtures for the service tests (import ``service_fixture`` and ``llm_server`` into
the test module; the fixture's name is ``service``).

``service`` is a factory: ``service(phones, **settings_overrides) -> LiveService``, the
real app (``server.app.create_app``) served by a real uvicorn on a loopback port, driving
the given simulated phones through the real adb server, planned by the scripted LLM
server. Each task's instruction carries a tag ``[name]``; ``TaggedPlanner`` answers each
tag from its own list of actions, so concurrent runs on several phones stay scripted.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from mobile_agent.settings import Settings, load_settings
from tests.llm_server import Reply, ScriptedLLMServer, chat_text
from tests.ports import free_port

__all__ = ["LiveService", "PhoneSerial", "TaggedPlanner", "first_live_frame", "free_port", "live_frames", "serve_process", "waits", "service_fixture", "service_settings", "start_service"]

_TAG = re.compile(r"\[(t-[A-Za-z0-9_-]+)\]")


@dataclass(frozen=True)
class PhoneSerial:
    """A phone ``service`` is given by its serial alone (``service([sim_phone, PhoneSerial("ios:sim-1")])``):
    an iPhone of ``ios.devices`` or usbmuxd, which no simulated adb phone stands for."""

    serial: str


def serve_process(config: Path, port: int, log: Path, *, log_level: str = "warning",
                  database: str | None = None) -> subprocess.Popen[bytes]:
    """``mobile-agent --config CONFIG serve`` as an operator starts it: a subprocess with no
    MOBILE_AGENT_ variable (the file's settings only; ``database``: ``--database URL``), its
    output appended to ``log``; returned once ``/readyz`` answers 200."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mobile_agent.cli", "--config", str(config), "serve", "--port", str(port),
         *(["--database", database] if database else []), "--no-preload", "--log-level", log_level],
        cwd=Path(__file__).resolve().parents[1],
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        env={k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"serve exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    process.kill()
    raise AssertionError(f"serve did not become ready: {log.read_text()[-2000:]}")


def waits(n: int) -> list[str]:
    """n different short waits (identical actions in a row would trip the agent's budget)."""
    return [f"Wait ({0.05 + 0.01 * i:.2f})" for i in range(n)]


def live_frames(api_url: str, task_id: int, headers: dict[str, str], n: int, fps: float = 4) -> tuple[str, list[bytes]]:
    """The content type and the first ``n`` parts (JPEGs) of ``GET /v1/tasks/{task_id}/live``,
    a multipart stream; fewer when the stream ends first."""
    frames: list[bytes] = []
    with httpx.Client(base_url=api_url, headers=headers, timeout=httpx.Timeout(30, read=30)) as http:
        with http.stream("GET", f"/v1/tasks/{task_id}/live", params={"fps": fps}) as answer:
            assert answer.status_code == 200, answer.read()
            content_type = answer.headers["content-type"]
            data = b""
            for chunk in answer.iter_bytes():
                data += chunk
                while len(frames) < n:
                    head, sep, rest = data.partition(b"\r\n\r\n")
                    if not sep or b"Content-Length:" not in head:
                        break
                    length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
                    if len(rest) < length:
                        break
                    frames.append(rest[:length])
                    data = rest[length:]
                if len(frames) >= n:
                    break
    return content_type, frames


def first_live_frame(api_url: str, task_id: int, headers: dict[str, str]) -> tuple[str, bytes]:
    """The content type and the first JPEG of ``GET /v1/tasks/{task_id}/live`` (a multipart stream)."""
    content_type, frames = live_frames(api_url, task_id, headers, 1)
    if not frames:
        raise AssertionError("the live stream ended before its first frame")
    return content_type, frames[0]


@dataclass
class TaggedPlanner:
    """Answers planner calls by the tag in the instruction: ``plans[tag]`` in order, then
    ``Stop``. ``delay_s[tag]`` slows that tag's replies (to cancel or kill mid-run)."""

    plans: dict[str, list[str]] = field(default_factory=dict)
    default_plan: list[str] = field(default_factory=lambda: ["Wait (0.1)"])
    delay_s: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request_json: dict[str, Any]) -> Reply:
        match = _TAG.search(chat_text(request_json))
        tag = match.group(1) if match else "untagged"
        with self._lock:
            n = self.calls.get(tag, 0)
            self.calls[tag] = n + 1
        plan = self.plans.get(tag, self.default_plan)
        action = plan[n] if n < len(plan) else "Stop"
        text = f"Observation: the screen of step {n + 1}.\nThought: following the plan for {tag}.\nAction: {action}"
        return Reply(text=text, delay_s=self.delay_s.get(tag, 0.0), usage=(1000, 50))


def service_settings(tmp_path: Path, adb_port: int, llm: ScriptedLLMServer, serials: list[str], **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "adb.server_port": adb_port,
        "server.database_url": f"sqlite:///{tmp_path / 'service.sqlite3'}",
        "server.devices": serials,
        "server.preload_perception": False,
        "server.device_refresh_s": 0.5,
        "server.schedule_min_interval_s": 1.0,  # schedules every second, for the tests' sake
        "agent.output_dir": str(tmp_path / "runs"),
        "agent.completion_check": False,
        "agent.settle_timeout_s": 0.6,
        "agent.settle_interval_s": 0.1,
        "planner.base_url": llm.base_url,
        "planner.api_key": "test-key",
        "planner.model": "gpt-4o",
        "planner.timeout_s": 20.0,
        "planner.max_retries": 1,
        "planner.backoff_base_s": 0.01,
        "planner.backoff_max_s": 0.05,
        "planner.image_long_side": 512,
    }
    values.update(overrides)
    return load_settings(overrides=values)


@dataclass
class LiveService:
    """A running service: ``url``, ``client`` (httpx), ``state`` (the ServiceState)."""

    url: str
    settings: Settings
    app: Any
    server: uvicorn.Server
    thread: threading.Thread
    client: httpx.Client

    @property
    def state(self) -> Any:
        return self.app.state.service

    def submit(self, instruction: str, **body: Any) -> dict[str, Any]:
        response = self.client.post("/v1/tasks", json={"instruction": instruction, **body})
        assert response.status_code == 202, response.text
        return response.json()

    def wait_task(self, task_id: int, *, statuses: set[str] | None = None, timeout: float = 60.0) -> dict[str, Any]:
        """Poll until the task reaches one of ``statuses`` (default: any final one)."""
        final = statuses or {"completed", "not_completed", "budget_exhausted", "error", "cancelled", "interrupted"}
        deadline = time.monotonic() + timeout
        while True:
            task = self.client.get(f"/v1/tasks/{task_id}").json()
            if task["status"] in final:
                return task
            if time.monotonic() > deadline:
                raise AssertionError(f"task {task_id} still {task['status']} after {timeout}s")
            time.sleep(0.1)

    def stop(self) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(30)


def start_service(settings: Settings, **create_kwargs: Any) -> LiveService:
    from server.app import create_app

    app = create_app(settings, **create_kwargs)
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise AssertionError("the service did not start")
        time.sleep(0.02)
    url = f"http://127.0.0.1:{port}"
    headers = {}
    if settings.server.api_token is not None:
        headers["Authorization"] = f"Bearer {settings.server.api_token.get_secret_value()}"
    client = httpx.Client(base_url=url, headers=headers, timeout=30)
    return LiveService(url, settings, app, server, thread, client)


@pytest.fixture(name="service")
def service_fixture(tmp_path: Path, adb_server: Any, llm_server: ScriptedLLMServer) -> Iterator[Callable[..., LiveService]]:
    started: list[LiveService] = []

    def make(phones: list[Any], *, planner: TaggedPlanner | None = None, **overrides: Any) -> LiveService:
        llm_server.script([], default=planner or TaggedPlanner())
        settings = service_settings(tmp_path, adb_server.port, llm_server, [p.serial for p in phones], **overrides)
        live = start_service(settings)
        started.append(live)
        return live

    yield make
    for live in started:
        live.stop()
