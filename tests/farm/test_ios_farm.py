"""iPhones on a farm (issue 33): a ``mobile-agent worker`` registers the iPhones of its
``ios.devices`` beside (or instead of) its Android phones, and a task for ``ios:NAME`` or for
``platform: "ios"`` runs on the worker that has the iPhone. Real processes: PostgreSQL, two
workers, the API server (``farm.enabled``) on real uvicorn; the simulated iPhone
(``simphone.ios.WdaFrontEnd``) in this process, reached by its worker over HTTP. Tasks are
scripts, checked by the iPhone's own state."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from mobile_agent.device.ios import WdaClient
from simphone.ios import WdaFrontEnd
from tests.farm_fixtures import (
    FARM_TIMINGS,
    Worker,
    farm_config,
    phones,
    start_farm_api,
    start_worker,
    until,
    wait_done,
    wait_free,
)
from tests.server_fixtures import live_frames

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

OPEN_SETTINGS = "Open App (Settings)\nStop"
LONG = "\n".join(["Home", "Wait (0.5)"] * 30)  # ~15 s on the phone, cancelled once looked at


def _iphone_worker(tmp_path: Path, name: str, database: str, adb_port: int, iphones: dict[str, str]) -> Worker:
    """A worker whose phones are iPhones only (``server.devices`` names them, ``ios.devices`` their WDA)."""
    config = farm_config(tmp_path / f"worker-{name}.toml", {
        "adb": {"server_port": adb_port},
        "server": {"database_url": database, "devices": [f"ios:{n}" for n in iphones], "device_refresh_s": 0.5},
        "farm": {"host": name, **FARM_TIMINGS},
        "agent": {"output_dir": str(tmp_path / "shared-runs"), "completion_check": False,
                  "settle_timeout_s": 0.6, "settle_interval_s": 0.1},
        "ios": {"devices": iphones},
    })
    return Worker(name, config, tmp_path / f"worker-{name}.log").start()


def _submit(api, **body) -> dict:
    response = api.client.post("/v1/tasks", json=body)
    assert response.status_code == 202, response.text
    return response.json()


@pytest.mark.timeout(300)
def test_a_worker_registers_its_iphone_and_runs_its_tasks(pg_database: str, tmp_path: Path, adb_server, sim_phones,
                                                         front: WdaFrontEnd) -> None:
    (android,) = sim_phones(1, width=540, height=1200)
    workers = [
        start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[android.serial]),
        _iphone_worker(tmp_path, "h2", pg_database, adb_server.port, {"sim-1": front.url}),
    ]
    api = start_farm_api(tmp_path, pg_database)
    wda = WdaClient(front.url, timeout_s=20)
    try:
        wait_free(api, [android.serial, "ios:sim-1"], workers=workers)
        listed = phones(api)
        iphone = listed["ios:sim-1"]
        assert (iphone["host"], iphone["platform"]) == ("h2", "ios"), iphone
        assert iphone["properties"]["platform"] == "ios" and iphone["properties"]["model"] == "iphone"
        assert iphone["properties"]["ios"] == "17.0" and iphone["properties"]["profile"] == "phone"
        assert (listed[android.serial]["host"], listed[android.serial]["platform"]) == ("h1", "android")
        assert listed[android.serial]["properties"]["platform"] == "android"

        # by serial: the worker that has the iPhone runs it, and Settings opens on the iPhone
        done = wait_done(api.client, _submit(api, script=OPEN_SETTINGS, device="ios:sim-1")["id"], timeout=120)
        assert (done["status"], done["device"]) == ("completed", "ios:sim-1"), done
        assert front.phone.foreground == "com.android.settings" and wda.active_app() == "com.apple.Preferences"

        # by platform, both ways
        wda.press_button("home")
        assert wda.active_app() != "com.apple.Preferences"
        by_platform = _submit(api, script=OPEN_SETTINGS, platform="ios")
        android_task = _submit(api, script="Home\nStop", platform="android")
        done = wait_done(api.client, by_platform["id"], timeout=120)
        assert (done["status"], done["device"]) == ("completed", "ios:sim-1"), done
        assert wda.active_app() == "com.apple.Preferences"
        done = wait_done(api.client, android_task["id"], timeout=120)
        assert (done["status"], done["device"]) == ("completed", android.serial), done

        # "any" with a script that opens the iPhone's app by its bundle id: the script sets the platform
        wda.press_button("home")
        pinned = _submit(api, script="Open App (com.apple.Preferences)\nStop")
        assert pinned["options"]["platform"] == "ios", pinned
        done = wait_done(api.client, pinned["id"], timeout=120)
        assert (done["status"], done["device"]) == ("completed", "ios:sim-1"), done
        assert wda.active_app() == "com.apple.Preferences"

        # the iPhone's run is watched live through its worker (the farm's relay)
        running = _submit(api, script=LONG, device="ios:sim-1")

        def started() -> bool:
            return api.client.get(f"/v1/tasks/{running['id']}").json()["status"] == "running"

        until(started, 60, "the iPhone's long task running")
        content_type, frames = live_frames(api.url, running["id"], {}, 1)
        assert content_type.startswith("multipart/x-mixed-replace") and frames
        frame = Image.open(io.BytesIO(frames[0]))
        assert frame.format == "JPEG" and abs(frame.width / frame.height - 1080 / 2400) < 0.01
        assert api.client.post(f"/v1/tasks/{running['id']}/cancel").status_code == 202
        assert wait_done(api.client, running["id"], timeout=60)["status"] == "cancelled"
    finally:
        wda.close()
        api.stop()
        for worker in workers:
            worker.stop()


def test_a_farm_with_no_iphone_refuses_a_task_for_one(pg_database: str, tmp_path: Path, adb_server, sim_phones) -> None:
    (android,) = sim_phones(1, width=540, height=1200)
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[android.serial])
    api = start_farm_api(tmp_path, pg_database)
    try:
        wait_free(api, [android.serial], workers=[worker])
        refused = api.client.post("/v1/tasks", json={"script": OPEN_SETTINGS, "platform": "ios"})
        assert refused.status_code == 422 and "ios.devices" in refused.text, refused.text
        refused = api.client.post("/v1/tasks", json={"script": OPEN_SETTINGS, "requires": ["platform=ios"]})
        assert refused.status_code == 422 and "platform=ios" in refused.text, refused.text
    finally:
        api.stop()
        worker.stop()
