"""MCP over streamable HTTP: a token's ``run_instruction`` is held to ``server.max_steps_limit``,
as a REST task's ``max_steps`` is (review8 #7, its MCP part): the server's planner key pays for
each step. Before, the tool took up to 200 whatever the limit. ``mobile-agent mcp --transport
http`` as a subprocess over the real adb server and the simulated phone, the scripted model."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from tests.agent_helpers import DONE, plan_reply  # noqa: E402
from tests.mcp_helpers import http_session, mcp_env, serve_http, tool_json  # noqa: E402
from tests.ports import free_port  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def test_run_instruction_over_http_is_held_to_the_servers_step_limit(adb_server, sim_phone, llm_server,
                                                                    tmp_path: Path) -> None:
    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__TOKENS='{"alice": {"token": "steps-alice-1"}}',
                  MOBILE_AGENT_SERVER__MAX_STEPS_LIMIT="5",
                  MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url, MOBILE_AGENT_PLANNER__API_KEY="k-mcp-steps",
                  MOBILE_AGENT_PLANNER__MODEL="scripted-vlm")
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"),
                      log=tmp_path / "server.log")

    async def main() -> None:
        async with http_session(f"http://127.0.0.1:{port}/mcp", "steps-alice-1") as alice:
            before = len(llm_server.chat_requests)
            refused = await alice.call_tool("run_instruction", {"instruction": "Open the Settings app", "max_steps": 12})
            text = " ".join(getattr(c, "text", "") for c in refused.content)
            assert refused.is_error and "server.max_steps_limit" in text and "5" in text, text
            assert len(llm_server.chat_requests) == before  # refused before any model call
            llm_server.script([plan_reply("Open App (Settings)"), plan_reply("Stop"), DONE])
            within = tool_json(await alice.call_tool("run_instruction", {"instruction": "Open the Settings app",
                                                                         "max_steps": 5}))
            assert within["status"] == "completed", within

    try:
        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(30)
