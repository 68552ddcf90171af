"""The device layer against real Android output (Android 7-15, Samsung, foldables,
tablets), each sample with its source beside it. Pure parsing where the format is the
point; the multi-display stream is read through a real socket.
"""

from __future__ import annotations

import socket
import struct
import threading
from typing import Any

import numpy as np
import pytest

from mobile_agent.device import Device
from mobile_agent.device.adb_protocol import AdbHost
from mobile_agent.device.displays import (
    DisplayTarget,
    choose_display,
    parse_display_infos,
    parse_surfaceflinger_ids,
    split_text_preamble,
)
from mobile_agent.device.keyboard import broadcast_delivered, ime_bound
from mobile_agent.device.parsing import (
    current_screen_size,
    parse_current_app,
    parse_launcher_activities,
    parse_locked,
    parse_main_activities,
    parse_rotation,
    parse_screen_on,
    query_activities_unsupported,
)
from mobile_agent.device.selection import check_ready
from mobile_agent.device.server import NO_PERMISSIONS_HINT, parse_devices_l
from mobile_agent.errors import DeviceError
from mobile_agent.settings import AdbSettings
from tests.real_samples import sample

# --- multi-display phones: the screencap warning and the display ids ----------------------


def _raw_frame(width: int, height: int, *, colorspace: bool) -> tuple[bytes, np.ndarray]:
    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, size=(height, width, 4), dtype=np.uint8)
    header = struct.pack("<III", width, height, 1) + (struct.pack("<I", 1) if colorspace else b"")
    return header + pixels.tobytes(), pixels


@pytest.mark.parametrize(
    "warning", ["screencap_multi_display_warning.txt", "screencap_multi_display_warning_older.txt"]
)
@pytest.mark.parametrize("colorspace", [True, False], ids=["16-byte header", "12-byte header"])
def test_multi_display_warning_is_stripped_from_the_raw_stream(warning: str, colorspace: bool) -> None:
    text = sample(warning).encode()
    frame, pixels = _raw_frame(37, 23, colorspace=colorspace)
    host = AdbHost("127.0.0.1", 1, 5.0)
    ours, theirs = socket.socketpair()

    def serve() -> None:  # the stream as adbd's exec: service sends it, in uneven chunks
        data = text + frame
        for start in range(0, len(data), 700):
            theirs.sendall(data[start : start + 700])
        theirs.close()

    host.open_service = lambda serial, service: ours  # type: ignore[method-assign]
    sender = threading.Thread(target=serve)
    sender.start()
    width, height, fmt, data, preamble = host.read_framebuffer("fold", "exec:screencap")
    sender.join()
    assert (width, height, fmt) == (37, 23, 1)
    assert b"".join(preamble) == text
    assert np.array_equal(data.reshape(23, 37, 4), pixels)


def test_preamble_split_waits_for_whole_lines_and_leaves_png_alone() -> None:
    text = sample("screencap_multi_display_warning.txt").encode()
    assert split_text_preamble(text[:50]) is None  # an unfinished line: read more
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 20
    assert split_text_preamble(text + png) == (text.splitlines(keepends=True), png)
    frame, _ = _raw_frame(4, 4, colorspace=False)
    assert split_text_preamble(frame) == ([], frame)


def test_surfaceflinger_ids_and_the_display_to_drive() -> None:
    physical = parse_surfaceflinger_ids(sample("surfaceflinger_display_id_fold.txt"))
    assert physical == [4619827259835644672, 4619827551948147201]
    unfolded = parse_display_infos(sample("dumpsys_display_fold_unfolded.txt"))
    assert [(d.display_id, d.state, d.physical_id) for d in unfolded] == [
        (0, "ON", 4619827259835644672),
        (3, "OFF", 4619827551948147201),
    ]
    # screencap -d takes the physical id, input -d the logical one
    assert choose_display(physical, unfolded) == DisplayTarget(4619827259835644672, 0)
    folded = parse_display_infos(sample("dumpsys_display_fold_folded.txt"))
    assert choose_display(physical, folded) == DisplayTarget(4619827551948147201, 3)
    # without a readable `dumpsys display`: what screencap itself picks, on display 0
    assert choose_display(physical, []) == DisplayTarget(4619827259835644672, 0)
    # one display: no -d at all
    assert choose_display(physical[:1], unfolded) is None


