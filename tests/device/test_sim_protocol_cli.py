"""The `simphone serve` command line: serves phones in its own process, stops on a signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest


def _start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "simphone", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _read_serials(proc: subprocess.Popen, count: int) -> list[str]:
    serials = []
    for _ in range(count):
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        serials.append(line.split()[0])
    return serials


def _stop(proc: subprocess.Popen, sig: int = signal.SIGINT) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(20)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_serve_several_phones_in_a_separate_process(adb_server):
    proc = _start("--port", "0", "--count", "2", "--width", "540", "--height", "1200", "--seed", "7")
    serials: list[str] = []
    try:
        serials = _read_serials(proc, 2)
        assert len(set(serials)) == 2
        for serial in serials:
            adb_server.connect(serial)
            assert adb_server.client.device(serial).shell("echo from $0") == "from /system/bin/sh"
            size = adb_server.run("-s", serial, "shell", "wm", "size")
            assert "540x1200" in size.stdout
        assert _stop(proc) == 0
        for serial in serials:  # stopped: the adb server loses them
            adb_server.wait_state(serial, "offline")
    finally:
        if proc.poll() is None:
            proc.kill()
        for serial in serials:
            adb_server.disconnect(serial)


def test_serve_connect_runs_adb_connect_itself(adb_server):
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(adb_server.port))
    proc = _start(
        "--port", "0", "--connect", "--adb", adb_server.adb_path, "--adb-port", str(adb_server.port), env=env
    )
    try:
        (serial,) = _read_serials(proc, 1)
        adb_server.wait_state(serial, "device")
    finally:
        assert _stop(proc, signal.SIGTERM) == 0
        adb_server.disconnect(serial)



def test_serve_adb_keyboard_installs_it(adb_server):
    proc = _start("--port", "0", "--adb-keyboard")
    serial = ""
    try:
        (serial,) = _read_serials(proc, 1)
        adb_server.connect(serial)
        imes = adb_server.run("-s", serial, "shell", "ime", "list", "-s").stdout
        assert "com.android.adbkeyboard/.AdbIME" in imes
    finally:
        assert _stop(proc) == 0
        if serial:
            adb_server.disconnect(serial)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--count", "0"], "must be at least 1"),
        (["--port", "5560"], "5555-5585"),
        (["--port", "70000"], "not a TCP port"),
        (["--width", "100"], "screen too small"),
    ],
)
def test_bad_arguments_exit_with_a_clear_message(args, message):
    result = subprocess.run(
        [sys.executable, "-m", "simphone", "serve", *args], capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0
    assert message in result.stderr


def test_a_bad_adb_for_connect_is_named_before_serving(tmp_path):
    not_executable = tmp_path / "adb"
    not_executable.write_text("#!/bin/sh\n")
    for adb, message in ((not_executable, "is not executable"), (tmp_path / "nothing", "no adb binary at")):
        result = subprocess.run(
            [sys.executable, "-m", "simphone", "serve", "--port", "0", "--connect", "--adb", str(adb)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert result.returncode != 0
        assert message in result.stderr
        assert result.stdout == ""  # no phone was announced
