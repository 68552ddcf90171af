"""`mobile-agent mcp` as an MCP client sees it: the official SDK's own client
(``ClientSession`` over ``stdio_client`` — a ``mobile-agent mcp`` subprocess — and over
``streamable_http_client`` against real uvicorn on loopback), the simulated phone behind the
real adb server, the scripted LLM server for whole runs."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx  # noqa: E402
from mcp import ClientSession  # noqa: E402
from PIL import Image  # noqa: E402

from tests.agent_helpers import DONE, plan_reply  # noqa: E402
from tests.llm_fixtures import Reply  # noqa: E402
from tests.mcp_helpers import ROOT, mcp_env, serve_http, stdio_session, tool_json, trajectory_lines  # noqa: E402
from tests.ports import free_port  # noqa: E402

pytestmark = pytest.mark.timeout(240)


def _run(coro_fn: Any) -> None:
    anyio.run(coro_fn)


def test_stdio_tools_drive_the_phone_and_bad_arguments_are_tool_errors(adb_server, sim_phone, tmp_path):
    env = mcp_env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"))
    runs = tmp_path / "runs"

    async def main() -> None:
        async with stdio_session(env, "--serial", sim_phone.serial, "--runs-dir", str(runs)) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            # names, descriptions and schemas come from the operation cards
            from mobile_agent.operations import COORDINATE_REGISTRY, REGISTRY

            click = REGISTRY.get("click_text")
            assert click.description in tools["click_text"].description
            assert tools["click_text"].input_schema["required"] == ["text"]
            tap = COORDINATE_REGISTRY.get("tap_point")
            assert set(tools["tap_point"].input_schema["properties"]) == {*tap.fields, "serial"}
            assert {"list_devices", "screenshot", "find_text", "find_icon", "open_app", "back", "home",
                    "type", "swipe_points", "run_instruction", "read_trajectory"} <= set(tools)
            assert "stop" not in tools  # ends a planned run; meaningless as a tool

            devices = tool_json(await session.call_tool("list_devices", {}))
            assert sim_phone.serial in [d["serial"] for d in devices["devices"]]

            shot = await session.call_tool("screenshot", {"max_side": 400})
            assert not shot.is_error
            image = next(c for c in shot.content if c.type == "image")
            assert image.mime_type == "image/png"
            picture = Image.open(io.BytesIO(base64.b64decode(image.data)))
            info = json.loads(next(c.text for c in shot.content if c.type == "text"))
            assert max(picture.size) == 400 and list(picture.size) == info["image"]
            assert max(info["screen"]) > 400  # the phone's own screen is larger: it was downscaled

            last = await session.read_resource(f"phone://devices/{sim_phone.serial}/screenshot")
            assert base64.b64decode(last.contents[0].blob) == base64.b64decode(image.data)

            # bad arguments: a tool error, and the server goes on serving
            bad = await session.call_tool("tap_point", {"x": "left", "y": 10})
            assert bad.is_error
            missing = await session.call_tool("click_text", {})
            assert missing.is_error
            assert tool_json(await session.call_tool("list_devices", {}))

    _run(main)


def test_operations_act_through_the_agent_and_answer_their_step(adb_server, sim_phone, tmp_path):
    env = mcp_env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"))

    async def main() -> None:
        async with stdio_session(env, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs")) as session:
            opened = tool_json(await session.call_tool("open_app", {"app": "Settings"}))
            assert opened["ok"] and opened["status"] == "completed", opened
            assert sim_phone.adb_state()["foreground"] == "com.android.settings"

            found = tool_json(await session.call_tool("find_text", {"text": "Display & brightness"}))
            assert found["status"] == "found", found
            left, top, right, bottom = found["box"]
            truth = sim_phone.element("Display & brightness")["box"]  # position-verified: the box is on the real element
            x, y = found["point"]
            assert truth[0] <= x <= truth[2] and truth[1] <= y <= truth[3]
            assert left < right and top < bottom

            clicked = tool_json(await session.call_tool("click_text", {"text": "Display & brightness"}))
            assert clicked["ok"] and clicked["tap_point"] == found["point"], clicked
            assert sim_phone.adb_state()["current"]["view"] != "home"

            missing = tool_json(await session.call_tool("click_text", {"text": "Zzyzx nowhere"}))
            assert not missing["ok"] and missing["status"] == "not_completed" and missing["feedback"]

            home = tool_json(await session.call_tool("home", {}))
            assert home["ok"] and sim_phone.adb_state()["foreground"] == "com.android.launcher3"

            record = tool_json(await session.call_tool("read_trajectory", {"run_id": clicked["run_id"]}))
            assert record["run"]["run_id"] == clicked["run_id"] == opened["run_id"]  # the session's trajectory
            assert record["steps"][clicked["step"] - 1]["action_text"] == "Click text (Display & brightness)"
            assert record["result"] is None  # open while the session is
            report = await session.read_resource(f"run://{clicked['run_id']}/report")
            assert "<html" in report.contents[0].text.lower()

            unknown = await session.call_tool("read_trajectory", {"run_id": "no-such-run"})
            assert unknown.is_error and "no run" in unknown.content[0].text

    _run(main)


def test_app_policy_and_confirmations_apply_to_mcp_tools(adb_server, sim_phone, tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text('deny_apps = ["com.android.chrome"]\n', encoding="utf-8")
    env = mcp_env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"))
    asked: list[str] = []

    async def approve(context: Any, params: Any) -> Any:
        from mcp_types import ElicitResult

        asked.append(params.message)
        return ElicitResult(action="accept", content={"approve": True, "note": ""})

    async def main() -> None:
        args = ("--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"), "--policy", str(policy))
        async with stdio_session(env, *args) as session:  # this client offers no elicitation
            denied = tool_json(await session.call_tool("open_app", {"app": "Chrome"}))
            assert not denied["ok"] and "deny_apps" in denied["feedback"], denied
            assert sim_phone.adb_state()["foreground"] == "com.android.launcher3"
            # "Install" is a sensitive word (data/sensitive.toml): nobody to ask, refused, said why
            refused = tool_json(await session.call_tool("click_text", {"text": "Install"}))
            assert not refused["ok"] and "nobody confirmed it" in refused["feedback"]
            assert "elicitation" in refused["feedback"], refused
        async with stdio_session(env, *args, elicitation_callback=approve) as session:
            approved = tool_json(await session.call_tool("click_text", {"text": "Install"}))
            assert len(asked) == 1 and "Install" in asked[0]
            assert approved["asked_user"]["reply"]["kind"] == "approve"
            assert "confirmed" not in approved["feedback"]  # it went on to look for the text

    _run(main)


def test_streamable_http_needs_the_bearer_token(adb_server, sim_phone, tmp_path):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    token = "mcp-test-token-7f3a"
    env = mcp_env(adb_server.port)
    no_token = subprocess.run([sys.executable, "-m", "mobile_agent.cli", "mcp", "--transport", "http"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert no_token.returncode == 2 and "bearer token" in no_token.stderr  # never an open endpoint
    only_named = subprocess.run([sys.executable, "-m", "mobile_agent.cli", "mcp", "--transport", "http", "--port", "1"],
                                cwd=ROOT, env=dict(env, MOBILE_AGENT_SERVER__TOKENS='{"bob": ""}'),
                                capture_output=True, text=True, timeout=60)
    assert only_named.returncode == 2 and "bearer token" in only_named.stderr  # an empty token is no token

    port = free_port()
    proc = serve_http(dict(env, MOBILE_AGENT_SERVER__API_TOKEN=token,
                            MOBILE_AGENT_SERVER__TOKENS='{"alice": "alice-token-91c2"}'),
                       port, "--serial", sim_phone.serial, log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}):
            refused = httpx.post(url, json=hello, headers=headers, timeout=10)
            assert refused.status_code == 401, refused.text
        named = httpx.post(url, json=hello, headers={"Authorization": "Bearer alice-token-91c2"}, timeout=10)
        assert named.status_code != 401, named.text  # a named token of server.tokens is let in too

        async def main() -> None:
            async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as client:
                async with streamable_http_client(url, http_client=client) as (read, write, *_):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        devices = tool_json(await session.call_tool("list_devices", {}))
                        assert sim_phone.serial in [d["serial"] for d in devices["devices"]]
                        bad = await session.call_tool("swipe_points", {"x1": 1})
                        assert bad.is_error
                        back = tool_json(await session.call_tool("back", {}))
                        assert back["ok"], back

        _run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_run_instruction_reports_progress_and_a_cancel_stops_the_run(adb_server, sim_phone, llm_server, tmp_path):
    env = mcp_env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"),
               MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url, MOBILE_AGENT_PLANNER__API_KEY="k-mcp-123",
               MOBILE_AGENT_PLANNER__MODEL="scripted-vlm")
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def main() -> None:
        async with stdio_session(env, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs")) as session:
            llm_server.script([plan_reply("Open App (Settings)"), plan_reply("Home"), plan_reply("Stop"), DONE])
            result = tool_json(await session.call_tool("run_instruction", {"instruction": "Open Settings, then go home"},
                                                   progress_callback=on_progress))
            assert result["status"] == "completed" and result["steps"] == 3, result
            assert [p[0] for p in progress] == [1.0, 2.0, 3.0]
            assert "Open App (Settings)" in (progress[0][2] or "")
            assert Path(result["report"]).is_file()
            record = tool_json(await session.call_tool("read_trajectory", {"run_id": result["run_id"]}))
            assert [s["action_text"] for s in record["steps"]][:2] == ["Open App (Settings)", "Home"]
            # the run has its own trajectory; the session's links to it
            (mine,) = [p.parent for p in (tmp_path / "runs").glob("*/trajectory.jsonl") if p.parent.name != Path(result["trajectory_dir"]).name]
            header, link = trajectory_lines(mine)
            assert header["mode"] == "mcp" and link["by"] == "mcp", link
            assert link["linked_run"]["folder"] == Path(result["trajectory_dir"]).name
            assert link["linked_run"]["run_id"] == result["run_id"] and link["linked_run"]["status"] == "completed"
            assert link["operation"] == {"name": "run_instruction", "params": {"instruction": "Open Settings, then go home"}}
            assert (mine / link["screenshot"]).is_file()

            # a slow model and a client that gives up: the call is cancelled, so is the run
            moves = [plan_reply("Open App (Settings)"), plan_reply("Home")] * 25  # never the same twice in a row
            llm_server.script([Reply(text=m, delay_s=0.5) for m in moves], default=Reply(text=plan_reply("Home"), delay_s=0.5))
            requests_before = len(llm_server.chat_requests)
            with anyio.move_on_after(2.0):
                await session.call_tool("run_instruction", {"instruction": "Keep going back", "max_steps": 50})
            await anyio.sleep(2.0)  # the run stops at once while it waits for the model
            settled = len(llm_server.chat_requests)
            await anyio.sleep(1.5)
            assert len(llm_server.chat_requests) == settled, "the run went on after the client cancelled"
            assert settled - requests_before < 10
            planned = [trajectory_lines(p.parent) for p in (tmp_path / "runs").glob("*/trajectory.jsonl")]
            planned = sorted((lines for lines in planned if lines[0]["mode"] == "planned"), key=lambda x: x[0]["started_at"])
            assert planned[-1][-1]["status"] == "cancelled", planned[-1][-1]
            assert tool_json(await session.call_tool("list_devices", {}))  # and the server serves on

    _run(main)


def test_run_instruction_hands_over_to_the_clients_user_by_elicitation(adb_server, sim_phone, llm_server, tmp_path):
    """The model asks the person (paper dialect's Ask user): the question reaches the MCP
    client as an elicitation; its answer goes back to the model in the next request, and
    "done" (the person acted on the phone) makes the run look again and go on."""
    env = mcp_env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"),
               MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url, MOBILE_AGENT_PLANNER__API_KEY="k-mcp-123",
               MOBILE_AGENT_PLANNER__MODEL="scripted-vlm")
    replies: list[dict[str, Any]] = [{"answer": "Shopping list", "done": False}, {"answer": "", "done": True}]
    asked: list[str] = []

    async def answer(context: Any, params: Any) -> Any:
        from mcp_types import ElicitResult

        asked.append(params.message)
        return ElicitResult(action="accept", content=replies[len(asked) - 1])

    async def main() -> None:
        args = ("--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"))
        async with stdio_session(env, *args, elicitation_callback=answer) as session:
            llm_server.script([plan_reply("Ask user (Which note title do you want?)"),
                               plan_reply("Ask user (Please open the Notes app for me)"), plan_reply("Stop"), DONE])
            result = tool_json(await session.call_tool("run_instruction", {"instruction": "Write a note"}))
            assert asked == ["Which note title do you want?", "Please open the Notes app for me"], asked
            prompts = [r.body.decode("utf-8", "replace") for r in llm_server.chat_requests]
            assert any("Shopping list" in p for p in prompts[1:]), "the answer did not reach the model"
            assert any("took over" in p for p in prompts[2:]), "the model was not told the user acted"
            assert result["status"] == "completed", result
            record = tool_json(await session.call_tool("read_trajectory", {"run_id": result["run_id"]}))
            kinds = [(s.get("asked_user") or {}).get("kind") for s in record["steps"]]
            assert kinds[:2] == ["question", "question"], kinds

    _run(main)
