"""The service's shutdown runs each of its steps whatever the one before did: a scheduler whose
stop fails (an injected error: no real stop fails on demand) still leaves the device source to
be closed (abef64a), so a USB iPhone's forward, kept for screenshots, does not outlive the
service, and the failure is logged. Real uvicorn; usbmuxd is ``tests/usbmux_fake.py`` (its
recorded plist protocol) spliced to the simulated iPhone's WDA front-end."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from mobile_agent.device.ios.usb import UsbForward, open_forwards
from simphone.ios import WdaFrontEnd
from tests.usbmux_fake import FakeUsbmuxd, usbmuxd_with

UDID = "00008110-000A1B2C3D4E5F61"
SERIAL = "ios:" + UDID


class _Serial:
    def __init__(self, serial: str) -> None:
        self.serial = serial


@pytest.fixture
def usbmuxd(front: WdaFrontEnd) -> Iterator[FakeUsbmuxd]:
    with usbmuxd_with(UDID, 13, front.url) as fake:
        yield fake


def _forwards(fake: FakeUsbmuxd) -> list[UsbForward]:
    """The running forwards through this fake usbmuxd (not another test's)."""
    return [f for f in open_forwards() if f.key[0] == str(fake.path)]


@pytest.mark.timeout(240)
def test_the_phones_are_let_go_when_the_scheduler_fails_to_stop(
    service: Any, usbmuxd: FakeUsbmuxd, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from server.scheduler import Scheduler

    real_stop = Scheduler.stop

    def failing_stop(self: Scheduler, timeout_s: float = 10.0) -> None:
        real_stop(self, timeout_s)
        raise RuntimeError("a worker would not stop")

    monkeypatch.setattr(Scheduler, "stop", failing_stop)
    live = service([_Serial(SERIAL)], **{"ios.usbmuxd": str(usbmuxd.path)})
    shot = live.client.get(f"/v1/devices/{SERIAL}/screenshot")
    assert shot.status_code == 200, shot.text
    assert len(_forwards(usbmuxd)) == 1  # the phone kept for the next screenshot (a refresh's probe may share it)
    with caplog.at_level(logging.ERROR, logger="server.app"):
        live.stop()
    assert not live.thread.is_alive()
    assert _forwards(usbmuxd) == []  # before: the scheduler's error skipped the device source's close
    assert any("the scheduler" in r.getMessage() and r.exc_info and "a worker would not stop" in str(r.exc_info[1])
               for r in caplog.records if r.name == "server.app"), [r.getMessage() for r in caplog.records]
