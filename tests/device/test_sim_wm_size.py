"""`wm size` / `wm density` forced at run time, through the real adb CLI and adbutils: the
phone draws, captures and takes touches at the forced size, the query prints AOSP's
Physical and Override lines (WindowManagerShellCommand.printInitialDisplaySize), setting
prints nothing, bad values are refused on stderr with exit 255, and the simulator's reset
takes the phone back to its own size (the data engine's screen-size variants rely on it)."""

from __future__ import annotations

from mobile_agent.device import open_device
from mobile_agent.settings import AdbSettings


def _shell(adb_server, serial: str, *args: str):
    return adb_server.run("-s", serial, "shell", *args)


def test_wm_size_forces_the_display_and_reset_restores_it(sim_phone, adb_server):
    serial = sim_phone.serial
    set_size = _shell(adb_server, serial, "wm", "size", "720x1600")
    assert (set_size.returncode, set_size.stdout, set_size.stderr) == (0, "", "")
    assert _shell(adb_server, serial, "wm", "size").stdout == "Physical size: 1080x2400\nOverride size: 720x1600\n"
    assert sim_phone.device.screenshot(error_ok=False).size == (720, 1600)
    device = open_device(AdbSettings(server_port=adb_server.port), serial)
    info = device.screen_info()
    assert (info.width, info.height) == (720, 1600)
    # a tap at the forced size's coordinates lands: the Settings icon, where the small screen draws it
    left, top, right, bottom = sim_phone.element("Settings")["box"]
    assert right <= 720 and bottom <= 1600
    device.tap((left + right) // 2, (top + bottom) // 2)
    assert sim_phone.phone.foreground == "com.android.settings"
    assert device.screenshot().width == 720

    assert _shell(adb_server, serial, "wm", "size", "360dpx800dp").returncode == 0  # dp: x density / 160
    assert sim_phone.phone.forced_size == (360 * 420 // 160, 800 * 420 // 160)
    assert _shell(adb_server, serial, "wm", "size", "reset").stdout == ""
    assert _shell(adb_server, serial, "wm", "size").stdout == "Physical size: 1080x2400\n"

    _shell(adb_server, serial, "wm", "size", "720x1600", "-d", "0")
    assert _shell(adb_server, serial, "cmd", "simphone", "reset").returncode == 0
    assert sim_phone.device.screenshot(error_ok=False).size == (1080, 2400)
    assert _shell(adb_server, serial, "wm", "size").stdout == "Physical size: 1080x2400\n"


def test_wm_density_and_bad_values(sim_phone, adb_server):
    serial = sim_phone.serial
    assert _shell(adb_server, serial, "wm", "density", "320").returncode == 0
    assert _shell(adb_server, serial, "wm", "density").stdout == "Physical density: 420\nOverride density: 320\n"
    assert _shell(adb_server, serial, "wm", "density", "reset").returncode == 0
    assert _shell(adb_server, serial, "wm", "density").stdout == "Physical density: 420\n"
    for args, error in [
        (("size", "12"), "Error: bad size 12\n"),
        (("size", "axb"), 'Error: bad number java.lang.NumberFormatException: For input string: "a"\n'),
        (("density", "50"), "Error: density must be >= 72\n"),
    ]:
        result = _shell(adb_server, serial, "wm", *args)
        assert (result.returncode, result.stdout, result.stderr) == (255, "", error)
    too_small = _shell(adb_server, serial, "wm", "size", "100x100")
    assert too_small.returncode == 255 and "unsupported screen size" in too_small.stderr
    assert sim_phone.device.screenshot(error_ok=False).size == (1080, 2400)  # refused: unchanged
