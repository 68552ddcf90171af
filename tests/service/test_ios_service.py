"""iPhones in the REST service (issue 33), through the surface a client touches: the real app
on a real uvicorn, the simulated Android phone over the real adb server beside the simulated
iPhone (``simphone.ios.WdaFrontEnd``, WebDriverAgent's HTTP API) configured in ``ios.devices``.
Tasks are scripts (no model), checked by the iPhone's own state (its foreground app, WDA's
active app)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from PIL import Image

from mobile_agent.device.ios import WdaClient
from simphone import Phone
from simphone.ios import WdaFrontEnd
from tests.agent_helpers import cli_env, run_cli
from tests.ports import free_port
from tests.server_fixtures import PhoneSerial, live_frames, serve_process

OPEN_SETTINGS = "Open App (Settings)\nStop"
LONG = "\n".join(["Home", "Wait (0.5)"] * 30)  # ~15 s on the phone, cancelled once looked at
ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}


def _start(service: Any, sim_phone: Any, front: WdaFrontEnd, **overrides: Any) -> Any:
    return service([sim_phone, PhoneSerial("ios:sim-1")], **{"ios.devices": {"sim-1": front.url}, **overrides})


def _submit(live: Any, headers: dict[str, str] | None = None, **body: Any) -> dict[str, Any]:
    created = live.client.post("/v1/tasks", json=body, headers=headers or {})
    assert created.status_code == 202, created.text
    task: dict[str, Any] = created.json()
    return task


def test_devices_list_the_iphone_with_its_platform(service, sim_phone, front: WdaFrontEnd) -> None:
    live = _start(service, sim_phone, front)
    listed = live.client.get("/v1/devices", params={"refresh": True})
    assert listed.status_code == 200, listed.text
    by_serial = {d["serial"]: d for d in listed.json()["data"]}
    assert by_serial[sim_phone.serial]["platform"] == "android"
    iphone = by_serial["ios:sim-1"]
    assert (iphone["platform"], iphone["state"], iphone["busy"]) == ("ios", "device", False), iphone
    assert (iphone["width"], iphone["height"]) == (1080, 2400)  # pixels: WDA's points times the scale
    assert iphone["screenshot_url"] == "/v1/devices/ios:sim-1/screenshot"
    only = live.client.get("/v1/devices", params={"platform": "ios"}).json()
    assert [d["serial"] for d in only["data"]] == ["ios:sim-1"] and only["count"] == 1
    android = live.client.get("/v1/devices", params={"platform": "android"}).json()["data"]
    assert sim_phone.serial in [d["serial"] for d in android] and "ios:sim-1" not in [d["serial"] for d in android]
    assert live.client.get("/v1/devices", params={"platform": "windows"}).status_code == 422
    one = live.client.get("/v1/devices/ios:sim-1")
    assert one.status_code == 200 and one.json()["platform"] == "ios"

    shot = live.client.get("/v1/devices/ios:sim-1/screenshot")
    assert shot.status_code == 200 and shot.headers["content-type"] == "image/png", shot.text
    served = np.asarray(Image.open(io.BytesIO(shot.content)).convert("RGB"))
    phone = np.asarray(Image.open(io.BytesIO(front.phone.screencap_png())).convert("RGB"))
    assert served.shape == phone.shape == (2400, 1080, 3)
    same = np.all(served == phone, axis=2).mean()
    assert same > 0.98, same  # the iPhone's own frame, over WDA (a ticking clock may differ)


@pytest.mark.timeout(240)
def test_a_script_task_opens_settings_on_the_iphone(service, sim_phone, front: WdaFrontEnd) -> None:
    live = _start(service, sim_phone, front)
    assert front.phone.foreground != "com.android.settings"
    android_app = sim_phone.phone.foreground
    # by platform: the one iPhone, never the Android phone
    task = _submit(live, script=OPEN_SETTINGS, platform="ios")
    assert task["device_request"] == "any" and task["options"]["platform"] == "ios"
    done = live.wait_task(task["id"], timeout=120)
    assert done["status"] == "completed", done
    assert done["device"] == "ios:sim-1"
    assert front.phone.foreground == "com.android.settings"  # the app the iPhone's Settings is drawn by
    client = WdaClient(front.url, timeout_s=20)
    try:
        assert client.active_app() == "com.apple.Preferences"  # WDA says Apple's Settings is in front
    finally:
        client.close()
    assert sim_phone.phone.foreground == android_app  # the Android phone was not driven

    # by serial
    client = WdaClient(front.url, timeout_s=20)
    try:
        client.press_button("home")
        assert client.active_app() != "com.apple.Preferences"
        task = _submit(live, script=OPEN_SETTINGS, device="ios:sim-1")
        done = live.wait_task(task["id"], timeout=120)
        assert (done["status"], done["device"]) == ("completed", "ios:sim-1"), done
        assert client.active_app() == "com.apple.Preferences"
    finally:
        client.close()

    # an Android task still goes to the Android phone
    task = _submit(live, script="Home\nStop", platform="android")
    done = live.wait_task(task["id"], timeout=120)
    assert (done["status"], done["device"]) == ("completed", sim_phone.serial), done


def test_platform_is_checked_at_submission(service, sim_phone, front: WdaFrontEnd) -> None:
    live = _start(service, sim_phone, front)
    unknown = live.client.post("/v1/tasks", json={"script": OPEN_SETTINGS, "platform": "windows"})
    assert unknown.status_code == 422 and "platform" in unknown.text, unknown.text
    wrong = live.client.post("/v1/tasks", json={"script": OPEN_SETTINGS, "platform": "ios", "device": sim_phone.serial})
    assert wrong.status_code == 422 and "is not an iPhone" in wrong.text, wrong.text
    none = live.client.post("/v1/tasks", json={"script": OPEN_SETTINGS, "device": "ios:nope"})
    assert none.status_code == 422, none.text


def test_a_service_with_no_iphone_refuses_a_task_for_one(service, sim_phone) -> None:
    live = service([sim_phone])
    refused = live.client.post("/v1/tasks", json={"script": OPEN_SETTINGS, "platform": "ios"})
    assert refused.status_code == 422 and "ios.devices" in refused.text, refused.text
    assert live.client.get("/v1/tasks").json()["count"] == 0  # nothing stored


@pytest.mark.timeout(240)
def test_one_iphone_one_run_owners_and_the_live_view(service, sim_phone, front: WdaFrontEnd, adb_server,
                                                     tmp_path: Path) -> None:
    live = _start(service, sim_phone, front, **{
        "server.api_token": "main-token",
        "server.tokens": {"alice": {"token": "alice-token", "role": "user"}, "bob": {"token": "bob-token", "role": "user"}}})
    first = _submit(live, ALICE, script=LONG, device="ios:sim-1")
    live.wait_task(first["id"], statuses={"running"}, timeout=60)
    second = _submit(live, BOB, script=OPEN_SETTINGS, platform="ios")

    # the phone is busy with alice's task; bob sees that, not which task, nor its screen
    as_bob = {d["serial"]: d for d in live.client.get("/v1/devices", headers=BOB).json()["data"]}["ios:sim-1"]
    assert as_bob["busy"] is True and as_bob["current_task"] is None
    assert live.client.get("/v1/devices/ios:sim-1/screenshot", headers=BOB).status_code == 409
    assert live.client.get(f"/v1/tasks/{first['id']}/live", headers=BOB).status_code == 404
    as_alice = {d["serial"]: d for d in live.client.get("/v1/devices", headers=ALICE).json()["data"]}["ios:sim-1"]
    assert as_alice["current_task"] == first["id"]

    # alice watches her iPhone run live: JPEG frames of the iPhone's screen
    content_type, frames = live_frames(live.url, first["id"], ALICE, 2)
    assert content_type.startswith("multipart/x-mixed-replace") and len(frames) == 2
    frame = Image.open(io.BytesIO(frames[0]))
    assert frame.format == "JPEG" and abs(frame.width / frame.height - 1080 / 2400) < 0.01
    assert live.client.get("/v1/devices/ios:sim-1/screenshot", headers=ALICE).status_code == 200

    time.sleep(1.5)  # several scheduler passes (refresh every 0.5 s): bob's task waits for the one iPhone
    assert live.client.get(f"/v1/tasks/{second['id']}", headers=BOB).json()["status"] == "queued"
    assert live.client.get(f"/v1/tasks/{first['id']}", headers=ALICE).json()["status"] == "running"

    # another interface on the same iPhone is refused while the task holds it (one phone, one run)
    script = tmp_path / "settings.txt"
    script.write_text(OPEN_SETTINGS + "\n", encoding="utf-8")
    env = cli_env(adb_server.port, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-1": front.url}))
    refused = run_cli("--serial", "ios:sim-1", "--script", str(script), "--output", str(tmp_path / "cli"), env=env)
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert f"phone ios:sim-1 is busy: REST task {first['id']} of alice holds it" in refused.stderr

    assert live.client.post(f"/v1/tasks/{first['id']}/cancel", headers=ALICE).status_code == 202
    assert live.wait_task(first["id"], timeout=60)["status"] == "cancelled"
    done = live.wait_task(second["id"], timeout=120)
    assert (done["status"], done["device"]) == ("completed", "ios:sim-1"), done
    assert front.phone.foreground == "com.android.settings"


def test_an_iphone_whose_wda_stops_answering_is_shown_offline(service, sim_phone) -> None:
    server = WdaFrontEnd(Phone(), scale=2).start()
    url = server.url
    live = service([sim_phone, PhoneSerial("ios:sim-2")], **{"ios.devices": {"sim-2": url}})
    listed = {d["serial"]: d for d in live.client.get("/v1/devices", params={"refresh": True}).json()["data"]}
    assert listed["ios:sim-2"]["state"] == "device"
    server.stop()
    listed = {d["serial"]: d for d in live.client.get("/v1/devices", params={"refresh": True}).json()["data"]}
    assert listed["ios:sim-2"]["state"] == "offline"
    shot = live.client.get("/v1/devices/ios:sim-2/screenshot")
    assert shot.status_code == 503, shot.text
    assert json.loads(shot.text)["detail"]["type"] in ("DeviceLostError", "DeviceOfflineError", "WdaError")
    assert httpx.get(f"{live.url}/v1/devices", timeout=10).status_code == 200


@pytest.mark.timeout(240)
def test_the_docs_example_simphone_serve_ios_and_mobile_agent_serve(tmp_path: Path) -> None:
    """As docs/ios.md has a user do it: `simphone serve --ios` prints the iPhone's WDA URL, the
    configuration file names it in ``[ios] devices``, `mobile-agent serve` runs (here on a machine
    with no adb at all), and the documented POST opens Settings on the iPhone."""
    simulated = subprocess.Popen([sys.executable, "-m", "simphone", "serve", "--ios", "--wda-port", "0", "--scale", "3"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    service = None
    try:
        assert simulated.stdout is not None
        name, url, _size, _scale = simulated.stdout.readline().split()
        config = tmp_path / "mobile-agent.toml"
        config.write_text(
            f'[adb]\nadb_path = "{tmp_path / "no-adb"}"\nserver_port = {free_port()}\n'
            f'[server]\ndatabase_url = "sqlite:///{tmp_path / "db.sqlite3"}"\ndevice_refresh_s = 0.5\n'
            f'[agent]\noutput_dir = "{tmp_path / "runs"}"\n'
            f'[ios]\ndevices = {{"{name}" = "{url}"}}\n', encoding="utf-8")
        port = free_port()
        service = serve_process(config, port, tmp_path / "serve.log")
        api = f"http://127.0.0.1:{port}"
        listed = httpx.get(f"{api}/v1/devices", params={"refresh": True}, timeout=30).json()["data"]
        assert [(d["serial"], d["platform"], d["state"]) for d in listed] == [(f"ios:{name}", "ios", "device")]
        created = httpx.post(f"{api}/v1/tasks", json={"script": "Open App (Settings)", "platform": "ios"}, timeout=30)
        assert created.status_code == 202, created.text
        task_id = created.json()["id"]
        deadline = time.monotonic() + 120
        while (task := httpx.get(f"{api}/v1/tasks/{task_id}", timeout=30).json())["status"] in ("queued", "running"):
            assert time.monotonic() < deadline, task
            time.sleep(0.2)
        assert (task["status"], task["device"]) == ("completed", f"ios:{name}"), task
        client = WdaClient(url, timeout_s=20)
        try:
            assert client.active_app() == "com.apple.Preferences"
        finally:
            client.close()
    finally:
        if service is not None:
            service.terminate()
            service.wait(30)
        simulated.terminate()
        simulated.wait(30)


def test_a_task_opens_an_app_the_table_does_not_know_by_its_home_screen_icon(
    service, sim_phone, front: WdaFrontEnd
) -> None:
    """Open App's step 2 through REST (issue 33): the Play Store, which no iOS table lists, is
    opened by its icon in WDA's page source (the step says so), with perception.accessibility off."""
    live = _start(service, sim_phone, front, **{"perception.accessibility": False})
    task = _submit(live, script="Open App (Play Store)\nStop", platform="ios")
    done = live.wait_task(task["id"], timeout=120)
    assert (done["status"], done["device"]) == ("completed", "ios:sim-1"), done
    assert front.phone.foreground == "com.android.vending"
    client = WdaClient(front.url, timeout_s=20)
    try:
        assert client.active_app() == "com.apple.AppStore"  # WDA names the store by its iOS id
    finally:
        client.close()
    finished: list[dict[str, Any]] = []
    with live.client.stream("GET", f"/v1/tasks/{task['id']}/events", timeout=60) as response:
        kind = ""
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and kind == "step_finished":
                finished.append(json.loads(line.split(":", 1)[1])["data"])
            elif line.startswith("data:") and kind == "end":
                break
    assert finished[0]["action"] == "Open App (Play Store)" and finished[0]["ok"], finished
    assert "icon on the home screen" in finished[0]["feedback"], finished[0]
