"""The server killed (SIGKILL) mid-run and started again on the same database: the runs it
had become ``interrupted``, queued tasks run, nothing is lost. A real ``mobile-agent
serve`` subprocess, the real agent, simulated phones, the scripted LLM server."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from server.store import TaskStore
from tests.server_fixtures import TaggedPlanner, free_port, serve_process, waits

pytestmark = pytest.mark.slow



def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def _write_config(tmp_path: Path, adb_port: int, planner_url: str, serials: list[str]) -> Path:
    """The service's TOML config: these phones, a database and runs under tmp_path, the
    scripted planner, short settles."""
    config = tmp_path / "service.toml"
    config.write_text(
        f"""
[adb]
server_port = {adb_port}

[server]
database_url = "sqlite:///{tmp_path / 'service.sqlite3'}"
devices = {_toml_list(serials)}
device_refresh_s = 0.5

[agent]
output_dir = "{tmp_path / 'runs'}"
completion_check = false
settle_timeout_s = 0.6
settle_interval_s = 0.1

[planner]
base_url = "{planner_url}"
api_key = "test-key"
timeout_s = 20.0
max_retries = 1
backoff_base_s = 0.01
image_long_side = 512
"""
    )
    return config


def test_killed_server_restarts_with_nothing_lost(tmp_path, adb_server, sim_phones, llm_server) -> None:
    phones = sim_phones(2, width=540, height=1200)
    planner = TaggedPlanner(
        plans={"t-r0": waits(8), "t-r1": waits(8), "t-q0": waits(2), "t-q1": waits(2)},
        delay_s={"t-r0": 0.8, "t-r1": 0.8},
    )
    llm_server.script([], default=planner)
    config = _write_config(tmp_path, adb_server.port, llm_server.base_url, [p.serial for p in phones])
    log = tmp_path / "serve.log"
    port = free_port()
    first = serve_process(config, port, log)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10)
    try:
        running = [
            client.post("/v1/tasks", json={"instruction": f"[t-r{i}] long run", "device": p.serial, "max_steps": 10}).json()
            for i, p in enumerate(phones)
        ]
        queued = [
            client.post("/v1/tasks", json={"instruction": f"[t-q{i}] waits its turn", "max_steps": 4}).json()
            for i in range(2)
        ]
        deadline = time.monotonic() + 40
        while not all(client.get(f"/v1/tasks/{t['id']}").json()["steps"] >= 1 for t in running):
            assert time.monotonic() < deadline, "the long runs never made a step"
            time.sleep(0.1)
        assert all(client.get(f"/v1/tasks/{t['id']}").json()["status"] == "queued" for t in queued)
        before = {t["id"]: client.get(f"/v1/tasks/{t['id']}").json() for t in running}
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(10)

    second = serve_process(config, port, log)
    try:
        for task in running:
            after = client.get(f"/v1/tasks/{task['id']}").json()
            assert after["status"] == "interrupted"
            assert after["error"]["type"] == "Interrupted"
            assert after["steps"] >= before[task["id"]]["steps"] >= 1
            assert after["device"] == before[task["id"]]["device"]
        for task in queued:
            done = httpx.get(f"http://127.0.0.1:{port}/v1/tasks/{task['id']}", timeout=10).json()
            deadline = time.monotonic() + 60
            while done["status"] in ("queued", "running"):
                assert time.monotonic() < deadline, done
                time.sleep(0.1)
                done = client.get(f"/v1/tasks/{task['id']}").json()
            assert done["status"] == "completed", done["error"]
            assert done["device"] in {p.serial for p in phones}
        # every event written before the kill is still there, then the interruption
        events = client.get(f"/v1/tasks/{running[0]['id']}/events", timeout=20).text
        assert events.count("event: step_finished") >= 1
        assert '"status":"interrupted"' in events and "event: end" in events
        # and the restarted server takes new work
        fresh = client.post("/v1/tasks", json={"instruction": "[t-q9] after the restart", "max_steps": 3}).json()
        deadline = time.monotonic() + 60
        while client.get(f"/v1/tasks/{fresh['id']}").json()["status"] != "completed":
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        client.close()
        second.send_signal(signal.SIGTERM)
        try:
            second.wait(20)
        except subprocess.TimeoutExpired:
            second.kill()
            second.wait(5)


def test_a_stop_starts_no_new_task_and_does_not_wait_for_streams(tmp_path, adb_server, sim_phones, llm_server) -> None:
    """SIGTERM while a client streams a queued task's events: the queued task stays queued for
    the next start. (uvicorn waits for open streams before the app hears of the stop; the
    scheduler went on meanwhile, started it, and the stop then interrupted it.)"""
    (phone,) = sim_phones(1, width=540, height=1200)
    planner = TaggedPlanner(plans={"t-a": waits(3), "t-b": waits(3)}, delay_s={"t-a": 1.0, "t-b": 1.0})
    llm_server.script([], default=planner)
    config = _write_config(tmp_path, adb_server.port, llm_server.base_url, [phone.serial])
    port = free_port()
    process = serve_process(config, port, tmp_path / "serve.log")
    url = f"http://127.0.0.1:{port}"
    lines: list[str] = []
    try:
        with httpx.Client(base_url=url, timeout=10) as client:
            a = client.post("/v1/tasks", json={"instruction": "[t-a] runs", "max_steps": 6}).json()
            b = client.post("/v1/tasks", json={"instruction": "[t-b] waits for the phone", "max_steps": 6}).json()

            def follow() -> None:
                with httpx.Client(base_url=url, timeout=httpx.Timeout(10, read=30)) as streamer:
                    try:
                        with streamer.stream("GET", f"/v1/tasks/{b['id']}/events") as response:
                            lines.extend(response.iter_lines())
                    except httpx.HTTPError:
                        lines.append("(cut)")

            reader = threading.Thread(target=follow, daemon=True)
            reader.start()
            deadline = time.monotonic() + 30
            while client.get(f"/v1/tasks/{a['id']}").json()["steps"] < 1:
                assert time.monotonic() < deadline, "task a never made a step"
                time.sleep(0.05)
            while not any(line.startswith("event: status") for line in lines):  # the stream is open
                assert time.monotonic() < deadline, f"the event stream never opened: {lines}"
                time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        reader.join(10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
    assert not reader.is_alive()
    assert "event: end" not in lines  # cut by the stop, not ended: the client reconnects
    store = TaskStore(f"sqlite:///{tmp_path / 'service.sqlite3'}")
    try:
        assert store.get_task(b["id"]).status == "queued"
        assert store.get_task(a["id"]).status == "interrupted"
    finally:
        store.close()
