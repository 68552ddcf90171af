"""The device layer's pure parts: text encoding, parsers, decoders, validation.

(The same behaviour over the real adb server and the simulated phone is in
tests/device/test_device_phone.py.)
"""

from __future__ import annotations

import shlex
import socket
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mobile_agent.device import Screenshot, validate_address, validate_package, validate_serial
from mobile_agent.device.adb_protocol import AdbHost
from mobile_agent.device.device import frame_difference
from mobile_agent.device.parsing import (
    LauncherApp,
    match_label,
    parse_current_app,
    parse_launcher_activities,
    parse_locked,
    parse_rotation,
    parse_screen_on,
    parse_wm_size,
)
from mobile_agent.device.screenshot import decode_framebuffer, decode_png
from mobile_agent.device.server import parse_devices_l
from mobile_agent.device.text_input import (
    adb_keyboard_broadcast,
    decode_input_text,
    input_text_commands,
    input_text_segments,
    is_plain_ascii,
    shell_line,
)
from mobile_agent.device.validation import keycode_for
from mobile_agent.errors import AppNotFoundError, DeviceError, ScreenshotError

printable_ascii = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=500)


@given(printable_ascii)
def test_input_text_segments_decode_to_the_text(text: str) -> None:
    segments = input_text_segments(text)
    assert "".join(decode_input_text(seg) for seg in segments) == text
    assert all(" " not in seg for seg in segments)  # spaces travel as %s


@given(printable_ascii)
def test_shell_quoting_of_input_text_is_exact(text: str) -> None:
    for argv in input_text_commands(text):
        line = shell_line(argv)
        assert shlex.split(line) == argv


def test_percent_s_is_split() -> None:
    assert input_text_segments("100%sure") == ["100%", "sure"]
    assert input_text_segments("a b") == ["a%sb"]
    assert input_text_segments("% s") == ["%%ss"]  # '%' then encoded space then 's'
    assert decode_input_text("%%ss") == "% s"


def test_is_plain_ascii() -> None:
    assert is_plain_ascii("Hello, world! ~")
    assert not is_plain_ascii("héllo")
    assert not is_plain_ascii("line\nbreak")
    with pytest.raises(ValueError):
        input_text_segments("日本")


def test_adb_keyboard_broadcast_is_base64() -> None:
    argv = adb_keyboard_broadcast("日本 ; $(reboot)")
    assert argv[:6] == ["am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg"]
    import base64

    assert base64.b64decode(argv[6]).decode() == "日本 ; $(reboot)"


# --- parsers -----------------------------------------------------------------------------


def test_parse_devices_l() -> None:
    text = (
        "emulator-5554          device product:sdk_gphone model:Pixel_7 device:emu64 transport_id:1\n"
        "127.0.0.1:7001 unauthorized transport_id:2\n"
        "ABC123 no permissions (missing udev rules?); see [http://developer.android.com/tools/device.html] usb:1-1 transport_id:3\n"
        "10.0.0.2:5555\toffline\n"
    )
    infos = parse_devices_l(text)
    assert [(d.serial, d.state, d.model) for d in infos] == [
        ("emulator-5554", "device", "Pixel_7"),
        ("127.0.0.1:7001", "unauthorized", None),
        ("ABC123", "no permissions (missing udev rules?); see [http://developer.android.com/tools/device.html]", None),
        ("10.0.0.2:5555", "offline", None),
    ]
    assert infos[0].transport_id == 1


def test_parse_screen_texts() -> None:
    assert parse_wm_size("Physical size: 1080x2400\n") == (1080, 2400)
    assert parse_wm_size("Physical size: 1080x2400\nOverride size: 720x1600\n") == (720, 1600)
    assert parse_wm_size("nothing") is None
    assert parse_rotation("    SurfaceOrientation: 1\n") == 1
    assert parse_rotation("mCurrentRotation=ROTATION_270") == 3
    assert parse_screen_on("  mWakefulness=Asleep\n") is False
    assert parse_screen_on("Display Power: state=ON\n") is True
    assert parse_locked("    mDreamingLockscreen=true mDreamingSleepToken=null") is True
    assert parse_locked("isStatusBarKeyguard=false") is False


