"""A real adb server that stops answering, for the tests of a cancel that must end a hung call.

``os.kill(pid, SIGSTOP)`` on the adb server process: the kernel still accepts connections on
its port and takes the requests into the socket's queue, nobody reads them, no answer comes
(an adb server wedged, as a frozen phone or a stuck USB stack leaves it). ``calls_waiting``
tells when a client's call is in flight with nothing to read (/proc/net/tcp), so a test acts on
a call that hangs without sleeping. Linux only."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mobile_agent.device import find_adb
from mobile_agent.settings import AdbSettings
from tests.ports import free_port


@contextmanager
def private_adb_settings(monkeypatch: pytest.MonkeyPatch, prefix: str, command_timeout_s: float) -> Iterator[AdbSettings]:
    """Settings for an adb server of this test alone (a free port, its own HOME for its keys),
    killed and its HOME removed afterwards; the server itself starts on first use."""
    home = Path(tempfile.mkdtemp(prefix=prefix))
    monkeypatch.setenv("HOME", str(home))  # the server keeps its keys there
    monkeypatch.setenv("TMPDIR", str(home))
    settings = AdbSettings(server_port=free_port(), command_timeout_s=command_timeout_s)
    try:
        yield settings
    finally:
        subprocess.run([str(find_adb(settings)), "-P", str(settings.server_port), "kill-server"],
                       capture_output=True, timeout=30, check=False, env=dict(os.environ))
        shutil.rmtree(home, ignore_errors=True)


def adb_server_pid(port: int) -> int:
    """The adb server listening on ``port`` (``adb -L tcp:PORT fork-server server``)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"fork-server" in argv and any(arg.endswith(b"tcp:%d" % port) for arg in argv):
            return int(entry.name)
    raise AssertionError(f"no adb server process on port {port}")


def calls_waiting(port: int) -> int:
    """Connections to ``port`` with nothing received to read (/proc/net/tcp: established, the
    remote port ``port``, rx_queue 0): with the server stopped, each is a call waiting for an
    answer that will not come (its request unread, or read and never answered)."""
    found = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            remote, state, queues = fields[2], fields[3], fields[4]
            if int(remote.rsplit(":", 1)[1], 16) == port and state == "01" and int(queues.split(":")[1], 16) == 0:
                found += 1
    return found
