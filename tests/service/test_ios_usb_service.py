"""The REST service with an iPhone attached over USB (issue 33): ``GET /v1/devices`` lists
``ios:<UDID>`` (platform ios) from usbmuxd's list, a task with ``platform: "ios"`` opens
Settings on it through its USB forward, and an unplugged phone is ``gone`` from the pool. usbmuxd is
``tests/usbmux_fake.py`` (its recorded plist protocol), the phone the simulated iPhone
behind its WDA front-end; the library between them is pymobiledevice3's real client."""

from __future__ import annotations

import time
from typing import Any

import pytest

from simphone.ios import WdaFrontEnd
from tests.server_fixtures import PhoneSerial
from tests.usbmux_fake import USB_SERIAL, USB_UDID, FakeUsbmuxd, forwards_through


def _state(live: Any) -> str:
    listed = live.client.get(f"/v1/devices/{USB_SERIAL}", params={"refresh": True})
    assert listed.status_code == 200, listed.text
    state: str = listed.json()["state"]
    return state


@pytest.mark.timeout(240)
def test_a_usb_iphone_is_in_the_pool_runs_a_task_and_leaves_when_unplugged(
    service: Any, front: WdaFrontEnd, usb_iphone: FakeUsbmuxd
) -> None:
    live = service([PhoneSerial(USB_SERIAL)], **{"ios.usbmuxd": str(usb_iphone.path)})
    one = live.client.get(f"/v1/devices/{USB_SERIAL}", params={"refresh": True})
    assert one.status_code == 200, one.text
    phone = one.json()
    assert (phone["platform"], phone["state"], phone["width"], phone["height"]) == ("ios", "device", 1080, 2400)

    created = live.client.post("/v1/tasks", json={"script": "Open App (Settings)\nStop", "platform": "ios"})
    assert created.status_code == 202, created.text
    done = live.wait_task(created.json()["id"], timeout=120)
    assert (done["status"], done["device"]) == ("completed", USB_SERIAL), done
    assert front.phone.foreground == "com.android.settings"
    assert usb_iphone.connects and set(usb_iphone.connects) == {(USB_UDID, 8100)}  # the task's WDA calls went over "USB"

    usb_iphone.unplug(USB_UDID)
    deadline = time.monotonic() + 30
    while _state(live) != "gone":  # usbmuxd no longer lists it: gone, as a vanished adb phone is
        assert time.monotonic() < deadline, "the unplugged iPhone is still there"
        time.sleep(0.2)


@pytest.mark.timeout(240)
def test_the_service_lets_go_of_the_usb_iphone_when_it_stops(service: Any, usb_iphone: FakeUsbmuxd) -> None:
    """The device source keeps the phone it opened for screenshots (the live view's, ``GET
    /v1/devices/{serial}/screenshot``) and closes it when the service stops: the USB forward
    (a listener on 127.0.0.1 and a task on the usbmux loop) does not outlive the service."""
    live = service([PhoneSerial(USB_SERIAL)], **{"ios.usbmuxd": str(usb_iphone.path)})
    shot = live.client.get(f"/v1/devices/{USB_SERIAL}/screenshot")
    assert shot.status_code == 200, shot.text
    assert shot.content.startswith(b"\x89PNG")
    assert [f.users for f in forwards_through(usb_iphone)] == [1]  # the phone kept for the next screenshot
    live.stop()
    assert not live.thread.is_alive()
    assert forwards_through(usb_iphone) == []
