"""iPhones in the service's device pool (issue 33), without adb: ``AdbDeviceSource`` lists the
iPhones of ``ios.devices`` when no adb server can be reached, asks a WDA that did not answer
again only after a backoff (a phone off the network must not hold up each refresh), and the
pool leases by platform. The WDA is the fake replaying real samples (``tests/wda_fake.py``);
the one that does not answer is a loopback socket that counts connections and closes them."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mobile_agent.settings import load_settings
from server.devices import AdbDeviceSource, DevicePool, platform_refusal
from tests.ports import free_port
from tests.wda_fake import FakeWda


class _Silent:
    """Accepts connections, counts them, closes them unanswered (a WDA that is not there)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def silent() -> Iterator[_Silent]:
    server = _Silent()
    try:
        yield server
    finally:
        server.close()


def _source(tmp_path: Path, iphones: dict[str, str]) -> AdbDeviceSource:
    settings = load_settings(overrides={"adb.adb_path": str(tmp_path / "no-adb"), "adb.server_port": free_port(),
                                        "ios.devices": iphones})
    return AdbDeviceSource(settings)


def test_iphones_are_listed_with_no_adb_and_a_silent_one_is_asked_again_after_a_backoff(
        tmp_path: Path, wda: FakeWda, silent: _Silent, caplog: pytest.LogCaptureFixture) -> None:
    source = _source(tmp_path, {"real": wda.url, "gone": silent.url})
    source.RECONNECT_BACKOFF_S = 3600.0  # the backoff outlasts the test: no second try in it
    with caplog.at_level("WARNING", logger="server.devices"):
        first = source.list()
    assert first == [("ios:gone", "offline", None), ("ios:real", "device", "iphone")]
    assert silent.connections >= 1
    asked = silent.connections
    status_calls = len(wda.calls("GET", "/status"))
    with caplog.at_level("WARNING", logger="server.devices"):
        assert source.list() == first
    assert silent.connections == asked  # in its backoff: not asked, still offline
    said = [r for r in caplog.records if "no Android phones" in r.getMessage()]
    assert len(said) == 1, said  # once, not at every refresh
    assert len(wda.calls("GET", "/status")) == status_calls + 1  # a ready one is asked at each refresh


def test_with_no_adb_and_no_iphone_the_adb_error_stands(tmp_path: Path) -> None:
    from mobile_agent.errors import DeviceError

    with pytest.raises(DeviceError):
        _source(tmp_path, {}).list()


def test_the_pool_leases_by_platform_and_says_why_a_platform_cannot_run(tmp_path: Path, wda: FakeWda) -> None:
    source = _source(tmp_path, {"real": wda.url})
    pool = DevicePool(source)
    pool.refresh()
    (slot,) = pool.slots()
    assert (slot.serial, slot.platform, slot.public()["platform"], slot.free) == ("ios:real", "ios", "ios", True)
    assert (slot.width, slot.height) == (1170, 2532)  # the fake's window (points) times its scale
    assert pool.lease("any", 1, platform="android") is None
    assert pool.lease("any", 1, platform="ios") == "ios:real"
    assert pool.lease("any", 2) is None  # one phone, one run
    pool.release("ios:real", 1)
    assert pool.lease("any", 2) == "ios:real"  # no platform asked: any phone

    assert platform_refusal(pool, "any", None) is None
    assert platform_refusal(pool, "any", "ios") is None
    assert platform_refusal(pool, "ios:real", "ios") is None
    assert "no phone of platform 'android'" in (platform_refusal(pool, "any", "android") or "")
    assert "is not an Android phone" in (platform_refusal(pool, "ios:real", "android") or "")
    assert "is not an iPhone" in (platform_refusal(pool, "emulator-5554", "ios") or "")


def test_close_phone_lets_go_of_an_iphones_connections(tmp_path: Path, wda: FakeWda) -> None:
    from mobile_agent.device import Device, close_phone, open_phone
    from mobile_agent.errors import DeviceError

    settings = load_settings(overrides={"ios.devices": {"real": wda.url}})
    iphone = open_phone(settings, "ios:real")
    assert iphone.screenshot().width > 0
    close_phone(iphone)
    with pytest.raises((DeviceError, RuntimeError)):  # a closed client sends nothing more
        iphone.screenshot()
    close_phone(Device("emulator-5554", settings.adb))  # an Android phone holds nothing open: nothing to do
