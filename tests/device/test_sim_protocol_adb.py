"""The simulated phone through the real adb server: connect, shell, exec-out, screencap."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess

import adbutils
import pytest

from tests.ports import free_port


def test_adb_devices_lists_the_phone_with_its_product_properties(sim_phone, adb_server):
    out = adb_server.run("devices", "-l").stdout
    line = next(ln for ln in out.splitlines() if ln.startswith(sim_phone.serial))
    assert " device " in line
    assert f"model:{sim_phone.phone.model.replace(' ', '_')}" in line
    assert f"device:{sim_phone.phone.device}" in line


def test_shell_v2_through_the_cli_reports_exit_codes(sim_phone, adb_server):
    ok = adb_server.run("-s", sim_phone.serial, "shell", "echo hi")
    assert (ok.returncode, ok.stdout) == (0, "hi\n")
    failed = adb_server.run("-s", sim_phone.serial, "shell", "echo out; false")
    assert (failed.returncode, failed.stdout) == (1, "out\n")
    code = adb_server.run("-s", sim_phone.serial, "shell", "exit 42")
    assert code.returncode == 42


def test_unknown_command_exits_127_with_stderr_kept_apart(sim_phone, adb_server):
    result = adb_server.run("-s", sim_phone.serial, "shell", "no-such-tool --flag")
    assert result.returncode == 127
    assert result.stdout == ""
    assert "no-such-tool: not found" in result.stderr


def test_and_or_and_status_variable(sim_phone):
    out = sim_phone.device.shell("false && echo no; false || echo yes; echo status=$?")
    assert out == "yes\nstatus=0"


def test_adbutils_shell2_gets_exit_code(sim_phone):
    result = sim_phone.device.shell2("echo a; false")
    assert result.returncode == 1
    assert result.output == "a\n"
    assert sim_phone.device.shell2("true").returncode == 0


def test_quoted_text_arrives_exactly(sim_phone):
    tricky = 'it\'s a "test" $HOME `x` \\ ; && | *?'
    out = sim_phone.device.shell(["echo", "-E", tricky])
    assert out == tricky


def test_exec_out_png_screenshot_is_the_phones_png(sim_phone, adb_server):
    result = adb_server.run("-s", sim_phone.serial, "exec-out", "screencap", "-p", text=False)
    assert result.returncode == 0
    assert result.stdout == sim_phone.phone.screencap_png()
    assert result.stdout.startswith(b"\x89PNG\r\n\x1a\n")


def test_raw_screencap_streams_the_full_framebuffer(sim_phone, adb_server):
    result = adb_server.run("-s", sim_phone.serial, "exec-out", "screencap", text=False)
    raw = sim_phone.phone.screencap_raw()
    assert result.stdout == raw
    width, height, fmt = struct.unpack_from("<III", result.stdout)
    assert (width, height, fmt) == (1080, 2400, 1)
    assert len(result.stdout) in (12 + width * height * 4, 16 + width * height * 4)


def test_adbutils_screenshot_decodes(sim_phone):
    image = sim_phone.device.screenshot()
    assert image.size == (1080, 2400)


def test_legacy_framebuffer_service(sim_phone):
    image = sim_phone.device.framebuffer()
    raw = sim_phone.phone.screencap_raw()
    width, height = struct.unpack_from("<II", raw)
    assert image.size == (width, height)
    assert image.mode == "RGBA"
    assert image.tobytes() == raw[len(raw) - width * height * 4 :]


def test_adbutils_shell_stream_of_large_output_is_complete(sim_phone):
    # Goes through shell: v1 (raw) with chunking at the host's maxdata.
    conn = sim_phone.device.shell("screencap", stream=True)
    data = conn.read_until_close(encoding=None)
    assert data == sim_phone.phone.screencap_raw()


def test_unknown_service_is_refused(sim_phone, adb_server):
    conn = adb_server.client.make_connection()
    conn.send_command(f"host:transport:{sim_phone.serial}")
    conn.check_okay()
    conn.send_command("no-such-service:")
    with pytest.raises(adbutils.AdbError):
        conn.check_okay()
    conn.close()
    assert sim_phone.device.shell("echo still here") == "still here"


def _other_adb() -> str | None:
    """Another adb build than the wheel's (Debian's `adb` package), if this machine has one.

    ``SIMPHONE_TEST_OTHER_ADB`` may name it (with ``LD_LIBRARY_PATH`` set for its libraries).
    """
    candidates = [
        os.environ.get("SIMPHONE_TEST_OTHER_ADB"),
        shutil.which("adb"),
        "/usr/lib/android-sdk/platform-tools/adb",
    ]
    wheel = os.path.realpath(os.path.join(os.path.dirname(adbutils.__file__), "binaries", "adb"))
    for path in candidates:
        if path and os.path.isfile(path) and os.path.realpath(path) != wheel:
            return path
    return None


@pytest.mark.skipif(_other_adb() is None, reason="no second adb build (Debian's adb) on this machine")
def test_another_adb_build_drives_the_phone(sim_phones, tmp_path):
    # Its own server on its own port: adb clients kill a server of another version.
    adb = _other_adb()
    assert adb is not None
    port = free_port()  # below the ephemeral range: no connection takes it before the server binds
    env = dict(os.environ, HOME=str(tmp_path), TMPDIR=str(tmp_path))

    def run(*args: str, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(
            [adb, "-P", str(port), *args], env=env, capture_output=True, timeout=60, **kwargs
        )

    (phone,) = sim_phones(1)
    assert run("start-server").returncode == 0
    try:
        assert b"connected to" in run("connect", phone.serial).stdout
        result = run("-s", phone.serial, "shell", "echo hi; exit 3")
        assert (result.returncode, result.stdout) == (3, b"hi\n")
        assert run("-s", phone.serial, "exec-out", "screencap").stdout == phone.phone.screencap_raw()
        local = tmp_path / "f.bin"
        local.write_bytes(os.urandom(100_000))
        assert run("-s", phone.serial, "push", str(local), "/sdcard/Download/").returncode == 0
        assert phone.phone.fs.read_file("/sdcard/Download/f.bin") == local.read_bytes()
        assert (
            run("-s", phone.serial, "pull", "/sdcard/Download/f.bin", str(tmp_path / "g.bin")).returncode == 0
        )
        assert (tmp_path / "g.bin").read_bytes() == local.read_bytes()
    finally:
        run("kill-server")