def test_android12_display_info_line() -> None:
    (display,) = parse_display_infos(sample("dumpsys_display_android12_single.txt"))
    assert (display.display_id, display.width, display.height, display.rotation, display.state) == (0, 768, 1280, 0, "ON")
    assert display.unique_id == "local:0" and display.physical_id == 0


# --- rotation and size, tablets whose natural orientation is landscape -------------------


@pytest.mark.parametrize(
    "dump, rotation",
    [
        # Android <= 12; source: MaaXYZ/MaaFramework DeviceInfo.cpp (orientation command comment)
        ("    SurfaceOrientation: 1\n", 1),
        # Android 13/14 and 15+, same source
        ("      InputDeviceOrientation: 3\n", 3),
        ("      InputDeviceOrientation: Rotation90\n", 1),
        # viewports: an inactive one first (fixture header names the source)
        (sample("dumpsys_input_viewport_rotated.txt"), 1),
        (sample("dumpsys_input_viewports_override.txt"), 0),
    ],
)
def test_rotation_from_dumpsys_input(dump: str, rotation: int) -> None:
    assert parse_rotation(dump) == rotation


@pytest.mark.parametrize(
    "wm_size, dump, expected",
    [
        # a phone (natural portrait) turned to landscape; `wm size` output format: AOSP
        # WindowManagerShellCommand ("Physical size: WxH"), values of a Pixel 9 Pro
        ("Physical size: 1080x2424\n", "    SurfaceOrientation: 1\n", (2424, 1080, 1)),
        # a landscape-natural tablet (virtio-gpu 1280x800 panel, as in the fixture header of
        # dumpsys_input_viewports_override.txt's source) held upright: taller than wide
        ("Physical size: 1280x800\n", "      InputDeviceOrientation: 1\n", (800, 1280, 1)),
        ("Physical size: 1280x800\n", "      InputDeviceOrientation: 0\n", (1280, 800, 0)),
        ("Physical size: 1280x800\n", "      InputDeviceOrientation: Rotation270\n", (800, 1280, 3)),
        # an override wins over the panel size, and turns the same way
        ("Physical size: 1440x3120\nOverride size: 1080x2400\n", "SurfaceOrientation: 1\n", (2400, 1080, 1)),
    ],
)
def test_size_in_every_rotation(wm_size: str, dump: str, expected: tuple[int, int, int]) -> None:
    assert current_screen_size(wm_size, dump) == expected


# --- screen on / lock screen ---------------------------------------------------------------


@pytest.mark.parametrize(
    "power, on",
    [
        ("      mWakefulness=Awake\n", True),  # AOSP; flutter/flutter dev/devicelab adb_test.dart pretendAwake
        ("      mWakefulness=Asleep\n", False),  # same, pretendAsleep
        ("      getWakefulnessLocked()=Awake\n", True),  # Samsung; same file, pretendAwakeSamsung
        ("  getWakefulnessLocked()=Dozing\n", False),  # always-on display; appium-adb lockmgmt.ts isInDozingMode
        ("  mWakefulness=Dozing\n", False),  # same comment: "mWakefulness=Dozing" on some tablets
        ("Display Power: state=ON\n", True),  # Android 4.x-6 PowerManagerService dump
        ("mHoldingDisplaySuspendBlocker=true\n", True),  # openatx/adbutils shell.py is_screen_on
    ],
)
def test_screen_on(power: str, on: bool) -> None:
    assert parse_screen_on(power) is on


