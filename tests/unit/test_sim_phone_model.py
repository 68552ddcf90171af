"""The simulated phone's device model, driven in-process through `Phone.run(argv)`:
every input command changes state as on Android, screens decode and are deterministic,
ground truth matches the pixels, reset and clock."""

from __future__ import annotations

import io
import json
import re
import struct
from datetime import datetime

import pytest
from PIL import Image

from simphone import Phone


def element(phone: Phone, text: str) -> dict:
    """The visible element whose text or description is `text` (exactly)."""
    for el in phone.ground_truth():
        if text in (el["text"], el["description"]):
            return el
    raise AssertionError(f"{text!r} not on screen: {[e['text'] or e['description'] for e in phone.ground_truth()]}")


def visible(phone: Phone, text: str) -> bool:
    return any(text in (el["text"], el["description"]) for el in phone.ground_truth())


def tap(phone: Phone, text: str) -> None:
    left, top, right, bottom = element(phone, text)["box"]
    r = phone.run(["input", "tap", str((left + right) // 2), str((top + bottom) // 2)])
    assert r.exit_code == 0, r


def sh(phone: Phone, *argv: str) -> str:
    r = phone.run(list(argv))
    assert r.exit_code == 0, r
    return r.stdout.decode()


def decode_png(phone: Phone) -> Image.Image:
    return Image.open(io.BytesIO(phone.run(["screencap", "-p"]).stdout)).convert("RGB")


@pytest.fixture
def phone() -> Phone:
    return Phone()


# -- screens ---------------------------------------------------------------------------------
def test_png_and_raw_decode_to_the_screen_size_and_agree(phone: Phone) -> None:
    png = decode_png(phone)
    assert png.size == (1080, 2400)
    raw = phone.run(["screencap"]).stdout
    width, height, fmt, colorspace = struct.unpack("<IIII", raw[:16])
    assert (width, height, fmt, colorspace) == (1080, 2400, 1, 0)
    assert len(raw) == 16 + 1080 * 2400 * 4
    pixels = Image.frombytes("RGBA", (width, height), raw[16:]).convert("RGB")
    assert pixels.tobytes() == png.tobytes()


def test_other_screen_sizes_render_at_that_size() -> None:
    phone = Phone(width=720, height=1600)
    assert sh(phone, "wm", "size") == "Physical size: 720x1600\n"
    assert decode_png(phone).size == (720, 1600)
    tap(phone, "Settings")
    assert phone.state()["current"]["package"] == "com.android.settings"


def test_screens_are_deterministic_per_seed() -> None:
    a, b = Phone(seed=3), Phone(seed=3)
    for p in (a, b):
        tap(p, "Weather")
    assert a.run(["screencap", "-p"]).stdout == b.run(["screencap", "-p"]).stdout
    c = Phone(seed=4)
    tap(c, "Weather")
    assert c.run(["screencap", "-p"]).stdout != a.run(["screencap", "-p"]).stdout


def test_an_unchanged_screen_is_not_rendered_again(phone: Phone) -> None:
    first = phone.screencap_png()
    assert phone.screencap_png() is first  # the cached bytes themselves
    phone.run(["getprop", "ro.product.model"])
    assert phone.screencap_png() is first
    tap(phone, "Settings")
    assert phone.screencap_png() != first


def test_ground_truth_boxes_cover_drawn_pixels(phone: Phone) -> None:
    image = decode_png(phone)
    background = image.getpixel((540, 1700))  # empty home-screen area
    texts = [el for el in phone.ground_truth() if el["kind"] in ("text", "icon")]
    assert len(texts) > 20
    for el in texts:
        left, top, right, bottom = el["box"]
        assert 0 <= left < right <= 1080 and 0 <= top < bottom <= 2400
        crop = image.crop((left, top, right, bottom))
        colors = {c for _, c in crop.getcolors(maxcolors=1 << 20)}
        assert colors - {background}, el  # something other than the background is drawn there
    labels = {el["text"] for el in texts}
    assert {"Settings", "Notes", "Gmail", "Google Maps", "Calendar", "Weather"} <= labels
    icon = element(phone, "Settings app icon")
    assert icon["clickable"] and icon["kind"] == "icon"


def test_icons_are_described_by_colour_and_glyph(phone: Phone) -> None:
    tap(phone, "Notes")
    assert element(phone, "orange plus button: new note")["clickable"]
    tap(phone, "orange plus button: new note")
    assert element(phone, "save")["kind"] == "icon"
    descriptions = {el["description"] for el in phone.ground_truth()}
    assert {"back", "home", "recent apps", "battery", "wifi"} <= descriptions


def test_cjk_text_is_drawn_with_real_glyphs() -> None:
    from simphone.ui.fonts import describe_fonts

    if describe_fonts()["cjk"] == "(Pillow built-in)":
        pytest.skip("no CJK font installed (make fonts)")
    phone = Phone(adb_keyboard=True)
    sh(phone, "ime", "set", "com.android.adbkeyboard/.AdbIME")
    tap(phone, "Notes")
    tap(phone, "orange plus button: new note")
    sh(phone, "am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", "购物清单")
    left, top, right, bottom = next(el["box"] for el in phone.ground_truth()
                                    if el["kind"] == "text" and el["text"] == "购物清单")
    image = decode_png(phone)
    step = (right - left) // 4
    glyphs = [image.crop((left + i * step, top, left + (i + 1) * step, bottom)).tobytes() for i in range(4)]
    assert len(set(glyphs)) == 4  # four different glyphs, not four identical "missing glyph" boxes


# -- unknown / basic commands --------------------------------------------------------------------
def test_unknown_command_exits_127(phone: Phone) -> None:
    r = phone.run(["frobnicate", "x"])
    assert r.exit_code == 127 and r.stderr == b"/system/bin/sh: frobnicate: not found\n"


def test_basic_system_commands(phone: Phone) -> None:
    assert sh(phone, "echo", "a", "b") == "a b\n"
    assert sh(phone, "getprop", "ro.product.model") == "SimPhone 1\n"
    assert "[ro.build.version.sdk]: [33]" in sh(phone, "getprop")
    assert sh(phone, "wm", "density") == "Physical density: 420\n"
    assert "mScreenState=ON" in sh(phone, "dumpsys", "display")
    assert "orientation=0" in sh(phone, "dumpsys", "display")
    assert "mWakefulness=Awake" in sh(phone, "dumpsys", "power")
    assert re.search(r"level: 85", sh(phone, "dumpsys", "battery"))
    assert phone.run(["input", "tap", "x", "1"]).exit_code != 0
    assert phone.run(["input", "keyevent", "NO_SUCH_KEY"]).exit_code != 0


# -- settings by touch -------------------------------------------------------------------------
def test_dark_mode_by_tapping_what_the_screen_shows(phone: Phone) -> None:
    light_bg = decode_png(phone).getpixel((540, 1700))
    tap(phone, "Settings")
    tap(phone, "Display & brightness")
    assert phone.state()["current"]["activity"] == ".DisplaySettings"
    assert element(phone, "Light mode option, selected")
    tap(phone, "Dark mode")
    state = phone.state()
    assert state["theme"] == "dark" and state["settings"]["secure"]["ui_night_mode"] == "2"
    assert sh(phone, "settings", "get", "secure", "ui_night_mode") == "2\n"
    assert element(phone, "Dark mode option, selected")
    sh(phone, "input", "keyevent", "HOME")
    dark_bg = decode_png(phone).getpixel((540, 1700))
    assert sum(dark_bg) < 150 < sum(light_bg)


def test_airplane_mode_switch_turns_radios_off_and_back(phone: Phone) -> None:
    tap(phone, "Settings")
    assert element(phone, "Airplane mode switch, off")["clickable"]
    tap(phone, "Airplane mode switch, off")
    state = phone.state()
    assert state["airplane_mode"] and not state["wifi"]
    assert visible(phone, "airplane mode") and not visible(phone, "wifi")  # status bar
    assert sh(phone, "settings", "get", "global", "airplane_mode_on") == "1\n"
    tap(phone, "Airplane mode switch, on")
    state = phone.state()
    assert not state["airplane_mode"] and state["wifi"]


def test_network_speed_toggle_shows_speed_in_status_bar(phone: Phone) -> None:
    tap(phone, "Settings")
    tap(phone, "Notifications & status bar")
    assert not any(re.fullmatch(r"\d+\.\d KB/s", el["text"]) for el in phone.ground_truth())
    tap(phone, "Real-time network speed switch, off")
    assert phone.state()["network_speed_shown"]
    speeds = [el for el in phone.ground_truth() if re.fullmatch(r"\d+\.\d KB/s", el["text"])]
    assert len(speeds) == 1 and speeds[0]["box"][3] <= 110  # in the status bar


def test_wifi_and_bluetooth_pages(phone: Phone) -> None:
    tap(phone, "Settings")
    tap(phone, "Wi-Fi")
    assert visible(phone, "HomeNet-5G")
    tap(phone, "Wi-Fi switch, on")
    assert not phone.state()["wifi"] and not visible(phone, "HomeNet-5G")
    sh(phone, "input", "keyevent", "BACK")
    tap(phone, "Bluetooth")
    tap(phone, "Bluetooth switch, off")
    assert phone.state()["bluetooth"]
    assert visible(phone, "bluetooth")  # status-bar icon


# -- navigation ----------------------------------------------------------------------------------
def test_back_stack_and_home(phone: Phone) -> None:
    tap(phone, "Settings")
    tap(phone, "Wi-Fi")
    assert [v["view"] for v in phone.state()["tasks"]["com.android.settings"]] == ["main", "page"]
    assert "com.android.settings/.wifi.WifiSettings" in sh(phone, "dumpsys", "window")
    tap(phone, "back arrow")
    assert phone.state()["current"]["view"] == "main"
    sh(phone, "input", "keyevent", "4")
    assert phone.state()["current"]["package"] == "com.android.launcher3"
    tap(phone, "Settings")
    tap(phone, "Bluetooth")
    sh(phone, "input", "keyevent", "KEYCODE_HOME")
    assert phone.state()["current"]["package"] == "com.android.launcher3"
    tap(phone, "Settings")  # the task comes back as it was left
    assert phone.state()["current"]["view"] == "page"
    tap(phone, "back")  # navigation bar
    assert phone.state()["current"]["view"] == "main"


def test_recents_switches_between_apps(phone: Phone) -> None:
    tap(phone, "Settings")
    sh(phone, "input", "keyevent", "HOME")
    tap(phone, "Calendar")
    sh(phone, "input", "keyevent", "APP_SWITCH")
    assert phone.state()["current"]["view"] == "recents"
    tap(phone, "Settings")
    assert phone.state()["current"]["package"] == "com.android.settings"
    tap(phone, "recent apps")
    tap(phone, "Clear all")
    assert phone.state()["recents"] == [] and phone.state()["current"]["view"] == "home"


def test_settings_list_scrolls_with_swipes(phone: Phone) -> None:
    tap(phone, "Settings")
    assert not visible(phone, "About phone")
    sh(phone, "input", "swipe", "540", "1900", "540", "500", "300")
    assert visible(phone, "About phone") and not visible(phone, "Wi-Fi")
    for _ in range(3):  # clamped at the end
        sh(phone, "input", "swipe", "540", "1900", "540", "500", "300")
    about = element(phone, "About phone")["box"]
    assert about[3] < 2400 - 130
    tap(phone, "About phone")
    assert visible(phone, "SimPhone 1")
    sh(phone, "input", "keyevent", "BACK")
    sh(phone, "input", "swipe", "540", "500", "540", "2100", "300")
    sh(phone, "input", "swipe", "540", "500", "540", "2100", "300")
    assert visible(phone, "Wi-Fi")


def test_launcher_pages_swipe_and_dock(phone: Phone) -> None:
    assert visible(phone, "page 1 of 2") and not visible(phone, "Contacts")
    sh(phone, "input", "swipe", "900", "1200", "150", "1200", "200")
    assert visible(phone, "page 2 of 2") and visible(phone, "Contacts")
    sh(phone, "input", "swipe", "150", "1200", "900", "1200", "200")
    assert visible(phone, "page 1 of 2")
    tap(phone, "Chrome app icon")  # in the dock
    assert phone.state()["current"]["package"] == "com.android.chrome"


def test_apps_not_written_yet_open_a_placeholder_with_their_name(phone: Phone) -> None:
    from simphone.apps import APPS
    from simphone.apps.builtin import CATALOGUE, PlaceholderApp

    waiting = [package for package, *_ in CATALOGUE if isinstance(APPS[package], PlaceholderApp)]
    if not waiting:
        pytest.skip("every catalogue app has been written")
    package = waiting[0]
    sh(phone, "monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "1")
    assert phone.state()["current"]["package"] == package
    assert visible(phone, APPS[package].label) and visible(phone, "Nothing here yet")


def test_long_press_is_a_still_swipe_of_500ms(phone: Phone) -> None:
    sh(phone, "input", "swipe", "540", "1700", "540", "1700", "800")  # empty space: nothing happens
    assert phone.state()["current"]["view"] == "home"
    left, top, right, bottom = element(phone, "Settings app icon")["box"]
    sh(phone, "input", "swipe", str((left + right) // 2), str((top + bottom) // 2),
       str((left + right) // 2), str((top + bottom) // 2), "600")
    assert phone.state()["current"]["package"] == "com.android.settings"


# -- notes and text input ----------------------------------------------------------------------------
def test_note_written_with_input_text_and_saved_with_check_mark(phone: Phone) -> None:
    tap(phone, "Notes")
    assert visible(phone, "No notes yet")
    tap(phone, "orange plus button: new note")
    assert phone.state()["keyboard_visible"] and phone.state()["focus"] == "title"
    assert visible(phone, "q")
    sh(phone, "input", "text", "Groceries")
    tap(phone, "Note text field")
    sh(phone, "input", "text", "eggs%sand%smilk")
    sh(phone, "input", "keyevent", "ENTER")
    sh(phone, "input", "text", "bread")
    tap(phone, "save")
    notes = phone.state()["apps"]["com.google.android.keep"]["notes"]
    assert [(n["title"], n["body"]) for n in notes] == [("Groceries", "eggs and milk\nbread")]
    assert notes[0]["created"] == "2024-05-20T09:41:00"
    assert phone.state()["current"]["view"] == "main" and not phone.state()["keyboard_visible"]
    assert visible(phone, "Groceries")


def test_back_saves_and_empty_notes_are_dropped(phone: Phone) -> None:
    tap(phone, "Notes")
    tap(phone, "orange plus button: new note")
    sh(phone, "input", "keyevent", "BACK")  # hides the keyboard
    assert not phone.state()["keyboard_visible"] and phone.state()["current"]["view"] == "edit"
    sh(phone, "input", "keyevent", "BACK")  # leaves: nothing typed, nothing kept
    assert phone.state()["apps"]["com.google.android.keep"]["notes"] == []
    tap(phone, "orange plus button: new note")
    sh(phone, "input", "text", "Call mom")
    sh(phone, "input", "keyevent", "BACK", "BACK")
    assert [n["title"] for n in phone.state()["apps"]["com.google.android.keep"]["notes"]] == ["Call mom"]
    tap(phone, "Call mom")  # edit it
    tap(phone, "Title text field")
    for _ in range(3):
        sh(phone, "input", "keyevent", "DEL")
    sh(phone, "input", "text", "dad")
    tap(phone, "save")
    assert [n["title"] for n in phone.state()["apps"]["com.google.android.keep"]["notes"]] == ["Call dad"]
    tap(phone, "Call dad")
    tap(phone, "delete note")
    assert phone.state()["apps"]["com.google.android.keep"]["notes"] == []


def test_on_screen_keyboard_keys_type(phone: Phone) -> None:
    tap(phone, "Notes")
    tap(phone, "orange plus button: new note")
    for key in "hi":
        tap(phone, key)
    tap(phone, "space")
    tap(phone, "x")
    tap(phone, "delete key")
    assert phone.state()["tasks"]["com.google.android.keep"][-1]["fields"]["title"] == "hi "
    tap(phone, "enter")
    assert phone.state()["focus"] == "body"


def test_input_text_with_non_ascii_fails_like_android(phone: Phone) -> None:
    tap(phone, "Notes")
    tap(phone, "orange plus button: new note")
    r = phone.run(["input", "text", "héllo"])
    assert r.exit_code != 0 and b"Exception" in r.stderr
    assert phone.state()["tasks"]["com.google.android.keep"][-1]["fields"]["title"] == ""


def test_text_is_never_shell_interpreted(phone: Phone) -> None:
    tap(phone, "Notes")
    tap(phone, "orange plus button: new note")
    sh(phone, "input", "text", "a;b&&c$(x)`y`'\"")
    assert phone.state()["tasks"]["com.google.android.keep"][-1]["fields"]["title"] == "a;b&&c$(x)`y`'\""


def test_input_text_types_its_first_argument_only_like_android(phone: Phone) -> None:
    # `adb shell input text hello world` (unquoted) types "hello" on a real phone.
    tap(phone, "Notes")
    tap(phone, "orange plus button: new note")
    sh(phone, "input", "text", "hello", "world")
    assert phone.state()["tasks"]["com.google.android.keep"][-1]["fields"]["title"] == "hello"


def test_bad_numbers_and_keycodes_are_usage_errors(phone: Phone) -> None:
    for argv in (["input", "tap", "inf", "5"], ["input", "swipe", "1", "nan", "3", "4"], ["input", "keyevent", "\u00b2"]):
        r = phone.run(argv)
        assert r.exit_code != 0 and r.stderr.startswith(b"Error:"), (argv, r)

def test_adb_keyboard_broadcasts_only_when_it_is_the_current_ime() -> None:
    phone = Phone(adb_keyboard=True)
    assert "com.android.adbkeyboard/.AdbIME" in sh(phone, "ime", "list", "-s")
    tap(phone, "Notes")
    tap(phone, "orange plus button: new note")
    sh(phone, "am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", "ignored")
    assert phone.state()["tasks"]["com.google.android.keep"][-1]["fields"]["title"] == ""
    assert sh(phone, "ime", "set", "com.android.adbkeyboard/.AdbIME") == \
        "Input method com.android.adbkeyboard/.AdbIME selected for user #0\n"
    assert visible(phone, "ADB Keyboard {ON}")
    out = sh(phone, "am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", "你好 world")
    assert "Broadcast completed: result=0" in out
    title = lambda: phone.state()["tasks"]["com.google.android.keep"][-1]["fields"]["title"]  # noqa: E731
    assert title() == "你好 world"
    sh(phone, "am", "broadcast", "-a", "ADB_CLEAR_TEXT")
    assert title() == ""
    import base64

    sh(phone, "am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", base64.b64encode("café ☕".encode()).decode())
    assert title() == "café ☕"


def test_phone_without_adb_keyboard() -> None:
    phone = Phone()
    assert "adbkeyboard" not in sh(phone, "ime", "list", "-a", "-s")
    assert "adbkeyboard" not in sh(phone, "pm", "list", "packages")
    r = phone.run(["ime", "set", "com.android.adbkeyboard/.AdbIME"])
    assert r.exit_code != 0 and b"Unknown input method" in r.stderr
    assert sh(phone, "settings", "get", "secure", "default_input_method").startswith("com.google.android.inputmethod")


# -- activities and packages -----------------------------------------------------------------------
def test_am_start_monkey_force_stop_and_focus(phone: Phone) -> None:
    out = sh(phone, "am", "start", "-n", "com.android.settings/.Settings")
    assert out.startswith("Starting: Intent { cmp=com.android.settings/.Settings }")
    assert "mCurrentFocus=Window{" in sh(phone, "dumpsys", "window")
    assert re.search(r"mCurrentFocus=Window\{\w+ u0 com\.android\.settings/\.Settings\}", sh(phone, "dumpsys", "window"))
    assert "mResumedActivity: ActivityRecord{" in sh(phone, "dumpsys", "activity", "activities")
    sh(phone, "monkey", "-p", "com.google.android.calendar", "-c", "android.intent.category.LAUNCHER", "1")
    assert phone.state()["current"]["package"] == "com.google.android.calendar"
    sh(phone, "am", "force-stop", "com.google.android.calendar")
    assert phone.state()["current"]["package"] == "com.android.launcher3"
    assert "com.google.android.calendar" not in phone.state()["tasks"]
    r = phone.run(["monkey", "-p", "com.nope", "-c", "android.intent.category.LAUNCHER", "1"])
    assert r.exit_code != 0 and b"No activities found" in r.stderr
    r = phone.run(["am", "start", "-n", "com.nope/.Main"])
    assert r.exit_code != 0 and b"does not exist" in r.stderr
    sh(phone, "am", "start", "-a", "android.intent.action.VIEW", "-d", "https://example.com")
    assert phone.state()["current"]["package"] == "com.android.chrome"  # the browser opens web links
    sh(phone, "am", "start", "-a", "android.settings.WIFI_SETTINGS")
    assert phone.state()["current"]["activity"] == ".wifi.WifiSettings"


def test_package_queries_name_every_launcher_app(phone: Phone) -> None:
    packages = sh(phone, "pm", "list", "packages").splitlines()
    assert "package:com.android.settings" in packages and "package:com.zhiliaoapp.musically" in packages
    out = sh(phone, "cmd", "package", "query-activities", "-a", "android.intent.action.MAIN", "-c",
             "android.intent.category.LAUNCHER")
    labels = dict(re.findall(r"packageName=(\S+)\n\s+labelRes=\S+ nonLocalizedLabel=(.+?) icon=", out))
    assert labels["com.android.settings"] == "Settings"
    assert labels["com.google.android.keep"] == "Notes"
    assert labels["com.alibaba.intl.android.apps.poseidon"] == "Alibaba.com"
    assert len(labels) == 20
    brief = sh(phone, "cmd", "package", "resolve-activity", "--brief", "com.google.android.youtube")
    assert brief.splitlines()[-1] == "com.google.android.youtube/.HomeActivity"
    assert "No activity found" in sh(phone, "cmd", "package", "resolve-activity", "--brief", "com.nope")


def test_settings_command(phone: Phone) -> None:
    assert sh(phone, "settings", "get", "global", "wifi_on") == "1\n"
    assert sh(phone, "settings", "get", "system", "nope") == "null\n"
    sh(phone, "settings", "put", "system", "status_bar_network_speed", "1")
    assert phone.state()["network_speed_shown"]
    assert phone.run(["settings", "get", "bogus", "x"]).exit_code != 0
    # `--user ID` is dropped wherever it stands; a value that happens to be "current" is kept
    sh(phone, "settings", "--user", "current", "put", "system", "my_key", "current")
    assert sh(phone, "settings", "get", "--user", "0", "system", "my_key") == "current\n"


# -- state, reset, clock ---------------------------------------------------------------------------
def test_state_over_dumpsys_and_reset(phone: Phone) -> None:
    tap(phone, "Notes")
    tap(phone, "orange plus button: new note")
    sh(phone, "input", "text", "x")
    sh(phone, "input", "keyevent", "BACK", "BACK")
    state = json.loads(sh(phone, "dumpsys", "simphone"))
    assert state == json.loads(json.dumps(phone.state()))
    assert len(state["apps"]["com.google.android.keep"]["notes"]) == 1
    fresh = Phone().state()
    assert sh(phone, "cmd", "simphone", "reset") == "reset seed=0\n"
    assert phone.state() == fresh
    sh(phone, "cmd", "simphone", "reset", "--seed", "5")
    assert phone.state()["seed"] == 5 and phone.state() == Phone(seed=5).state()
    assert phone.state()["apps"]["com.weather.Weather"] != fresh["apps"]["com.weather.Weather"]
    assert phone.run(["cmd", "simphone", "reset", "--seed", "x"]).exit_code != 0


def test_clock_shows_in_status_bar_and_calendar(phone: Phone) -> None:
    assert sh(phone, "cmd", "simphone", "clock", "2025-01-02T18:05:00") == "2025-01-02T18:05:00\n"
    assert visible(phone, "18:05") and visible(phone, "Thursday, January 2")
    tap(phone, "Calendar")
    assert visible(phone, "January 2, 2025") and visible(phone, "Thursday")
    phone.set_clock(datetime(2024, 2, 29, 7, 0))
    assert visible(phone, "February 29, 2024") and visible(phone, "07:00")
    assert phone.run(["cmd", "simphone", "clock", "yesterday"]).exit_code != 0


def test_weather_forecast_has_five_days(phone: Phone) -> None:
    tap(phone, "Weather")
    assert visible(phone, "Hangzhou") and visible(phone, "5-day forecast")
    temps = [el["text"] for el in phone.ground_truth() if re.fullmatch(r"\d+° / \d+°", el["text"])]
    assert len(temps) == 5


def test_ground_truth_over_cmd(phone: Phone) -> None:
    items = json.loads(sh(phone, "cmd", "simphone", "ground-truth"))
    assert items == phone.ground_truth()
    assert {"kind", "text", "description", "box", "clickable"} == set(items[0])


def test_bad_construction_is_a_clear_error() -> None:
    with pytest.raises(ValueError):
        Phone(width=10, height=10)
    with pytest.raises(TypeError):
        Phone().reset("3")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Phone().set_clock("2024-01-01")  # type: ignore[arg-type]


def test_installed_apps_appear_on_the_launcher() -> None:
    from simphone.apps import APPS, App, AppContext, register
    from simphone.ui.canvas import Canvas
    from simphone.ui.widgets import title_bar

    @register
    class Compass(App):
        package = "com.example.compass"
        label = "Compass"
        icon = "location"
        color = "red"
        preinstalled = False

        def initial_data(self, seed: int) -> dict:
            return {"heading": seed * 10}

        def render(self, ctx: AppContext, c: Canvas) -> None:
            c.text((100, ctx.content[1] + 300), f"Heading {ctx.data['heading']}")
            title_bar(c, ctx, self.label, back=False)

    try:
        phone = Phone(seed=4)
        assert "package:com.example.compass" not in sh(phone, "pm", "list", "packages")
        phone.install("com.example.compass")
        assert "package:com.example.compass" in sh(phone, "pm", "list", "packages", "-3")
        sh(phone, "input", "swipe", "900", "1200", "150", "1200", "200")  # the last page
        tap(phone, "Compass")
        assert visible(phone, "Heading 40")
        phone.uninstall("com.example.compass")
        assert phone.state()["current"]["package"] == "com.android.launcher3"
        assert not visible(phone, "Compass")
        with pytest.raises(KeyError):
            phone.install("com.example.nothing")
    finally:
        APPS.pop("com.example.compass", None)


def test_screencap_to_a_file_and_display_flag(phone: Phone) -> None:
    assert phone.run(["screencap", "-d", "0", "-p"]).stdout == phone.screencap_png()
    assert sh(phone, "screencap", "-p", "/sdcard/Pictures/shot.png") == ""
    assert phone.fs.read_file("/sdcard/Pictures/shot.png") == phone.screencap_png()
    r = phone.run(["screencap", "-p", "/no/such/dir/x.png"])
    assert r.exit_code == 1 and b"No such file" in r.stderr


def test_notification_shade_quick_settings(phone: Phone) -> None:
    tap(phone, "Settings")
    sh(phone, "input", "swipe", "540", "40", "540", "1200", "300")  # pull down from the status bar
    assert phone.state()["shade_open"]
    assert not visible(phone, "Display & brightness")  # the shade covers the app
    tap(phone, "Dark theme quick setting, off")
    assert phone.state()["theme"] == "dark"
    tap(phone, "Airplane mode")
    assert phone.state()["airplane_mode"] and visible(phone, "Airplane mode quick setting, on")
    sh(phone, "input", "keyevent", "BACK")
    assert not phone.state()["shade_open"] and phone.state()["current"]["package"] == "com.android.settings"
    sh(phone, "input", "swipe", "540", "40", "540", "1200", "300")
    sh(phone, "input", "swipe", "540", "1500", "540", "300", "300")  # pushed back up
    assert not phone.state()["shade_open"]


def test_long_note_bodies_wrap_inside_the_screen(phone: Phone) -> None:
    tap(phone, "Notes")
    tap(phone, "orange plus button: new note")
    tap(phone, "Note text field")
    words = "the quick brown fox jumps over the lazy dog " * 4
    sh(phone, "input", "text", words.strip())
    lines = [el for el in phone.ground_truth() if el["kind"] == "text" and el["text"].startswith(("the", "fox", "quick",
                                                                                                 "brown", "jumps", "over", "lazy", "dog"))]
    assert len(lines) >= 3
    assert " ".join(el["text"] for el in lines) == words.strip()
    assert all(el["box"][2] <= 1080 - 40 for el in lines)


def test_power_key_turns_the_screen_off_and_on(phone: Phone) -> None:
    tap(phone, "Settings")
    sh(phone, "input", "keyevent", "POWER")
    assert not phone.state()["screen"]["on"]
    assert "mWakefulness=Asleep" in sh(phone, "dumpsys", "power")
    assert "mScreenState=OFF" in sh(phone, "dumpsys", "display")
    assert phone.ground_truth() == []
    assert decode_png(phone).getextrema() == ((0, 0), (0, 0), (0, 0))  # black
    sh(phone, "input", "tap", "540", "1200")
    sh(phone, "input", "keyevent", "HOME")
    sh(phone, "input", "keyevent", "WAKEUP")
    assert phone.state()["screen"]["on"] and phone.state()["current"]["package"] == "com.android.settings"
    assert "mWakefulness=Awake" in sh(phone, "dumpsys", "power")


def test_am_start_names_real_activities_only(phone: Phone) -> None:
    sh(phone, "am", "start", "-n", "com.android.settings/com.android.settings.Settings")  # full name
    assert phone.state()["current"]["activity"] == ".Settings"
    sh(phone, "am", "start", "-n", "com.android.settings/.DisplaySettings")
    assert phone.state()["current"]["activity"] == ".DisplaySettings"
    r = phone.run(["am", "start", "-n", "com.android.settings/.NoSuchActivity"])
    assert r.exit_code != 0 and b"does not exist" in r.stderr
    sh(phone, "am", "start", "-a", "android.intent.action.MAIN", "-c", "android.intent.category.HOME")
    assert phone.state()["current"]["package"] == "com.android.launcher3"


def test_settings_search_finds_a_setting_inside_a_page(phone: Phone) -> None:
    tap(phone, "Settings")
    tap(phone, "search")
    assert phone.state()["focus"] == "query" and phone.state()["keyboard_visible"]
    sh(phone, "input", "text", "dark")
    assert visible(phone, "Dark mode") and not visible(phone, "Wi-Fi")
    sh(phone, "input", "keyevent", "BACK")  # keyboard away, results stay
    tap(phone, "Dark mode")
    assert phone.state()["current"]["activity"] == ".DisplaySettings"
    sh(phone, "input", "keyevent", "BACK")  # the search was replaced by the page: back to the list
    assert phone.state()["current"]["view"] == "main"
    tap(phone, "search")
    sh(phone, "input", "text", "zzz")
    assert visible(phone, "No results")
    sh(phone, "input", "keyevent", "DEL", "DEL", "DEL")
    sh(phone, "input", "text", "airplane")
    sh(phone, "input", "keyevent", "BACK")
    tap(phone, "Airplane mode")
    tap(phone, "Airplane mode switch, off")
    assert phone.state()["airplane_mode"]
