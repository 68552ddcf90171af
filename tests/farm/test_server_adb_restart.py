"""The adb server is SIGKILLed while 4 tasks run on 4 network phones that an outside
``adb connect`` attached (not ``adb.connect``, not the API): the service starts the adb server
again, connects every phone it had seen again, and the phones are back within 10 s; the
running tasks finish, or fail naming the phone they lost. The same under a farm worker (2
phones, PostgreSQL). Real parts only: the adb binary of the adbutils wheel on a private port,
simulated phones over ADB, real uvicorn, a real worker process.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from mobile_agent.device import find_adb
from mobile_agent.device.adb_protocol import AdbHost
from mobile_agent.device.server import parse_devices_l
from mobile_agent.errors import DeviceError
from mobile_agent.settings import AdbSettings
from tests.ports import free_port
from tests.server_fixtures import service_settings, start_service

pytestmark = pytest.mark.slow

FINAL = {"completed", "not_completed", "budget_exhausted", "error", "cancelled", "interrupted"}


def _submit(live: Any, script: str) -> int:
    created = live.client.post("/v1/tasks", json={"script": script})
    assert created.status_code == 202, created.text
    task_id: int = created.json()["id"]
    return task_id


def _answers(host: AdbHost) -> bool:
    try:
        host.server_version()
    except DeviceError:
        return False
    return True


@pytest.fixture
def killable_adb(monkeypatch: pytest.MonkeyPatch) -> Any:
    """An adb server in the foreground (``nodaemon``), so that its pid is known."""
    home = Path(tempfile.mkdtemp(prefix="adb-sigkill-"))
    monkeypatch.setenv("HOME", str(home))  # the server keeps its keys there; the restarted one too
    monkeypatch.setenv("TMPDIR", str(home))
    settings = AdbSettings(server_port=free_port(), command_timeout_s=10)
    adb = str(find_adb(settings))
    process = subprocess.Popen([adb, "-P", str(settings.server_port), "nodaemon", "server"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    # wait with a raw query: the adb CLI would start a daemon server of its own on the port when it
    # came first, and the foreground one would then abort on the taken port (CI at c6ac1e4: SIGABRT)
    host = AdbHost("127.0.0.1", settings.server_port, 5)
    deadline = time.monotonic() + 20
    while not _answers(host):
        assert time.monotonic() < deadline and process.poll() is None, "the adb server did not start"
        time.sleep(0.1)
    try:
        yield settings, adb, process
    finally:
        process.kill()
        subprocess.run([adb, "-P", str(settings.server_port), "kill-server"], capture_output=True, timeout=30,
                       check=False, env=dict(os.environ))
        shutil.rmtree(home, ignore_errors=True)


def test_sigkill_of_the_adb_server_during_4_runs(killable_adb, llm_server, tmp_path: Path) -> None:
    from simphone import Phone
    from simphone.server import PhoneServer

    settings, adb, process = killable_adb
    port = str(settings.server_port)
    phones = PhoneServer([Phone(number=n + 1, width=540, height=1200) for n in range(4)]).start()
    serials = phones.serials
    live = None
    try:
        for serial in serials:  # attached from outside the service, as a person at a shell would
            answer = subprocess.run([adb, "-P", port, "connect", serial], capture_output=True, text=True, timeout=30)
            assert "connected to" in answer.stdout, answer
        llm_server.script([])
        live = start_service(service_settings(tmp_path, settings.server_port, llm_server, serials,
                                              **{"adb.reconnect_s": 15.0, "server.device_refresh_s": 0.5}))

        def states() -> dict[str, str]:
            return {d["serial"]: d["state"] for d in live.client.get("/v1/devices").json()["data"]}

        deadline = time.monotonic() + 30
        while set(states().values()) != {"device"} or len(states()) != 4:
            assert time.monotonic() < deadline, states()
            time.sleep(0.2)

        script = "\n".join(["Home", "Wait (0.3)"] * 12)  # ~8 s, a screenshot at each step
        ids = [_submit(live, script) for _ in range(4)]
        deadline = time.monotonic() + 30
        while True:  # every one running, a step or more done
            tasks = [live.client.get(f"/v1/tasks/{i}").json() for i in ids]
            if all(t["status"] == "running" and t["steps"] >= 1 for t in tasks):
                break
            assert time.monotonic() < deadline, tasks
            time.sleep(0.1)
        assert {t["device"] for t in tasks} == set(serials)

        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        killed = time.monotonic()
        # read the adb server's own list with a raw query (the adb CLI or adbutils would start a server)
        host = AdbHost("127.0.0.1", settings.server_port, 5)
        listed: dict[str, str] = {}
        while not (len(listed) == 4 and set(listed.values()) == {"device"}):
            assert time.monotonic() - killed < 10, f"the phones are not back 10 s after the SIGKILL: {listed}"
            time.sleep(0.1)
            try:
                listed = {d.serial: d.state for d in parse_devices_l(host.query("host:devices-l"))
                          if d.serial in serials}
            except DeviceError:
                listed = {}  # not started again yet
        back = time.monotonic() - killed
        deadline = time.monotonic() + 5
        while set(states().values()) != {"device"}:  # and the service says so
            assert time.monotonic() < deadline, states()
            time.sleep(0.1)

        for task_id in ids:
            done = live.wait_task(task_id, timeout=60)
            if done["status"] != "completed":
                assert done["status"] == "error" and done["device"] in done["error"]["message"], done
        finished = [live.client.get(f"/v1/tasks/{i}").json() for i in ids]
        print(f"phones back after {back:.1f} s; tasks: {[t['status'] for t in finished]}")
        # the phones take new tasks
        again = [_submit(live, "Home") for _ in range(4)]
        assert [live.wait_task(i, timeout=60)["status"] for i in again] == ["completed"] * 4
    finally:
        if live is not None:
            live.stop()
        phones.stop()


def _adb_lists(port: int, serials: list[str]) -> dict[str, str]:
    """The adb server's own list, by a raw query (the adb CLI or adbutils would start a server)."""
    try:
        return {d.serial: d.state for d in parse_devices_l(AdbHost("127.0.0.1", port, 5).query("host:devices-l"))
                if d.serial in serials}
    except DeviceError:
        return {}  # not started again yet


