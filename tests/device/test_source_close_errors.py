"""The REST device source's ``close`` (the service's shutdown, abef64a) lets go of every phone it
kept for screenshots even when closing one of them fails: the rest are closed, the failure is
logged, and close itself returns. Two USB iPhones behind the fake usbmuxd (``tests/usbmux_fake.py``,
its real plist protocol) spliced to a simulated iPhone's WDA; the first close fails after
letting go of its phone (an injected error: no real close fails here on demand)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

import mobile_agent.device as device_api
from mobile_agent.device.ios.usb import UsbForward, open_forwards
from mobile_agent.settings import AdbSettings, IosSettings, Settings
from simphone.ios import WdaFrontEnd
from tests.agent_helpers import agent_settings
from tests.ports import free_port
from tests.usbmux_fake import FakeUsbIphone, FakeUsbmuxd, usbmuxd_with

UDIDS = ("00008030-001A2B3C4D5E6F71", "00008030-001A2B3C4D5E6F72")
SERIALS = tuple(f"ios:{udid}" for udid in UDIDS)


@pytest.fixture
def usbmuxd(front: WdaFrontEnd) -> Iterator[FakeUsbmuxd]:
    """Two iPhones attached, each one's port 8100 the simulated iPhone's WDA."""
    with usbmuxd_with(UDIDS[0], 11, front.url) as fake:
        host, port = front.url.removeprefix("http://").rsplit(":", 1)
        fake.attach(FakeUsbIphone(UDIDS[1], 12, {8100: (host, int(port))}))
        yield fake


def _settings(tmp_path: Path, usbmuxd: Path) -> Settings:
    settings = agent_settings(free_port(), SERIALS[0], tmp_path / "runs")
    return settings.model_copy(update={
        "adb": AdbSettings(server_port=free_port(), adb_path=str(tmp_path / "no-adb"), serial=SERIALS[0]),
        "ios": IosSettings(usbmuxd=str(usbmuxd)),
    })


def _forwards(fake: FakeUsbmuxd) -> list[UsbForward]:
    return [f for f in open_forwards() if f.key[0] == str(fake.path)]


def test_close_lets_go_of_every_phone_when_one_close_fails(
    tmp_path: Path, usbmuxd: FakeUsbmuxd, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from server.devices import AdbDeviceSource

    source = AdbDeviceSource(_settings(tmp_path, usbmuxd.path))
    for serial in SERIALS:  # each phone opened and kept for the next screenshot
        assert source.screenshot(serial, "png").startswith(b"\x89PNG")
    assert sorted(f.users for f in _forwards(usbmuxd)) == [1, 1]

    real_close = device_api.close_phone
    failed: list[str] = []

    def close_phone(phone: device_api.Phone) -> None:
        real_close(phone)
        if not failed:  # the first phone closed fails (its own phone is let go first, so nothing leaks here)
            failed.append(phone.serial)
            raise OSError("the usbmux loop is gone")

    monkeypatch.setattr(device_api, "close_phone", close_phone)
    with caplog.at_level(logging.WARNING, logger="server.devices"):
        source.close()  # before: the OSError came out here and the second phone stayed open
    assert len(failed) == 1
    assert _forwards(usbmuxd) == []  # the other phone's forward is closed too
    assert any(failed[0] in r.getMessage() and "usbmux loop is gone" in r.getMessage() for r in caplog.records), \
        [r.getMessage() for r in caplog.records]