def test_parse_current_app() -> None:
    text = "  mCurrentFocus=Window{2c6b2e4 u0 com.android.settings/com.android.settings.Settings}\n"
    assert parse_current_app(text) == "com.android.settings"
    text = "  mCurrentFocus=null\n  mFocusedApp=ActivityRecord{9d8 u0 com.whatsapp/.Main t12}\n"
    assert parse_current_app(text) == "com.whatsapp"
    assert parse_current_app("mCurrentFocus=null") is None


def test_parse_launcher_activities_verbose_and_brief() -> None:
    verbose = """3 activities found:
  Activity #0:
    priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false
    ActivityInfo:
      name=com.android.settings.Settings
      packageName=com.android.settings
      nonLocalizedLabel=Settings
  Activity #1:
    ActivityInfo:
      name=.MainActivity
      packageName=com.example.notes
      nonLocalizedLabel=null
"""
    apps = parse_launcher_activities(verbose)
    assert apps == [
        LauncherApp("com.android.settings", "com.android.settings.Settings", "Settings"),
        LauncherApp("com.example.notes", ".MainActivity", None),
    ]
    brief = "com.android.chrome/com.google.android.apps.chrome.Main\tChrome\ncom.x.y/.A\n"
    assert parse_launcher_activities(brief) == [
        LauncherApp("com.android.chrome", "com.google.android.apps.chrome.Main", "Chrome"),
        LauncherApp("com.x.y", ".A", None),
    ]


def test_parse_launcher_activities_label_on_the_labelres_line() -> None:
    text = """2 activities found:
Activity #0:
  priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false
  ActivityInfo:
    name=com.google.android.apps.youtube.music.Main
    packageName=com.google.android.apps.youtube.music
    labelRes=0x7f1400a1 nonLocalizedLabel=YouTube Music icon=0x7f0800b2
Activity #1:
  ActivityInfo:
    name=com.x.A
    packageName=com.x
    labelRes=0x7f1400a1 nonLocalizedLabel=null icon=0x7f0800b2
"""
    assert parse_launcher_activities(text) == [
        LauncherApp("com.google.android.apps.youtube.music", "com.google.android.apps.youtube.music.Main", "YouTube Music"),
        LauncherApp("com.x", "com.x.A", None),
    ]


def test_match_label() -> None:
    apps = [
        LauncherApp("com.android.settings", None, "Settings"),
        LauncherApp("com.google.android.youtube", None, "YouTube"),
        LauncherApp("com.google.android.youtube.music", None, "YouTube Music"),
        LauncherApp("com.android.chrome", None, "Chrome"),
    ]
    assert match_label("settings", apps) == "com.android.settings"
    assert match_label("YOUTUBE", apps) == "com.google.android.youtube"
    assert match_label("youtube music", apps) == "com.google.android.youtube.music"
    assert match_label("Chrom", apps) == "com.android.chrome"
    assert match_label("Setings", apps) == "com.android.settings"
    assert match_label("Calculator", apps) is None
    # labels that a real phone does not print (nonLocalizedLabel=null): the package's last part
    unlabeled = [
        LauncherApp("com.android.chrome", ".Main", None),
        LauncherApp("com.google.android.apps.maps", ".Maps", None),
        LauncherApp("com.google.android.gm", ".Gmail", None),
        LauncherApp("com.example.camera", ".A", None),
        LauncherApp("org.other.camera", ".B", None),
    ]
    assert match_label("Chrome", unlabeled) == "com.android.chrome"
    assert match_label("maps", unlabeled) == "com.google.android.apps.maps"
    assert match_label("Gmail", unlabeled) is None  # not guessed: the home-screen fallback finds it
    assert match_label("Camera", unlabeled) is None  # two candidates: not guessed either
    assert match_label("Settings", unlabeled + apps) == "com.android.settings"


# --- screenshots ---------------------------------------------------------------------------


