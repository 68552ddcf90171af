"""The README's "Try it without a phone or a model" block, run as written, line by line, in
a fresh folder (its ``.venv`` is this checkout's): a user following the README gets no
error. Two substitutions keep it off what other processes use: the phones' ports (6100 and
6101 become free ones) and the adb server (this session's, through
``ANDROID_ADB_SERVER_PORT``, which the README says every command honours)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def readme_block() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- readme-path:[^>]*-->\s*```bash\n(.*?)```", text, re.S)
    assert match, "the README lost its readme-path block"
    return [line.split("  #")[0].strip() for line in match.group(1).splitlines() if line.strip()]


def _two_free_ports() -> int:
    for _ in range(50):
        port = free_port()  # below the ephemeral range: no connection takes it before the phone binds
        if port + 1 == 5554:  # the emulator ports the adb server scans
            continue
        try:
            with socket.socket() as second:
                second.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue
    raise AssertionError("no two free consecutive ports")


def test_the_readme_path_runs_as_written(adb_server, tmp_path) -> None:
    lines = readme_block()
    assert lines[0].startswith(". .venv/bin/activate")
    port = _two_free_ports()
    phones = [f"127.0.0.1:{port}", f"127.0.0.1:{port + 1}"]
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MOBILE_AGENT_", "VIRTUAL_ENV"))}
    env.update(ANDROID_ADB_SERVER_PORT=str(adb_server.port), PATH="/usr/bin:/bin", PYTHONUNBUFFERED="1")
    outputs: dict[str, subprocess.CompletedProcess] = {}
    background: list[subprocess.Popen] = []
    try:
        for line in lines[1:]:
            command = line.replace("6100", str(port)).replace("6101", str(port + 1))
            script = f"{lines[0]}\n{command.removesuffix('&').strip()}"
            if command.endswith("&"):
                background.append(subprocess.Popen(["bash", "-c", script], cwd=tmp_path, env=env,
                                                   start_new_session=True, stdout=subprocess.DEVNULL))
                for serial in phones:  # a person types the next line after this one has started
                    adb_server.wait_state(serial, "device", timeout=60)
                continue
            done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=240)
            assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
            assert "Traceback" not in done.stderr, (line, done.stderr)
            outputs[line.split("  ")[0].split(" -")[0]] = done
    finally:
        for proc in background:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        for serial in phones:
            adb_server.disconnect(serial)

    by_start = {key.split()[1] if key.startswith("mobile-agent") else key.split()[0]: out for key, out in outputs.items()}
    assert all(serial in by_start["devices"].stdout for serial in phones)
    assert json.loads(by_start["adb"].stdout)["foreground"]
    assert "result: completed" in by_start["run"].stdout
    assert "running the reference solutions" in by_start["eval"].stderr and "✓ settings-1" in by_start["eval"].stdout
    assert (tmp_path / "runs" / "mobile-eval" / "report.html").is_file()


@pytest.mark.slow
def test_make_test_shows_progress_while_installing(tmp_path) -> None:
    """`make test` installs torch and the dev extras first: minutes on a fresh clone, which
    must not pass in silence (pip's -q hid every line)."""
    dry = subprocess.run(["make", "-n", "-C", str(ROOT), "install-dev", f"VENV={tmp_path / 'venv'}"],
                         capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0, dry.stderr
    installs = [line for line in dry.stdout.splitlines() if " install " in line and "/pip " in line]
    assert installs and all(" -q " not in line for line in installs), installs
    assert any("torch" in line for line in installs)
    said = [line for line in dry.stdout.splitlines() if line.startswith("echo \"==> installing")]
    assert len(said) >= len(installs), dry.stdout
