"""`mobile-agent mcp` as an MCP client sees it: the official SDK's own client
(``ClientSession`` over ``stdio_client`` — a ``mobile-agent mcp`` subprocess — and over
``streamable_http_client`` against real uvicorn on loopback), the simulated phone behind the
real adb server, the scripted LLM server for whole runs."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from PIL import Image  # noqa: E402

from tests.agent_helpers import DONE, plan_reply  # noqa: E402
from tests.llm_fixtures import Reply, llm_server  # noqa: E402,F401  (fixture)
from tests.ports import free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(240)


def _env(adb_port: int, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    env.update({"MOBILE_AGENT_ADB__SERVER_PORT": str(adb_port), "PYTHONUNBUFFERED": "1"}, **extra)
    return env


@asynccontextmanager
async def _stdio(env: dict[str, str], *args: str, **session_kwargs: Any) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "mobile_agent.cli", "mcp", *args],
                                   env=env, cwd=str(ROOT))
    log = Path(env.get("MCP_TEST_LOG", os.devnull))
    with log.open("a", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, **session_kwargs) as session:
                await session.initialize()
                yield session


def _json(result: Any) -> Any:
    assert not result.is_error, result.content
    texts = [c.text for c in result.content if c.type == "text"]
    return json.loads(texts[0])


def _run(coro_fn: Any) -> None:
    anyio.run(coro_fn)


def test_stdio_tools_drive_the_phone_and_bad_arguments_are_tool_errors(adb_server, sim_phone, tmp_path):
    env = _env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"))
    runs = tmp_path / "runs"

    async def main() -> None:
        async with _stdio(env, "--serial", sim_phone.serial, "--runs-dir", str(runs)) as session:
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

            devices = _json(await session.call_tool("list_devices", {}))
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
            assert _json(await session.call_tool("list_devices", {}))

    _run(main)


def test_operations_act_through_the_agent_and_leave_a_trajectory(adb_server, sim_phone, tmp_path):
    env = _env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"))

    async def main() -> None:
        async with _stdio(env, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs")) as session:
            opened = _json(await session.call_tool("open_app", {"app": "Settings"}))
            assert opened["ok"] and opened["status"] == "completed", opened
            assert sim_phone.adb_state()["foreground"] == "com.android.settings"

            found = _json(await session.call_tool("find_text", {"text": "Display & brightness"}))
            assert found["status"] == "found", found
            left, top, right, bottom = found["box"]
            truth = sim_phone.element("Display & brightness")["box"]  # position-verified: the box is on the real element
            x, y = found["point"]
            assert truth[0] <= x <= truth[2] and truth[1] <= y <= truth[3]
            assert left < right and top < bottom

            clicked = _json(await session.call_tool("click_text", {"text": "Display & brightness"}))
            assert clicked["ok"] and clicked["tap_point"] == found["point"], clicked
            assert sim_phone.adb_state()["current"]["view"] != "home"

            missing = _json(await session.call_tool("click_text", {"text": "Zzyzx nowhere"}))
            assert not missing["ok"] and missing["status"] == "not_completed" and missing["feedback"]

            home = _json(await session.call_tool("home", {}))
            assert home["ok"] and sim_phone.adb_state()["foreground"] == "com.android.launcher3"

            record = _json(await session.call_tool("read_trajectory", {"run_id": clicked["run_id"]}))
            assert record["run"]["run_id"] == clicked["run_id"]
            assert record["steps"][0]["action_text"] == "Click text (Display & brightness)"
            assert record["result"]["status"] == "completed"
            report = await session.read_resource(f"run://{clicked['run_id']}/report")
            assert "<html" in report.contents[0].text.lower()

            unknown = await session.call_tool("read_trajectory", {"run_id": "no-such-run"})
            assert unknown.is_error and "no run" in unknown.content[0].text

    _run(main)


def test_app_policy_and_confirmations_apply_to_mcp_tools(adb_server, sim_phone, tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text('deny_apps = ["com.android.chrome"]\n', encoding="utf-8")
    env = _env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"))
    asked: list[str] = []

    async def approve(context: Any, params: Any) -> Any:
        from mcp_types import ElicitResult

        asked.append(params.message)
        return ElicitResult(action="accept", content={"approve": True, "note": ""})

    async def main() -> None:
        args = ("--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"), "--policy", str(policy))
        async with _stdio(env, *args) as session:  # this client offers no elicitation
            denied = _json(await session.call_tool("open_app", {"app": "Chrome"}))
            assert not denied["ok"] and "deny_apps" in denied["feedback"], denied
            assert sim_phone.adb_state()["foreground"] == "com.android.launcher3"
            # "Install" is a sensitive word (data/sensitive.toml): nobody to ask, refused, said why
            refused = _json(await session.call_tool("click_text", {"text": "Install"}))
            assert not refused["ok"] and "nobody confirmed it" in refused["feedback"]
            assert "elicitation" in refused["feedback"], refused
        async with _stdio(env, *args, elicitation_callback=approve) as session:
            approved = _json(await session.call_tool("click_text", {"text": "Install"}))
            assert len(asked) == 1 and "Install" in asked[0]
            assert approved["asked_user"]["reply"]["kind"] == "approve"
            assert "confirmed" not in approved["feedback"]  # it went on to look for the text

    _run(main)
