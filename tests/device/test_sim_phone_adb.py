"""The simulated phone's device model through the real adb server and adbutils:
what a client on the host sees and does, exactly as with a real phone."""

from __future__ import annotations

import io
import re

from PIL import Image


def test_adbutils_screenshot_window_size_and_rotation(sim_phone):
    d = sim_phone.device
    assert d.window_size() == (1080, 2400)
    assert d.rotation() == 0
    assert d.is_screen_on()
    image = d.screenshot(error_ok=False)
    assert image.size == (1080, 2400)
    assert image.tobytes() == Image.open(io.BytesIO(sim_phone.phone.screencap_png())).convert("RGB").tobytes()
    assert d.shell(["getprop", "ro.product.model"]) == "SimPhone 1"


def test_raw_framebuffer_over_exec_out(sim_phone, adb_server):
    result = adb_server.run("-s", sim_phone.serial, "exec-out", "screencap", text=False)
    raw = result.stdout
    assert raw[:16] == (1080).to_bytes(4, "little") + (2400).to_bytes(4, "little") + b"\x01\0\0\0\0\0\0\0"
    image = Image.frombytes("RGBA", (1080, 2400), raw[16:]).convert("RGB")
    assert image.tobytes() == sim_phone.device.screenshot(error_ok=False).tobytes()


def test_dark_mode_by_taps_over_adb(sim_phone):
    d = sim_phone.device
    before = d.screenshot(error_ok=False).getpixel((540, 1700))
    d.app_start("com.android.settings")
    assert d.app_current().package == "com.android.settings"
    sim_phone.tap_element("Display & brightness")
    sim_phone.tap_element("Dark mode")
    assert sim_phone.adb_state()["theme"] == "dark"
    d.keyevent("HOME")
    after = d.screenshot(error_ok=False).getpixel((540, 1700))
    assert sum(after) < 150 < sum(before)


def test_note_written_over_adb_and_saved(sim_phone):
    d = sim_phone.device
    d.app_start("com.google.android.keep", ".activities.BrowseActivity")
    sim_phone.tap_element("orange plus button: new note")
    d.send_keys("Meeting")
    d.shell(["input", "keyevent", "ENTER"])
    d.send_keys("at 10")
    d.keyevent("BACK")
    d.keyevent("BACK")
    notes = sim_phone.adb_state()["apps"]["com.google.android.keep"]["notes"]
    assert [(n["title"], n["body"]) for n in notes] == [("Meeting", "at 10")]


def test_swipe_scrolls_and_app_current(sim_phone):
    d = sim_phone.device
    d.shell(["am", "start", "-n", "com.android.settings/.Settings"])
    assert d.app_current().activity == ".Settings"
    d.swipe(540, 1900, 540, 500, 0.3)
    sim_phone.tap_element("About phone")
    assert sim_phone.adb_state()["tasks"]["com.android.settings"][-1]["page"] == "about"
    d.app_stop("com.android.settings")
    assert sim_phone.adb_state()["current"]["package"] == "com.android.launcher3"


def test_reset_and_clock_over_adb(sim_phone):
    d = sim_phone.device
    d.shell(["cmd", "simphone", "clock", "2030-12-24T20:15:00"])
    assert sim_phone.element("20:15")["box"][3] <= 110
    d.shell(["settings", "put", "global", "airplane_mode_on", "1"])
    assert sim_phone.adb_state()["airplane_mode"]
    assert d.shell(["cmd", "simphone", "reset", "--seed", "7"]) == "reset seed=7"
    s = sim_phone.adb_state()
    assert s["seed"] == 7 and not s["airplane_mode"] and s["clock"] == "2024-05-20T09:41:00"


def test_shell_strings_reach_the_phone_uninterpreted(sim_phone):
    d = sim_phone.device
    d.app_start("com.google.android.keep")
    sim_phone.tap_element("orange plus button: new note")
    d.shell(["input", "text", "a;echo pwned $(id) `x`|b"])
    title = sim_phone.adb_state()["tasks"]["com.google.android.keep"][-1]["fields"]["title"]
    assert title == "a;echo pwned $(id) `x`|b"


def test_label_to_package_over_adb(sim_phone):
    out = sim_phone.device.shell(["cmd", "package", "query-activities", "-a", "android.intent.action.MAIN",
                                  "-c", "android.intent.category.LAUNCHER"])
    labels = dict(re.findall(r"packageName=(\S+)\s+labelRes=\S+ nonLocalizedLabel=(.+?) icon=", out))
    assert labels["com.google.android.apps.maps"] == "Google Maps"
    assert labels["com.amazon.mp3"] == "Amazon Music"
