"""The live view of a task that runs on a farm worker (server/farm/live.py), with real
processes: a ``mobile-agent worker`` drives a simulated phone over the real adb server, the
API server (``farm.enabled``, real uvicorn) holds no phone. ``GET /v1/tasks/{id}/live`` streams
the worker's frames through the shared folder: each part is a JPEG of that phone's screen (it
matches a capture taken over adb at the same moment), nothing is captured once nobody watches
or the task has ended, and no relay file is left behind or lands in the trajectory."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image

from mobile_agent.device import open_device
from mobile_agent.settings import AdbSettings
from server.farm.live import LIVE_DIR
from tests.farm_fixtures import start_farm_api, start_worker, until, wait_done, wait_free
from tests.server_fixtures import first_live_frame

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def test_a_worker_s_phone_is_live_through_the_shared_folder(pg_database: str, tmp_path: Path, adb_server,
                                                           sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[phone.serial])
    api = start_farm_api(tmp_path, pg_database)
    live_dir = tmp_path / "shared-runs" / LIVE_DIR
    try:
        wait_free(api, [phone.serial], workers=[worker])
        task = api.client.post("/v1/tasks", json={"script": "Home\n" + "\n".join(["Wait (0.5)"] * 12)}).json()
        until(lambda: api.client.get(f"/v1/tasks/{task['id']}").json()["status"] == "running", 30, "task running")
        assert not live_dir.exists() or not list(live_dir.iterdir())  # nobody watches: nothing captured

        content_type, jpeg = first_live_frame(api.url, task["id"], dict(api.client.headers))
        assert content_type.startswith("multipart/x-mixed-replace")
        relayed = Image.open(io.BytesIO(jpeg))
        assert relayed.format == "JPEG" and relayed.size == (324, 720)  # the phone's 540x1200, long side 720
        direct = open_device(AdbSettings(server_port=adb_server.port), serial=phone.serial).screenshot()
        expected = np.asarray(Image.fromarray(np.asarray(direct.pixels)[:, :, :3]).resize(relayed.size), dtype=float)
        got = np.asarray(relayed.convert("RGB"), dtype=float)
        assert np.abs(expected - got).mean() < 12, "the relayed frame is not this phone's screen"

        # the client went away: the worker stops within the request's lifetime and clears up
        until(lambda: not live_dir.exists() or not list(live_dir.iterdir()), 15, "relay files removed")
        done = wait_done(api.client, task["id"], timeout=60)
        assert done["status"] == "completed"
        assert not any(p.name.startswith(("task-", ".task-")) and p.suffix in (".jpg", ".want")
                       for p in (tmp_path / "shared-runs").rglob("*") if p.parent.name != LIVE_DIR)
        gone = httpx.get(f"{api.url}/v1/tasks/{task['id']}/live", headers=dict(api.client.headers))
        assert gone.status_code == 409  # ended: no phone now
    finally:
        api.stop()
        worker.stop()


def test_a_worker_captures_its_phones_at_the_server_s_live_fps(pg_database: str, tmp_path: Path) -> None:
    """``server.live_fps`` is a phone's capture rate on a farm too (the worker captures; the API
    relays): a worker's relay took 3 frames a second whatever it said."""
    from server.farm.host import FarmHost
    from tests.farm_fixtures import farm_settings

    host = FarmHost(farm_settings(tmp_path, pg_database, **{"farm.enabled": False, "server.live_fps": 8.0}))
    try:
        assert host.live.every_s == pytest.approx(1 / 8)
    finally:
        host.store.close()