def _rgba(h: int, w: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 4), dtype=np.uint8)


def test_decode_framebuffer_rgba_and_bgra() -> None:
    rgba = _rgba(7, 5)
    flat = rgba.reshape(-1).copy()
    rgb = decode_framebuffer(5, 7, 1, flat)
    assert rgb.shape == (7, 5, 3) and np.array_equal(rgb, rgba[:, :, :3])
    bgr = decode_framebuffer(5, 7, 5, flat)
    assert np.array_equal(bgr, rgba[:, :, 2::-1])


def test_decode_framebuffer_rejects_truncated_and_unknown() -> None:
    flat = _rgba(4, 4).reshape(-1)
    with pytest.raises(ScreenshotError, match="truncated"):
        decode_framebuffer(4, 4, 1, flat[:-1])
    with pytest.raises(ScreenshotError, match="format"):
        decode_framebuffer(4, 4, 99, flat)
    with pytest.raises(ScreenshotError):
        decode_framebuffer(0, 4, 1, flat[:0])


def test_decode_png_raises_instead_of_black_frame() -> None:
    with pytest.raises(ScreenshotError):
        decode_png(b"")
    with pytest.raises(ScreenshotError):
        decode_png(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10)
    shot = Screenshot(pixels=_rgba(9, 6)[:, :, :3])
    assert np.array_equal(decode_png(shot.to_png()), shot.pixels)
    warning = b"[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first.\n"
    assert np.array_equal(decode_png(warning + shot.to_png()), shot.pixels)


def test_screenshot_type() -> None:
    px = _rgba(40, 20)[:, :, :3]
    shot = Screenshot(pixels=px)
    assert (shot.width, shot.height) == (20, 40)
    assert not shot.pixels.flags.writeable
    assert shot.to_pil().size == (20, 40)
    from io import BytesIO

    from PIL import Image

    small = Image.open(BytesIO(shot.to_jpeg(long_side=10, quality=70)))
    assert small.size == (5, 10)
    with pytest.raises(ScreenshotError):
        Screenshot(pixels=np.zeros((0, 5, 3), np.uint8))
    with pytest.raises(ScreenshotError):
        Screenshot(pixels=np.zeros((5, 5), np.uint8))


def test_frame_difference() -> None:
    a = Screenshot(pixels=np.zeros((160, 80, 3), np.uint8))
    b = Screenshot(pixels=np.zeros((160, 80, 3), np.uint8))
    assert frame_difference(a, b) == 0.0
    changed = np.zeros((160, 80, 3), np.uint8)
    changed[:80] = 200
    assert frame_difference(a, Screenshot(pixels=changed)) == pytest.approx(0.5)


# --- validation ----------------------------------------------------------------------------


@pytest.mark.parametrize("serial", ["emulator-5554", "127.0.0.1:5555", "R58M123ABC", "[::1]:5555",
                                    "adb-ABC-x._adb-tls-connect._tcp"])  # fmt: skip
def test_valid_serials(serial: str) -> None:
    assert validate_serial(serial) == serial


@given(st.text(min_size=1, max_size=40).filter(lambda s: any(c in s for c in " ;$`'\"|&<>()\n\\*?!{}")))
def test_serials_with_shell_characters_are_rejected(serial: str) -> None:
    with pytest.raises(DeviceError, match="invalid device serial"):
        validate_serial(serial)


@given(st.from_regex(r"\A[a-z][a-z0-9_]{0,8}(\.[a-z][a-z0-9_]{0,8}){1,4}\Z"))
def test_valid_packages(package: str) -> None:
    assert validate_package(package) == package


@pytest.mark.parametrize("package", ["", "settings", "com..x", "1com.x", "com.x;reboot", "com.x y", "com.x/.A", "com.é.x"])
def test_invalid_packages(package: str) -> None:
    with pytest.raises(AppNotFoundError, match="invalid package"):
        validate_package(package)


