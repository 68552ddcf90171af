"""The service's shutdown runs each of its steps whatever the one before did: a scheduler whose
stop fails (an injected error: no real stop fails on demand) still leaves the device source to
be closed (abef64a), so a USB iPhone's forward, kept for screenshots, does not outlive the
service, and the failure is logged. Real uvicorn; usbmuxd is ``tests/usbmux_fake.py`` (its
recorded plist protocol) spliced to the simulated iPhone's WDA front-end."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.server_fixtures import PhoneSerial
from tests.usbmux_fake import USB_SERIAL, FakeUsbmuxd, forwards_through


@pytest.mark.timeout(240)
def test_the_phones_are_let_go_when_the_scheduler_fails_to_stop(
    service: Any, usb_iphone: FakeUsbmuxd, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from server.scheduler import Scheduler

    real_stop = Scheduler.stop

    def failing_stop(self: Scheduler, timeout_s: float = 10.0) -> None:
        real_stop(self, timeout_s)
        raise RuntimeError("a worker would not stop")

    monkeypatch.setattr(Scheduler, "stop", failing_stop)
    live = service([PhoneSerial(USB_SERIAL)], **{"ios.usbmuxd": str(usb_iphone.path)})
    shot = live.client.get(f"/v1/devices/{USB_SERIAL}/screenshot")
    assert shot.status_code == 200, shot.text
    assert len(forwards_through(usb_iphone)) == 1  # the phone kept for the next screenshot (a refresh's probe may share it)
    with caplog.at_level(logging.ERROR, logger="server.app"):
        live.stop()
    assert not live.thread.is_alive()
    assert forwards_through(usb_iphone) == []  # before: the scheduler's error skipped the device source's close
    assert any("the scheduler" in r.getMessage() and r.exc_info and "a worker would not stop" in str(r.exc_info[1])
               for r in caplog.records if r.name == "server.app"), [r.getMessage() for r in caplog.records]
