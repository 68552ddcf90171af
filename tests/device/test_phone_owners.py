"""Whoever opens a phone closes it, through the Python API: ``Agent`` and ``run_script`` close
the phone they opened from the settings (``adb.serial``) and never one passed in.

The phone is a simulated iPhone on a USB cable (``tests/usbmux_fake.py``, the real pymobiledevice3
client and forwarder in between), because a USB iPhone's forward counts the opens not yet
closed: a program that runs many tasks and leaves each phone open keeps the forward (a listener
on 127.0.0.1, a task on the usbmux loop thread) and a WDA client's connections for its life. The
model is the scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from mobile_agent.agent import Agent, RunStatus, run_script
from mobile_agent.device import close_phone, open_phone
from mobile_agent.settings import AdbSettings, IosSettings, Settings
from simphone.ios import WdaFrontEnd
from tests.agent_helpers import DONE, agent_settings, plan_reply
from tests.ports import free_port
from tests.usbmux_fake import USB_SERIAL, USB_UDID, FakeUsbmuxd, forwards_through, usbmuxd_with


def _settings(tmp_path: Path, usb_iphone: FakeUsbmuxd, llm: Any = None) -> Settings:
    settings = agent_settings(free_port(), USB_SERIAL, tmp_path / "runs", llm)
    return settings.model_copy(update={
        "adb": AdbSettings(server_port=free_port(), adb_path=str(tmp_path / "no-adb"), serial=USB_SERIAL),
        "ios": IosSettings(usbmuxd=str(usb_iphone.path)),
    })


def _users(fake: FakeUsbmuxd) -> list[int]:
    """The open count of each running forward through this fake usbmuxd."""
    return [f.users for f in forwards_through(fake)]


def _usb_only_env(tmp_path: Path, usb_iphone: FakeUsbmuxd, monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings of a command run in this process (``mobile_agent.cli.main``): no adb at all,
    the fake usbmuxd."""
    for name in [k for k in os.environ if k.startswith("MOBILE_AGENT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(free_port()))
    monkeypatch.setenv("MOBILE_AGENT_ADB__ADB_PATH", str(tmp_path / "no-adb"))
    monkeypatch.setenv("MOBILE_AGENT_IOS__USBMUXD", str(usb_iphone.path))


def _one_step_run(llm_server: Any) -> None:
    llm_server.script([plan_reply("Home", thought="Go home."), plan_reply("Stop"), DONE])


@pytest.mark.timeout(180)
def test_an_agent_closes_the_phone_it_opened_when_its_with_block_ends(
    tmp_path: Path, usb_iphone: FakeUsbmuxd, llm_server: Any
) -> None:
    settings = _settings(tmp_path, usb_iphone, llm_server)
    with Agent(settings) as agent:
        for _ in range(2):  # the phone it opened stays open between its runs: one open, not two
            _one_step_run(llm_server)
            result = agent.run("Go to the home screen")
            assert result.status is RunStatus.COMPLETED, result.reason
            assert _users(usb_iphone) == [1]
    assert _users(usb_iphone) == []  # closed: no forward left on 127.0.0.1
    assert agent.device is None

    _one_step_run(llm_server)  # a closed agent runs again: it opens the phone anew
    assert agent.run("Go to the home screen").status is RunStatus.COMPLETED
    assert _users(usb_iphone) == [1]
    agent.close()
    assert _users(usb_iphone) == []


@pytest.mark.timeout(180)
def test_an_agent_leaves_a_phone_passed_in_open(tmp_path: Path, usb_iphone: FakeUsbmuxd, llm_server: Any) -> None:
    settings = _settings(tmp_path, usb_iphone, llm_server)
    phone = open_phone(settings)
    try:
        _one_step_run(llm_server)
        with Agent(settings, device=phone) as agent:
            assert agent.run("Go to the home screen").status is RunStatus.COMPLETED
        assert agent.device is phone and _users(usb_iphone) == [1]  # the caller's phone: still open
        assert phone.screen_info().width == 1080
    finally:
        close_phone(phone)
    assert _users(usb_iphone) == []


@pytest.mark.timeout(180)
def test_run_script_closes_the_phone_it_opened_and_leaves_a_given_one_open(
    tmp_path: Path, usb_iphone: FakeUsbmuxd
) -> None:
    settings = _settings(tmp_path, usb_iphone)
    for _ in range(2):
        result = run_script(settings, "Home\nStop\n")
        assert result.status is RunStatus.COMPLETED, result.reason
        assert _users(usb_iphone) == []  # each run closed the phone it opened

    phone = open_phone(settings)
    try:
        assert run_script(settings, "Home\nStop\n", device=phone).status is RunStatus.COMPLETED
        assert _users(usb_iphone) == [1] and phone.screen_info().width == 1080  # the caller's: still open
    finally:
        close_phone(phone)
    assert _users(usb_iphone) == []


@pytest.mark.timeout(180)
def test_the_testing_agent_closes_its_phone_with_the_phone_built_on_it(tmp_path: Path, usb_iphone: FakeUsbmuxd) -> None:
    """``mobile_agent.testing.Agent``'s ``phone`` (perception-only assertions) is built on the
    device the agent opened: closed with it, and built anew on the next use."""
    from mobile_agent.testing import Agent as TestingAgent

    settings = _settings(tmp_path, usb_iphone)
    with TestingAgent(settings) as agent:
        first = agent.phone
        assert first.device is agent.device and _users(usb_iphone) == [1]
    assert _users(usb_iphone) == []
    again = agent.phone  # not the phone on the closed device
    assert again is not first and again.device is agent.device and _users(usb_iphone) == [1]
    assert again.device.screen_info().width == 1080
    agent.close()
    assert _users(usb_iphone) == []


class _Gate:
    """A TCP relay in front of the simulated iPhone's WDA whose first ``parties`` connections
    wait for one another before a byte passes: that many opens of the phone are in flight at
    once, whatever the scheduling (the barrier's timeout only ends a broken build's wait)."""

    def __init__(self, target_url: str, parties: int = 2) -> None:
        host, port = target_url.removeprefix("http://").rsplit(":", 1)
        self.target = (host, int(port))
        self.barrier = threading.Barrier(parties)
        self.waiting = parties
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        with self.lock:
            gated, self.waiting = self.waiting > 0, self.waiting - 1
        if gated:
            self.barrier.wait(timeout=120)
        upstream = socket.create_connection(self.target)
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        _pipe(client, upstream)

    def close(self) -> None:
        self.listener.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


@pytest.mark.timeout(180)
def test_mcp_keeps_one_phone_when_two_first_calls_open_it_at_once(tmp_path: Path, front: WdaFrontEnd) -> None:
    """Two MCP tool calls at once on a phone not yet opened (``PhoneService.screenshot``, what the
    screenshot tool calls in its thread): both open it, one is kept and the other closed, so the
    forward counts one user; ``close`` (``mobile-agent mcp``'s end) lets go of it."""
    from mobile_agent.mcp_server.phone import PhoneService

    gate = _Gate(front.url)
    try:
        with usbmuxd_with(USB_UDID, 13, gate.url) as fake:
            service = PhoneService(_settings(tmp_path, fake))
            with ThreadPoolExecutor(2) as pool:
                shots = list(pool.map(lambda _: service.screenshot(USB_SERIAL), range(2)))
            assert gate.barrier.broken is False and gate.waiting <= 0  # both opens were in flight together
            assert [(s.screen_width, s.screen_height) for s in shots] == [(1080, 2400)] * 2
            assert service.device(USB_SERIAL) is service.device(USB_SERIAL)
            assert _users(fake) == [1]  # the phone kept; the other open closed
            service.close()
            assert _users(fake) == []
    finally:
        gate.close()


@pytest.mark.timeout(180)
def test_mobile_agent_run_closes_the_phone_it_opened(tmp_path: Path, usb_iphone: FakeUsbmuxd,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``mobile-agent run --serial ios:<UDID> --script`` in this process (``main`` returns what the
    command exits with): the forward its phone took is gone when it returns."""
    from mobile_agent.cli import main

    _usb_only_env(tmp_path, usb_iphone, monkeypatch)
    script = tmp_path / "home.txt"
    script.write_text("Home\nStop\n", encoding="utf-8")
    assert main(["run", "--serial", USB_SERIAL, "--script", str(script), "-o", str(tmp_path / "runs"), "--quiet"]) == 0
    assert _users(usb_iphone) == []


@pytest.mark.timeout(300)
def test_eval_mobile_eval_closes_the_phones_it_opened(tmp_path: Path, usb_iphone: FakeUsbmuxd,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``mobile-agent eval mobile-eval --device ios:<UDID>`` in this process: the phones it opened
    for the suite are closed when it returns."""
    from mobile_agent.cli import main

    _usb_only_env(tmp_path, usb_iphone, monkeypatch)
    code = main(["eval", "mobile-eval", "--device", USB_SERIAL, "--script-reference", "--task", "settings-1",
                 "-o", str(tmp_path / "eval")])
    assert code == 0
    assert _users(usb_iphone) == []


@pytest.mark.timeout(300)
def test_mobile_agent_test_closes_the_phone_it_opened(tmp_path: Path, usb_iphone: FakeUsbmuxd,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``mobile-agent test FLOW --serial ios:<UDID>`` in this process: the forward its phone took is
    gone when it returns."""
    from mobile_agent.cli import main

    _usb_only_env(tmp_path, usb_iphone, monkeypatch)
    flow = tmp_path / "home.yaml"
    flow.write_text("name: home\nsteps:\n  - do: Home\n", encoding="utf-8")
    assert main(["test", str(flow), "--serial", USB_SERIAL, "--output", str(tmp_path / "out")]) == 0
    assert _users(usb_iphone) == []
