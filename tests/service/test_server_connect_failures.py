"""A failed `adb connect` leaves no device behind: the real adb server keeps listing such an
address as ``offline`` (and retrying it) until told to disconnect, and the service listed it
as a device forever and queued tasks for it that could never start."""

from __future__ import annotations

import socket
import threading

import pytest

from server.devices import DevicePool


@pytest.fixture
def not_a_phone():
    """A TCP port that accepts and hangs up: adb's handshake fails after ~10 s, and the adb
    server lists the address as offline."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(2)
    listener.close()


@pytest.mark.slow
def test_a_failed_connect_is_not_listed_and_takes_no_task(service, sim_phones, adb_server, not_a_phone) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **{"server.devices": []})  # every attached phone
    failed = live.client.post("/v1/devices/connect", json={"address": not_a_phone})
    assert failed.status_code == 502, failed.text
    assert adb_server.state(not_a_phone) is None  # the adb server forgot it too
    listed = live.client.get("/v1/devices", params={"refresh": True}).json()
    assert not_a_phone not in {d["serial"] for d in listed["data"]}
    refused = live.client.post("/v1/tasks", json={"instruction": "x", "device": not_a_phone})
    assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["body", "device"]


class _Listing:
    def __init__(self, devices):
        self.devices = devices

    def list(self):
        return list(self.devices)

    def screen_size(self, serial):
        if serial != "phone-1":
            raise OSError("does not answer")
        return 1080, 2400

    def screenshot(self, serial, fmt):
        raise OSError

    def connect(self, address):
        return address

    def close(self):
        return  # holds nothing open


def test_an_address_that_never_answered_is_refused_then_dropped() -> None:
    source = _Listing([("phone-1", "device", "Pixel"), ("10.0.0.9:5555", "offline", None)])
    pool = DevicePool(source)
    pool.refresh()
    assert pool.get("phone-1").refusal is None
    assert "offline and has never answered" in pool.get("10.0.0.9:5555").refusal
    source.devices = [("phone-1", "device", "Pixel")]
    pool.refresh()
    assert not pool.knows("10.0.0.9:5555")  # not listed forever
    source.devices = []
    pool.refresh()
    assert pool.get("phone-1").public()["state"] == "gone"  # a phone that worked stays visible
