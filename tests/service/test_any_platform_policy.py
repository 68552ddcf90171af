"""``"device": "any"`` on a service with Android phones and iPhones (docs/ios.md): a task whose app
policy (``deny_apps`` / ``allow_apps``) names apps by one platform's ids must say which platform
it is for. On the other platform every id differs (Settings is ``com.android.settings`` on
Android, ``com.apple.Preferences`` on an iPhone), so the policy would match nothing there: a deny
list silently void. The real app on a real uvicorn, the simulated Android phone over the real
adb server beside the simulated iPhone's WDA."""

from __future__ import annotations

from typing import Any

import pytest

from simphone.ios import WdaFrontEnd
from tests.server_fixtures import PhoneSerial

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def test_any_phone_with_an_app_policy_must_name_its_platform(service, sim_phone, front: WdaFrontEnd) -> None:
    live = service([sim_phone, PhoneSerial("ios:sim-1")], **{"ios.devices": {"sim-1": front.url}})
    listed = {d["platform"] for d in live.client.get("/v1/devices", params={"refresh": True}).json()["data"]}
    assert listed == {"android", "ios"}

    def post(**body: Any) -> Any:
        return live.client.post("/v1/tasks", json={"script": "Home", **body})

    for policy in ({"deny_apps": ["com.android.settings"]}, {"allow_apps": ["com.android.chrome"]}):
        refused = post(**policy)
        assert refused.status_code == 422, refused.text
        (detail,) = refused.json()["detail"]
        assert detail["loc"] == ["body", "platform"] and detail["type"] == "platform_needed", detail
        assert "android" in detail["msg"] and "ios" in detail["msg"]
        assert post(device="any", **policy).status_code == 422  # "any" said outright is the same
        # the platform given, or a phone named, or a requirement that pins it: accepted
        assert post(platform="android", **policy).status_code == 202
        assert post(device="ios:sim-1", **policy).status_code == 202
        for requires in (["platform=ios"], ["android>=10"]):  # a farm's routing pins it (here: "needs the farm")
            pinned = post(requires=requires, **policy)
            assert pinned.status_code == 422 and pinned.json()["detail"][0]["type"] == "unroutable", pinned.text
    assert post().status_code == 202  # no app policy: any phone of either platform, as documented
    schedule = live.client.post("/v1/schedules", json={
        "name": "nightly", "every_s": 86400, "task": {"script": "Home", "deny_apps": ["com.android.settings"]}})
    assert schedule.status_code == 422 and "platform_needed" in schedule.text, schedule.text
