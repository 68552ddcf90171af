"""One trajectory per MCP session, over the real transports: the SDK's client over stdio
against ``mobile-agent mcp`` (and a client process killed mid-session, and a server
killed mid-session), and over streamable HTTP (a session deleted by its client, a session
left to the idle timeout); the simulated phone behind the real adb server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from PIL import Image  # noqa: E402

from tests.mcp_helpers import (  # noqa: E402
    ROOT,
    mcp_env,
    serve_http,
    stdio_session,
    tool_json,
    trajectory_lines,
    wait_for_result,
)
from tests.ports import free_port  # noqa: E402

pytestmark = pytest.mark.timeout(240)


def _folders(runs: Path) -> list[Path]:
    return sorted(p.parent for p in runs.glob("*/trajectory.jsonl"))


def _report_data(html: str) -> dict[str, Any]:
    """The run as the report page holds it (its ``run-data`` block)."""
    start = html.index('<script type="application/json" id="run-data">') + len('<script type="application/json" id="run-data">')
    return json.loads(html[start:html.index("</script>", start)])


def _whole_steps(folder: Path) -> list[dict[str, Any]]:
    """The step lines of ``folder``, each with its images on disk and readable."""
    steps = [line for line in trajectory_lines(folder) if line["type"] == "step"]
    for step in steps:
        for key in ("screenshot", "annotated"):
            if step.get(key):
                with Image.open(folder / step[key]) as image:
                    image.load()  # a truncated file raises here
    return steps


def test_the_operations_of_one_stdio_session_are_one_trajectory(adb_server, sim_phone, tmp_path):
    env = mcp_env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"))
    runs = tmp_path / "runs"
    args = ("--serial", sim_phone.serial, "--runs-dir", str(runs))
    answers: list[dict[str, Any]] = []

    async def first() -> None:
        async with stdio_session(env, *args) as session:
            answers.append(tool_json(await session.call_tool("open_app", {"app": "Settings"})))
            answers.append(tool_json(await session.call_tool("click_text", {"text": "Display & brightness"})))
            await session.call_tool("screenshot", {})  # looking is no step
            answers.append(tool_json(await session.call_tool("click_text", {"text": "Zzyzx nowhere"})))
            answers.append(tool_json(await session.call_tool("home", {})))
            assert [a["ok"] for a in answers] == [True, True, False, True], answers
            assert [a["step"] for a in answers] == [1, 2, 3, 4]
            assert len({a["run_id"] for a in answers}) == 1
            assert len(_folders(runs)) == 1  # written as the calls come
            live = await session.read_resource(f"run://{answers[0]['run_id']}/report")
            shown = _report_data(live.contents[0].text)
            assert len(shown["steps"]) == 4 and shown["result"] is None  # open: the report as it stands

    anyio.run(first)
    (folder,) = _folders(runs)
    result = wait_for_result(folder)
    header, *steps, _ = trajectory_lines(folder)
    assert header["mode"] == "mcp" and header["run_id"] == answers[0]["run_id"]
    assert [s["action_text"] for s in steps] == [
        "Open App (Settings)", "Click text (Display & brightness)", "Click text (Zzyzx nowhere)", "Home"]
    assert all(s["by"] == "mcp" for s in steps) and [s["ok"] for s in steps] == [True, True, False, True]
    assert steps[1]["tap_point"] == answers[1]["tap_point"]
    assert result["status"] == "completed" and result["steps"] == 4 and "MCP session ended" in result["reason"]
    assert len(_whole_steps(folder)) == 4
    report = _report_data((folder / "report.html").read_text(encoding="utf-8"))
    assert [s.get("action_text") for s in report["steps"] if not s.get("final")] == [s["action_text"] for s in steps]
    assert all(s["image"] for s in report["steps"])  # every step's screen is in the report

    async def second() -> None:
        async with stdio_session(env, *args) as session:
            answers.append(tool_json(await session.call_tool("back", {})))

    anyio.run(second)
    assert len(_folders(runs)) == 2  # a second session, a second trajectory
    assert answers[-1]["run_id"] != answers[0]["run_id"] and answers[-1]["step"] == 1
    (other,) = [f for f in _folders(runs) if f != folder]
    assert wait_for_result(other)["steps"] == 1


CLIENT = """
import sys, anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from tests.mcp_helpers import stdio_params, mcp_env

async def main():
    params = stdio_params(mcp_env(int(sys.argv[1])), "--serial", sys.argv[2], "--runs-dir", sys.argv[3])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for name, arguments in (("open_app", {"app": "Settings"}), ("back", {}), ("home", {})):
            result = await session.call_tool(name, arguments)
            assert not result.is_error, result
        print("three steps", flush=True)
        await anyio.sleep(600)

