"""MCP over streamable HTTP: a token's calls and runs type only the named secrets it was given
(``server.tokens.NAME.secrets``; an admin's every one), as a REST task's run does (review8 #2, its
MCP part). Before, the ``type`` tool and a ``run_instruction`` whose model wrote ``Type
({{secret:pin}})`` typed any server secret for any user token, and the value was then on the
phone's screen. ``mobile-agent mcp --transport http`` as a subprocess, the real adb server, the
simulated phone (its accessibility tree read over adb tells what was typed), the scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mobile_agent.device import open_device  # noqa: E402
from mobile_agent.device.hierarchy import dump_hierarchy  # noqa: E402
from mobile_agent.settings import AdbSettings  # noqa: E402
from tests.agent_helpers import DONE, plan_reply  # noqa: E402
from tests.mcp_helpers import http_session, mcp_env, serve_http, tool_json  # noqa: E402
from tests.ports import free_port  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

PIN = "Quokka7731Zz"  # the admin's; bob was not given it
CARD = "Wombat4410Qq"  # bob's


def test_a_token_types_only_its_own_named_secrets_over_mcp(adb_server, sim_phone, llm_server, tmp_path: Path) -> None:
    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__API_TOKEN="sec-admin-1",
                  MOBILE_AGENT_SERVER__TOKENS='{"bob": {"token": "sec-bob-1", "role": "user", "secrets": ["card"]}}',
                  MOBILE_AGENT_AGENT__NAMED_SECRETS=json.dumps({"pin": PIN, "card": CARD}),
                  MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url, MOBILE_AGENT_PLANNER__API_KEY="k-mcp-secrets",
                  MOBILE_AGENT_PLANNER__MODEL="scripted-vlm")
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"),
                      log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"
    phone = open_device(AdbSettings(server_port=adb_server.port), serial=sim_phone.serial)
    answers: dict[str, str] = {}

    async def main() -> None:
        async with http_session(url, "sec-bob-1") as bob:
            for name, arguments in (("open_app", {"app": "Notes"}),
                                    ("click_icon", {"icon": "orange plus", "position": "bottom right"})):
                assert tool_json(await bob.call_tool(name, arguments))["ok"], name
            typed = await bob.call_tool("type", {"text": "{{secret:pin}}"})
            answers["type pin"] = " ".join(getattr(c, "text", "") for c in typed.content)
            assert typed.is_error or not tool_json(typed)["ok"], answers["type pin"]
            # a run whose model writes the reference (an injected or steered model)
            llm_server.script([plan_reply("Type ({{secret:pin}})"), plan_reply("Stop"), DONE],
                              default=plan_reply("Stop"))
            ran = await bob.call_tool("run_instruction", {"instruction": "Write the note", "max_steps": 3})
            answers["run"] = " ".join(getattr(c, "text", "") for c in ran.content)
            assert PIN not in dump_hierarchy(phone).xml  # neither the tool nor the run typed the admin's pin
            # bob's own secret he may type (the check is of the owner, not of secrets as such)
            assert tool_json(await bob.call_tool("type", {"text": "{{secret:card}}"}))["ok"]

    try:
        anyio.run(main)
        tree = dump_hierarchy(phone).xml
        assert CARD in tree and PIN not in tree
        assert all(PIN not in answer for answer in answers.values()), answers
    finally:
        proc.terminate()
        proc.wait(30)