# appium-adb@8eea1a8 test/unit/lockmgmt.spec.ts, verbatim
_KEYGUARD_SHOWN_INPUT_RESTRICTED = """
      KeyguardServiceDelegate
      ....
        KeyguardStateMonitor
          mIsShowing=true
          mSimSecure=false
          mInputRestricted=true
          mCurrentUserId=0
          ...
      """
_KEYGUARD_SHOWN_NOT_RESTRICTED = _KEYGUARD_SHOWN_INPUT_RESTRICTED.replace("mInputRestricted=true", "mInputRestricted=false")
_KEYGUARD_HIDDEN = _KEYGUARD_SHOWN_NOT_RESTRICTED.replace("mIsShowing=true", "mIsShowing=false")
_DELEGATE_SCREEN_OFF = """
    KeyguardServiceDelegate
      showing=false
      showingAndNotOccluded=true
      inputRestricted=false
      occluded=false
      secure=false
      dreaming=false
      systemIsReady=true
      deviceHasKeyguard=true
      enabled=true
      offReason=OFF_BECAUSE_OF_USER
      currentUser=-10000
      bootCompleted=true
      screenState=SCREEN_STATE_OFF
      interactiveState=INTERACTIVE_STATE_SLEEP
"""


@pytest.mark.parametrize(
    "window, locked",
    [
        ("mShowingLockscreen=true mShowingDream=false mDreamingLockscreen=false mTopIsFullscreen=false", True),
        ("mShowingLockscreen=false mShowingDream=false mDreamingLockscreen=true mTopIsFullscreen=false", True),
        ("mShowingLockscreen=false mShowingDream=false mDreamingLockscreen=false mTopIsFullscreen=false", False),
        (_KEYGUARD_SHOWN_INPUT_RESTRICTED, True),
        (_KEYGUARD_SHOWN_NOT_RESTRICTED, False),
        (_KEYGUARD_HIDDEN, False),
        (_DELEGATE_SCREEN_OFF, False),
        ("mShowingDream=false mTopIsFullscreen=false", None),  # nothing to tell
        # Android 12+ `dumpsys window` policy line, as quoted in public tests (code search)
        ("isKeyguardShowing=true\n  mCurrentFocus=Window{b2 u0 NotificationShade}", True),
        ("isKeyguardShowing=false\n  mCurrentFocus=Window{a1 u0 dev.vistrea.demo.debug/dev.vistrea.demo.MainActivity}", False),
    ],
)
def test_lock_screen(window: str, locked: bool | None) -> None:
    assert parse_locked(window) is locked


