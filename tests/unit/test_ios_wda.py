"""The iOS backend (issue 33) against a fake WDA that answers with real WDA samples
(``tests/wda_fake.py``, ``tests/data/wda/``, each sample naming its source)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import cast

import pytest

from mobile_agent.device.ios import IosDevice, WdaClient, WdaError, WdaStatus
from mobile_agent.device.ios.apps import APPLE_APP_NAMES, APPLE_APPS, bundle_for_label
from mobile_agent.device.ios.source import hierarchy_from_source
from mobile_agent.errors import AppNotFoundError, DeviceCommandError, DeviceLostError
from mobile_agent.operations.context import AgentDevice, Locator, OperationContext
from mobile_agent.operations.open_app import HOME_ICONS, open_app_by_name
from mobile_agent.settings import Settings
from perception.accessibility import parse_uiautomator_dump
from tests.wda_fake import DATA, FakeWda, sample, sample_names


@pytest.fixture
def client(wda: FakeWda) -> Iterator[WdaClient]:
    c = WdaClient(wda.url, timeout_s=10)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def iphone(client: WdaClient) -> IosDevice:
    return IosDevice("iphone-1", client)


# --- every sample, replayed --------------------------------------------------------------


def test_every_sample_names_its_source() -> None:
    names = sample_names()
    assert len(names) >= 14
    for name in names:
        s = sample(name)
        assert s["sources"], name
        for source in s["sources"]:
            assert source["repo"] and source["path"] and len(source["commit"]) == 40, (name, source)
        assert set(s["body"]) >= {"value", "sessionId"}, name
    assert (DATA / "SOURCES.md").read_text().count("source_settings.xml") == 1


def _answer(client: WdaClient, wda: FakeWda, name: str) -> object:
    """What the client makes of sample ``name``, served by the fake where it belongs."""
    if name in ("status", "status_old"):
        wda.status_sample = name
        return client.status()
    if name == "session_create":
        return client.create_session("com.apple.Preferences")
    if name == "press_button_home":
        client.press_button("home")
        return None
    if name == "keys":
        client.keys("hello")
        return None
    if name in ("wda_screen", "wda_screen_3x"):
        wda.scale_sample = name
        return client.screen().scale
    if name == "window_size":
        return client.window_size()
    if name == "locked_false":
        return client.locked()
    if name == "active_app_info":
        wda.active = "com.test.cert.TestCert"
        return client.active_app()
    if name == "alert_text":
        wda.alert = sample("alert_text")["body"]["value"]
        return client.alert_text()
    if name == "no_such_alert":
        return client.alert_text()
    if name == "invalid_session":
        client.create_session()
        return client.request("GET", "/session/0B1D1D9A-0000-4000-8000-000000000000/screenshot")
    if name == "unknown_command":
        return client.request("GET", "/no/such/route")
    if name == "app_not_installed":
        client.activate("com.example.missing")
        return None
    if name == "session_not_created":
        return client.request("POST", "/session", {})
    raise AssertionError(f"no client call for sample {name!r}: add one")


EXPECTED: dict[str, object] = {
    "press_button_home": None,
    "keys": None,
    "wda_screen": 2.0,
    "wda_screen_3x": 3.0,
    "window_size": (390, 844),
    "locked_false": False,
    "active_app_info": "com.test.cert.TestCert",
    "alert_text": "Confirmation\nDo you accept?",
    "no_such_alert": None,
}


@pytest.mark.parametrize("name", sample_names())
def test_each_real_sample_is_handled(client: WdaClient, wda: FakeWda, name: str) -> None:
    if name in ("invalid_session", "unknown_command", "session_not_created", "app_not_installed"):
        with pytest.raises(WdaError) as info:
            _answer(client, wda, name)
        assert info.value.http_status == sample(name)["http_status"]
        assert info.value.error == sample(name)["body"]["value"]["error"]
        assert sample(name)["body"]["value"]["message"] in info.value.message
        return
    got = _answer(client, wda, name)
    if name == "session_create":
        assert got == wda.session_id and wda.sessions_made == 1
    elif name == "status":
        assert isinstance(got, WdaStatus)
        assert got.ready is True and got.os_version == "16.3.1" and got.device == "iphone"
    elif name == "status_old":
        assert isinstance(got, WdaStatus)
        assert got.ready is None and got.os_version == "10.3.3" and got.state == "success"
    else:
        assert got == EXPECTED[name]


# --- the backend --------------------------------------------------------------------------


def _actions(wda: FakeWda) -> list[list[dict[str, object]]]:
    return [body["actions"][0]["actions"] for body in wda.calls("POST", "/actions")]


@pytest.mark.parametrize(("scale_sample", "scale"), [("wda_screen", 2), ("wda_screen_3x", 3)])
def test_taps_are_sent_in_points(wda: FakeWda, iphone: IosDevice, scale_sample: str, scale: int) -> None:
    wda.scale_sample = scale_sample
    info = iphone.screen_info()
    shot = iphone.screenshot()
    assert (shot.width, shot.height) == (info.width, info.height) == (390 * scale, 844 * scale)
    assert info.density == 160 * scale
    iphone.tap(300, 600)
    iphone.long_press(90, 180, duration_ms=900)
    iphone.swipe(600, 1500, 600, 300, duration_ms=400)
    tap, press, swipe = _actions(wda)
    assert tap[0] == {"type": "pointerMove", "duration": 0, "x": round(300 / scale), "y": round(600 / scale)}
    assert [a["type"] for a in tap] == ["pointerMove", "pointerDown", "pointerUp"]
    assert press[2] == {"type": "pause", "duration": 900} and press[0]["x"] == round(90 / scale)
    assert swipe[2] == {"type": "pointerMove", "duration": 400, "x": round(600 / scale), "y": round(300 / scale)}


def test_keys_home_back_enter_and_typing(wda: FakeWda, iphone: IosDevice) -> None:
    iphone.key("home")
    iphone.key("back")
    iphone.key("enter")
    iphone.type_text("Grüße 你好")
    assert wda.calls("POST", "/wda/pressButton") == [{"name": "home"}]
    (edge,) = _actions(wda)
    assert edge[0]["x"] == 1 and edge[2]["x"] == round(390 * 0.7)  # from the left edge, in points
    assert wda.calls("POST", "/wda/keys") == [{"value": ["\n"]}, {"value": list("Grüße 你好")}]
    with pytest.raises(DeviceCommandError, match="no 'menu' key"):
        iphone.key("menu")


def test_the_app_in_front_is_wdas_active_app(wda: FakeWda, iphone: IosDevice) -> None:
    """``current_app`` (the app policy's reading) is ``/wda/activeAppInfo``'s bundle id: the real
    sample's, and SpringBoard on the home screen."""
    wda.active = "com.test.cert.TestCert"
    assert iphone.current_app() == "com.test.cert.TestCert"
    wda.active = "com.apple.springboard"
    assert iphone.current_app() == "com.apple.springboard"


def test_a_stale_session_is_replaced_once(wda: FakeWda, iphone: IosDevice) -> None:
    iphone.key("home")
    wda.expire_session()
    iphone.key("home")
    assert wda.sessions_made == 2
    assert len(wda.calls("POST", "/wda/pressButton")) == 3  # the refused one, then the retry


def test_lock_state_unlock_and_alerts(wda: FakeWda, iphone: IosDevice) -> None:
    assert iphone.screen_state().locked is False
    wda.locked = True
    assert iphone.screen_state().locked is True
    iphone.key("wakeup")
    assert iphone.screen_state().locked is False
    assert iphone.alert_text() is None
    wda.alert = "“Maps” Would Like to Use Your Location\nAllow Once"
    assert iphone.alert_text() == wda.alert
    iphone.accept_alert()
    assert iphone.alert_text() is None
    with pytest.raises(WdaError) as info:
        iphone.dismiss_alert()
    assert info.value.error == "no such alert"


def test_apps_and_page_source(wda: FakeWda, iphone: IosDevice) -> None:
    bundle = iphone.resolve_app_label("  settings ")
    assert bundle == "com.apple.Preferences"
    iphone.launch_app(bundle)
    assert wda.calls("POST", "/wda/apps/activate") == [{"bundleId": "com.apple.Preferences"}]
    assert iphone.resolve_app_label("No Such App") is None
    with pytest.raises(AppNotFoundError, match="com.example.missing"):
        iphone.launch_app("com.example.missing")
    source = iphone.page_source()
    assert '<XCUIElementTypeApplication type="XCUIElementTypeApplication"' in source and 'name="General"' in source
    assert iphone.keyboard_shown() is False
    xml = iphone.accessibility_xml()  # the device protocol's tree, what operations and perception read: in pixels
    assert xml is not None
    nodes = {(n.label, n.class_name): n for n in parse_uiautomator_dump(xml)}
    general = nodes[("General", "XCUIElementTypeCell")]
    # the sample's General cell: x=0 y=248 390x45 points, 3x
    assert (general.bounds.left, general.bounds.top, general.bounds.right, general.bounds.bottom) == (0, 744, 1170, 879)
    assert general.clickable and not nodes[("General", "XCUIElementTypeStaticText")].clickable
    assert all(n.bounds.right <= 1170 for n in nodes.values())
    assert "SilhouetteMonogram" in source and not any(n.resource_id == "SilhouetteMonogram" for n in nodes.values())


def test_a_real_springboard_source_names_the_home_screens_icons(wda: FakeWda, iphone: IosDevice) -> None:
    """The real SpringBoard sample (``source_springboard.xml``) through the backend: the tree
    has the page's and the Dock's icons by their names (a badge's value does not hide the
    name), not the hidden page's; and Open App of a name the table does not know ("Home",
    Apple's Home app) taps that icon's middle, in points (Open App's step 2)."""
    wda.source_sample = "source_springboard.xml"
    nodes = parse_uiautomator_dump(iphone.accessibility_xml() or "")
    icons = [n for n in nodes if n.class_name == "XCUIElementTypeIcon" and n.label]
    assert [n.label for n in icons] == ["Health", "Home", "Wallet", "Settings", "Books", "Phone", "Safari", "Messages",
                                        "Music"]
    assert all(n.clickable for n in icons)
    assert bundle_for_label("Home") is None  # so Open App goes on to the home screen's icons
    ctx = OperationContext(device=iphone, locator=cast(Locator, object()), screenshot=iphone.screenshot(),
                           settings=Settings())
    outcome = open_app_by_name("Home", ctx)
    assert outcome.ok and outcome.location is not None and outcome.location.backend == HOME_ICONS, outcome.feedback
    (touch,) = wda.calls("POST", "/actions")
    moves = [a for a in touch["actions"][0]["actions"] if a["type"] == "pointerMove"]
    # the sample's Home icon: x=30 y=498 68x92 points; its middle, sent back in points
    assert (moves[0]["x"], moves[0]["y"]) == (64, 544)


def test_a_page_source_that_is_not_one_is_no_tree() -> None:
    with pytest.raises(ValueError, match="not a WDA page source"):
        hierarchy_from_source("<hierarchy rotation='0'/>", 3)
    with pytest.raises(ValueError, match="not well-formed"):
        hierarchy_from_source("<XCUIElementTypeApplication", 3)
    hidden = hierarchy_from_source(
        '<XCUIElementTypeApplication x="0" y="0" width="10" height="10">'
        '<XCUIElementTypeButton visible="false" name="Off" x="0" y="0" width="5" height="5"/>'
        '<XCUIElementTypeSecureTextField visible="true" label="pw" x="1" y="1" width="2" height="2"/>'
        "</XCUIElementTypeApplication>", 2)
    nodes = parse_uiautomator_dump(hidden)
    assert [n.class_name for n in nodes] == ["XCUIElementTypeApplication", "XCUIElementTypeSecureTextField"]
    assert nodes[1].password and (nodes[1].bounds.left, nodes[1].bounds.bottom) == (2, 6)


def test_bounds_are_the_part_on_the_screen() -> None:
    """As ``uiautomator dump`` writes visible bounds: a scrolled list's last cell runs past the
    screen's bottom in WDA's frames (the real Settings sample's Game Center cell: y=802, 45 points
    high, on an 844-point screen); one wholly below it is not on the screen at all."""
    xml = hierarchy_from_source(
        '<XCUIElementTypeApplication x="0" y="0" width="390" height="844">'
        '<XCUIElementTypeCell visible="true" label="Game Center" x="0" y="802" width="390" height="45"/>'
        '<XCUIElementTypeCell visible="true" label="Wallet" x="0" y="900" width="390" height="45"/>'
        "</XCUIElementTypeApplication>", 3)
    nodes = {n.label: n.bounds for n in parse_uiautomator_dump(xml)}
    assert "Wallet" not in nodes
    game = nodes["Game Center"]
    assert (game.left, game.top, game.right, game.bottom) == (0, 2406, 1170, 2532)


def test_apple_app_names_in_several_languages() -> None:
    keys = [name for _, names in APPLE_APP_NAMES for name in names]
    assert len(APPLE_APPS) == len(keys), "two apps share a name"
    assert {bundle_for_label(n) for n in ("Settings", "设置", "Einstellungen", "Réglages", "Ajustes", "設定", " settings!")} == {
        "com.apple.Preferences"}
    assert bundle_for_label("App-Store") == "com.apple.AppStore" and bundle_for_label("Play Store") is None


def test_a_wda_that_went_away_loses_the_phone(wda: FakeWda, iphone: IosDevice) -> None:
    iphone.screenshot()
    wda.stop()
    with pytest.raises(DeviceLostError, match="iphone-1 went away during screenshot"):
        iphone.screenshot()
    with pytest.raises(DeviceLostError, match="during accessibility_xml"):  # a lost phone is never "no tree"
        iphone.accessibility_xml()


@pytest.mark.parametrize("call", [
    lambda d: d.screen_info(), lambda d: d.screen_state(), lambda d: d.tap(10, 10), lambda d: d.long_press(10, 10),
    lambda d: d.swipe(10, 10, 20, 20), lambda d: d.key("home"), lambda d: d.key("back"), lambda d: d.type_text("hi"),
    lambda d: d.keyboard_shown(), lambda d: d.launch_app("com.apple.Preferences"), lambda d: d.alert_text(),
    lambda d: d.accept_alert(), lambda d: d.dismiss_alert(), lambda d: d.unlock(), lambda d: d.page_source(),
    lambda d: d.wait_settled(0.1, 0.05, 0.002), lambda d: d.current_app(),
])
def test_every_call_on_a_wda_that_went_away_is_a_lost_phone(
    wda: FakeWda, iphone: IosDevice, call: Callable[[IosDevice], object]
) -> None:
    """As an adb phone that vanished (``DeviceLostError``, a run ends ``device_lost``), not a bare
    ``WdaError`` that a run reports as some device error."""
    iphone.screenshot()  # the scale is known
    wda.stop()
    with pytest.raises(DeviceLostError, match="iphone-1 went away during"):
        call(iphone)


def test_a_source_that_is_no_tree_leaves_it_to_vision(iphone: IosDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    """As an adb phone's failed dump: no tree (None), the run goes on by the pixels."""
    monkeypatch.setattr(iphone.client, "source", lambda: "<hierarchy rotation='0'/>")
    assert iphone.accessibility_xml() is None


def test_bad_answers_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="http"):
        WdaClient("localhost:8100")
    with pytest.raises(ValueError, match="one word"):
        IosDevice("my phone", WdaClient("http://127.0.0.1:9"))


def test_the_backend_is_an_agent_device(iphone: IosDevice) -> None:
    """Every member of the agent's device protocol, with the same parameters (mypy checks
    the types too: ``mypy --explicit-package-bases tests/unit/test_ios_wda.py``)."""
    device: AgentDevice = iphone
    assert (device.serial, device.platform) == ("ios:iphone-1", "ios")
    members = [m for cls in (AgentDevice, *AgentDevice.__mro__) for m in vars(cls)
               if not m.startswith("_") and not isinstance(vars(cls)[m], property)]
    assert {"tap", "swipe", "key", "type_text", "launch_app", "screen_state", "screenshot", "accessibility_xml"} <= set(members)
    for member in members:
        want = inspect.signature(getattr(AgentDevice, member))
        have = inspect.signature(getattr(IosDevice, member))
        assert list(have.parameters) == list(want.parameters), member


def test_the_secret_mask_finds_an_iphones_password_field(wda: FakeWda, iphone: IosDevice,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``agent.mask.password_boxes`` reads the device protocol's tree: on an iPhone, WDA's
    ``XCUIElementTypeSecureTextField`` is a password field, boxed in screen pixels (3x here)."""
    from mobile_agent.agent.mask import password_boxes

    wda.scale_sample = "wda_screen_3x"
    source = ('<XCUIElementTypeApplication type="XCUIElementTypeApplication" visible="true" x="0" y="0" '
              'width="390" height="844"><XCUIElementTypeTextField type="XCUIElementTypeTextField" visible="true" '
              'x="20" y="40" width="350" height="44"/><XCUIElementTypeSecureTextField '
              'type="XCUIElementTypeSecureTextField" visible="true" x="20" y="100" width="350" height="44"/>'
              '</XCUIElementTypeApplication>')
    monkeypatch.setattr(iphone.client, "source", lambda: source)
    assert password_boxes(iphone) == [(60, 300, 1110, 432)]
