"""``with Agent(settings) as agent:`` — an exception that leaves the block while a run of that
agent goes on in another thread is the one the caller sees. ``close()`` refuses while a run is
in progress (``RuntimeError``: the run still drives the phone); at the block's end with an
exception on its way out, that refusal replaced the caller's own error (a KeyboardInterrupt,
a failed assertion). The simulated phone over the real adb server; the model is the scripted
OpenAI-compatible server, holding its answer until the test lets it go (no clock involved)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mobile_agent.agent import Agent, RunResult, RunStatus
from tests.agent_helpers import DONE, agent_settings, plan_reply
from tests.llm_server import Reply


class _CallersError(Exception):
    pass


@pytest.mark.timeout(180)
def test_an_error_leaving_the_with_block_during_a_run_is_not_replaced(
    adb_server: Any, sim_phone: Any, llm_server: Any, tmp_path: Path
) -> None:
    answer = threading.Event()
    llm_server.script([Reply(plan_reply("Stop"), hold=answer), DONE])
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path / "runs", llm_server)
    results: list[RunResult] = []
    runner: threading.Thread | None = None
    try:
        with pytest.raises(_CallersError), Agent(settings) as agent:
            runner = threading.Thread(target=lambda: results.append(agent.run("Stop at once")), daemon=True)
            runner.start()
            deadline = time.monotonic() + 120  # a guard for a broken build only
            while not llm_server.chat_requests:  # the run waits for the model: it is in progress
                assert runner.is_alive() and time.monotonic() < deadline, results
                time.sleep(0.05)
            raise _CallersError("the caller's own error")
    finally:
        answer.set()
        if runner is not None:
            runner.join(120)
    assert results and results[0].status is RunStatus.COMPLETED, results
    agent.close()  # the run has returned: now the phone it opened is closed
    assert agent.device is None
