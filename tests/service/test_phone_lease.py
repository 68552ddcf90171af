"""One phone, one run, whatever the interface (mobile_agent.device.lease, docs/security.md).

Three MCP sessions over streamable HTTP call ``run_instruction`` on one phone at once: the texts
each run types reach the phone (its own command history, read over the test) in three unbroken
blocks, never interleaved. ``mobile-agent run`` against a phone an MCP run holds is refused
naming the holder; a REST task on it waits and then runs. A viewer's token may look at the
phone over MCP but not act. The lease itself: threads and processes exclude each other, a
dead holder frees the phone.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mobile_agent.device import PhoneLease, lease_holder  # noqa: E402
from mobile_agent.errors import PhoneBusyError  # noqa: E402
from mobile_agent.settings import load_settings  # noqa: E402
from tests.agent_helpers import cli_env, run_cli  # noqa: E402
from tests.mcp_helpers import ROOT, http_session, mcp_env, serve_http, tool_json  # noqa: E402
from tests.ports import free_port  # noqa: E402
from tests.server_fixtures import TaggedPlanner  # noqa: E402

TOKEN = "lease-admin-token"
VIEWER = "lease-viewer-token"
RUNS = ("t-a", "t-b", "t-c")
STEPS_PER_RUN = 3


def _marker(tag: str, i: int) -> str:
    return f"q{tag[-1]}{i}z"  # what the run types at its step i: where it lands on the phone names the run


def _plan(tag: str) -> list[str]:
    return [f"Type ({_marker(tag, i)})" for i in range(STEPS_PER_RUN)]


class TypingRecorder:
    """Reads the phone's own command history as the test runs and keeps each marker the runs
    typed, in the order the phone got them (every marker is different)."""

    def __init__(self, phone: Any) -> None:
        self.phone = phone
        self.seen: list[str] = []
        self._markers = {_marker(tag, i): tag for tag in RUNS for i in range(STEPS_PER_RUN)}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            for argv in list(self.phone.history):
                line = " ".join(argv)
                for marker in self._markers:
                    if marker in line and marker not in self.seen:
                        self.seen.append(marker)
            time.sleep(0.005)

    def stop(self) -> list[str]:
        self._stop.set()
        self._thread.join(5)
        return [self._markers[marker] for marker in self.seen]


def _blocks(tags: list[str]) -> list[str]:
    """The runs in the order their taps came, one entry per unbroken block."""
    return [tag for i, tag in enumerate(tags) if i == 0 or tags[i - 1] != tag]


def test_three_mcp_sessions_running_at_once_never_interleave_on_one_phone(adb_server, sim_phone, llm_server,
                                                                          tmp_path: Path) -> None:

    llm_server.script([], default=TaggedPlanner(plans={tag: _plan(tag) for tag in RUNS},
                                                delay_s=dict.fromkeys(RUNS, 0.05)))
    env = mcp_env(adb_server.port, MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url,
                  MOBILE_AGENT_PLANNER__API_KEY="k-lease", MOBILE_AGENT_PLANNER__MODEL="scripted-vlm",
                  MOBILE_AGENT_AGENT__COMPLETION_CHECK="false", MOBILE_AGENT_SERVER__API_TOKEN=TOKEN,
                  MOBILE_AGENT_SERVER__TOKENS=f'{{"vic": {{"token": "{VIEWER}", "role": "viewer"}}}}')
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"),
                      log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"
    recorder = TypingRecorder(sim_phone.phone)
    results: dict[str, dict[str, Any]] = {}

    async def one_run(tag: str) -> None:
        async with http_session(url, TOKEN) as session:
            results[tag] = tool_json(await session.call_tool(
                "run_instruction", {"instruction": f"[{tag}] type three words", "max_steps": 6}))

    async def as_viewer() -> None:
        async with http_session(url, VIEWER) as session:
            assert tool_json(await session.call_tool("list_devices", {}))["devices"]
            refused = await session.call_tool("home", {})
            assert refused.is_error and "viewer" in str(refused.content)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for tag in RUNS:
                group.start_soon(one_run, tag)
        await as_viewer()

    try:
        anyio.run(main)
    finally:
        tags = recorder.stop()
        proc.terminate()
        proc.wait(timeout=30)
    assert {tag: r["status"] for tag, r in results.items()} == {tag: "completed" for tag in RUNS}, results
    assert sorted(tags) == sorted(tag for tag in RUNS for _ in range(STEPS_PER_RUN)), tags
    assert sorted(_blocks(tags)) == sorted(RUNS), f"the runs' steps interleaved on the phone: {tags}"


def test_the_cli_is_refused_a_phone_another_interface_holds_and_a_rest_task_waits_for_it(
        service, sim_phones, adb_server, tmp_path: Path) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone])
    adb = live.settings.adb
    holder = PhoneLease(adb, phone.serial, "MCP session of alice")
    holder.acquire()
    try:
        script = tmp_path / "home.txt"
        script.write_text("Home\n", encoding="utf-8")
        refused = run_cli("--serial", phone.serial, "--script", str(script), "--output", str(tmp_path / "cli"),
                          "-i", "go home", env=cli_env(adb_server.port))
        assert refused.returncode == 3, refused.stderr
        assert f"phone {phone.serial} is busy: MCP session of alice holds it" in refused.stderr
        assert phone.phone.history and not any(argv[:3] == ["input", "keyevent", "KEYCODE_HOME"] for argv in
                                               list(phone.phone.history)[-5:])

        task = live.submit("waits for the phone", script="Home")
        deadline = time.monotonic() + 30
        while live.state.store.last_event(task["id"], "waiting_for_phone") is None:
            assert time.monotonic() < deadline, live.client.get(f"/v1/tasks/{task['id']}").json()
            time.sleep(0.05)
        assert live.client.get(f"/v1/tasks/{task['id']}").json()["steps"] == 0
    finally:
        holder.release()
    done = live.wait_task(task["id"])
    assert done["status"] == "completed", done
    assert lease_holder(adb, phone.serial) is None


def test_the_lease_excludes_threads_and_processes_and_ends_with_its_holder(tmp_path: Path) -> None:
    adb = load_settings(overrides={"adb.server_port": free_port()}).adb
    first = PhoneLease(adb, "emulator-5554", "the first")
    first.acquire()
    with pytest.raises(PhoneBusyError) as busy:
        PhoneLease(adb, "emulator-5554", "the second", wait_s=0.2).acquire()
    assert busy.value.fields == {"serial": "emulator-5554", "holder": "the first"}
    with PhoneLease(adb, "emulator-5555", "another phone"):  # another phone is free
        pass
    released = threading.Timer(0.3, first.release)
    released.start()
    with PhoneLease(adb, "emulator-5554", "the waiter", wait_s=10) as waited:  # gets it once the first lets go
        assert lease_holder(adb, "emulator-5554") == "the waiter" and waited.holder == "the waiter"
    cancel = threading.Event()
    cancel.set()
    with PhoneLease(adb, "emulator-5554", "holds"), pytest.raises(PhoneBusyError):
        PhoneLease(adb, "emulator-5554", "cancelled", wait_s=60, cancel=cancel).acquire()

    code = ("import sys, time; from mobile_agent.device import PhoneLease; from mobile_agent.settings import "
            f"load_settings; lease = PhoneLease(load_settings(overrides={{'adb.server_port': {adb.server_port}}}).adb, "
            "'emulator-5554', 'a process'); lease.acquire(); print('held', flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        assert lease_holder(adb, "emulator-5554") == "a process"
        with pytest.raises(PhoneBusyError):
            PhoneLease(adb, "emulator-5554", "here", wait_s=0.1).acquire()
    finally:
        child.kill()
        child.wait(10)
    with PhoneLease(adb, "emulator-5554", "after the holder died", wait_s=5):
        pass
