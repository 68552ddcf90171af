"""The device contract (issue 33): one suite, both backends. ``android`` is the simulated
phone over the real adb server (``mobile_agent.device.Device``); ``ios`` is ``IosDevice``
over a fake WebDriverAgent that answers with real WDA samples (``tests/wda_fake.py``).
Each test is what the agent, operations, server and MCP rely on of any phone."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import cast

import pytest

from mobile_agent.device import open_device
from mobile_agent.device.ios import IosDevice, WdaClient
from mobile_agent.operations.context import AgentDevice
from mobile_agent.settings import AdbSettings
from tests.wda_fake import FakeWda


@dataclass
class Backend:
    device: AgentDevice
    foreground: Callable[[], str | None]  # the app in front, read beside the device protocol
    home_app: str


@pytest.fixture(params=["android", "ios"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "android":
        phone = request.getfixturevalue("sim_phone")
        adb = request.getfixturevalue("adb_server")
        device = open_device(AdbSettings(server_port=adb.port, command_timeout_s=20), serial=phone.serial)
        yield Backend(device, lambda: str(phone.phone.foreground), "com.android.launcher3")
        return
    fake = FakeWda().start()
    client = WdaClient(fake.url, timeout_s=10)
    try:
        yield Backend(IosDevice("iphone-1", client), lambda: fake.active, "com.apple.springboard")
    finally:
        client.close()
        fake.stop()


def test_screenshots_are_the_screen_in_pixels(backend: Backend) -> None:
    info = backend.device.screen_info()
    shot = backend.device.screenshot()
    assert (shot.width, shot.height) == (info.width, info.height)
    assert shot.pixels.shape == (info.height, info.width, 3)
    settled = backend.device.wait_settled(1.0, 0.05, 0.002)
    assert (settled.width, settled.height) == (info.width, info.height)
    assert info.density is None or info.density > 0


def test_a_fresh_phone_is_unlocked(backend: Backend) -> None:
    state = backend.device.screen_state()
    assert state.on is True and state.locked is not True  # None: the phone's dumps do not say


def test_open_settings_by_name_then_home(backend: Backend) -> None:
    app = backend.device.resolve_app_label("Settings")
    assert app is not None
    backend.device.launch_app(app)
    assert backend.foreground() == app
    assert backend.device.current_app() == app  # the app policy's read (agent.guard), on both
    assert backend.device.alert_text() is None  # no system alert open (DeviceLike.alert_text)
    backend.device.key("home")
    assert backend.foreground() == backend.home_app
    assert backend.device.current_app() == backend.home_app


def test_input_accepts_points_on_screen_and_refuses_nonsense(backend: Backend) -> None:
    info = backend.device.screen_info()
    backend.device.tap(info.width // 2, info.height // 2)
    backend.device.swipe(info.width // 2, info.height * 3 // 4, info.width // 2, info.height // 4, duration_ms=200)
    backend.device.long_press(info.width // 2, info.height // 2, duration_ms=300)
    backend.device.type_text("")
    with pytest.raises(ValueError):
        backend.device.tap(-5, 10)
    with pytest.raises(ValueError):
        backend.device.swipe(0, 0, 10, 10, duration_ms=-1)
    with pytest.raises(ValueError):
        backend.device.key("no-such-key")
    with pytest.raises(TypeError):
        backend.device.type_text(cast(str, b"bytes"))  # the wrong type on purpose


def test_the_accessibility_tree_is_the_dump_format_in_pixels(backend: Backend) -> None:
    """What perception, the operations and the secret mask read of any phone
    (``DeviceLike.accessibility_xml``): ``uiautomator dump`` XML whose bounds are screen pixels."""
    from perception.accessibility import parse_uiautomator_dump

    info = backend.device.screen_info()
    xml = backend.device.accessibility_xml()
    assert xml is not None
    nodes = parse_uiautomator_dump(xml)
    labelled = [n for n in nodes if n.label]
    assert labelled, "a tree with no text"
    assert all(0 <= n.bounds.left <= n.bounds.right <= info.width and 0 <= n.bounds.top <= n.bounds.bottom <= info.height
               for n in nodes)
    assert max(n.bounds.right for n in nodes) > info.width // 2  # pixels, not points (a 3x iPhone: a third)
