"""A farm worker with an iPhone on its USB cable (issue 33): the worker (a real ``mobile-agent
worker`` process) finds ``ios:<UDID>`` through usbmuxd as it finds the iPhones of its
``ios.devices``, registers it with its properties, and runs its tasks through its forward.
usbmuxd is ``tests/usbmux_fake.py`` (its recorded plist protocol) in this process, on a unix
socket the worker connects to; the phone is the simulated iPhone behind its WDA front-end."""

from __future__ import annotations

from pathlib import Path

import pytest

from simphone.ios import WdaFrontEnd
from tests.farm_fixtures import (
    FARM_TIMINGS,
    Worker,
    farm_config,
    phones,
    start_farm_api,
    wait_done,
    wait_free,
)
from tests.ports import free_port
from tests.usbmux_fake import USB_SERIAL, USB_UDID, FakeUsbmuxd, forwards_through

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.mark.timeout(300)
def test_a_worker_registers_its_usb_iphone_and_runs_its_task(pg_database: str, tmp_path: Path, adb_server,
                                                            front: WdaFrontEnd, usb_iphone: FakeUsbmuxd) -> None:
    config = farm_config(tmp_path / "worker-usb.toml", {
        "adb": {"server_port": adb_server.port},
        "server": {"database_url": pg_database, "devices": [USB_SERIAL], "device_refresh_s": 0.5},
        "farm": {"host": "usb-host", **FARM_TIMINGS},
        "agent": {"output_dir": str(tmp_path / "shared-runs"), "completion_check": False,
                  "settle_timeout_s": 0.6, "settle_interval_s": 0.1},
        "ios": {"usb": True, "usbmuxd": str(usb_iphone.path)},
    })
    worker = Worker("usb-host", config, tmp_path / "worker-usb.log").start()
    api = start_farm_api(tmp_path, pg_database)
    try:
        wait_free(api, [USB_SERIAL], workers=[worker])
        iphone = phones(api)[USB_SERIAL]
        assert (iphone["host"], iphone["platform"]) == ("usb-host", "ios"), iphone
        assert {k: iphone["properties"][k] for k in ("platform", "model", "ios")} == {
            "platform": "ios", "model": "iphone", "ios": "17.0"}

        created = api.client.post("/v1/tasks", json={"script": "Open App (Settings)\nStop", "platform": "ios"})
        assert created.status_code == 202, created.text
        done = wait_done(api.client, created.json()["id"], timeout=120)
        assert (done["status"], done["device"]) == ("completed", USB_SERIAL), done
        assert front.phone.foreground == "com.android.settings"
        assert set(usb_iphone.connects) == {(USB_UDID, 8100)}  # the worker reached the phone over "USB" only
    finally:
        api.stop()
        worker.stop()


def _start_and_stop_a_worker(tmp_path: Path, pg_database: str, usb_iphone: FakeUsbmuxd, name: str) -> list[int]:
    """A ``FarmHost`` in this process (so that its forwards can be counted) with the USB iPhone
    alone (no adb), run until its probe has opened and kept the phone, then stopped: the
    forward's users left after the stop."""
    import asyncio

    from server.farm.host import FarmHost
    from tests.farm_fixtures import farm_settings

    def users() -> list[int]:
        return [f.users for f in forwards_through(usb_iphone)]

    settings = farm_settings(tmp_path, pg_database, **{
        "farm.enabled": False, "farm.host": name, "server.devices": [USB_SERIAL], "server.device_refresh_s": 0.5,
        "adb.adb_path": str(tmp_path / "no-adb"), "adb.server_port": free_port(),  # no adb: the iPhone alone
        "ios.usb": True, "ios.usbmuxd": str(usb_iphone.path),
    })
    host = FarmHost(settings)

    async def main() -> None:
        running = asyncio.create_task(host.run())
        while users() != [1]:  # probed and kept
            assert not running.done(), running
            await asyncio.sleep(0.05)
        host.stop()
        await running

    asyncio.run(main())
    return users()


@pytest.mark.timeout(180)
def test_a_worker_lets_go_of_its_usb_iphone_when_it_stops(pg_database: str, tmp_path: Path,
                                                         usb_iphone: FakeUsbmuxd) -> None:
    """The worker's device source keeps the phone its probe opened (for the live view's frames);
    the worker's shutdown closes it: the USB forward does not outlive the worker."""
    assert _start_and_stop_a_worker(tmp_path, pg_database, usb_iphone, "usb-stop") == []


@pytest.mark.timeout(180)
def test_a_worker_whose_live_view_fails_to_stop_still_lets_go_of_its_phone(
        pg_database: str, tmp_path: Path, usb_iphone: FakeUsbmuxd, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Each step of a worker's shutdown runs whatever the one before did: a live view whose stop
    fails (an injected error: no real stop fails on demand) still leaves the device source to be
    closed, so the USB forward does not outlive the worker, and the failure is logged."""
    import logging

    from server.farm.live import LiveRelay

    def failing_stop(self: LiveRelay) -> None:
        raise RuntimeError("the relay would not stop")

    monkeypatch.setattr(LiveRelay, "stop", failing_stop)
    with caplog.at_level(logging.ERROR, logger="server.farm.host"):
        left = _start_and_stop_a_worker(tmp_path, pg_database, usb_iphone, "usb-stop-2")
    assert left == []  # before: the live view's error ended the shutdown before the device source's close
    assert any("the live view" in r.getMessage() for r in caplog.records if r.name == "server.farm.host"), \
        [r.getMessage() for r in caplog.records]