def test_addresses() -> None:
    assert validate_address("192.168.1.5:5555") == "192.168.1.5:5555"
    assert validate_address("phone.local:37000") == "phone.local:37000"
    for bad in ["192.168.1.5", "host:0", "host:99999", "a b:5555", "h;x:1", ":5555"]:
        with pytest.raises(DeviceError, match="invalid address"):
            validate_address(bad)


def test_keycodes() -> None:
    assert keycode_for("back") == 4 and keycode_for("HOME") == 3 and keycode_for("app_switch") == 187
    assert keycode_for(66) == 66 and keycode_for("67") == 67 and keycode_for("KEYCODE_ENTER") == 66
    assert keycode_for("KEYCODE_CAMERA") == 27
    assert keycode_for("keycode_dpad_up") == "KEYCODE_DPAD_UP"
    for bad in ["", "explode", "KEYCODE_X;reboot", 999, True, "KEYCODE_"]:
        with pytest.raises(ValueError):
            keycode_for(bad)


class _StreamedService(AdbHost):
    """An ``AdbHost`` whose service stream is these bytes, sent over a real socket pair:
    the framebuffer reader (the code under test) reads them as from the adb server."""

    def __init__(self, payload: bytes) -> None:
        super().__init__("127.0.0.1", 0, 5.0)
        self.payload = payload

    def open_service(self, serial: str, service: str) -> socket.socket:
        ours, theirs = socket.socketpair()
        theirs.sendall(self.payload)
        theirs.close()
        return ours


@pytest.mark.parametrize(
    "header",
    [struct.pack("<IIII", 2, 3, 1, 1), struct.pack("<III", 2, 3, 1)],
    ids=["16-byte, with colorspace (Android 9+)", "12-byte (older)"],
)
def test_raw_header_sizes_are_both_understood(header: bytes) -> None:
    rgba = _rgba(3, 2)
    width, height, fmt, pixels, preamble = _StreamedService(header + rgba.tobytes()).read_framebuffer("s", "exec:x")
    assert (width, height, fmt, preamble) == (2, 3, 1, [])
    # the colorspace word is not taken for the first pixel, nor a missing one assumed
    assert np.array_equal(decode_framebuffer(width, height, fmt, pixels), rgba[:, :, :3])


class _VanishingAdbServer:
    """An adb server (its smart-socket protocol, on loopback) for a phone that has just
    gone: it still opens the transport, refuses the service with FAIL "closed", and no
    longer lists the phone. The moment a real adb server shows for an instant."""

    def __init__(self) -> None:
        import socket
        import threading

        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.requests: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    @staticmethod
    def _block(text: str) -> bytes:
        data = text.encode()
        return b"%04x" % len(data) + data

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                try:
                    while request := self._read_request(conn):
                        self.requests.append(request)
                        if request.endswith(":features"):
                            conn.sendall(b"OKAY" + self._block("shell_v2,cmd"))
                        elif request == "host:devices-l":
                            conn.sendall(b"OKAY" + self._block(""))
                        elif request.startswith("host:transport:"):
                            conn.sendall(b"OKAY")
                            continue
                        else:
                            conn.sendall(b"FAIL" + self._block("closed"))
                        break
                except OSError:
                    pass

    @staticmethod
    def _read_request(conn) -> str:
        import socket

        head = conn.recv(4, socket.MSG_WAITALL)
        if len(head) < 4:
            return ""
        return conn.recv(int(head, 16), socket.MSG_WAITALL).decode()

    def close(self) -> None:
        self.listener.close()


def test_a_service_refused_because_the_phone_just_went_away_is_device_lost() -> None:
    from mobile_agent.device import Device
    from mobile_agent.errors import DeviceLostError
    from mobile_agent.settings import AdbSettings

    server = _VanishingAdbServer()
    try:
        device = Device("emulator-5554", AdbSettings(server_port=server.port, command_timeout_s=5))
        with pytest.raises(DeviceLostError) as info:
            device.shell(["echo", "hi"])
        assert info.value.serial == "emulator-5554"
        assert info.value.fields["operation"] == "run"
        assert "host:devices-l" in server.requests  # the state was asked, not guessed from the message
    finally:
        server.close()
