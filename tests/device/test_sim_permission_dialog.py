"""The runtime permission dialog of the simulated phone, through the real adb server and
adbutils as a host sees a real phone: `pm revoke` / `pm grant`, the system dialog Google
Maps raises when its location permission is revoked (texts of AOSP's PermissionController),
modal, answered by its buttons or BACK; the outcome read back with `dumpsys simphone`."""

from __future__ import annotations

import re

MAPS = "com.google.android.apps.maps"
FINE = "android.permission.ACCESS_FINE_LOCATION"


def _dump(sim_phone) -> str:
    return sim_phone.device.shell(["uiautomator", "dump", "/dev/tty"])


def test_a_revoked_permission_raises_the_system_dialog_over_the_app(sim_phone):
    d = sim_phone.device
    assert d.shell2(["pm", "revoke", MAPS, FINE]).returncode == 0
    d.app_start(MAPS)
    state = sim_phone.adb_state()
    assert state["permission_request"] == {"package": MAPS, "group": "location"}
    assert state["revoked"] == {MAPS: [FINE]}
    dump = _dump(sim_phone)
    assert 'package="com.google.android.permissioncontroller"' in dump
    texts = set(re.findall(r' text="([^"]+)"', dump))
    assert {"While using the app", "Only this time", "Don’t allow"} <= texts
    assert "Search here" not in texts  # the app under the dialog is not in its window

    d.click(300, 210)  # Maps' search field (a tap there focuses it), dimmed: the modal dialog takes the tap
    after = sim_phone.adb_state()
    assert after["permission_request"] is not None and after["focus"] is None and not after["keyboard_visible"]

    d.keyevent("BACK")  # BACK answers "no"
    denied = sim_phone.adb_state()
    assert denied["permission_request"] is None and denied["revoked"] == {MAPS: [FINE]}
    assert denied["current"]["package"] == MAPS

    d.keyevent("HOME")
    d.app_start(MAPS)  # still revoked: it asks again
    assert sim_phone.adb_state()["permission_request"] is not None
    sim_phone.tap_element("While using the app")
    granted = sim_phone.adb_state()
    assert granted["permission_request"] is None and granted["revoked"] == {MAPS: []}
    d.keyevent("HOME")
    d.app_start(MAPS)
    assert sim_phone.adb_state()["permission_request"] is None


def test_pm_grant_and_revoke_errors_as_a_real_phone(sim_phone):
    d = sim_phone.device
    unknown_package = d.shell2(["pm", "revoke", "com.nope", FINE])
    assert unknown_package.returncode == 255
    assert "java.lang.IllegalArgumentException: Unknown package: com.nope" in unknown_package.output
    unknown = d.shell2(["pm", "grant", MAPS, "android.permission.NOPE"])
    assert unknown.returncode == 255 and "Unknown permission: android.permission.NOPE" in unknown.output
    assert d.shell2(["pm", "revoke", MAPS, FINE]).returncode == 0
    assert d.shell2(["pm", "grant", MAPS, FINE]).returncode == 0
    d.app_start(MAPS)
    state = sim_phone.adb_state()
    assert state["permission_request"] is None and state["revoked"] == {MAPS: []}
