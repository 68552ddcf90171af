"""iPhones attached over USB (issue 33): usbmuxd's device list and one loopback forward per
phone to its WebDriverAgent, through pymobiledevice3 (``mobile_agent.device.ios.usb``).

No Mac, iPhone or usbmuxd here: ``tests/usbmux_fake.py`` is a usbmuxd on a unix socket
speaking its real plist protocol (the packets of ``tests/data/usbmux``), whose ``Connect`` to
the phone's port 8100 is spliced to a simulated iPhone's WDA front-end (``simphone serve
--ios``, the ``front`` fixture). Everything between ``ios:<UDID>`` and that socket is the real
library's client and forwarder: the listing, ``Connect`` with the port in network byte order,
the bytes piped both ways. Through the surfaces a user touches: ``mobile-agent devices`` and
``run --serial ios:<UDID>`` (subprocesses), ``doctor``'s checks, the REST service's device
source, a run that loses its phone to an unplugged cable."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mobile_agent.device import close_phone, list_iphones, open_phone
from mobile_agent.device.ios.usb import UsbForward, open_forwards
from mobile_agent.errors import DeviceError, DeviceOfflineError
from mobile_agent.settings import AdbSettings, IosSettings, Settings
from simphone.ios import WdaFrontEnd
from tests.agent_helpers import agent_settings, cli, cli_env, run_cli
from tests.ports import free_port
from tests.usbmux_fake import FakeUsbmuxd, usbmuxd_with

UDID = "00008030-001A2B3C4D5E6F70"  # an A12-or-later UDID: <ChipID:8>-<ECID:16>
SERIAL = "ios:" + UDID
WDA_PORT = 8100

pytest_plugins = ["pytester"]


@pytest.fixture
def usbmuxd(front: WdaFrontEnd) -> Iterator[FakeUsbmuxd]:
    """A fake usbmuxd with the simulated iPhone attached: its port 8100 is ``front``'s WDA."""
    with usbmuxd_with(UDID, 5, front.url, WDA_PORT) as fake:
        yield fake


