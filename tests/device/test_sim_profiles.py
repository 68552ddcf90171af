"""Device profiles of the simulated phone: each prints what its real phone prints.

Over the real adb server where the transport matters (the order of a warning and the
image in ``exec:``), on the phone object elsewhere. The published samples the profiles
copy are named in ``simphone/profiles/*.toml``; the ``uiautomator dump`` format is
compared with a real dump kept in ``tests/fixtures/uiautomator/``.
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from simphone import Phone
from simphone.profiles import load_profile, profile_names

FIXTURES = Path(__file__).parent.parent / "fixtures" / "uiautomator"
REAL_PROFILES = [n for n in profile_names() if n != "simphone"]


def sh(phone: Phone, *argv: str) -> str:
    result = phone.run(list(argv))
    return result.stdout.decode()


def test_every_profile_loads_with_a_source_for_each_sample() -> None:
    assert set(REAL_PROFILES) >= {"nexus5-6", "pixel3-10", "pixel7-14", "pixel8-15-locked", "galaxy-s22-13",
                                  "galaxy-fold5-14", "pixel-tablet-14"}
    for name in profile_names():
        profile = load_profile(name)
        assert profile.summary and profile.reproduces
        for key, output in profile.outputs.items():
            assert len(output.source) > 20, (name, key)


def test_an_unknown_profile_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown device profile 'pixel99'; known: .*pixel7-14"):
        Phone(profile="pixel99")


@pytest.mark.parametrize("name", REAL_PROFILES)
def test_real_profiles_print_no_labels_in_query_activities(name: str) -> None:
    phone = Phone(profile=name)
    result = phone.run(["cmd", "package", "query-activities", "-a", "android.intent.action.MAIN",
                        "-c", "android.intent.category.LAUNCHER"])
    if "cmd" in phone.profile.missing_programs:
        assert (result.exit_code, result.stderr) == (127, b"/system/bin/sh: cmd: not found\n")
        return
    out = result.stdout.decode()
    labels = re.findall(r"nonLocalizedLabel=(\S+)", out)
    assert labels and set(labels) == {"null"}
    assert out.startswith(f"{len(labels)} activities found:\n")


def test_the_default_profile_keeps_its_labels() -> None:
    out = sh(Phone(), "cmd", "package", "query-activities", "-a", "android.intent.action.MAIN")
    assert "nonLocalizedLabel=Settings " in out


def test_old_phone_has_a_12_byte_header_and_no_cmd() -> None:
    phone = Phone(profile="nexus5-6")
    raw = phone.screencap_raw()
    width, height, fmt = struct.unpack("<3I", raw[:12])
    assert (width, height, fmt) == (1080, 1920, 1) and len(raw) == 12 + width * height * 4
    assert phone.run(["cmd", "package", "list", "packages"]).exit_code == 127
    resolver = sh(phone, "dumpsys", "package", "r")
    assert "      android.intent.action.MAIN:\n" in resolver
    assert re.search(r"^        [0-9a-f]{7} com\.android\.settings/\.Settings filter [0-9a-f]{7}$", resolver, re.M)
    assert "mShowingLockscreen=false mShowingDream=false mDreamingLockscreen=false" in sh(phone, "dumpsys", "window")


def test_samsung_prints_overrides_and_its_own_wakefulness() -> None:
    phone = Phone(profile="galaxy-s22-13")
    assert sh(phone, "wm", "size") == "Physical size: 1440x3088\nOverride size: 1080x2316\n"
    assert sh(phone, "wm", "density") == "Physical density: 600\nOverride density: 450\n"
    assert phone.screenshot().size == (1080, 2316)  # the phone draws at the override size
    power = sh(phone, "dumpsys", "power")
    assert "getWakefulnessLocked()=Awake" in power and "mWakefulness=" not in power
    phone.run(["input", "keyevent", "POWER"])
    assert "getWakefulnessLocked()=Asleep" in sh(phone, "dumpsys", "power")


def test_foldable_warns_before_the_image_over_exec(sim_phones) -> None:
    (handle,) = sim_phones(1, profile="galaxy-fold5-14")
    data = handle.device.shell(["screencap"], encoding=None)
    warning = load_profile("galaxy-fold5-14").output("screencap_multi_display_warning").render({}).encode()
    assert data.startswith(b"[Warning] Multiple displays were found, but no display id was specified!")
    assert data[: len(warning)] == warning
    width, height = struct.unpack("<2I", data[len(warning): len(warning) + 8])
    assert (width, height) == (1812, 2176)
    ids = re.findall(r"^Display (\d+) \(HWC display \d\)", handle.device.shell(["dumpsys", "SurfaceFlinger", "--display-id"]), re.M)
    assert len(ids) == 2
    chosen = handle.device.shell(["screencap", "-d", ids[0]], encoding=None)
    assert struct.unpack("<2I", chosen[:8]) == (1812, 2176)  # no warning with -d
    cover = handle.device.shell(["screencap", "-d", ids[1]], encoding=None)
    assert struct.unpack("<2I", cover[:8]) == (904, 2316) and set(cover[16:1000:4]) == {0}  # the cover is off: black


def test_lock_screen_phone(sim_phones) -> None:
    (handle,) = sim_phones(1, profile="pixel8-15-locked")
    phone, device = handle.phone, handle.device
    window = device.shell(["dumpsys", "window"])
    assert "mCurrentFocus=Window{" in window and " u0 NotificationShade}" in window
    assert re.search(r"KeyguardStateMonitor\n\s+mIsShowing=true\n\s+mSimSecure=false\n\s+mInputRestricted=true", window)
    assert "Swipe up to unlock" in [e["text"] for e in phone.ground_truth()]
    device.shell(["input", "tap", "540", "1200"])
    assert phone.keyguard_showing  # a tap does not unlock
    device.shell(["input", "keyevent", "HOME"])
    assert phone.keyguard_showing
    device.shell(["input", "swipe", "540", "2000", "540", "600", "300"])
    assert not phone.keyguard_showing
    assert "mIsShowing=false" in device.shell(["dumpsys", "window"])
    device.shell(["input", "keyevent", "POWER"])
    device.shell(["input", "keyevent", "POWER"])
    assert phone.keyguard_showing  # sleeping locks it again
    device.shell(["input", "keyevent", "82"])
    assert not phone.keyguard_showing


def test_landscape_tablet_reports_its_rotation_as_real_tablets() -> None:
    phone = Phone(profile="pixel-tablet-14")
    assert (phone.width, phone.height) == (2560, 1600)
    assert "orientation=0, logicalFrame=[0, 0, 2560, 1600]" in sh(phone, "dumpsys", "input")
    phone.run(["settings", "put", "system", "user_rotation", "1"])
    assert sh(phone, "wm", "size") == "Physical size: 2560x1600\n"  # the natural size, whatever the rotation
    assert "orientation=1, logicalFrame=[0, 0, 1600, 2560]" in sh(phone, "dumpsys", "input")
    assert phone.screenshot().size == (1600, 2560)
    assert re.search(r"mOverrideDisplayInfo=.*real 1600 x 2560.*rotation 1,", sh(phone, "dumpsys", "display"))


def test_monkey_needs_pct_syskeys_on_phones_without_keys() -> None:
    phone = Phone(profile="pixel7-14")
    refused = phone.run(["monkey", "-p", "com.android.settings", "-c", "android.intent.category.LAUNCHER", "1"])
    assert refused.exit_code == 251
    assert refused.stderr == b"** SYS_KEYS has no physical keys but with factor 2.0%.\n"
    assert phone.foreground == "com.android.launcher3"
    done = phone.run(["monkey", "-p", "com.android.settings", "-c", "android.intent.category.LAUNCHER",
                      "--pct-syskeys", "0", "1"])
    assert done.exit_code == 0 and phone.foreground == "com.android.settings"
    old = Phone(profile="nexus5-6")  # with hardware keys the plain call works
    assert old.run(["monkey", "-p", "com.android.settings", "-c", "android.intent.category.LAUNCHER", "1"]).exit_code == 0


def test_uiautomator_dump_has_the_published_format() -> None:
    real = (FIXTURES / "talos_window_dump.xml").read_text(encoding="utf-8")
    phone = Phone(profile="pixel7-14")
    assert sh(phone, "uiautomator", "dump") == "UI hierchary dumped to: /sdcard/window_dump.xml\n"
    ours = phone.fs.read_file("/sdcard/window_dump.xml").decode("utf-8")
    assert ours.split("<hierarchy")[0] == real.split("<hierarchy")[0]  # the XmlSerializer declaration
    real_root, our_root = ET.fromstring(real.encode()), ET.fromstring(ours.encode())
    assert our_root.tag == real_root.tag == "hierarchy" and list(our_root.attrib) == list(real_root.attrib)
    order = list(next(real_root.iter("node")).attrib)
    assert all(list(node.attrib) == order for node in real_root.iter("node"))  # the fixture is consistent
    nodes = list(our_root.iter("node"))
    assert len(nodes) > 10 and all(list(node.attrib) == order for node in nodes)
    texts = {node.get("text") for node in nodes}
    assert {e["text"] for e in phone.ground_truth() if e["text"]} <= texts
    tty = sh(phone, "uiautomator", "dump", "/dev/tty")
    assert tty == ours + "UI hierchary dumped to: /dev/tty\n"


def test_uiautomator_dump_fails_as_real_phones_do() -> None:
    busy = Phone(profile="galaxy-s22-13")  # a screen that never gets idle (animations)
    result = busy.run(["uiautomator", "dump"])
    assert (result.stdout, result.stderr, result.exit_code) == (b"", b"ERROR: could not get idle state.\n", 0)
    dark = Phone(profile="pixel7-14")
    dark.run(["input", "keyevent", "POWER"])
    result = dark.run(["uiautomator", "dump"])
    assert result.stderr == b"ERROR: null root node returned by UiTestAutomationBridge.\n"


def test_phones_started_together_have_distinct_identities(sim_phones, adb_server) -> None:
    handles = sim_phones(2)
    listing = adb_server.run("devices", "-l").stdout
    models = {h.serial: re.search(rf"^{re.escape(h.serial)}\s+device .*model:(\S+)", listing, re.M).group(1)
              for h in handles}
    assert sorted(models.values()) == ["SimPhone_1", "SimPhone_2"]
    serials = {h.device.shell(["getprop", "ro.serialno"]).strip() for h in handles}
    assert len(serials) == 2


def test_serve_with_several_profiles() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "simphone", "serve", "--port", "0", "--profile", "pixel7-14,nexus5-6",
         "--profile", "galaxy-s22-13", "--count", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        lines = [proc.stdout.readline().split() for _ in range(4)]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert [line[1:3] for line in lines] == [["Pixel_7", "pixel7-14"], ["Nexus_5", "nexus5-6"],
                                             ["SM-S908B", "galaxy-s22-13"], ["SM-S908B", "galaxy-s22-13"]]
    assert [line[3] for line in lines] == ["1080x2400", "1080x1920", "1080x2316", "1080x2316"]
    bad = subprocess.run([sys.executable, "-m", "simphone", "serve", "--profile", "nope"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode != 0 and "unknown profile nope" in bad.stderr


def test_a_new_input_method_binds_late_and_drops_text_until_then() -> None:
    phone = Phone(profile="galaxy-s22-13", adb_keyboard=True)
    phone.run(["am", "start", "-n", "com.google.android.keep/.activities.BrowseActivity"])
    sh(phone, "ime", "enable", "com.android.adbkeyboard/.AdbIME")
    sh(phone, "ime", "set", "com.android.adbkeyboard/.AdbIME")
    dump = sh(phone, "dumpsys", "input_method")
    assert "  mCurMethodId=com.android.adbkeyboard/.AdbIME\n" in dump
    assert "mHaveConnect=true mBoundToMethod=false" in dump
    phone.set_focus("title")
    out = sh(phone, "am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", "lost")
    assert "Broadcast completed: result=0" in out  # completes, but nobody received it
    assert phone.app_context(phone.foreground).field("title") == ""
    import time

    time.sleep(phone.profile.ime_bind_ms / 1000 + 0.05)
    assert "mBoundToMethod=true" in sh(phone, "dumpsys", "input_method")
    sh(phone, "am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", "kept")
    assert phone.app_context(phone.foreground).field("title") == "kept"


def test_a_stale_tree_lags_one_screen_behind() -> None:
    phone = Phone(profile="pixel3-10")
    home = sh(phone, "uiautomator", "dump", "/dev/tty")
    assert 'package="com.android.launcher3"' in home
    phone.run(["am", "start", "-n", "com.android.settings/.Settings"])
    stale = sh(phone, "uiautomator", "dump", "/dev/tty")
    assert stale == home  # still the home screen's tree
    fresh = sh(phone, "uiautomator", "dump", "/dev/tty")
    assert 'package="com.android.settings"' in fresh and fresh != home
