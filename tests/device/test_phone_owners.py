"""Whoever opens a phone closes it, through the Python API: ``Agent`` and ``run_script`` close
the phone they opened from the settings (``adb.serial``) and never one passed in.

The phone is a simulated iPhone on a USB cable (``tests/usbmux_fake.py``, the real pymobiledevice3
client and forwarder in between), because a USB iPhone's forward counts the opens not yet
closed: a program that runs many tasks and leaves each phone open keeps the forward (a listener
on 127.0.0.1, a task on the usbmux loop thread) and a WDA client's connections for its life. The
model is the scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mobile_agent.agent import Agent, RunStatus, run_script
from mobile_agent.device import close_phone, open_phone
from mobile_agent.device.ios.usb import UsbForward, open_forwards
from mobile_agent.settings import AdbSettings, IosSettings, Settings
from simphone.ios import WdaFrontEnd
from tests.agent_helpers import DONE, agent_settings, plan_reply
from tests.ports import free_port
from tests.usbmux_fake import FakeUsbmuxd, usbmuxd_with

UDID = "00008030-0011223344556677"
SERIAL = "ios:" + UDID


@pytest.fixture
def usbmuxd(front: WdaFrontEnd) -> Iterator[FakeUsbmuxd]:
    with usbmuxd_with(UDID, 12, front.url) as fake:
        yield fake


def _settings(tmp_path: Path, usbmuxd: FakeUsbmuxd, llm: Any = None) -> Settings:
    settings = agent_settings(free_port(), SERIAL, tmp_path / "runs", llm)
    return settings.model_copy(update={
        "adb": AdbSettings(server_port=free_port(), adb_path=str(tmp_path / "no-adb"), serial=SERIAL),
        "ios": IosSettings(usbmuxd=str(usbmuxd.path)),
    })


def _users(fake: FakeUsbmuxd) -> list[int]:
    """The open count of each running forward through this fake usbmuxd."""
    forwards: list[UsbForward] = [f for f in open_forwards() if f.key[0] == str(fake.path)]
    return [f.users for f in forwards]


def _one_step_run(llm_server: Any) -> None:
    llm_server.script([plan_reply("Home", thought="Go home."), plan_reply("Stop"), DONE])


@pytest.mark.timeout(180)
def test_an_agent_closes_the_phone_it_opened_when_its_with_block_ends(
    tmp_path: Path, usbmuxd: FakeUsbmuxd, llm_server: Any
) -> None:
    settings = _settings(tmp_path, usbmuxd, llm_server)
    with Agent(settings) as agent:
        for _ in range(2):  # the phone it opened stays open between its runs: one open, not two
            _one_step_run(llm_server)
            result = agent.run("Go to the home screen")
            assert result.status is RunStatus.COMPLETED, result.reason
            assert _users(usbmuxd) == [1]
    assert _users(usbmuxd) == []  # closed: no forward left on 127.0.0.1
    assert agent.device is None

    _one_step_run(llm_server)  # a closed agent runs again: it opens the phone anew
    assert agent.run("Go to the home screen").status is RunStatus.COMPLETED
    assert _users(usbmuxd) == [1]
    agent.close()
    assert _users(usbmuxd) == []


@pytest.mark.timeout(180)
def test_an_agent_leaves_a_phone_passed_in_open(tmp_path: Path, usbmuxd: FakeUsbmuxd, llm_server: Any) -> None:
    settings = _settings(tmp_path, usbmuxd, llm_server)
    phone = open_phone(settings)
    try:
        _one_step_run(llm_server)
        with Agent(settings, device=phone) as agent:
            assert agent.run("Go to the home screen").status is RunStatus.COMPLETED
        assert agent.device is phone and _users(usbmuxd) == [1]  # the caller's phone: still open
        assert phone.screen_info().width == 1080
    finally:
        close_phone(phone)
    assert _users(usbmuxd) == []


@pytest.mark.timeout(180)
def test_run_script_closes_the_phone_it_opened_and_leaves_a_given_one_open(
    tmp_path: Path, usbmuxd: FakeUsbmuxd
) -> None:
    settings = _settings(tmp_path, usbmuxd)
    for _ in range(2):
        result = run_script(settings, "Home\nStop\n")
        assert result.status is RunStatus.COMPLETED, result.reason
        assert _users(usbmuxd) == []  # each run closed the phone it opened

    phone = open_phone(settings)
    try:
        assert run_script(settings, "Home\nStop\n", device=phone).status is RunStatus.COMPLETED
        assert _users(usbmuxd) == [1] and phone.screen_info().width == 1080  # the caller's: still open
    finally:
        close_phone(phone)
    assert _users(usbmuxd) == []


@pytest.mark.timeout(180)
def test_the_testing_agent_closes_its_phone_with_the_phone_built_on_it(tmp_path: Path, usbmuxd: FakeUsbmuxd) -> None:
    """``mobile_agent.testing.Agent``'s ``phone`` (perception-only assertions) is built on the
    device the agent opened: closed with it, and built anew on the next use."""
    from mobile_agent.testing import Agent as TestingAgent

    settings = _settings(tmp_path, usbmuxd)
    with TestingAgent(settings) as agent:
        first = agent.phone
        assert first.device is agent.device and _users(usbmuxd) == [1]
    assert _users(usbmuxd) == []
    again = agent.phone  # not the phone on the closed device
    assert again is not first and again.device is agent.device and _users(usbmuxd) == [1]
    assert again.device.screen_info().width == 1080
    agent.close()
    assert _users(usbmuxd) == []
