"""The fake usbmuxd (``tests/usbmux_fake.py``) against the recorded packets of macOS's usbmuxd
(``tests/data/usbmux``, SOURCES.md): its answers for the recorded phone are the recording's
bytes; pymobiledevice3's own usbmux client (what ``mobile_agent.device.ios.usb`` uses) reads
them; and the settings of the USB path refuse bad values clearly."""

from __future__ import annotations

import plistlib
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from mobile_agent.device.ios.usb import UsbmuxError, attached_iphones, usb_enabled
from mobile_agent.settings import IosSettings, Settings
from tests.usbmux_fake import (
    DATA,
    HEADER,
    SAMPLE_DEVICE_ID,
    SAMPLE_UDID,
    FakeUsbIphone,
    FakeUsbmuxd,
    packet,
    recorded,
)

SAMPLES = sorted(p.stem for p in DATA.glob("*.bin"))


@pytest.fixture
def usbmuxd() -> Iterator[FakeUsbmuxd]:
    folder = Path(tempfile.mkdtemp(prefix="usbmux-", dir="/tmp"))  # a unix socket path is short
    fake = FakeUsbmuxd(folder / "usbmuxd").start()
    try:
        yield fake
    finally:
        fake.stop()
        folder.rmdir()


def _read_packet(sock: socket.socket) -> bytes:
    head = b""
    while len(head) < HEADER.size:
        head += sock.recv(HEADER.size - len(head))
    length = HEADER.unpack(head)[0]
    body = b""
    while len(body) < length - HEADER.size:
        body += sock.recv(length - HEADER.size - len(body))
    return head + body


@pytest.mark.parametrize("name", SAMPLES)
def test_each_recorded_packet_is_whole_and_plistlib_writes_it_back(name: str) -> None:
    data = (DATA / f"{name}.bin").read_bytes()
    (length, version, message, _), body = recorded(name)
    assert (length, version, message) == (len(data), 1, 8)
    assert plistlib.dumps(body) == data[HEADER.size:]


def test_the_fake_answers_the_recorded_phone_with_the_recorded_bytes(usbmuxd: FakeUsbmuxd) -> None:
    usbmuxd.attach(FakeUsbIphone(SAMPLE_UDID, SAMPLE_DEVICE_ID))
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(str(usbmuxd.path))
        client.sendall((DATA / "list_devices_request.bin").read_bytes())
        assert _read_packet(client) == (DATA / "list_devices_reply.bin").read_bytes()
    with socket.socket(socket.AF_UNIX) as listener:
        listener.connect(str(usbmuxd.path))
        listener.sendall(packet(0xDEADBEEF, {"MessageType": "Listen"}))
        assert _read_packet(listener) == (DATA / "listen_result.bin").read_bytes()
        assert _read_packet(listener) == (DATA / "attached.bin").read_bytes()
        usbmuxd.unplug(SAMPLE_UDID)
        assert _read_packet(listener) == (DATA / "detached.bin").read_bytes()


def test_pymobiledevice3_lists_the_fakes_phones_through_our_discovery(usbmuxd: FakeUsbmuxd) -> None:
    usbmuxd.attach(FakeUsbIphone(SAMPLE_UDID, SAMPLE_DEVICE_ID))
    usbmuxd.attach(FakeUsbIphone("00008030-001A2B3C4D5E6F70", 7))
    settings = IosSettings(usbmuxd=str(usbmuxd.path))
    phones = attached_iphones(settings)
    assert [(p.serial, p.device_id, p.connection_type) for p in phones] == [
        ("ios:00008030-001A2B3C4D5E6F70", 7, "USB"), (f"ios:{SAMPLE_UDID}", SAMPLE_DEVICE_ID, "USB")]
    # the library spoke usbmuxd's plist protocol: its version probe, then the listing
    assert [request.get("MessageType") for _, request in usbmuxd.requests] == ["ReadBUID", "ListDevices"]
    assert all(header[1:3] == (1, 8) for header, _ in usbmuxd.requests)