# --- the app in front ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "dump, package",
    [
        # appium-adb@8eea1a8 test/unit/apk-utils.spec.ts getFocusedPackageAndActivity, verbatim
        (
            "mFocusedApp=ActivityRecord{14d88c3 u0 com.android.systemui/.subscreen.SubHomeActivity t9}\n"
            "        mFocusedApp=ActivityRecord{d72327 u0 eu.niko.smart.universal/crc648a3abc16689e594e.MainActivity t409}\n"
            "        mCurrentFocus=Window{2785a60 u0 eu.niko.smart.universal/crc648a3abc16689e594e.MainActivity}\n"
            "        mCurrentFocus=null",
            "eu.niko.smart.universal",
        ),
        (
            "mFocusedApp=null\n"
            "        mFocusedApp=ActivityRecord{caf038a u0 com.android.systemui/.subscreen.SubHomeActivity t7}\n"
            "        mFocusedApp=ActivityRecord{a646676 u0 com.example.android/.activity.main.MainActivity t285}\n"
            "        mCurrentFocus=null\n        mCurrentFocus=null\n"
            "        mCurrentFocus=Window{5e9b13b u0 com.example.android/com.example.android.activity.main.MainActivity}}",
            "com.example.android",
        ),
        (
            "mFocusedApp=AppWindowToken{20fe217e token=Token{21878739 "
            "ActivityRecord{16425300 u0 com.example.android.contactmanager/.ContactManager, isShadow:false t10}}}",
            "com.example.android.contactmanager",
        ),
        ("mFocusedApp=null\n  mCurrentFocus=Window{4330b6c0 u0 com.android.settings/com.android.settings.SubSettings paused=false}", "com.android.settings"),
        ("mCurrentFocus=null", None),
        # openatx/adbutils@7c43ec6 adbutils/shell.py app_current comment (Android 4.4-era format)
        ("  mCurrentFocus=Window{41b37570 u0 com.incall.apps.launcher/com.incall.apps.launcher.Launcher}", "com.incall.apps.launcher"),
        # Honor phone, screen off with the shade in focus (public test fixture WINDOW_SNIPPET, code search):
        # the shade is not an app; the activity under it is
        (
            "  mCurrentFocus=Window{bdf3658 u0 NotificationShade}\n"
            "  mFocusedApp=ActivityRecord{3e3682b u0 com.android.settings/com.hihonor.settingslib.SubSettings t1019}\n",
            "com.android.settings",
        ),
        ("  mCurrentFocus=Window{946be20 u0 NotificationShade}\n", None),
        ("  mCurrentFocus=Window{1a u0 StatusBar}\n", None),
        # `dumpsys activity activities`, Android 10+ / 11+ / <= 9
        ("  topResumedActivity=ActivityRecord{1a70f4a u0 com.smile.gifmaker/com.yxcorp.gifshow.HomeActivity t6294}", "com.smile.gifmaker"),
        ("  ResumedActivity: ActivityRecord{12376650 u0 dev.telemachus.display/.MainActivity t349}", "dev.telemachus.display"),
        ("  mResumedActivity: ActivityRecord{422dee38 u0 com.example/.UI.play.PlayActivity t14}", "com.example"),
    ],
)
def test_current_app(dump: str, package: str | None) -> None:
    assert parse_current_app(dump) == package


def test_current_app_old_focus_format() -> None:
    """Android 4.0/4.1: the activity in front is the focused app token; the window printed
    in focus (``paused=false``, no user id) belongs to Settings and must not win."""
    dump = sample("dumpsys_window_focus_android4.txt")
    assert parse_current_app(dump) == "com.example.android.contactmanager"
    # the bare-`u` record alone still names its app, and a window of an app that is also
    # the focused activity answers as before
    assert parse_current_app(dump.splitlines()[0]) == "com.example.android.contactmanager"
    same = dump.replace("com.android.settings/com.android.settings.SubSettings", "com.example.android.contactmanager/.Editor")
    assert parse_current_app(same) == "com.example.android.contactmanager"


@pytest.mark.parametrize(
    "dump, package",
    [
        # the record without `u`, shaped as appium-adb@8eea1a8 test/unit/apk-utils.spec.ts waitForActivityOrNot
        # prints it (`ActivityRecord{c 0 foo/bar t181}`), with a dotted package
        ("mFocusedApp=AppWindowToken{38600b56 token=Token{9ea1171 ActivityRecord{c 0 foo.bar/baz t181}}}", "foo.bar"),
        # two displays, the focused window on the first: the window's app is a focused activity, it answers
        (
            "mFocusedApp=ActivityRecord{1 u0 com.a.first/.Main t1}\n  mFocusedApp=ActivityRecord{2 u0 com.b.second/.Main t2}\n"
            "  mCurrentFocus=Window{3 u0 com.a.first/com.a.first.Main}\n  mCurrentFocus=null",
            "com.a.first",
        ),
    ],
)
def test_current_app_focus_witnesses(dump: str, package: str) -> None:
    assert parse_current_app(dump) == package


# --- launcher apps on real phones and on old ones ------------------------------------------

# A real `cmd package query-activities` block (shape of `pm query-activities` output shown
# in a public session log, mark.via.gp): real phones print nonLocalizedLabel=null.
_QUERY_ACTIVITIES_NO_LABEL = """1 activities found:
  Activity #0:
    priority=0 preferredOrder=0 match=0x208000 specificIndex=-1 isDefault=true
    ActivityInfo:
      name=mark.via.ui.activity.BrowserActivity
      packageName=mark.via.gp
      labelRes=0x7f0c0040 nonLocalizedLabel=null icon=0x0 banner=0x0
      enabled=true exported=true directBootAware=false
"""

