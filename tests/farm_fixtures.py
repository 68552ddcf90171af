"""Helpers for the farm tests: real ``mobile-agent worker`` processes (each driving its own
simulated phones through the session's adb server, limited with ``server.devices``), an API
server with ``farm.enabled`` on real uvicorn, one fresh PostgreSQL database per test.

Short timings so that faults show within seconds: heartbeats every 0.5 s, a host lost after
3 s of silence."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from mobile_agent.settings import load_settings
from tests.server_fixtures import LiveService, start_service

__all__ = ["FARM_TIMINGS", "Worker", "farm_settings", "start_farm_api", "start_worker", "until"]

REPO = Path(__file__).resolve().parents[1]

FARM_TIMINGS = {"heartbeat_s": 0.5, "host_timeout_s": 3.0, "poll_s": 0.2}


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return str(value)


def farm_config(path: Path, sections: dict[str, dict[str, Any]]) -> Path:
    path.write_text("\n".join(f"[{name}]\n" + "\n".join(f"{k} = {_toml(v)}" for k, v in values.items()) + "\n"
                              for name, values in sections.items()))
    return path


def until(condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(interval)


@dataclass
class Worker:
    name: str
    config: Path
    log: Path
    process: subprocess.Popen[bytes] | None = None
    env: dict[str, str] = field(default_factory=dict)

    def start(self) -> Worker:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mobile_agent.cli", "--config", str(self.config), "worker", "--log-level", "info"],
            cwd=REPO, stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
            env={**{k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}, **self.env},
        )
        return self

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)

    def text(self) -> str:
        return self.log.read_text(errors="replace")


def start_worker(tmp_path: Path, name: str, *, database: str, adb_port: int, serials: list[str],
                 labels: dict[str, str] | None = None, planner_url: str | None = None,
                 server: dict[str, Any] | None = None, agent: dict[str, Any] | None = None, **farm: Any) -> Worker:
    sections: dict[str, dict[str, Any]] = {
        "adb": {"server_port": adb_port},
        "server": {"database_url": database, "devices": serials, "device_refresh_s": 0.5, **(server or {})},
        "farm": {"host": name, "labels": labels or {}, **FARM_TIMINGS, **farm},
        "agent": {"output_dir": str(tmp_path / "shared-runs"), "completion_check": False,
                  "settle_timeout_s": 0.6, "settle_interval_s": 0.1, **(agent or {})},
    }
    if planner_url:
        sections["planner"] = {"base_url": planner_url, "api_key": "test-key", "timeout_s": 20.0, "max_retries": 1,
                               "backoff_base_s": 0.01, "image_long_side": 512}
    config = farm_config(tmp_path / f"worker-{name}.toml", sections)
    return Worker(name, config, tmp_path / f"worker-{name}.log").start()


def farm_settings(tmp_path: Path, database: str, *, planner_url: str | None = None, **overrides: Any) -> Any:
    values: dict[str, Any] = {
        "server.database_url": database,
        "server.preload_perception": False,
        "farm.enabled": True,
        "agent.output_dir": str(tmp_path / "shared-runs"),
        "server.schedule_min_interval_s": 1.0,  # schedules every second, for the tests' sake
        **{f"farm.{k}": v for k, v in FARM_TIMINGS.items()},
    }
    if planner_url:
        values.update({"planner.base_url": planner_url, "planner.api_key": "test-key"})
    values.update(overrides)
    return load_settings(overrides=values)


def start_farm_api(tmp_path: Path, database: str, **overrides: Any) -> LiveService:
    return start_service(farm_settings(tmp_path, database, **overrides))


def phones(api: LiveService) -> dict[str, dict[str, Any]]:
    return {d["serial"]: d for d in api.client.get("/v1/devices").json()["data"]}


def wait_free(api: LiveService, serials: list[str], timeout: float = 60.0, workers: list[Worker] = ()) -> None:
    def free() -> bool:
        for worker in workers:
            if worker.process is not None and worker.process.poll() is not None:
                raise AssertionError(f"worker {worker.name} exited: {worker.text()[-3000:]}")
        return all(phones(api).get(s, {}).get("state") == "free" for s in serials)

    until(free, timeout, f"phones {serials} free")


def wait_done(client: httpx.Client, task_id: int, timeout: float = 60.0) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        task = client.get(f"/v1/tasks/{task_id}").json()
        return task if task["status"] not in ("queued", "running") else None

    return until(done, timeout, f"task {task_id} ended")


@dataclass
class ApiProcess:
    """``mobile-agent serve --farm`` as a process of its own (to be SIGKILLed)."""

    config: Path
    port: int
    log: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ApiProcess:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mobile_agent.cli", "--config", str(self.config), "serve", "--farm", "--port",
             str(self.port), "--no-preload", "--log-level", "warning"],
            cwd=REPO, stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")},
        )

        def ready() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"serve --farm exited: {self.log.read_text()[-3000:]}")
            try:
                return httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200
            except httpx.TransportError:
                return False

        until(ready, 60, "serve --farm ready")
        return self

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def farm_api_process(tmp_path: Path, database: str, port: int) -> ApiProcess:
    config = farm_config(tmp_path / "api.toml", {
        "server": {"database_url": database},
        "farm": {**FARM_TIMINGS},
        "agent": {"output_dir": str(tmp_path / "shared-runs")},
    })
    return ApiProcess(config, port, tmp_path / "api.log").start()
