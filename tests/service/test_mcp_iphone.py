"""`mobile-agent mcp --serial ios:NAME` drives an iPhone (issue 33), as an MCP client sees it:
the official SDK's client over stdio (a ``mobile-agent mcp`` subprocess) and over streamable
HTTP (real uvicorn on loopback), the simulated iPhone (``simphone.ios.WdaFrontEnd``, the
simulated phone behind a WDA-compatible HTTP front-end) named in ``ios.devices``. No adb
server is asked: the iPhone needs none."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from PIL import Image  # noqa: E402

from mobile_agent.device.ios import WdaClient  # noqa: E402
from simphone.ios import WdaFrontEnd  # noqa: E402
from tests.agent_helpers import DONE, plan_reply  # noqa: E402
from tests.llm_server import ScriptedLLMServer  # noqa: E402
from tests.mcp_helpers import http_session, mcp_env, serve_http, stdio_session, tool_json  # noqa: E402
from tests.ports import free_port  # noqa: E402

pytestmark = pytest.mark.timeout(240)


def _no_adb(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A machine with no adb at all (the adb binary named does not exist, no server on the
    port): the iPhone needs none, and no adb server is started and left behind."""
    return mcp_env(free_port(), MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"), **extra)


def _truth(front: WdaFrontEnd, text: str) -> list[int]:
    box: list[int] = next(e for e in front.phone.ground_truth() if e["text"] == text)["box"]
    return box


def _settings_pages(front: WdaFrontEnd) -> list[str]:
    return [v["view"] for v in front.phone.state()["tasks"].get("com.android.settings", [])]


def test_stdio_tools_drive_the_simulated_iphone(front: WdaFrontEnd, tmp_path: Path) -> None:
    env = _no_adb(tmp_path, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-m": front.url}),
                  MCP_TEST_LOG=str(tmp_path / "server.log"))
    active = WdaClient(front.url, timeout_s=20)

    async def main() -> None:
        async with stdio_session(env, "--serial", "ios:sim-m", "--runs-dir", str(tmp_path / "runs")) as session:
            listed = tool_json(await session.call_tool("list_devices", {}))
            iphone = next(d for d in listed["devices"] if d["serial"] == "ios:sim-m")
            assert (iphone["platform"], iphone["state"], iphone["url"]) == ("ios", "ready", front.url)
            assert "no Android phones" in listed["problem"]  # no adb here: said, not fatal

            shot = await session.call_tool("screenshot", {"max_side": 600})
            assert not shot.is_error, shot.content
            info = json.loads(next(c.text for c in shot.content if c.type == "text"))
            picture = Image.open(io.BytesIO(base64.b64decode(next(c for c in shot.content if c.type == "image").data)))
            assert info["screen"] == [front.phone.width, front.phone.height]  # pixels, not WDA's points
            assert list(picture.size) == info["image"] and max(picture.size) == 600

            opened = tool_json(await session.call_tool("open_app", {"app": "Settings"}))
            assert opened["ok"], opened
            assert "com.apple.Preferences" in opened["feedback"]  # Apple's bundle id, opened through WDA
            assert front.phone.foreground == "com.android.settings"
            assert active.active_app() == "com.apple.Preferences"

            found = tool_json(await session.call_tool("find_text", {"text": "Wi-Fi"}))
            assert found["status"] == "found" and found["serial"] == "ios:sim-m", found
            left, top, right, bottom = _truth(front, "Wi-Fi")  # position-verified, in screen pixels
            x, y = found["point"]
            assert left <= x <= right and top <= y <= bottom

            clicked = tool_json(await session.call_tool("click_text", {"text": "Wi-Fi"}))
            assert clicked["ok"] and clicked["tap_point"] == found["point"], clicked
            assert _settings_pages(front)[-1] != "main"  # Wi-Fi's page opened

            back = tool_json(await session.call_tool("back", {}))  # the edge swipe: iOS has no Back key
            assert back["ok"], back
            assert _settings_pages(front) == ["main"]

            home = tool_json(await session.call_tool("home", {}))
            assert home["ok"] and front.phone.foreground == "com.android.launcher3"

            record = tool_json(await session.call_tool("read_trajectory", {"run_id": clicked["run_id"]}))
            assert record["run"]["device"]["serial"] == "ios:sim-m"
            assert [s["action_text"] for s in record["steps"]] == [
                "Open App (Settings)", "Click text (Wi-Fi)", "Back", "Home"]

            unknown = await session.call_tool("screenshot", {"serial": "ios:nope"})
            assert unknown.is_error and "no iPhone named 'nope'" in str(unknown.content[0])

    try:
        anyio.run(main)
    finally:
        active.close()


def test_streamable_http_drives_the_simulated_iphone(front: WdaFrontEnd, tmp_path: Path) -> None:
    """Over HTTP, a call names the iPhone itself (no --serial)."""
    token = "mcp-ios-token-5b1e"
    env = _no_adb(tmp_path, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-h": front.url}),
                  MOBILE_AGENT_SERVER__API_TOKEN=token)
    port = free_port()
    proc = serve_http(env, port, "--runs-dir", str(tmp_path / "runs"), log=tmp_path / "server.log")

    async def main() -> None:
        async with http_session(f"http://127.0.0.1:{port}/mcp", token) as session:
            where: dict[str, Any] = {"serial": "ios:sim-h"}
            opened = tool_json(await session.call_tool("open_app", {"app": "Settings", **where}))
            assert opened["ok"] and front.phone.foreground == "com.android.settings", opened
            left, top, right, bottom = _truth(front, "Wi-Fi")
            clicked = tool_json(await session.call_tool("click_text", {"text": "Wi-Fi", **where}))
            assert clicked["ok"], clicked
            x, y = clicked["tap_point"]
            assert left <= x <= right and top <= y <= bottom
            assert _settings_pages(front)[-1] != "main"

    try:
        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_run_instruction_on_the_iphone_tells_the_model_it_is_one(front: WdaFrontEnd, llm_server: ScriptedLLMServer,
                                                                 tmp_path: Path) -> None:
    """``run_instruction`` over MCP on an iPhone: a whole planned run, the model told that the
    phone is an iPhone (Back is the edge swipe), the run done on the simulated iPhone."""
    env = _no_adb(tmp_path, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-r": front.url}),
                  MCP_TEST_LOG=str(tmp_path / "server.log"), MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url,
                  MOBILE_AGENT_PLANNER__API_KEY="k-mcp-ios", MOBILE_AGENT_PLANNER__MODEL="gpt-4o")
    llm_server.script([plan_reply("Open App (Settings)"), plan_reply("Stop"), DONE])

    async def main() -> None:
        async with stdio_session(env, "--serial", "ios:sim-r", "--runs-dir", str(tmp_path / "runs")) as session:
            result = tool_json(await session.call_tool("run_instruction", {"instruction": "Open Settings"}))
            assert result["status"] == "completed", result

    anyio.run(main)
    assert front.phone.foreground == "com.android.settings"
    planning = [r.text() for r in llm_server.chat_requests if "Verdict" not in r.text()]
    assert len(planning) == 2
    assert all("an iPhone" in text and "no Back key" in text and "Android" not in text for text in planning)
