"""The adb server dies and comes back: the `adb connect` phones come back with it.

A private adb server (the adbutils wheel's binary) on its own port, a simulated phone
connected to it with ``mobile_agent.device.connect``; then ``adb kill-server``. The next
device call starts the server again, reconnects the phone and goes on.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from mobile_agent.device import connect, list_devices
from mobile_agent.device.device import Device
from mobile_agent.device.server import find_adb
from mobile_agent.settings import AdbSettings
from tests.adb_wedge import adb_server_pid, calls_waiting, private_adb_settings


@pytest.fixture
def private_adb(monkeypatch: pytest.MonkeyPatch) -> Iterator[AdbSettings]:
    with private_adb_settings(monkeypatch, "adb-restart-", 10) as settings:
        yield settings


def test_phones_come_back_after_the_adb_server_restarts(sim_phones: Any, private_adb: AdbSettings) -> None:
    (phone,) = sim_phones(1)
    assert "connected to" in connect(phone.serial, private_adb)  # starts the private server too
    device = Device(phone.serial, private_adb)
    assert device.shell(["echo", "before"]).strip() == "before"

    killed = subprocess.run([str(find_adb(private_adb)), "-P", str(private_adb.server_port), "kill-server"],
                            capture_output=True, timeout=30, check=False)
    assert killed.returncode == 0

    # the next call finds no server, starts one, connects the phone again and is retried
    assert device.shell(["echo", "after"]).strip() == "after"
    assert [d.state for d in list_devices(private_adb) if d.serial == phone.serial] == ["device"]


def test_a_phone_attached_by_an_outside_adb_connect_comes_back_too(sim_phones: Any, private_adb: AdbSettings) -> None:
    (phone,) = sim_phones(1)
    adb = str(find_adb(private_adb))
    port = str(private_adb.server_port)
    subprocess.run([adb, "-P", port, "start-server"], capture_output=True, timeout=30, check=True)
    attached = subprocess.run([adb, "-P", port, "connect", phone.serial], capture_output=True, text=True, timeout=30)
    assert "connected to" in attached.stdout  # this process never connected it
    device = Device(phone.serial, private_adb)
    assert device.shell(["echo", "before"]).strip() == "before"
    subprocess.run([adb, "-P", port, "kill-server"], capture_output=True, timeout=30, check=True)
    assert device.shell(["echo", "after"]).strip() == "after"


def test_a_phone_that_does_not_come_back_fails_naming_it_after_reconnect_s(sim_phones: Any,
                                                                           private_adb: AdbSettings) -> None:
    import time

    from mobile_agent.errors import DeviceLostError

    (phone,) = sim_phones(1)
    settings = private_adb.model_copy(update={"reconnect_s": 2.0})
    assert "connected to" in connect(phone.serial, settings)
    device = Device(phone.serial, settings)
    assert device.shell(["echo", "before"]).strip() == "before"
    phone.kill()  # the phone is gone for good
    subprocess.run([str(find_adb(settings)), "-P", str(settings.server_port), "kill-server"],
                   capture_output=True, timeout=30, check=True)
    started = time.monotonic()
    with pytest.raises(DeviceLostError) as lost:
        device.shell(["echo", "after"])
    waited = time.monotonic() - started
    assert 2.0 <= waited < 10, waited  # it waited adb.reconnect_s, trying, then gave up
    assert lost.value.serial == phone.serial and phone.serial in lost.value.message
    assert "adb.reconnect_s" in lost.value.message


def test_a_cancel_ends_the_wait_for_a_phone_that_went_away(sim_phones: Any, adb_server: Any,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    """A REST task's phone vanishes (its listener gone, the adb server no longer lists it) and the
    task is cancelled, or the server stops, while the run waits for the phone to come back: the
    wait ends with the cancel (RunCancelled), not after adb.reconnect_s (here an hour). A server
    stopping waited 10 s for such a run (scheduler.stop's limit) before giving up on it."""
    import logging
    import threading
    import time

    from mobile_agent.device import open_phone
    from mobile_agent.errors import RunCancelled
    from mobile_agent.settings import Settings

    (phone,) = sim_phones(1)
    settings = Settings(adb=AdbSettings(server_port=adb_server.port, reconnect_s=3600))
    cancel = threading.Event()
    device = open_phone(settings, phone.serial, cancel=cancel)  # as a REST task's run opens its phone
    assert device.shell(["echo", "before"]).strip() == "before"
    phone.kill()
    adb_server.disconnect(phone.serial)  # as sim_phones' teardown does: not listed, its port closed
    caplog.set_level(logging.DEBUG, logger="mobile_agent.device.device")

    ended: list[BaseException] = []

    def call() -> None:
        try:
            device.shell(["echo", "after"])
        except BaseException as exc:  # what ended the call is the test's result
            ended.append(exc)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()

    def recovering() -> bool:  # its `adb connect`s to the closed port fail: it is in the wait
        return any(r.getMessage().startswith(f"recovering {phone.serial}") for r in caplog.records)

    deadline = time.monotonic() + 60
    while not recovering() and caller.is_alive() and time.monotonic() < deadline:
        caller.join(0.05)
    assert recovering() and caller.is_alive(), ended
    cancel.set()
    caller.join(60)  # a bound for a broken build only: without the cancel it waits an hour
    assert not caller.is_alive(), "the wait for the phone did not see the cancel"
    assert len(ended) == 1 and isinstance(ended[0], RunCancelled), ended
    assert phone.serial in ended[0].message


def test_a_cancel_ends_an_adb_call_that_hangs(sim_phones: Any, private_adb: AdbSettings) -> None:
    """The adb server stops answering (``tests.adb_wedge``: SIGSTOP, the kernel still accepts its
    connections, nothing reads them) while a REST task's run waits on a device call, and the task is cancelled:
    the call ends with RunCancelled soon after (``CANCEL_GRACE_S``), not after adb.command_timeout_s
    (here an hour). An answer after the cancel still comes: the adb server continued, the same
    device answers with the cancel set (the IME put back after a cancelled Type)."""
    import signal
    import threading

    from mobile_agent.device import open_phone
    from mobile_agent.errors import RunCancelled
    from mobile_agent.settings import Settings

    (phone,) = sim_phones(1)
    adb = private_adb.model_copy(update={"command_timeout_s": 3600})
    assert "connected to" in connect(phone.serial, adb)  # starts the private server too
    cancel = threading.Event()
    device = open_phone(Settings(adb=adb), phone.serial, cancel=cancel)  # as a REST task's run opens its phone
    assert device.shell(["echo", "before"]).strip() == "before"
    assert calls_waiting(adb.server_port) == 0  # no call in flight

    server = adb_server_pid(adb.server_port)
    os.kill(server, signal.SIGSTOP)
    try:
        ended: list[BaseException] = []

        def call() -> None:
            try:
                device.shell(["echo", "hung"])
            except BaseException as exc:  # what ended the call is the test's result
                ended.append(exc)

        caller = threading.Thread(target=call, daemon=True)
        caller.start()
        while calls_waiting(adb.server_port) == 0 and caller.is_alive():  # its call in flight, unanswered
            caller.join(0.05)
        assert caller.is_alive(), ended
        cancel.set()
        caller.join(60)  # a bound for a broken build only: without the cancel it waits an hour
        assert not caller.is_alive(), "the hung adb call did not see the cancel"
        assert len(ended) == 1 and isinstance(ended[0], RunCancelled), ended
    finally:
        os.kill(server, signal.SIGCONT)
    assert device.shell(["echo", "after"]).strip() == "after"  # a prompt answer, the cancel still set
