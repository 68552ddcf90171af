"""``"device": "any"`` on a service with an Android phone and an iPhone (docs/ios.md): a script or
a flow's ``do:`` step that opens an app by one platform's id (``Open App (com.android.settings)``,
``Open App (com.apple.Preferences)``: an iPhone opens a listed bundle id as such) runs on a phone
of that platform. The task's platform is set
from its script; a platform or phone that cannot run it, or a script naming both platforms' ids,
is a 422. An app name (``Open App (Settings)``) pins nothing: any phone, as before. The real app
on a real uvicorn, the simulated Android phone over the real adb server beside the simulated
iPhone's WDA (the fixtures of tests/service/test_any_platform_policy.py)."""

from __future__ import annotations

from typing import Any

import pytest

from mobile_agent.device.ios import WdaClient
from simphone.ios import WdaFrontEnd
from tests.server_fixtures import PhoneSerial

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ANDROID_SCRIPT = "Open App (com.android.settings)\nStop"
IOS_FLOW = "name: iPhone settings\nsteps:\n  - do: Open App (com.apple.Preferences)\n"


def _detail(response: Any) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    (detail,) = response.json()["detail"]
    return dict(detail)


def test_a_script_naming_an_android_package_runs_on_the_android_phone(service, sim_phone, front: WdaFrontEnd) -> None:
    live = service([sim_phone, PhoneSerial("ios:sim-1")], **{"ios.devices": {"sim-1": front.url}})
    listed = {d["platform"] for d in live.client.get("/v1/devices", params={"refresh": True}).json()["data"]}
    assert listed == {"android", "ios"}

    def post(**body: Any) -> Any:
        return live.client.post("/v1/tasks", json=body)

    # the Android phone is busy: the iPhone is the only free phone while the script waits
    busy = post(script="Wait (10)\nWait (10)\nWait (10)", device=sim_phone.serial)
    assert busy.status_code == 202, busy.text
    live.wait_task(busy.json()["id"], statuses={"running"}, timeout=60)
    submitted = post(script=ANDROID_SCRIPT)
    assert submitted.status_code == 202, submitted.text
    done = live.wait_task(submitted.json()["id"], timeout=180)  # (before: the iPhone at once, not_completed)
    assert done["device"] == sim_phone.serial and done["status"] == "completed", done
    assert submitted.json()["options"]["platform"] == "android"
    assert sim_phone.phone.state()["foreground"] == "com.android.settings"

    # an app policy in Android ids beside an Android script: the script says its platform
    assert post(script=ANDROID_SCRIPT, deny_apps=["com.android.chrome"]).json()["options"]["platform"] == "android"
    # a flow's do: step naming an iPhone's bundle id: the iPhone, which opens it by that id
    flow = post(flow=IOS_FLOW)
    assert flow.status_code == 202 and flow.json()["options"]["platform"] == "ios", flow.text
    done = live.wait_task(flow.json()["id"], timeout=180)
    assert done["device"] == "ios:sim-1" and done["status"] == "completed", done
    assert WdaClient(front.url, timeout_s=20).active_app() == "com.apple.Preferences"
    # an app name pins nothing
    named = post(script="Open App (Settings)\nStop")
    assert named.status_code == 202 and named.json()["options"].get("platform") is None, named.text
    assert live.client.post(f"/v1/tasks/{named.json()['id']}/cancel").status_code == 202

    conflict = _detail(post(script=ANDROID_SCRIPT, platform="ios"))
    assert conflict["loc"] == ["body", "platform"] and conflict["type"] == "platform_conflict", conflict
    assert "com.android.settings" in conflict["msg"]
    by_var = _detail(post(flow="name: v\nvars: {pkg: com.apple.Preferences}\nsteps:\n  - do: Open App ({{pkg}})\n",
                          platform="android"))  # the id in the flow's vars:, filled in as its run fills it
    assert by_var["type"] == "platform_conflict" and "com.apple.Preferences" in by_var["msg"], by_var
    on_iphone = _detail(post(script=ANDROID_SCRIPT, device="ios:sim-1"))
    assert on_iphone["loc"] == ["body", "device"] and on_iphone["type"] == "unroutable", on_iphone
    assert "com.android.settings" in on_iphone["msg"]
    mixed = _detail(post(script="Open App (com.android.settings)\nOpen App (com.apple.Preferences)"))
    assert mixed["loc"] == ["body", "script"] and mixed["type"] == "platforms_mixed", mixed
    assert "com.apple.Preferences" in mixed["msg"] and "com.android.settings" in mixed["msg"]
    farm_only = _detail(post(script=ANDROID_SCRIPT, requires=["platform=ios"]))  # the routing sees the script's platform
    assert farm_only["type"] in ("unroutable", "platform_conflict"), farm_only

    schedule = live.client.post("/v1/schedules", json={"name": "nightly", "every_s": 86400,
                                                       "task": {"script": ANDROID_SCRIPT}})
    assert schedule.status_code == 201, schedule.text
    assert schedule.json()["task"]["options"]["platform"] == "android"


def test_a_script_for_the_android_phone_on_a_server_of_iphones_only_is_refused(service, front: WdaFrontEnd) -> None:
    live = service([PhoneSerial("ios:sim-1")], **{"ios.devices": {"sim-1": front.url}})
    refused = _detail(live.client.post("/v1/tasks", json={"script": ANDROID_SCRIPT}))
    assert refused["loc"] == ["body", "platform"] and refused["type"] == "unroutable", refused
    assert "com.android.settings" in refused["msg"] and "android" in refused["msg"]


def test_a_flow_whose_extract_saves_over_a_vars_app_id_is_not_pinned_by_that_id(service, sim_phone) -> None:
    """``{{pkg}}`` after ``extract: {..., save_as: pkg}`` is the extract's answer when the flow
    runs: the ``vars:`` value (an iPhone's id here) says nothing of the phone, so an Android-only
    server takes the flow (before: 422, 'is not an iPhone' for an id the run never opens)."""
    live = service([sim_phone])
    flow = ("name: picked\nvars: {pkg: com.apple.Preferences}\nsteps:\n"
            "  - extract: {instruction: the app to open, fields: {id: str}, save_as: pkg}\n"
            "  - do: Open App ({{pkg}})\n")
    taken = live.client.post("/v1/tasks", json={"flow": flow})
    assert taken.status_code == 202, taken.text
    assert taken.json()["options"].get("platform") is None, taken.text
    assert live.client.post(f"/v1/tasks/{taken.json()['id']}/cancel").status_code == 202
    before = flow.replace("steps:\n", "steps:\n  - do: Open App ({{pkg}})\n")  # opened before the extract: pinned
    refused = _detail(live.client.post("/v1/tasks", json={"flow": before}))
    assert refused["loc"] == ["body", "platform"] and refused["type"] == "unroutable", refused
    assert "com.apple.Preferences" in refused["msg"]