def test_no_usbmuxd_is_a_clear_error(tmp_path: Path) -> None:
    settings = IosSettings(usbmuxd=str(tmp_path / "nothing-here"))
    with pytest.raises(UsbmuxError, match=r"usbmuxd does not answer at .*nothing-here: install and start it"):
        attached_iphones(settings)


def test_usb_off_never_asks_usbmuxd(usbmuxd: FakeUsbmuxd) -> None:
    from mobile_agent.device.phones import list_iphones

    usbmuxd.attach(FakeUsbIphone(SAMPLE_UDID, SAMPLE_DEVICE_ID))
    settings = IosSettings(usb=False, usbmuxd=str(usbmuxd.path))
    assert not usb_enabled(settings) and list_iphones(settings) == []
    assert usbmuxd.requests == []


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MOBILE_AGENT_IOS__USB": "sometimes"}, "ios.usb is \"auto\", true or false, got 'sometimes'"),
        ({"MOBILE_AGENT_IOS__WDA_PORT": "70000"}, "less than or equal to 65535"),
        ({"MOBILE_AGENT_IOS__USBMUXD": "relative/socket"}, "absolute unix socket path or HOST:PORT"),
    ],
)
def test_bad_usb_settings_are_refused_by_name(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ValidationError) as caught:
        Settings()
    assert message in str(caught.value)


def test_usb_settings_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOBILE_AGENT_IOS__USB", "true")
    monkeypatch.setenv("MOBILE_AGENT_IOS__WDA_PORT", "8101")
    monkeypatch.setenv("MOBILE_AGENT_IOS__USBMUXD", "127.0.0.1:27015")
    ios = Settings().ios
    assert (ios.usb, ios.wda_port, ios.usbmuxd) == (True, 8101, "127.0.0.1:27015")
    assert IosSettings().usb == "auto"


@pytest.mark.parametrize(
    ("ios", "message"),
    [
        ({"usb_names": {"desk": "not-a-udid"}}, "the UDID of 'desk' is 24 hex digits"),
        ({"usb_names": {"a b": SAMPLE_UDID}}, "an iPhone's name is letters, digits"),
        ({"devices": {"a b": "http://127.0.0.1:8100"}}, "an iPhone's name is letters, digits"),
        ({"usb_names": {"a": SAMPLE_UDID, "b": SAMPLE_UDID.replace("-", "")}}, "names one UDID twice"),
        ({"usb_names": {"a": SAMPLE_UDID}, "devices": {"a": "http://127.0.0.1:8100"}},
         "a: named in both ios.devices and ios.usb_names"),
    ],
)
def test_bad_usb_names_are_refused(ios: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        IosSettings(**ios)  # type: ignore[arg-type]


def test_without_the_library_usb_is_off_on_auto_and_a_clear_error_when_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A venv without the ``ios-usb`` extra (the library's absence stood in for: it is installed here)."""
    from mobile_agent.cli.doctor import ios_checks
    from mobile_agent.device.ios import usb
    from mobile_agent.device.phones import list_iphones, open_iphone
    from mobile_agent.errors import DeviceNotFoundError

    monkeypatch.setattr(usb, "_library_installed", lambda: False)
    assert not usb_enabled(IosSettings()) and list_iphones(IosSettings()) == []
    assert ios_checks(Settings()) == []  # auto: nothing to say
    required = IosSettings(usb=True)
    with pytest.raises(UsbmuxError, match=r"ios.usb is true but pymobiledevice3 is not installed: pip install -e '.\[ios-usb\]'"):
        usb_enabled(required)
    (check,) = ios_checks(Settings(ios=required))
    assert (check.name, check.status) == ("usbmuxd", "fail") and "pymobiledevice3 is not installed" in check.detail
    with pytest.raises(DeviceNotFoundError, match=r"over USB: ios.usb is true but pymobiledevice3 is not installed"):
        open_iphone(required, "ios:" + SAMPLE_UDID)
