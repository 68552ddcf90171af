"""The phone lease's probe (``mobile_agent.device.lease_holder``) beside other probes and
runs in one process: asking who holds a free phone never makes it look busy, and never
makes a run that asks for it at once (``wait_s=0``, ``mobile-agent run``) be refused.
No adb server: the lease is a file lock."""

from __future__ import annotations

import threading
import uuid

from mobile_agent.device import PhoneLease, lease_holder
from mobile_agent.errors import PhoneBusyError
from mobile_agent.settings import AdbSettings

ADB = AdbSettings(server_port=5037)
ROUNDS = 2000


def _free_phone() -> str:
    serial = f"lease-probe-{uuid.uuid4().hex[:8]}"
    with PhoneLease(ADB, serial, "setup"):  # the lease file exists, as after any earlier run
        pass
    return serial


def test_probes_of_a_free_phone_never_see_it_busy() -> None:
    """MCP screenshots of non-admins and REST task starts probe at once: each must read 'free'
    (the probe took the lock exclusively for an instant: 101 of 6000 probes read 'another run')."""
    serial = _free_phone()
    busy: list[str] = []

    def probe() -> None:
        for _ in range(ROUNDS):
            holder = lease_holder(ADB, serial)
            if holder is not None:
                busy.append(holder)

    threads = [threading.Thread(target=probe) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert busy == []


def test_a_probe_never_refuses_a_run_that_asks_at_once() -> None:
    serial = _free_phone()
    refused: list[str] = []
    done = threading.Event()

    def probe() -> None:
        while not done.is_set():
            lease_holder(ADB, serial)

    def run() -> None:
        for _ in range(ROUNDS // 4):
            try:
                with PhoneLease(ADB, serial, "mobile-agent run", wait_s=0):
                    pass
            except PhoneBusyError as exc:
                refused.append(exc.message)
        done.set()

    threads = [threading.Thread(target=probe) for _ in range(3)] + [threading.Thread(target=run)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert refused == []


def test_a_held_phone_is_still_seen_and_refused() -> None:
    serial = _free_phone()
    with PhoneLease(ADB, serial, "REST task 7 of alice"):
        assert lease_holder(ADB, serial) == "REST task 7 of alice"
        try:
            with PhoneLease(ADB, serial, "mobile-agent run", wait_s=0):
                raise AssertionError("a held phone was leased twice")
        except PhoneBusyError as exc:
            assert "REST task 7 of alice" in exc.message
    assert lease_holder(ADB, serial) is None


def test_a_name_left_by_a_process_that_ended_is_no_holder() -> None:
    """A run killed inside its lease leaves its name in the file (the kernel drops the lock, not
    the text): the probe checks the lock, the phone is free and can be leased at once."""
    from mobile_agent.device.lease import _lease_file

    serial = _free_phone()
    _lease_file(ADB, serial).write_text('{"holder": "REST task 9 of bob", "pid": 1, "since": 0}', encoding="utf-8")
    assert lease_holder(ADB, serial) is None
    with PhoneLease(ADB, serial, "mobile-agent run", wait_s=0):
        assert lease_holder(ADB, serial) == "mobile-agent run"
    assert lease_holder(ADB, serial) is None
