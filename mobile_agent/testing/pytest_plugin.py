"""The pytest plugin of mobile-agent (entry point ``pytest11``: loaded by pytest once installed).

Options:

- ``--phone SERIAL``: the phone the tests drive (an attached phone, an emulator, ``HOST:PORT``);
- ``--simphone``: start a simulated phone (``python -m simphone serve``, a process of its
  own that meets the tests only over ADB, as a real phone would) and drive it;
- ``--mobile-agent-output DIR``: trajectories, reports and failure evidence (default
  ``runs/pytest``).

Without either option the phone is the one ``mobile-agent`` would pick (``adb.serial``,
``ANDROID_SERIAL``, or the only attached phone). Settings come from ``load_settings()``
(``MOBILE_AGENT_*``, ``$MOBILE_AGENT_CONFIG``), so the model endpoint is configured as for
``mobile-agent run``.

Fixtures: ``mobile_agent_settings`` (session), ``phone`` (``mobile_agent.testing.Phone``)
and ``agent`` (``mobile_agent.testing.Agent``) on that phone.

A failed test that used ``phone`` or ``agent`` gets a ``mobile-agent`` section in its
failure text, in the terminal and in pytest's ``--junitxml`` (the failure element's text):
the screenshot the failed check judged (or the screen at the failure), a report.html of
the test (a trajectory with ``mode = "pytest"``: the screen at the failure and the error),
and the reports of the agent's runs.

May import: pytest, ``mobile_agent``; simphone only as a separate process.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import ExceptionRepr  # what a failed call's longrepr is (sections print with it)

from mobile_agent.settings import Settings

__all__ = ["SimPhoneProcess"]

_PHONE_KEY = pytest.StashKey[dict[str, Any]]()
_SECTION = "mobile-agent"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mobile-agent", "mobile-agent: testing Android apps")
    group.addoption("--phone", metavar="SERIAL", default=None, help="the phone the phone/agent fixtures drive")
    group.addoption("--simphone", action="store_true", default=False,
                    help="start a simulated phone (python -m simphone serve) for the phone/agent fixtures")  # fmt: skip
    group.addoption("--mobile-agent-output", metavar="DIR", default="runs/pytest",
                    help="trajectories, reports and failure screenshots (default runs/pytest)")  # fmt: skip


class SimPhoneProcess:
    """A simulated phone served by ``python -m simphone serve`` on a free port, connected
    to the adb server of ``settings``."""

    def __init__(self, settings: Settings) -> None:
        from mobile_agent.device import connect, ensure_server

        ensure_server(settings.adb)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "simphone", "serve", "--port", str(port)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()  # "SERIAL model profile WxH seed=S"
        if not line:
            self.process.kill()
            raise pytest.UsageError("--simphone: the simulated phone did not start (python -m simphone serve)")
        self.serial = line.split()[0]
        connect(self.serial, settings.adb)
        self.settings = settings

    def stop(self) -> None:
        from mobile_agent.device.server import ensure_server

        try:
            ensure_server(self.settings.adb).query(f"host:disconnect:{self.serial}")
        except Exception:  # the adb server may be gone already at the end of the session
            pass
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


@pytest.fixture(scope="session")
def mobile_agent_settings(request: pytest.FixtureRequest) -> Iterator[Settings]:
    """The settings of the session's phone: ``--phone``, the ``--simphone`` one, or the default."""
    from mobile_agent.settings import load_settings

    config = request.config
    output = Path(config.getoption("--mobile-agent-output"))
    settings = load_settings(None, {"agent.output_dir": str(output)})
    simulated = None
    serial = config.getoption("--phone")
    if config.getoption("--simphone"):
        simulated = SimPhoneProcess(settings)
        serial = simulated.serial
    if serial:
        settings = settings.model_copy(update={"adb": settings.adb.model_copy(update={"serial": serial})})
    try:
        yield settings
    finally:
        if simulated is not None:
            simulated.stop()


