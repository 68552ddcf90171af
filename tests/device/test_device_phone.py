"""The device layer against the simulated phone, over the real adb server.

Screenshots, input, errors (wrong serial, no device, several devices, unauthorized,
phone killed mid-call), the adb server started by us, and several threads at once.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
import time

import adbutils
import numpy as np
import pytest

from mobile_agent.device import Device, ScreenInfo, list_devices, open_device
from mobile_agent.device.server import ensure_server
from mobile_agent.errors import (
    AdbNotFoundError,
    AdbServerError,
    DeviceError,
    DeviceLostError,
    DeviceNotFoundError,
    DeviceOfflineError,
    DeviceUnauthorizedError,
    MultipleDevicesError,
    NoDeviceError,
    ScreenshotError,
)
from mobile_agent.settings import AdbSettings
from tests.ports import free_port


@pytest.fixture
def adb_settings(adb_server) -> AdbSettings:
    return AdbSettings(server_port=adb_server.port, command_timeout_s=20)


@pytest.fixture
def device(sim_phone, adb_settings) -> Device:
    return open_device(adb_settings, serial=sim_phone.serial)


# --- listing and choosing ---------------------------------------------------------------


def test_list_devices_reports_state_and_model(sim_phone, adb_settings) -> None:
    infos = {d.serial: d for d in list_devices(adb_settings)}
    info = infos[sim_phone.serial]
    assert info.state == "device"
    assert info.model == sim_phone.phone.model.replace(" ", "_")


def test_wrong_serial(sim_phone, adb_settings) -> None:
    with pytest.raises(DeviceNotFoundError) as info:
        open_device(adb_settings, serial="127.0.0.1:1")
    assert info.value.serial == "127.0.0.1:1"
    assert sim_phone.serial in info.value.fields["attached"]


def test_invalid_serial_is_rejected_before_adb(adb_settings) -> None:
    with pytest.raises(DeviceError, match="invalid device serial"):
        open_device(adb_settings, serial="x; reboot")


def test_several_devices_without_serial(sim_phones, adb_settings) -> None:
    phones = sim_phones(2)
    with pytest.raises(MultipleDevicesError) as info:
        open_device(adb_settings)
    assert {p.serial for p in phones} <= set(info.value.serials)
    # choosing one by serial works
    assert open_device(adb_settings, serial=phones[1].serial).serial == phones[1].serial


def test_unauthorized_phone(sim_phones, adb_settings) -> None:
    (phone,) = sim_phones(1, unauthorized=True)
    with pytest.raises(DeviceUnauthorizedError, match="RSA") as info:
        open_device(adb_settings, serial=phone.serial)
    assert info.value.serial == phone.serial
    # a Device built without checks gets the same typed error from its first call
    with pytest.raises(DeviceUnauthorizedError):
        Device(phone.serial, adb_settings).shell(["echo", "hi"])


@pytest.fixture
def private_adb(tmp_path, monkeypatch, adb_server):
    """A settings object pointing at an adb server that is not running yet (its own
    port, HOME in tmp); killed after the test."""
    port = free_port()
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    settings = AdbSettings(server_port=port, adb_path=adb_server.adb_path, command_timeout_s=10)
    yield settings
    subprocess.run([adb_server.adb_path, "-P", str(port), "kill-server"], capture_output=True, timeout=30,
                   env=dict(os.environ, HOME=str(tmp_path), TMPDIR=str(tmp_path)))  # fmt: skip


def test_server_is_started_when_not_running_and_no_device(private_adb) -> None:
    client = adbutils.AdbClient("127.0.0.1", private_adb.server_port)
    with pytest.raises(adbutils.AdbError):
        client.server_version()  # nothing there yet (adbutils would start 5037's, not ours)
    with pytest.raises(NoDeviceError, match="no device"):
        open_device(private_adb)
    assert ensure_server(private_adb).server_version() >= 39
    assert list_devices(private_adb) == []


def test_missing_adb_binary_is_named(tmp_path) -> None:
    settings = AdbSettings(server_port=free_port(), adb_path=tmp_path / "no-adb-here")
    with pytest.raises(AdbNotFoundError, match="adb_path"):
        open_device(settings)


def test_adb_server_that_will_not_start_is_named(tmp_path) -> None:
    broken = tmp_path / "adb"
    broken.write_text(  # what adb prints when its port is taken by something else
        "#!/bin/sh\necho '* daemon not running; starting now at tcp:5037' >&2\n"
        "echo '11-22 01:00:00.000  4242  4242 F adb     : main.cpp:123 could not install *smartsocket* listener: "
        "Address already in use' >&2\nexit 1\n"
    )
    broken.chmod(0o755)
    port = free_port()
    settings = AdbSettings(server_port=port, adb_path=broken, command_timeout_s=5)
    with pytest.raises(AdbServerError, match="would not start") as info:
        open_device(settings)
    assert info.value.fields["port"] == port
    assert "Address already in use" in info.value.message  # adb's own reason, its fatal line only
    assert "daemon not running" not in info.value.message


def test_port_taken_by_another_program_is_named() -> None:
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def answer_like_a_web_server() -> None:
        while True:
            try:
                conn, _addr = listener.accept()
                with conn:
                    conn.recv(1024)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            except OSError:  # a probe that hung up at once, or the listener closed
                if listener.fileno() == -1:
                    return

    thread = threading.Thread(target=answer_like_a_web_server, daemon=True)
    thread.start()
    try:
        with pytest.raises(AdbServerError, match="not an adb server") as info:
            list_devices(AdbSettings(server_port=port, command_timeout_s=5))
        assert info.value.fields["port"] == port
    finally:
        listener.close()


def test_remote_server_not_answering(tmp_path) -> None:
    settings = AdbSettings(server_host="127.0.0.2", server_port=free_port(), command_timeout_s=2)  # loopback, not "ours"
    with pytest.raises(AdbServerError, match="not answering"):
        list_devices(settings)


# --- screen ---------------------------------------------------------------------------------


def test_screenshot_matches_the_phone_frame(device, sim_phone) -> None:
    shot = device.screenshot()
    assert (shot.width, shot.height) == (sim_phone.phone.width, sim_phone.phone.height)
    raw = sim_phone.phone.screencap_raw()
    w, h = int.from_bytes(raw[0:4], "little"), int.from_bytes(raw[4:8], "little")
    expected = np.frombuffer(raw[len(raw) - w * h * 4 :], np.uint8).reshape(h, w, 4)[:, :, :3]
    assert np.array_equal(shot.pixels, expected)
    assert shot.pixels.std() > 0  # not a flat (black) frame
    assert abs(shot.captured_at - time.time()) < 5


def test_png_fallback_gives_the_same_pixels(device, sim_phone, monkeypatch) -> None:
    raw = device.screenshot()
    monkeypatch.setattr(sim_phone.phone, "screencap_raw", lambda: b"")  # raw capture broken: PNG
    png = device.screenshot()
    assert np.array_equal(raw.pixels, png.pixels)


def test_screen_info(device, sim_phone) -> None:
    info = device.screen_info()
    assert isinstance(info, ScreenInfo)
    assert (info.width, info.height) == (sim_phone.phone.width, sim_phone.phone.height)
    assert info.rotation == 0


def test_wait_settled_returns_a_frame_of_a_still_screen(device, sim_phone, monkeypatch) -> None:
    captures = []
    capture = sim_phone.phone.screencap_raw

    def counted() -> bytes:
        captures.append(1)
        return capture()

    monkeypatch.setattr(sim_phone.phone, "screencap_raw", counted)
    shot = device.wait_settled(timeout_s=30.0, interval_s=0.05, tolerance=0.0)
    assert len(captures) == 2  # a still screen settles on the first comparison
    assert shot.pixels.shape[2] == 3


# --- input and shell ----------------------------------------------------------------------


def test_shell_arguments_are_never_interpreted(device) -> None:
    text = "a  b; echo INJECTED $(reboot) `id` $HOME 'q' \"d\" \\ | & > /x"
    assert device.shell(["echo", text]) == text + "\n"
    assert device.run(["false"]).exit_code == 1


def test_shell_refuses_a_string(device) -> None:
    with pytest.raises(TypeError):
        device.shell("echo hi")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="NUL"):
        device.shell(["echo", "a\0b"])


def _center_of(phone, description: str) -> tuple[int, int]:
    for element in phone.ground_truth():
        if element["description"] == description or element["text"] == description:
            left, top, right, bottom = element["box"]
            return (left + right) // 2, (top + bottom) // 2
    raise AssertionError(f"{description!r} is not on the phone's screen")


def test_tap_reaches_the_phone(device, sim_phone) -> None:
    assert sim_phone.phone.state()["foreground"] == "com.android.launcher3"
    device.tap(*_center_of(sim_phone.phone, "Settings app icon"))
    assert sim_phone.phone.state()["foreground"] == "com.android.settings"
    device.key("home")
    assert sim_phone.phone.state()["foreground"] == "com.android.launcher3"


def test_long_press_and_swipe_reach_the_point(device, sim_phone) -> None:
    phone = sim_phone.phone
    device.key("home")
    middle = phone.width // 2
    # a swipe down from mid-screen moves nothing; the same swipe from the status bar
    # pulls the notification shade: the start point reached the phone as given
    device.swipe(middle, phone.height // 3, middle, phone.height * 2 // 3)
    assert phone.state()["shade_open"] is False
    device.swipe(middle, 5, middle, phone.height // 2)
    assert phone.state()["shade_open"] is True
    device.key("home")
    # an icon without a long-press action treats a long press as a tap (as launchers do)
    device.long_press(*_center_of(phone, "Notes app icon"), duration_ms=600)
    assert phone.state()["foreground"] == "com.google.android.keep"
    with pytest.raises(ValueError):
        device.long_press(10, 10, duration_ms=-5)


def test_bad_coordinates_are_rejected(device) -> None:
    for bad in (-1, float("nan"), "10", True):
        with pytest.raises(ValueError):
            device.tap(bad, 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        device.swipe_direction("sideways")
    with pytest.raises(ValueError):
        device.key("explode")


# --- a phone that dies -------------------------------------------------------------------


@pytest.mark.parametrize("capture", ["screencap_raw", "screencap_png"])
def test_phone_killed_mid_screenshot_raises_device_lost(sim_phones, adb_settings, capture: str) -> None:
    (handle,) = sim_phones(1)
    device = open_device(adb_settings, serial=handle.serial)
    if capture == "screencap_png":
        handle.phone.screencap_raw = lambda: b""  # type: ignore[method-assign]  # raw broken: the PNG path
    assert device.screenshot().width == handle.phone.width
    original = getattr(handle.phone, capture)
    entered = threading.Event()

    def slow_capture() -> bytes:  # the phone dies while it is producing the frame
        entered.set()
        time.sleep(1.0)
        return original()

    setattr(handle.phone, capture, slow_capture)
    killer = threading.Thread(target=lambda: (entered.wait(10), handle.kill(wait_offline=False)))
    killer.start()
    try:
        with pytest.raises(DeviceLostError) as info:
            device.screenshot()
    finally:
        killer.join()
    assert entered.is_set()  # the capture under test was the one cut short
    assert info.value.serial == handle.serial


def test_phone_killed_mid_command_raises_device_lost(sim_phones, adb_settings) -> None:
    (handle,) = sim_phones(1)
    device = open_device(adb_settings, serial=handle.serial)
    phone = handle.phone
    original = phone.run
    entered = threading.Event()

    def slow_run(argv: list[str]):
        if argv[:1] == ["wm"]:
            entered.set()
            time.sleep(1.0)
        return original(argv)

    phone.run = slow_run  # type: ignore[method-assign]
    killer = threading.Thread(target=lambda: (entered.wait(10), handle.kill(wait_offline=False)))
    killer.start()
    try:
        with pytest.raises(DeviceLostError):
            device.shell(["wm", "size"])
    finally:
        killer.join()


def test_offline_phone_is_named_offline(sim_phones, adb_settings) -> None:
    (handle,) = sim_phones(1)
    handle.kill()  # the adb server now lists it as offline
    with pytest.raises(DeviceOfflineError) as info:
        open_device(adb_settings, serial=handle.serial)
    assert info.value.serial == handle.serial
    assert "reconnect" in info.value.message


def test_calls_after_the_phone_is_gone_raise_device_lost(sim_phones, adb_settings) -> None:
    (handle,) = sim_phones(1)
    device = open_device(adb_settings, serial=handle.serial)
    handle.kill()
    with pytest.raises(DeviceLostError):
        device.tap(1, 1)
    with pytest.raises(DeviceLostError):
        device.screenshot()


# --- several devices, several threads -------------------------------------------------------


def test_several_devices_from_several_threads(sim_phones, adb_settings) -> None:
    handles = sim_phones(3)
    devices = [open_device(adb_settings, serial=h.serial) for h in handles]
    taps: dict[int, list[tuple[int, int]]] = {k: [] for k in range(len(handles))}

    def recording(k: int, run):  # each phone notes the taps that reach it
        def run_and_note(argv: list[str]):
            if argv[:2] == ["input", "tap"]:
                taps[k].append((int(argv[2]), int(argv[3])))
            return run(argv)

        return run_and_note

    for k, h in enumerate(handles):
        h.phone.run = recording(k, h.phone.run)  # type: ignore[method-assign]
    errors: list[BaseException] = []
    shapes: list[tuple[int, ...]] = []
    lock = threading.Lock()

    def work(dev: Device, k: int) -> None:
        try:
            for i in range(5):
                shot = dev.screenshot()
                dev.tap(10 + k, 20 + i)
                with lock:
                    shapes.append(shot.pixels.shape)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(d, k)) for k, d in enumerate(devices) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(shapes) == 30 and set(shapes) == {(2400, 1080, 3)}
    for k in range(len(handles)):
        assert sorted(taps[k]) == sorted([(10 + k, 20 + i) for i in range(5)] * 2)


# --- framebuffer variants and broken captures (the phone's screencap replaced per test) ---------


@pytest.fixture
def lone_phone(sim_phones, adb_settings):
    (handle,) = sim_phones(1, width=480, height=800)
    return handle, open_device(adb_settings, serial=handle.serial)


def test_old_12_byte_header_is_understood(lone_phone) -> None:
    handle, device = lone_phone
    raw = handle.phone.screencap_raw()
    old = raw[:12] + raw[16:]  # Android < 9: no colorspace word
    handle.phone.screencap_raw = lambda: old  # type: ignore[method-assign]
    shot = device.screenshot()
    expected = np.frombuffer(raw[16:], np.uint8).reshape(800, 480, 4)[:, :, :3]
    assert np.array_equal(shot.pixels, expected)


def test_truncated_framebuffer_falls_back_to_png(lone_phone) -> None:
    handle, device = lone_phone
    good = device.screenshot()
    raw = handle.phone.screencap_raw()
    handle.phone.screencap_raw = lambda: raw[: len(raw) // 2]  # type: ignore[method-assign]
    shot = device.screenshot()
    assert np.array_equal(shot.pixels, good.pixels)  # came through screencap -p


def test_broken_capture_raises_never_a_black_frame(lone_phone) -> None:
    handle, device = lone_phone
    handle.phone.screencap_raw = lambda: b""  # type: ignore[method-assign]
    handle.phone.screencap_png = lambda: b"\x89PNG\r\n\x1a\n" + b"\0" * 64  # type: ignore[method-assign]
    with pytest.raises(ScreenshotError) as info:
        device.screenshot()
    assert info.value.serial == handle.serial


def _frames(width: int, height: int, values: list[int]) -> list[bytes]:
    header = np.array([width, height, 1, 0], "<u4").tobytes()
    return [header + np.full((height, width, 4), v, np.uint8).tobytes() for v in values]


def test_wait_settled_waits_for_the_screen_to_stop_changing(lone_phone) -> None:
    handle, device = lone_phone
    frames = _frames(480, 800, [10, 60, 110, 160, 200])
    calls = []

    def animated() -> bytes:
        calls.append(1)
        return frames[min(len(calls) - 1, len(frames) - 1)]

    handle.phone.screencap_raw = animated  # type: ignore[method-assign]
    shot = device.wait_settled(timeout_s=5.0, interval_s=0.01, tolerance=0.01)
    assert int(shot.pixels[0, 0, 0]) == 200
    assert len(calls) >= 5


def _never_settles(handle, on_capture=lambda count: None) -> list[int]:
    """Make the phone's screen flicker between black and white on every capture; returns
    the list that counts the captures (``on_capture(count)`` runs at each)."""
    frames = _frames(480, 800, [0, 255])
    calls: list[int] = []

    def flicker() -> bytes:
        calls.append(1)
        on_capture(len(calls))
        return frames[len(calls) % 2]

    handle.phone.screencap_raw = flicker  # type: ignore[method-assign]
    return calls


def test_wait_settled_gives_up_at_the_timeout(lone_phone) -> None:
    handle, device = lone_phone
    captures = _never_settles(handle)
    started = time.monotonic()
    shot = device.wait_settled(timeout_s=0.5, interval_s=0.05, tolerance=0.01)
    assert time.monotonic() - started >= 0.5  # not before the timeout (a slower machine only adds)
    # and the timeout ended it, not a count of tries: one capture per pause at most
    assert 2 <= len(captures) <= 0.5 / 0.05 + 2
    assert int(shot.pixels[0, 0, 0]) in (0, 255)


def test_wait_settled_ends_early_when_cancelled(lone_phone) -> None:
    handle, device = lone_phone
    cancel = threading.Event()
    # cancelled during the third capture: the pause after it is the last
    captures = _never_settles(handle, on_capture=lambda count: count == 3 and cancel.set())
    # a 60 s timeout on a screen that never settles: only the cancel can end this wait
    shot = device.wait_settled(timeout_s=60.0, interval_s=0.05, tolerance=0.01, cancel=cancel)
    assert len(captures) == 3
    assert int(shot.pixels[0, 0, 0]) in (0, 255)


def test_connecting_an_unauthorized_phone_says_accept_the_rsa_prompt(adb_server) -> None:
    from simphone import Phone
    from simphone.server import PhoneServer

    server = PhoneServer(Phone(width=480, height=800), unauthorized=True).start()
    serial = server.serials[0]
    try:
        settings = AdbSettings(server_port=adb_server.port, connect=[serial], serial=serial)
        with pytest.raises(DeviceUnauthorizedError, match="RSA") as info:
            open_device(settings)  # not a "failed to connect" error: the phone is there
        assert info.value.serial == serial
        assert adb_server.state(serial) == "unauthorized"
    finally:
        adb_server.disconnect(serial)
        server.stop()


def test_open_device_connects_the_configured_addresses(adb_server) -> None:
    from simphone import Phone
    from simphone.server import PhoneServer

    server = PhoneServer(Phone(width=600, height=1000)).start()
    serial = server.serials[0]
    try:
        assert adb_server.state(serial) is None
        settings = AdbSettings(server_port=adb_server.port, connect=[serial], serial=serial)
        device = open_device(settings)
        assert device.serial == serial
        assert device.screenshot().pixels.shape == (1000, 600, 3)
    finally:
        adb_server.disconnect(serial)
        server.stop()


def test_devices_without_shell_v2_use_the_v1_shell(device) -> None:
    device._features = frozenset()  # as an old (Android < 7) phone advertises
    assert device.shell(["echo", "a b ; $(x)"]) == "a b ; $(x)\n"
    assert device.run(["false"]).exit_code is None  # v1 carries no exit status
    with pytest.raises(DeviceError) as info:
        device.check(["input", "bogus-verb"])  # its "Error:" line still fails the call
    assert info.value.fields["command"] == ["input", "bogus-verb"]


def test_refused_requests_are_typed_errors(device, adb_settings) -> None:
    from mobile_agent.device.adb_protocol import AdbHost
    from mobile_agent.errors import DeviceCommandError

    host = AdbHost(adb_settings.server_host, adb_settings.server_port, 10)
    with pytest.raises(DeviceCommandError) as info:
        host.query("host:no-such-service")  # the adb server answers FAIL
    assert info.value.fields["command"] == "host:no-such-service"
    assert info.value.fields["output"]
    with pytest.raises(DeviceCommandError) as info:
        host.read_all(device.serial, "no-such-service:")  # the phone refuses it (CLSE)
    assert info.value.serial == device.serial
    assert info.value.fields["command"] == "no-such-service:"
    assert device.shell(["echo", "still here"]) == "still here\n"


def test_connect_to_an_address_left_offline_is_not_reported_as_connected(adb_server) -> None:
    from mobile_agent.device import connect
    from mobile_agent.errors import DeviceError

    # Something that accepts TCP but never speaks ADB: adb lists the address offline and
    # then answers "already connected" to every further connect. adb waits 10 s for the
    # handshake before it answers a connect; the address is listed offline from the start, so
    # neither this setup nor the product (adb.command_timeout_s) needs to wait that out.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    address = f"127.0.0.1:{listener.getsockname()[1]}"
    try:
        with contextlib.suppress(adbutils.AdbTimeout):
            adb_server.client.connect(address, timeout=2)
        adb_server.wait_state(address, "offline")
        assert adb_server.client.connect(address, timeout=30).startswith("already connected")
        with pytest.raises(DeviceError):  # not taken for connected: a fresh connect, which fails
            connect(address, AdbSettings(server_port=adb_server.port, command_timeout_s=2))
    finally:
        listener.close()
        adb_server.disconnect(address)