@pytest.mark.postgres
def test_sigkill_of_the_adb_server_under_a_farm_worker(killable_adb, pg_database: str,
                                                       tmp_path: Path) -> None:
    from simphone import Phone
    from simphone.server import PhoneServer
    from tests.farm_fixtures import start_farm_api, start_worker, wait_done, wait_free

    settings, adb, process = killable_adb
    phones = PhoneServer([Phone(number=n + 1, width=540, height=1200) for n in range(2)]).start()
    serials = phones.serials
    worker = api = None
    try:
        for serial in serials:
            answer = subprocess.run([adb, "-P", str(settings.server_port), "connect", serial],
                                    capture_output=True, text=True, timeout=30)
            assert "connected to" in answer.stdout, answer
        worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=settings.server_port, serials=serials)
        api = start_farm_api(tmp_path, pg_database)
        wait_free(api, serials, workers=[worker])
        script = "\n".join(["Home", "Wait (0.3)"] * 12)
        ids = [_submit(api, script) for _ in range(2)]
        deadline = time.monotonic() + 30
        while not all(api.client.get(f"/v1/tasks/{i}").json()["steps"] >= 1 for i in ids):
            assert time.monotonic() < deadline, [api.client.get(f"/v1/tasks/{i}").json() for i in ids]
            time.sleep(0.1)

        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        killed = time.monotonic()
        while set(_adb_lists(settings.server_port, serials).values()) != {"device"} or len(
                _adb_lists(settings.server_port, serials)) != 2:
            assert time.monotonic() - killed < 10, _adb_lists(settings.server_port, serials)
            time.sleep(0.1)
        for task_id in ids:
            done = wait_done(api.client, task_id, timeout=60)
            if done["status"] != "completed":
                assert done["status"] == "error" and done["device"] in done["error"]["message"], done
        wait_free(api, serials, workers=[worker])
        assert wait_done(api.client, _submit(api, "Home"), timeout=60)["status"] == "completed"
    finally:
        if api is not None:
            api.stop()
        if worker is not None:
            worker.stop()
        phones.stop()