# `dumpsys package` resolver table of an Android 7 phone (apkSigningVersion=2), quoted in
# the getApkMainIntent docstring of a public APK test harness (code search), verbatim
_RESOLVER_TABLE_ANDROID7 = """Activity Resolver Table:
  Non-Data Actions:
      android.intent.action.MAIN:
        40355f5 de.ecspride/.MainActivity filter 5381d72
          Action: "android.intent.action.MAIN"
          Category: "android.intent.category.LAUNCHER"
          AutoVerify=false

Key Set Manager:
  [de.ecspride]
      Signing KeySets: 4380
"""


def test_launcher_listing_without_labels() -> None:
    (app,) = parse_launcher_activities(_QUERY_ACTIVITIES_NO_LABEL)
    assert (app.package, app.activity, app.label) == ("mark.via.gp", "mark.via.ui.activity.BrowserActivity", None)


def test_old_phone_resolver_table() -> None:
    (app,) = parse_main_activities(_RESOLVER_TABLE_ANDROID7)
    assert (app.package, app.activity) == ("de.ecspride", ".MainActivity")
    # an app whose MAIN activity is not a launcher one (a HOME screen) is left out
    home = _RESOLVER_TABLE_ANDROID7.replace("category.LAUNCHER", "category.HOME")
    assert parse_main_activities(home + _RESOLVER_TABLE_ANDROID7) == [app]


@pytest.mark.parametrize(
    "answer",
    [
        "/system/bin/sh: cmd: not found\n",  # Android 6 and older: no `cmd` (mksh's message)
        "cmd: Can't find service: package\n",  # AOSP cmds/cmd/cmd.cpp when the service is missing
        "Error: Unknown command: query-activities\n",
    ],
)
def test_query_activities_unsupported(answer: str) -> None:
    assert query_activities_unsupported(answer)
    assert not query_activities_unsupported(_QUERY_ACTIVITIES_NO_LABEL)


# --- ADB Keyboard ---------------------------------------------------------------------------

# `dumpsys input_method` right after `ime set` and once bound, as quoted in a public
# parser test ("real-device-observed mCurId", code search)
_IME_BOUND = (
    "Input Method Manager Service (dumpsys)\n  mCurMethodId=com.android.adbkeyboard/.AdbIME\n"
    "  mCurId=com.android.adbkeyboard/.AdbIME\n  mBoundToMethod=true\n  mCurToken=android.os.BinderProxy@1\n"
)
_IME_NOT_YET = "  mCurId=com.android.adbkeyboard/.AdbIME\n  mBoundToMethod=false\n"


def test_adb_keyboard_is_used_only_once_bound() -> None:
    assert ime_bound(_IME_BOUND) is True
    assert ime_bound(_IME_NOT_YET) is False
    assert ime_bound(_IME_BOUND.replace("com.android.adbkeyboard/.AdbIME", "com.android.inputmethod.latin/.LatinIME")) is False
    assert ime_bound("Current Input Method Manager state:\n") is None


def test_broadcast_completed() -> None:
    # AOSP ActivityManagerShellCommand: "Broadcasting: <intent>" then, once delivered to all
    # receivers, "Broadcast completed: result=<code>". ADBKeyBoard's AdbIME.java never sets a
    # result code, so 0 (or -1 where a receiver set RESULT_OK) cannot confirm the text.
    done = "Broadcasting: Intent { act=ADB_INPUT_B64 flg=0x400000 (has extras) }\nBroadcast completed: result=0\n"
    assert broadcast_delivered(done)
    assert not broadcast_delivered("Broadcasting: Intent { act=ADB_INPUT_B64 flg=0x400000 (has extras) }\n")


