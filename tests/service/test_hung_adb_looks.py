"""An adb server that takes calls and never answers holds the service's looks at the phones for
``adb.list_timeout_s``, not ``adb.command_timeout_s`` (here an hour): ``GET /v1/devices`` (with
``refresh``) answers, the iPhones still listed and run; a phone's screenshot is a 503; a live
view ends with its task.

Real parts: uvicorn serving the app; as the adb port either a TCP server that accepts every
connection and never writes a byte, or a private real adb server stopped with SIGSTOP while a
task runs (``tests.adb_wedge``: the kernel still accepts, nothing reads). Every wait below is
for an answer: the client's read timeout (30 s) is far above the listing bound (1 s) and far
below the command timeout (3600 s), so a call left on the command timeout fails the test."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mobile_agent.device import connect
from mobile_agent.settings import AdbSettings
from tests.adb_wedge import adb_server_pid, calls_waiting, private_adb_settings
from tests.ports import free_port
from tests.server_fixtures import service_settings, start_service

pytestmark = pytest.mark.timeout(240)

SLOW = {"adb.command_timeout_s": 3600, "adb.list_timeout_s": 1}


class SilentServer:
    """Listens on a free port, accepts every connection, keeps it open and never writes."""

    def __init__(self) -> None:
        self.port = free_port()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._held: list[socket.socket] = []
        self.accepted = 0
        self._thread = threading.Thread(target=self._accept, name="silent-adb", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed
            self._held.append(conn)
            self.accepted += 1

    def close(self) -> None:
        self._listener.close()
        for conn in self._held:
            conn.close()
        self._thread.join(timeout=10)


@pytest.fixture
def silent_adb() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()


def test_the_device_list_answers_and_iphones_run_while_adb_says_nothing(tmp_path: Path, silent_adb: SilentServer,
                                                                        llm_server: Any, front: Any) -> None:
    settings = service_settings(tmp_path, silent_adb.port, llm_server, [], **SLOW,
                                **{"ios.devices": {"sim-1": front.url}})
    live = start_service(settings)  # (before: its first refresh held the scheduler for the command timeout)
    try:
        listed = live.client.get("/v1/devices", params={"refresh": True})
        assert listed.status_code == 200, listed.text
        assert [(d["serial"], d["state"]) for d in listed.json()["data"]] == [("ios:sim-1", "device")], listed.json()
        assert silent_adb.accepted >= 1  # the adb server was asked, and said nothing
        # the scheduler's refreshes give up on adb too: a task for the iPhone runs meanwhile
        created = live.client.post("/v1/tasks", json={"script": "Home\nStop", "device": "ios:sim-1"})
        assert created.status_code == 202, created.text
        done = live.wait_task(created.json()["id"], timeout=60)
        assert done["status"] == "completed", done
    finally:
        live.stop()


@pytest.fixture
def private_adb(monkeypatch: pytest.MonkeyPatch) -> Iterator[AdbSettings]:
    with private_adb_settings(monkeypatch, "adb-looks-", 3600) as settings:
        yield settings


def test_a_screenshot_and_a_live_view_of_a_phone_on_a_wedged_adb_server_answer(
        tmp_path: Path, sim_phones: Any, private_adb: AdbSettings, llm_server: Any) -> None:
    (phone,) = sim_phones(1)
    assert "connected to" in connect(phone.serial, private_adb)  # starts the private server too
    port = private_adb.server_port
    settings = service_settings(tmp_path, port, llm_server, [phone.serial], **SLOW)
    live = start_service(settings)
    server = adb_server_pid(port)
    stopped = False
    try:
        created = live.client.post("/v1/tasks", json={"script": "Home\n" * 40, "device": phone.serial})
        assert created.status_code == 202, created.text
        task_id = created.json()["id"]
        live.wait_task(task_id, statuses={"running"}, timeout=60)
        with live.client.stream("GET", f"/v1/tasks/{task_id}/live", params={"fps": 10}) as view:
            assert view.status_code == 200
            chunks = view.iter_bytes()
            seen = b""
            while b"Content-Type: image/jpeg" not in seen:  # a frame while adb answers
                seen += next(chunks)
            os.kill(server, signal.SIGSTOP)
            stopped = True
            while calls_waiting(port) == 0:  # a call in flight, never answered
                time.sleep(0.05)
            shot = live.client.get(f"/v1/devices/{phone.serial}/screenshot")
            assert shot.status_code == 503, shot.text  # (before: it waited the command timeout)
            assert live.client.post(f"/v1/tasks/{task_id}/cancel").status_code == 202
            for _ in chunks:  # the view ends with its task (before: its capture waited the command timeout)
                pass
        assert live.wait_task(task_id, timeout=60)["status"] == "cancelled"
        listed = live.client.get("/v1/devices", params={"refresh": True})
        assert listed.status_code == 200, listed.text
    finally:
        if stopped:
            os.kill(server, signal.SIGCONT)
        live.stop()