anyio.run(main)
"""


def test_a_client_killed_mid_session_leaves_its_steps_and_the_server_ends_the_trajectory(adb_server, sim_phone, tmp_path):
    runs = tmp_path / "runs"
    client = subprocess.Popen([sys.executable, "-c", CLIENT, str(adb_server.port), sim_phone.serial, str(runs)],
                              cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE, text=True)
    try:
        assert client.stdout is not None
        assert client.stdout.readline().strip() == "three steps"
    finally:
        client.kill()  # no goodbye: the server only sees its stdin close
        client.wait(timeout=30)
    (folder,) = _folders(runs)
    result = wait_for_result(folder)  # stdin closed: the server ends the session's trajectory
    assert result["steps"] == 3
    assert [s["action_text"] for s in _whole_steps(folder)] == ["Open App (Settings)", "Back", "Home"]
    assert (folder / "report.html").is_file()


def test_a_server_killed_mid_session_leaves_whole_steps_and_the_report_is_made_afterwards(adb_server, sim_phone, tmp_path):
    env = mcp_env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"))
    runs, pidfile = tmp_path / "runs", tmp_path / "server.pid"

    async def main() -> None:
        with anyio.move_on_after(60):  # the client may or may not notice the dead server on its way out
            async with stdio_session(env, "--serial", sim_phone.serial, "--runs-dir", str(runs), pidfile=pidfile) as session:
                for name, arguments in (("open_app", {"app": "Settings"}),
                                        ("click_text", {"text": "Display & brightness"}), ("back", {})):
                    assert tool_json(await session.call_tool(name, arguments))["ok"]
                os.kill(int(pidfile.read_text()), signal.SIGKILL)

    try:
        anyio.run(main)
    except BaseException as exc:  # noqa: BLE001 - a client's complaint about its dead server is not under test
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
    (folder,) = _folders(runs)
    lines = trajectory_lines(folder)
    assert lines[-1]["type"] == "step"  # nobody wrote an end
    steps = _whole_steps(folder)
    assert [s["action_text"] for s in steps] == ["Open App (Settings)", "Click text (Display & brightness)", "Back"]
    assert not (folder / "report.html").exists()
    made = subprocess.run([sys.executable, "-m", "mobile_agent.cli", "report", str(folder)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0 and made.stdout.strip() == str(folder / "report.html"), made.stderr
    report = _report_data((folder / "report.html").read_text(encoding="utf-8"))
    assert len(report["steps"]) == 3 and report["result"] is None and all(s["image"] for s in report["steps"])
    nothing = subprocess.run([sys.executable, "-m", "mobile_agent.cli", "report", str(tmp_path)],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert nothing.returncode == 2 and "holds no trajectory.jsonl" in nothing.stderr


def test_streamable_http_sessions_each_have_a_trajectory_closed_on_delete_or_idle(adb_server, sim_phone, tmp_path):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    token, port = "mcp-session-token-3b9d", free_port()
    runs = tmp_path / "runs"
    proc = serve_http(mcp_env(adb_server.port, MOBILE_AGENT_SERVER__API_TOKEN=token), port, "--serial", sim_phone.serial,
                      "--runs-dir", str(runs), "--session-idle-timeout", "2", log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"

    async def session(calls: list[str], *, delete: bool) -> list[dict[str, Any]]:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as client:
            async with streamable_http_client(url, http_client=client, terminate_on_close=delete) as (read, write, *_):
                async with ClientSession(read, write) as mcp:
                    await mcp.initialize()
                    return [tool_json(await mcp.call_tool(name, {})) for name in calls]

    try:
        deleted = anyio.run(lambda: session(["home", "back"], delete=True))
        assert deleted[0]["run_id"] == deleted[1]["run_id"] and [a["step"] for a in deleted] == [1, 2]
        (first,) = _folders(runs)
        assert wait_for_result(first)["steps"] == 2  # DELETE ended the session
        header = trajectory_lines(first)[0]
        assert header["mode"] == "mcp" and "HTTP session" in header["instruction"]

        left = anyio.run(lambda: session(["home"], delete=False))
        (second,) = [f for f in _folders(runs) if f != first]
        assert trajectory_lines(second)[0]["run_id"] == left[0]["run_id"]
        assert wait_for_result(second)["steps"] == 1  # no DELETE: the idle timeout ended it
    finally:
        proc.terminate()
        proc.wait(timeout=30)