def _no_adb(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A machine with no adb at all (the binary named does not exist, no server on the port)."""
    return cli_env(free_port(), MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"), **extra)


def _settings(tmp_path: Path, usbmuxd: Path, **ios: object) -> Settings:
    settings = agent_settings(free_port(), SERIAL, tmp_path / "runs")
    return settings.model_copy(update={
        "adb": AdbSettings(server_port=free_port(), adb_path=str(tmp_path / "no-adb"), serial=SERIAL),
        "ios": IosSettings(usbmuxd=str(usbmuxd), **ios),
    })


def _forwards(fake: FakeUsbmuxd) -> list[UsbForward]:
    """The running forwards through this fake usbmuxd (another test's may outlive it: the REST
    source keeps its phones open)."""
    return [f for f in open_forwards() if f.key[0] == str(fake.path)]


def _connects(fake: FakeUsbmuxd) -> list[dict[str, object]]:
    return [request for _, request in fake.requests if request.get("MessageType") == "Connect"]


def test_devices_lists_the_usb_iphone_and_run_opens_settings_over_the_forward(
    tmp_path: Path, front: WdaFrontEnd, usbmuxd: FakeUsbmuxd
) -> None:
    env = _no_adb(tmp_path, MOBILE_AGENT_IOS__USBMUXD=str(usbmuxd.path))
    listed = cli("devices", "--json", env=env, timeout=120)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["serial"], r["platform"], r["state"], r["url"], r["model"]) for r in rows] == [
        (SERIAL, "ios", "ready", f"usbmux://{UDID}:{WDA_PORT}", "iphone")]
    table = cli("devices", env=env, timeout=120)
    assert table.returncode == 0, table.stderr
    assert [line.split()[:3] for line in table.stdout.splitlines()[1:]] == [["ios", SERIAL, "ready"]]

    doctor = cli("doctor", "--json", env=env, timeout=180)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert doctor.returncode == 0, checks
    assert checks["usbmuxd"]["status"] == "ok" and str(usbmuxd.path) in checks["usbmuxd"]["detail"]
    assert checks[SERIAL]["status"] == "ok" and "screen 1080x2400 px" in checks[SERIAL]["detail"]

    script = tmp_path / "ops.txt"
    script.write_text("Open App (Settings)\nStop\n", encoding="utf-8")
    before = len(usbmuxd.connects)
    proc = run_cli("--serial", SERIAL, "--script", str(script), "-o", str(tmp_path / "runs"), env=env, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "result: completed after 2 steps" in proc.stdout
    assert "Traceback" not in proc.stderr and "Task was destroyed" not in proc.stderr  # the forward's loop ends quietly
    assert front.phone.foreground == "com.android.settings"
    # every WDA call went through usbmuxd: Connect to the phone's port 8100, in network byte order
    assert len(usbmuxd.connects) > before and set(usbmuxd.connects) == {(UDID, WDA_PORT)}
    assert {c["PortNumber"] for c in _connects(usbmuxd)} == {socket.htons(WDA_PORT)} != {WDA_PORT}
    assert {c["DeviceID"] for c in _connects(usbmuxd)} == {5}


def test_no_usbmuxd_is_a_clear_message_not_a_traceback(tmp_path: Path) -> None:
    gone = tmp_path / "usbmuxd"  # nothing listens there
    env = _no_adb(tmp_path, MOBILE_AGENT_IOS__USBMUXD=str(gone), MOBILE_AGENT_IOS__USB="true",
                  MOBILE_AGENT_IOS__DEVICES=json.dumps({"wifi-1": f"http://127.0.0.1:{free_port()}"}))
    listed = cli("devices", env=env, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert f"no USB iPhones: usbmuxd does not answer at {gone}: install and start it" in listed.stderr
    script = tmp_path / "ops.txt"
    script.write_text("Home\n", encoding="utf-8")
    run = run_cli("--serial", SERIAL, "--script", str(script), env=env, timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"no iPhone named '{UDID}'; configured iPhones: ios:wifi-1; over USB: usbmuxd does not answer" in run.stderr
    for proc in (listed, run):
        assert "Traceback" not in proc.stdout + proc.stderr


def test_one_forward_per_phone_however_often_it_is_opened(tmp_path: Path, usbmuxd: FakeUsbmuxd) -> None:
    settings = _settings(tmp_path, usbmuxd.path)
    first = open_phone(settings, SERIAL)
    second = open_phone(settings, SERIAL)
    try:
        (forward,) = _forwards(usbmuxd)
        assert forward.udid == UDID and forward.users == 2
        assert forward.bound == ("127.0.0.1", forward.port)  # loopback only
        assert first.client.base_url == second.client.base_url == forward.url == f"http://127.0.0.1:{forward.port}"
        close_phone(first)
        close_phone(first)  # twice: still one user let go
        assert _forwards(usbmuxd) == [forward] and forward.users == 1
        assert second.screen_info().width == 1080  # the other open still drives the phone
    finally:
        close_phone(second)
    assert _forwards(usbmuxd) == []
    with pytest.raises(ConnectionRefusedError):  # the listener is gone with the last close
        socket.create_connection(("127.0.0.1", forward.port), timeout=5).close()
    third = open_phone(settings, SERIAL)  # opened again: a new forward
    try:
        assert [f.users for f in _forwards(usbmuxd)] == [1] and third.screen_info().height == 2400
    finally:
        close_phone(third)


def test_opens_at_the_same_time_start_one_forward(tmp_path: Path, usbmuxd: FakeUsbmuxd) -> None:
    settings = _settings(tmp_path, usbmuxd.path)
    with ThreadPoolExecutor(max_workers=4) as pool:
        phones = list(pool.map(lambda _: open_phone(settings, SERIAL), range(4)))
    try:
        (forward,) = _forwards(usbmuxd)
        assert forward.users == 4 and {p.client.base_url for p in phones} == {forward.url}
    finally:
        for phone in phones:
            close_phone(phone)
    assert _forwards(usbmuxd) == []


def test_a_phone_unplugged_mid_run_ends_the_run_device_lost(tmp_path: Path, usbmuxd: FakeUsbmuxd) -> None:
    from mobile_agent.agent import AgentEvent, RunStatus, load_trajectory, run_script

    def listen(event: AgentEvent) -> None:
        if event.kind == "step_started" and event.step == 2:
            usbmuxd.unplug(UDID)  # the cable pulled before step 2's action

    settings = _settings(tmp_path, usbmuxd.path)
    phone = open_phone(settings, SERIAL)  # as the REST runner does: open, run, close
    try:
        result = run_script(settings, "Home\nBack\nStop\n", device=phone, on_event=listen)
    finally:
        close_phone(phone)
    assert result.status is RunStatus.ERROR and result.error is not None, result.reason
    assert result.error["cause"] == "device_lost" and result.error["serial"] == SERIAL
    _, steps, final = load_trajectory(result.trajectory_dir)
    assert [s["operation"]["name"] for s in steps] == ["home", "back"]
    assert steps[1]["error"]["cause"] == "device_lost" and final["error"]["cause"] == "device_lost"
    assert _forwards(usbmuxd) == []  # its phone closed: the forward is gone


def test_doctor_says_whether_usbmuxd_answers_and_checks_the_usb_iphones_wda(
    tmp_path: Path, usbmuxd: FakeUsbmuxd
) -> None:
    from mobile_agent.cli.doctor import ios_checks

    checks = {c.name: c for c in ios_checks(_settings(tmp_path, usbmuxd.path))}
    assert checks["usbmuxd"].status == "ok" and f"iPhones attached over USB: {SERIAL}" in checks["usbmuxd"].detail
    assert checks[SERIAL].status == "ok" and "screen 1080x2400 px" in checks[SERIAL].detail
    assert _forwards(usbmuxd) == []

    gone = tmp_path / "no-usbmuxd"
    auto = {c.name: c for c in ios_checks(_settings(tmp_path, gone))}
    assert list(auto) == ["usbmuxd"] and auto["usbmuxd"].status == "warn"
    assert f"usbmuxd does not answer at {gone}" in auto["usbmuxd"].detail
    required = {c.name: c for c in ios_checks(_settings(tmp_path, gone, usb=True))}
    assert required["usbmuxd"].status == "fail"
    assert ios_checks(_settings(tmp_path, gone, usb=False)) == []


def test_the_rest_services_device_source_holds_the_usb_iphone_until_unplugged(
    tmp_path: Path, usbmuxd: FakeUsbmuxd
) -> None:
    from server.devices import AdbDeviceSource

    dead = {"wifi-1": f"http://127.0.0.1:{free_port()}"}  # a configured iPhone beside it, its WDA silent
    source = AdbDeviceSource(_settings(tmp_path, usbmuxd.path, devices=dead))
    assert source.list() == [(SERIAL, "device", "iphone"), ("ios:wifi-1", "offline", None)]
    shot = source.screenshot(SERIAL, "png")
    assert shot.startswith(b"\x89PNG")
    usbmuxd.unplug(UDID)
    # gone from the pool, as a vanished adb phone is; the configured one stays listed
    assert source.list() == [("ios:wifi-1", "offline", None)]


def test_a_usb_iphone_named_in_ios_usb_names_is_listed_and_opened_by_its_name(
    tmp_path: Path, usbmuxd: FakeUsbmuxd
) -> None:
    from mobile_agent.device import iphone_names

    settings = _settings(tmp_path, usbmuxd.path, usb_names={"desk-iphone": UDID.replace("-", "").lower()})
    assert iphone_names(settings.ios) == ["desk-iphone"]
    (listing,) = list_iphones(settings.ios)
    assert (listing.serial, listing.ready, listing.url) == ("ios:desk-iphone", True, f"usbmux://{UDID}:{WDA_PORT}")
    named = open_phone(settings, "ios:desk-iphone")
    by_udid = open_phone(settings, SERIAL)  # the UDID still finds it: the same phone, the same forward
    try:
        assert named.serial == by_udid.serial == "ios:desk-iphone"
        (forward,) = _forwards(usbmuxd)
        assert forward.users == 2 and named.screen_info().width == 1080
    finally:
        close_phone(named)
        close_phone(by_udid)
    assert _forwards(usbmuxd) == []


def test_mcp_lists_and_drives_the_usb_iphone_with_no_adb(tmp_path: Path, front: WdaFrontEnd, usbmuxd: FakeUsbmuxd) -> None:
    from mobile_agent.mcp_server.phone import PhoneService

    service = PhoneService(_settings(tmp_path, usbmuxd.path))
    answer = service.list_devices()
    assert [(d["serial"], d["platform"], d["state"]) for d in answer["devices"]] == [(SERIAL, "ios", "ready")]
    assert "no-adb" in answer["problem"]  # no adb: the USB iPhone is listed alone, and why
    phone = service.device(SERIAL)
    front.phone.launch("com.android.settings")
    phone.key("home")  # WDA's pressButton home, through the USB forward
    assert phone.serial == SERIAL and front.phone.foreground == "com.android.launcher3"


def test_a_farm_worker_probes_the_usb_iphone_as_a_configured_one(tmp_path: Path, usbmuxd: FakeUsbmuxd) -> None:
    """What a farm worker registers a phone with (``phone_properties``, its ``_probe``)."""
    from mobile_agent.device import phone_properties

    props = phone_properties(_settings(tmp_path, usbmuxd.path), SERIAL)
    assert props == {"platform": "ios", "model": "iphone", "ios": "17.0", "density": "480"}
    assert _forwards(usbmuxd) == []  # the probe let go of the phone


def test_the_wda_port_on_the_phone_is_a_setting(tmp_path: Path, front: WdaFrontEnd) -> None:
    with usbmuxd_with(UDID, 6, front.url, wda_port=8200) as fake:  # this phone's WDA listens on 8200
        phone = open_phone(_settings(tmp_path, fake.path, wda_port=8200), SERIAL)
        try:
            assert phone.screen_info().width == 1080
        finally:
            close_phone(phone)
        assert {c["PortNumber"] for c in _connects(fake)} == {socket.htons(8200)}
        with pytest.raises(DeviceOfflineError, match=r"WebDriverAgent at http://127.0.0.1:\d+ \(USB, the phone's port 8100\) does not answer"):
            open_phone(_settings(tmp_path, fake.path), SERIAL)  # 8100 by default: nothing there, CONNREFUSED
        (listing,) = list_iphones(_settings(tmp_path, fake.path).ios)
        assert (listing.serial, listing.ready) == (SERIAL, False)
        assert listing.problem is not None and listing.problem.startswith(
            "WebDriverAgent on the USB iPhone's port 8100 (is it running? docs/ios.md): WDA at http://127.0.0.1:")
        assert _forwards(fake) == []


@pytest.mark.timeout(300)
def test_eval_mobile_eval_judges_the_usb_iphone_by_its_state(tmp_path: Path, usbmuxd: FakeUsbmuxd) -> None:
    """`mobile-agent eval mobile-eval --device ios:<UDID>`: the harness reads the simulated iPhone's
    state through the same forward as its WDA (``environment_for``: the device's own URL), so a
    USB iPhone is not refused as "not one of ios.devices" and each task is judged by state."""
    env = _no_adb(tmp_path, MOBILE_AGENT_IOS__USBMUXD=str(usbmuxd.path))
    tasks = ["settings-1", "notes-2"]
    picked = [arg for task in tasks for arg in ("--task", task)]
    proc = cli("eval", "mobile-eval", "--device", SERIAL, "--script-reference", *picked,
               "-o", str(tmp_path / "eval"), env=env, timeout=280)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "eval" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in records) == sorted(tasks)
    for record in records:
        assert (record["success"], record["judged_by"], record["device"]) == (True, "state", SERIAL), record
    assert set(usbmuxd.connects) == {(UDID, WDA_PORT)}  # the harness's reads went over "USB" too


def test_the_rest_device_source_lets_go_of_the_usb_iphone_it_opens_again_or_forgets(
    tmp_path: Path, usbmuxd: FakeUsbmuxd
) -> None:
    """Each probe opens the phone anew (a phone new or back) and a failed screenshot forgets
    it: the phone it replaces or forgets is closed, so the forward counts only the open it
    keeps, and once unplugged and forgotten no forward stays behind on 127.0.0.1."""
    from server.devices import AdbDeviceSource

    source = AdbDeviceSource(_settings(tmp_path, usbmuxd.path))
    for _ in range(3):  # three probes: one phone kept open, not three
        assert source.screen_size(SERIAL) == (1080, 2400)
    assert source.screenshot(SERIAL, "png").startswith(b"\x89PNG")
    assert [f.users for f in _forwards(usbmuxd)] == [1]
    usbmuxd.unplug(UDID)
    with pytest.raises(DeviceError):  # the cable pulled: the screenshot fails and the phone is forgotten
        source.screenshot(SERIAL, "png")
    assert _forwards(usbmuxd) == []


def test_the_rest_device_source_once_closed_opens_no_phone(tmp_path: Path, usbmuxd: FakeUsbmuxd) -> None:
    """``close`` (the service's shutdown) closes the phone kept for screenshots; a live view's
    capture that comes after it is refused rather than opening a phone nobody would close."""
    from server.devices import AdbDeviceSource

    source = AdbDeviceSource(_settings(tmp_path, usbmuxd.path))
    assert source.screenshot(SERIAL, "png").startswith(b"\x89PNG")
    assert [f.users for f in _forwards(usbmuxd)] == [1]
    source.close()
    assert _forwards(usbmuxd) == []
    for late in (lambda: source.screenshot(SERIAL, "png"), lambda: source.screen_size(SERIAL)):
        with pytest.raises(DeviceError, match="the service is stopping"):
            late()
        assert _forwards(usbmuxd) == []


def test_the_pytest_plugins_phone_fixture_closes_the_usb_iphone_after_each_test(
    pytester: pytest.Pytester, tmp_path: Path, usbmuxd: FakeUsbmuxd, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``mobile-agent``'s pytest plugin opens the session's phone for each test that asks for
    ``phone``: each open is closed with its test, so a USB iPhone's forward counts one user in
    the next test (not one per test run so far, each holding a connection to the phone's WDA)."""
    for key, value in _no_adb(tmp_path, MOBILE_AGENT_IOS__USBMUXD=str(usbmuxd.path)).items():
        monkeypatch.setenv(key, value)
    pytester.makepyfile(test_usb_phone='''
from mobile_agent.device.ios.usb import open_forwards


def users():
    return [f.users for f in open_forwards()]


def test_first(phone):
    assert phone.device.screen_info().width == 1080
    assert users() == [1]


def test_second(phone):
    assert users() == [1]  # the first test's open let go of the forward
''')
    result = pytester.runpytest_subprocess("-p", "no:mobile_agent", "-p", "mobile_agent.testing.pytest_plugin",
                                           "-p", "no:cacheprovider", "--phone", SERIAL)
    result.assert_outcomes(passed=2)


def test_the_forwarders_noise_is_dropped_not_its_level_nor_its_other_records(
        tmp_path: Path, usbmuxd: FakeUsbmuxd, caplog: pytest.LogCaptureFixture) -> None:
    """Opening a forward used to set pymobiledevice3's forwarder logger to CRITICAL for the whole
    process; now only its per-connection lines and the "failed to connect" of an unplugged phone
    (which the WDA client reports as a lost phone) are dropped."""
    name = "pymobiledevice3.tcp_forwarder"
    level = logging.getLogger(name).level
    phone = open_phone(_settings(tmp_path, usbmuxd.path), SERIAL)
    try:
        assert logging.getLogger(name).level == level  # the application's, not raised process-wide
        caplog.set_level(logging.DEBUG, logger=name)
        phone.screenshot()  # connections through the forward: established, bytes, closed
        usbmuxd.unplug(UDID)
        with pytest.raises(DeviceError):
            phone.screenshot()  # the forward cannot reach the phone: "failed to connect to remote endpoint"
        logging.getLogger(name).error("a record of its own")
    finally:
        close_phone(phone)
    messages = [r.getMessage() for r in caplog.records if r.name == name]
    assert "a record of its own" in messages  # its other records still reach the application
    assert set(messages) <= {"a record of its own", "Closing everything"}, messages  # no connection lines
