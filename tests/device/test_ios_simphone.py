"""The simulated iPhone (issue 33): the simulated phone behind ``simphone.ios.WdaFrontEnd``,
driven by mobile-agent's iOS backend over HTTP. Its answers have the shapes of the real
WDA samples (``tests/data/wda/``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast
from urllib.error import HTTPError
from xml.sax.saxutils import quoteattr

import pytest

from mobile_agent.agent import Agent, RunStatus
from mobile_agent.cli.doctor import ios_checks
from mobile_agent.device.ios import IosDevice, WdaClient
from mobile_agent.errors import AppNotFoundError
from mobile_agent.operations.context import Locator, OperationContext
from mobile_agent.operations.open_app import open_app_by_name
from mobile_agent.settings import Settings
from perception.accessibility import parse_uiautomator_dump
from simphone import Phone
from simphone.ios import WdaFrontEnd
from simphone.ios.wda import BUNDLES
from tests.agent_helpers import DONE, agent_settings, cli_env, plan_reply, run_cli
from tests.ports import free_port
from tests.wda_fake import DATA, sample


def _no_adb(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A ``mobile-agent`` environment with no adb at all (the adb binary named does not exist,
    no server on the port): an iPhone needs none, and no adb server is started and left behind."""
    return cli_env(free_port(), MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"), **extra)


@pytest.fixture
def iphone(front: WdaFrontEnd) -> Iterator[IosDevice]:
    client = WdaClient(front.url, timeout_s=20)
    try:
        yield IosDevice("sim-1", client)
    finally:
        client.close()


def _raw(front: WdaFrontEnd, method: str, path: str, body: object = None) -> tuple[int, dict[str, object]]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(front.url + path, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read())
    except HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _shape(value: object) -> object:
    """The JSON shape: key names and value types, recursively."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    return type(value).__name__


@pytest.mark.parametrize(
    ("name", "method", "path", "body"),
    [
        ("status", "GET", "/status", None),
        ("window_size", "GET", "/session/{sid}/window/size", None),
        ("wda_screen", "GET", "/session/{sid}/wda/screen", None),
        ("locked_false", "GET", "/wda/locked", None),
        ("active_app_info", "GET", "/wda/activeAppInfo", None),
        ("session_create", "POST", "/session", {"capabilities": {}}),
        ("no_such_alert", "GET", "/session/{sid}/alert/text", None),
        ("invalid_session", "GET", "/session/NOT-A-SESSION/window/size", None),
        ("unknown_command", "GET", "/no/such/route", None),
        ("session_not_created", "POST", "/session", {}),
        ("app_not_installed", "POST", "/session/{sid}/wda/apps/activate", {"bundleId": "com.example.missing"}),
    ],
)
def test_answers_have_the_real_samples_shapes(front: WdaFrontEnd, name: str, method: str, path: str, body: object) -> None:
    _, made = _raw(front, "POST", "/session", {"capabilities": {"alwaysMatch": {}}})
    sid = made["sessionId"]
    status, envelope = _raw(front, method, path.format(sid=sid), body)
    real = sample(name)
    assert status == real["http_status"]
    assert set(envelope) == {"value", "sessionId"}
    if isinstance(real["body"]["value"], dict) and "error" in real["body"]["value"]:
        assert _shape(envelope["value"]) == _shape(real["body"]["value"])
        assert cast(dict[str, object], envelope["value"])["error"] == real["body"]["value"]["error"]
    elif name == "wda_screen":
        assert _shape(envelope["value"]) == {"statusBarSize": {"width": "int", "height": "int"}, "scale": "int"}
    else:
        assert _shape(envelope["value"]) == _shape(real["body"]["value"])


def _attributes(xml: str, tag: str, nth: int = 0) -> list[str]:
    """The attribute names of the ``nth`` ``tag`` element, in the order they are written."""
    line = [ln for ln in xml.splitlines() if ln.strip().startswith(f"<{tag} ")][nth]
    return re.findall(r'(\w+)="', line)


def _in_order(names: list[str], real: list[str]) -> bool:
    """``names`` are attributes of the real sample's element, written in its order."""
    return set(names) <= set(real) and [n for n in real if n in names] == names


def test_page_source_is_wda_xml_in_points(front: WdaFrontEnd, iphone: IosDevice) -> None:
    iphone.launch_app("com.apple.Preferences")
    source = iphone.page_source()
    real = (DATA / "source_springboard.xml").read_text()
    first = source.splitlines()[1]
    assert 'x="0" y="0" width="360" height="800"' in first  # 1080x2400 pixels at 3x
    assert 'name="Settings" label="Settings"' in first  # the application is named by the app's name
    # the attributes and their order of the real sample (WDA's /source of iOS 17.2), element by element
    sample_static = _attributes(real, "XCUIElementTypeStaticText")  # type value name label enabled visible accessible ...
    for tag, real_tag in (("XCUIElementTypeApplication", "XCUIElementTypeApplication"),
                          ("XCUIElementTypeWindow", "XCUIElementTypeWindow"),
                          ("XCUIElementTypeOther", "XCUIElementTypeOther")):
        assert _attributes(source, tag) == _attributes(real, real_tag), tag
    for line in source.splitlines()[4:]:
        tag = line.strip().split(" ")[0].lstrip("<")
        if tag.startswith("XCUIElementType"):
            assert _in_order(re.findall(r'(\w+)="', line), sample_static), line
    nodes = parse_uiautomator_dump(iphone.accessibility_xml() or "")
    wifi = next(n for n in nodes if n.label == "Wi-Fi")
    truth = next(e for e in front.phone.ground_truth() if e["text"] == "Wi-Fi")
    # pixels -> points (WDA) -> pixels (backend): within the rounding of one point
    assert all(abs(a - b) <= 3 for a, b in zip((wifi.bounds.left, wifi.bounds.top, wifi.bounds.right, wifi.bounds.bottom), truth["box"], strict=True))


def test_the_home_screen_is_springboards_source(front: WdaFrontEnd, iphone: IosDevice) -> None:
    """The home screen's page source has the real SpringBoard sample's shape: the application
    named " ", each app one XCUIElementTypeIcon named by its label inside the page's own
    icon element, the Dock's icons in the element named "Dock"; the same attributes in the
    same order; each icon where the app's tile is on the screen."""
    iphone.key("home")
    source = iphone.page_source()
    real = (DATA / "source_springboard.xml").read_text()

    def tree(xml: str) -> ET.Element:
        return ET.fromstring(xml[xml.index("<XCUIElementTypeApplication"):])

    root, real_root = tree(source), tree(real)
    assert root.get("name") == real_root.get("name") == " "
    for ours, theirs in ((root, real_root), (root.find(".//XCUIElementTypeIcon[@name='Settings']"),
                                             real_root.find(".//XCUIElementTypeIcon[@name='Health']")),
                         (root.find(".//XCUIElementTypeOther[@name='Dock']"),
                          real_root.find(".//XCUIElementTypeOther[@name='Dock']"))):
        assert ours is not None and theirs is not None
        assert list(ours.attrib) == list(theirs.attrib)
    page = root.find(".//XCUIElementTypeIcon")  # the first icon element is the page, holding the apps' icons
    assert page is not None and page.get("name") is None
    page_apps = [icon.get("name") for icon in page]
    dock = root.find(".//XCUIElementTypeOther[@name='Dock']")
    assert dock is not None
    assert page_apps[:4] == ["Settings", "Notes", "Gmail", "Google Maps"]
    assert [icon.get("name") for icon in dock] == ["Phone", "Messages", "Chrome", "Camera"]
    assert [int(e.get("index", "-1")) for e in page] == list(range(len(page)))
    # the page not shown is listed too, not visible and without a frame, as the sample's second page
    pages = [e for e in root.iter("XCUIElementTypeIcon") if e.get("name") is None]
    real_pages = [e for e in real_root.iter("XCUIElementTypeIcon") if e.get("name") is None]
    assert len(pages) == 2 and pages[1].get("visible") == "false"
    assert list(pages[1].attrib.items()) == [(k, v) for k, v in real_pages[1].attrib.items() if k != "index"] + [
        ("index", "1")]
    assert list(pages[1][0].attrib) == list(real_pages[1][0].attrib)
    assert [icon.get("name") for icon in pages[1]] == ["Photos", "Contacts", "Calculator", "Files"]
    labels = [n.label for n in parse_uiautomator_dump(iphone.accessibility_xml() or "")]
    assert "Settings" in labels and "Photos" not in labels  # the agent's tree: what is on the screen
    # each icon covers its tile on the screen (points x 3 = pixels): tapping its middle opens the app
    settings = page[0]
    x = (int(settings.get("x", "0")) + int(settings.get("width", "0")) // 2) * 3
    y = (int(settings.get("y", "0")) + int(settings.get("height", "0")) // 2) * 3
    iphone.tap(x, y)
    assert front.phone.foreground == "com.android.settings" and iphone.current_app() == "com.apple.Preferences"


def test_every_hosted_app_is_named_by_its_ios_id_only(front: WdaFrontEnd, iphone: IosDevice) -> None:
    """Launch, the app in front, the page source and terminate speak iOS bundle ids: no
    Android package reaches a WDA client, and an Android package opens nothing."""
    packages = set(BUNDLES.values()) | {"com.android.launcher3"}
    leaks = re.compile("|".join(re.escape(p) for p in packages - {"com.zhiliaoapp.musically"}))
    for bundle, package in BUNDLES.items():
        if package not in front.phone.installed:
            continue
        iphone.launch_app(bundle)
        assert front.phone.foreground == package
        assert iphone.current_app() == bundle
        source = iphone.page_source()
        assert not leaks.search(source), (bundle, leaks.search(source))
        assert f'name={quoteattr(front.phone.apps[package].label)}' in source.splitlines()[1]
    with pytest.raises(AppNotFoundError):
        iphone.launch_app("com.android.settings")  # an Android package is no iOS app
    status, envelope = _raw(front, "POST", "/session", {"capabilities": {}})
    sid = cast(dict[str, Any], envelope["value"])["sessionId"]
    front.phone.launch("com.google.android.youtube")
    status, envelope = _raw(front, "POST", f"/session/{sid}/wda/apps/terminate", {"bundleId": "com.google.ios.youtube"})
    assert (status, envelope["value"]) == (200, True) and front.phone.foreground == "com.android.launcher3"
    assert _raw(front, "GET", "/wda/activeAppInfo")[1]["value"] == {
        "processArguments": {"env": {}, "args": []}, "name": "", "pid": 1, "bundleId": "com.apple.springboard"}


def test_the_backend_drives_the_simulated_iphone(front: WdaFrontEnd, iphone: IosDevice) -> None:
    info = iphone.screen_info()
    shot = iphone.screenshot()
    assert (info.width, info.height) == (shot.width, shot.height) == (front.phone.width, front.phone.height)
    assert iphone.client.active_app() == "com.apple.springboard"
    iphone.launch_app(iphone.resolve_app_label("Settings") or "")
    assert front.phone.foreground == "com.android.settings"
    assert iphone.client.active_app() == "com.apple.Preferences"
    # a tap in pixels lands where it was aimed: Wi-Fi opens its page
    left, top, right, bottom = next(e for e in front.phone.ground_truth() if e["text"] == "Wi-Fi")["box"]
    before = front.phone.state()["current"]
    iphone.tap((left + right) // 2, (top + bottom) // 2)
    assert front.phone.state()["current"] != before
    iphone.key("back")  # the edge swipe
    assert front.phone.state()["current"] == before
    iphone.key("home")
    assert front.phone.foreground == "com.android.launcher3"
    with pytest.raises(AppNotFoundError):
        iphone.launch_app("com.example.missing")
    assert iphone.alert_text() is None


def test_simphone_serve_ios_serves_wda(tmp_path: Path) -> None:
    """The command a user runs: `simphone serve --ios` prints NAME URL per phone."""
    process = subprocess.Popen(
        [sys.executable, "-m", "simphone", "serve", "--ios", "--wda-port", "0", "--scale", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        name, url, size, scale = process.stdout.readline().split()
        assert (name, size, scale) == ("simphone-1", "1080x2400", "scale=2")
        client = WdaClient(url, timeout_s=20)
        assert client.status().ready is True
        assert client.screen().scale == 2 and client.window_size() == (540, 1200)
        client.close()
    finally:
        process.terminate()
        assert process.wait(timeout=20) == 0


@pytest.mark.parametrize("name", ["Settings", "Réglages", "设置"])
def test_open_app_by_name_opens_settings_on_a_locked_simulated_iphone(name: str) -> None:
    """The agent's Open App operation itself: the phone is unlocked (WDA's /wda/unlock), the
    name resolves to Apple's bundle id, WDA activates it."""
    server = WdaFrontEnd(Phone(profile="pixel8-15-locked"), scale=3).start()
    client = WdaClient(server.url, timeout_s=20)
    try:
        iphone = IosDevice("sim-3", client)
        # the name resolves from the table, so nothing is located on the screen
        ctx = OperationContext(device=iphone, locator=cast(Locator, object()), screenshot=iphone.screenshot(),
                               settings=Settings())
        outcome = open_app_by_name(name, ctx)
        assert outcome.ok, outcome.feedback
        assert "com.apple.Preferences" in outcome.feedback
        assert server.phone.foreground == "com.android.settings" and not server.phone.keyguard_showing
        assert client.active_app() == "com.apple.Preferences"
    finally:
        client.close()
        server.stop()


def test_a_restarted_wda_forgets_the_session(front: WdaFrontEnd, iphone: IosDevice) -> None:
    iphone.key("home")
    first = front.session_id
    front.restart()
    iphone.key("home")
    assert front.session_id not in (None, first)


def test_lock_state_and_unlock() -> None:
    server = WdaFrontEnd(Phone(profile="pixel8-15-locked"), scale=3).start()  # starts behind its lock screen
    client = WdaClient(server.url, timeout_s=20)
    try:
        iphone = IosDevice("sim-2", client)
        assert iphone.screen_state().locked is True
        iphone.key("wakeup")  # WDA's /wda/unlock
        assert iphone.screen_state().locked is False and not server.phone.keyguard_showing
    finally:
        client.close()
        server.stop()


@pytest.mark.timeout(180)
def test_a_scripted_model_run_opens_settings_on_the_simulated_iphone(llm_server: Any, tmp_path: Path) -> None:
    """The same agent, the paper's dialect, an iPhone: the model asks for Open App (Settings),
    Stop; the run completes with Settings in front (the scripted model is the OpenAI-compatible
    server on loopback)."""
    llm_server.script([plan_reply("Open App (Settings)", thought="Open Settings."), plan_reply("Stop"), DONE])
    server = WdaFrontEnd(Phone(), scale=3).start()
    client = WdaClient(server.url, timeout_s=20)
    try:
        iphone = IosDevice("sim-4", client)
        settings = agent_settings(5037, "emulator-5554", tmp_path, llm_server)  # adb is not used: the device is given
        result = Agent(settings, device=iphone).run("Open Settings")
        assert result.status is RunStatus.COMPLETED, result.reason
        assert [s.operation_name for s in result.steps] == ["open_app", "stop"]
        assert server.phone.foreground == "com.android.settings"
        assert client.active_app() == "com.apple.Preferences"
        first = llm_server.chat_requests[0]
        assert first.image_sizes(), "the model saw the iPhone's screenshot"
    finally:
        client.close()
        server.stop()


def test_mobile_agent_run_serial_ios_drives_the_simulated_iphone(tmp_path: Path) -> None:
    """The command a user types: `mobile-agent run --serial ios:NAME` with `ios.devices`
    naming the WDA URL; a script opens Settings on the simulated iPhone."""
    server = WdaFrontEnd(Phone(), scale=3).start()
    try:
        script = tmp_path / "ops.txt"
        script.write_text("Open App (Settings)\nStop\n", encoding="utf-8")
        env = _no_adb(tmp_path, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-5": server.url}))
        proc = run_cli("--serial", "ios:sim-5", "--script", str(script), "-o", str(tmp_path / "runs"), env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "result: completed after 2 steps" in proc.stdout
        assert server.phone.foreground == "com.android.settings"
        unknown = run_cli("--serial", "ios:nope", "--script", str(script), env=env)
        assert unknown.returncode == 2 and "no iPhone named 'nope'; configured iPhones: ios:sim-5" in unknown.stderr
    finally:
        server.stop()
    gone = run_cli("--serial", "ios:sim-5", "--script", str(script), env=env)
    assert gone.returncode == 3 and "does not answer" in gone.stderr, gone.stderr


def test_a_run_on_an_iphone_locked_with_a_passcode_ends_saying_so(tmp_path: Path) -> None:
    """The keyguard step (``operations.keyguard``) on an iPhone, which has no MENU key: the swipe
    does not unlock a passcode, so the run (no person to ask) ends not completed saying the phone
    is locked, and nothing is opened behind the lock screen."""
    phone = Phone(profile="pixel8-15-locked")
    phone.set_lock_pin("1234")  # a credential: a swipe up asks for it
    server = WdaFrontEnd(phone, scale=3).start()
    try:
        script = tmp_path / "ops.txt"
        script.write_text("Open App (Settings)\nStop\n", encoding="utf-8")
        env = _no_adb(tmp_path, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-7": server.url}))
        proc = run_cli("--serial", "ios:sim-7", "--script", str(script), "-o", str(tmp_path / "runs"), env=env)
        assert "the phone is locked" in proc.stdout, proc.stdout + proc.stderr
        assert "not_completed" in proc.stdout and "menu" not in proc.stdout + proc.stderr
        assert phone.keyguard_showing and phone.foreground != "com.android.settings"
    finally:
        server.stop()


def test_doctor_checks_each_configured_iphone() -> None:
    server = WdaFrontEnd(Phone(), scale=3).start()
    try:
        settings = Settings(ios={"devices": {"sim-6": server.url, "gone": "http://127.0.0.1:9"}})
        gone, sim = ios_checks(settings)
        assert (sim.name, sim.status) == ("ios:sim-6", "ok")
        assert server.url in sim.detail and "screen 1080x2400 px" in sim.detail
        assert (gone.name, gone.status) == ("ios:gone", "fail") and "does not answer" in gone.detail
        assert gone.fix is not None and "docs/ios.md" in gone.fix
        assert ios_checks(Settings()) == []
    finally:
        server.stop()


@pytest.mark.timeout(180)
def test_the_app_policy_sees_the_app_in_front_on_an_iphone(llm_server: Any, tmp_path: Path) -> None:
    """``agent.safety.deny_apps`` with an Apple bundle id, in a planned ``mobile-agent run``: the
    model taps the home screen's Settings (no Open App for the policy to refuse beforehand), the
    step ends in a denied app, which the run reads from WDA's /wda/activeAppInfo: the step fails
    and the model is told to leave."""
    llm_server.script([plan_reply("Click text (Settings)"), plan_reply("Home"), plan_reply("Stop"), DONE])
    server = WdaFrontEnd(Phone(), scale=3).start()
    try:
        policy = tmp_path / "policy.toml"
        policy.write_text('deny_apps = ["com.apple.Preferences"]\n', encoding="utf-8")
        env = _no_adb(tmp_path, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-8": server.url}),
                      MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url, MOBILE_AGENT_PLANNER__API_KEY="k",
                      MOBILE_AGENT_PLANNER__MODEL="gpt-4o")
        proc = run_cli("--serial", "ios:sim-8", "-i", "Look at the home screen", "--policy", str(policy),
                       "-o", str(tmp_path / "runs"), "--json", env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        folder = Path(json.loads(proc.stdout)["trajectory_dir"])
        lines = [json.loads(line) for line in (folder / "trajectory.jsonl").read_text(encoding="utf-8").splitlines()]
        click = next(line for line in lines if line.get("action_text") == "Click text (Settings)")
        assert not click["ok"] and "the step ended in com.apple.Preferences" in click["feedback"], click
        told = llm_server.chat_requests[1].text()
        assert "the step ended in com.apple.Preferences, an app the policy denies" in told
        assert server.phone.foreground == "com.android.launcher3"  # the model left it (Home)
    finally:
        server.stop()


def test_a_typed_secret_hides_the_iphones_text_fields(front: WdaFrontEnd, iphone: IosDevice) -> None:
    """``agent.mask``: once a ``{{secret:…}}`` is about to be typed, the live view hides the
    phone's text fields, read from its accessibility tree: on an iPhone, WDA's
    ``XCUIElementTypeTextField`` / ``SecureTextField`` in the page source (``accessibility_xml``)."""
    from mobile_agent.agent.mask import SecretMask, password_boxes

    front.phone.launch("com.android.chrome")  # its address bar is a text field
    field = next(e for e in front.phone.ground_truth() if "text field" in e["description"])
    mask = SecretMask(["Quokka7731Zz"], lambda: cast(Any, object()))  # arming reads the tree, not the pixels
    mask.arm(iphone, None, front.phone.width)
    boxes = mask.live.boxes()
    assert any(all(abs(a - b) <= 3 for a, b in zip(box, field["box"], strict=True)) for box in boxes), (boxes, field)
    assert password_boxes(iphone) == []  # a text field, not a secure one


@pytest.mark.timeout(180)
def test_a_system_alerts_text_is_given_to_the_model(llm_server: Any, tmp_path: Path) -> None:
    """An alert over the app (WDA's /alert/text; on the simulated iPhone, the system's
    permission dialog): the model is told its text with the next screenshot, and answers it."""
    phone = Phone()
    maps = "com.google.android.apps.maps"
    for permission in ("android.permission.ACCESS_FINE_LOCATION", "android.permission.ACCESS_COARSE_LOCATION"):
        assert phone.change_permission("revoke", maps, permission) is None  # Maps asks when it comes to the front
    llm_server.script([plan_reply("Open App (Google Maps)"), plan_reply("Click text (While using the app)"),
                       plan_reply("Stop"), DONE])
    server = WdaFrontEnd(phone, scale=3).start()
    try:
        env = _no_adb(tmp_path, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-9": server.url}),
                      MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url, MOBILE_AGENT_PLANNER__API_KEY="k",
                      MOBILE_AGENT_PLANNER__MODEL="gpt-4o")
        proc = run_cli("--serial", "ios:sim-9", "-i", "Open Google Maps", "-o", str(tmp_path / "runs"), env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        said = "A system alert is open over the app: \u201cAllow Google Maps to access this device\u2019s location?\u201d"
        first, second = llm_server.chat_requests[0].text(), llm_server.chat_requests[1].text()
        assert said not in first and said in second
        assert phone.permission_request is None and not phone.state()["revoked"].get(maps)  # answered: allowed
    finally:
        server.stop()


def test_the_simulated_iphone_has_ios_bars_and_no_back_button(front: WdaFrontEnd, iphone: IosDevice) -> None:
    """iOS's look where it matters to the agent: no navigation bar with Back / Home / Recents
    (a tap where Android's Back button is does nothing), the home indicator instead; Back is
    the edge swipe."""
    iphone.launch_app("com.apple.Preferences")
    left, top, right, bottom = next(e for e in front.phone.ground_truth() if e["text"] == "Wi-Fi")["box"]
    iphone.tap((left + right) // 2, (top + bottom) // 2)
    page = [v["view"] for v in front.phone.state()["tasks"]["com.android.settings"]]
    assert len(page) == 2
    described = {e["description"] for e in front.phone.ground_truth()}
    assert not described & {"back", "home", "recent apps"}
    width, height = front.phone.width, front.phone.height
    iphone.tap(width // 2 - 290 * width // 1080, height - 30)  # Android's Back button would be here
    assert [v["view"] for v in front.phone.state()["tasks"]["com.android.settings"]] == page
    iphone.key("back")  # the edge swipe
    assert [v["view"] for v in front.phone.state()["tasks"]["com.android.settings"]] == page[:1]