@pytest.fixture
def phone(mobile_agent_settings: Settings, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A ``mobile_agent.testing.Phone``: perception-only assertions on the session's phone.

    The phone is this test's for its duration (``mobile_agent.device.PhoneLease``, as
    ``mobile-agent test`` takes it): a phone that a REST task, an MCP session or a run holds
    fails the test at set-up, naming the holder, instead of two drivers interleaving taps."""
    from mobile_agent.device import PhoneLease
    from mobile_agent.errors import PhoneBusyError
    from mobile_agent.testing import Phone

    settings = mobile_agent_settings
    made = Phone.open(settings)
    lease = PhoneLease(settings.adb, made.device.serial, f"pytest {request.node.nodeid} (pid {os.getpid()})")
    try:
        lease.acquire()
    except PhoneBusyError as exc:
        made.close()
        pytest.fail(f"mobile-agent: {exc.message}; run the tests again when it is free", pytrace=False)
    made.evidence_dir = Path(settings.agent.output_dir) / "evidence"
    request.node.stash[_PHONE_KEY] = {"phone": made, "agent": request.node.stash.get(_PHONE_KEY, {}).get("agent")}
    try:
        yield made
    finally:
        lease.release()
        made.close()  # an iPhone's WDA connections (a USB iPhone's forward) end with the test


@pytest.fixture
def agent(mobile_agent_settings: Settings, phone: Any, request: pytest.FixtureRequest) -> Any:
    """A ``mobile_agent.testing.Agent`` on the session's phone (runs, check, extract, wait_for)."""
    from mobile_agent.testing import Agent

    made = Agent(mobile_agent_settings, device=phone.device, phone=phone)
    request.node.stash[_PHONE_KEY] = {"phone": phone, "agent": made}
    return made


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    used = item.stash.get(_PHONE_KEY, None)
    if not used or not report.failed or call.when != "call":
        return
    try:
        lines = _evidence(item, call, used)
    except Exception as exc:  # the evidence must never hide the failure itself
        lines = [f"(no evidence: {type(exc).__name__}: {exc})"]
    text = "\n".join(lines)
    longrepr = report.longrepr
    if isinstance(longrepr, ExceptionRepr):
        longrepr.addsection(_SECTION, text)
    else:  # a plain-text longrepr (a skip, an xfail strict): keep it readable
        report.longrepr = f"{longrepr}\n\n{_SECTION}\n{text}"
    report.sections.append((_SECTION, text))


def _evidence(item: pytest.Item, call: pytest.CallInfo[None], used: dict[str, Any]) -> list[str]:
    """The failed test's evidence: the judged screenshot, a report of the test, its runs' reports."""
    from mobile_agent.agent import RunStatus
    from mobile_agent.agent.session import RunSession
    from mobile_agent.testing import Agent, CheckFailedError, ScreenAssertionError

    phone = used["phone"]
    error = call.excinfo.value if call.excinfo is not None else None
    lines = []
    judged = error.screenshot_path if isinstance(error, (ScreenAssertionError, CheckFailedError)) else None
    if judged is not None:
        lines.append(f"screenshot: {Path(judged).resolve()}")
    session = RunSession(phone.settings, instruction=f"pytest: {item.nodeid}", mode="pytest", device=phone.device,
                         on_event=None, output_dir=None, cancel=None)  # fmt: skip
    index = session.take_index()
    draft = session.capture(phone.device, None, index)
    draft.begun, draft.by, draft.ok = True, "pytest", False
    draft.action_text = f"test failed: {item.name}"
    draft.feedback = str(error)[:4000] if error is not None else "the test failed"
    step = session.record(draft)
    session.finish(RunStatus.NOT_COMPLETED, f"{type(error).__name__ if error else 'failure'} in {item.nodeid}")
    if judged is None:
        lines.append(f"screenshot: {(session.trajectory_dir / step.screenshot).resolve()}")
    lines.append(f"report: {(session.trajectory_dir / 'report.html').resolve()}")
    agent = used.get("agent")
    for result in agent.results if isinstance(agent, Agent) else []:
        lines.append(f"run {result.run_id} ({result.status.value}): {result.report_path.resolve()}")
    lines.append(f"[[ATTACHMENT|{(session.trajectory_dir / 'report.html').resolve()}]]")
    return lines