# --- adb devices ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        # old adb; public adb-devices parser tests quote it verbatim (code search)
        "???????????? no permissions (user in plugdev group; are your udev rules wrong?); see [http://developer.android.com/tools/device.html]",
        # adb 33+ `devices -l` with a usb: path for serial
        "usb:1-4.4 no permissions (user in plugdev group; are your udev rules wrong?)",
        # the other reasons of AOSP system/core diagnose_usb/diagnose_usb.cpp GetUdevProblem()
        "0123456789ABCDEF       no permissions (user alice is not in the plugdev group); see [http://developer.android.com/tools/device.html]",
        "0123456789ABCDEF       no permissions (verify udev rules); see [http://developer.android.com/tools/device.html]",
    ],
)
def test_no_permissions_device_gets_the_udev_fix(line: str) -> None:
    (info,) = parse_devices_l(f"List of devices attached\n{line}\n")
    assert info.state.startswith("no permissions")
    with pytest.raises(DeviceError) as caught:
        check_ready(info)
    assert caught.value.fields["hint"] == NO_PERMISSIONS_HINT
    assert "udev" in caught.value.message and "plugdev" in caught.value.message


# --- the choice carried out on a phone --------------------------------------------------------


class _Foldable(Device):
    """The simulated phone (real adb, real screen), answering the two display questions
    with the foldable's real outputs (fixtures above); everything else is the phone's."""

    folded = False

    def shell(self, args: list[str]) -> str:
        if args == ["dumpsys", "SurfaceFlinger", "--display-id"]:
            return sample("surfaceflinger_display_id_fold.txt")
        if args == ["dumpsys", "display"]:
            return sample("dumpsys_display_fold_folded.txt" if self.folded else "dumpsys_display_fold_unfolded.txt")
        return super().shell(args)


def test_foldable_screencap_and_input_name_the_display(sim_phone: Any, adb_server: Any) -> None:
    seen: list[list[str]] = []
    original = sim_phone.phone.run

    def note(argv: list[str]) -> Any:
        seen.append(list(argv))
        return original(argv)

    sim_phone.phone.run = note
    try:
        device = _Foldable(sim_phone.serial, AdbSettings(server_port=adb_server.port))
        shot = device.screenshot()
        device.tap(shot.width // 2, shot.height // 2)
        device.folded = True
        device.display_target(refresh=True)  # as the 10 s recheck would after folding
        device.key("back")
    finally:
        del sim_phone.phone.run
    assert ["screencap", "-d", "4619827259835644672"] in seen  # physical id: screencap's namespace
    assert ["input", "-d", "0", "tap", str(shot.width // 2), str(shot.height // 2)] in seen  # logical id
    assert ["input", "-d", "3", "keyevent", "4"] in seen  # folded: the cover screen


class _NoCmd(Device):
    """The simulated phone as an Android 6/7 phone without `cmd package` answers it
    (mksh's "not found"); every other command is the phone's own."""

    def shell(self, args: list[str]) -> str:
        if args[:1] == ["cmd"]:
            return "/system/bin/sh: cmd: not found\n"
        return super().shell(args)


def test_old_phone_lists_and_launches_apps_without_cmd(sim_phone: Any, adb_server: Any) -> None:
    seen: list[list[str]] = []
    original = sim_phone.phone.run

    def note(argv: list[str]) -> Any:
        seen.append(list(argv))
        return original(argv)

    sim_phone.phone.run = note
    try:
        device = _NoCmd(sim_phone.serial, AdbSettings(server_port=adb_server.port))
        packages = {app.package for app in device.launcher_apps()}
        assert "com.android.settings" in packages
        device.launch_app("com.android.settings")
    finally:
        del sim_phone.phone.run
    assert sim_phone.phone.state()["foreground"] == "com.android.settings"
    # no activity known: monkey, told not to send system keys (a phone without hardware
    # keys otherwise aborts it with exit 251 before the app starts)
    monkey = [argv for argv in seen if argv[:1] == ["monkey"]]
    assert monkey and monkey[-1][monkey[-1].index("--pct-syskeys") + 1] == "0"
