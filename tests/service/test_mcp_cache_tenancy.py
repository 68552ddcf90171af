"""The plan cache over MCP's HTTP transport keeps each principal's plans its own (docs/security.md:
"one user's identical instruction never replays another's plan"), as a REST task's does: a
``run_instruction`` replays its team's cached plans (``team:lab``), else its own token's, never
another token's."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from tests.agent_helpers import DONE, plan_reply  # noqa: E402
from tests.mcp_helpers import http_session, mcp_env, serve_http, tool_json  # noqa: E402
from tests.ports import free_port  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

TOKENS = {"alice": "mcp-cache-alice-1", "carol": "mcp-cache-carol-1", "bob": "mcp-cache-bob-1"}
INSTRUCTION = "Open the Settings app"
PLAN = [plan_reply("Open App (Settings)"), plan_reply("Stop"), DONE]


def test_a_run_instruction_never_replays_another_tokens_cached_plan(adb_server, sim_phone, llm_server,
                                                                     tmp_path: Path) -> None:
    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__TOKENS=(
                      '{"alice": {"token": "mcp-cache-alice-1", "team": "lab"}, '
                      '"carol": {"token": "mcp-cache-carol-1", "team": "lab"}, "bob": {"token": "mcp-cache-bob-1"}}'),
                  MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url, MOBILE_AGENT_PLANNER__API_KEY="k-mcp-cache",
                  MOBILE_AGENT_PLANNER__MODEL="scripted-vlm", MOBILE_AGENT_CACHE__ENABLED="true")
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"),
                      log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"
    calls: dict[str, int] = {}

    async def run(who: str) -> None:
        sim_phone.phone.reset()  # each run starts from the same home screen
        llm_server.script(list(PLAN))
        before = len(llm_server.chat_requests)
        async with http_session(url, TOKENS[who]) as session:
            result = tool_json(await session.call_tool("run_instruction", {"instruction": INSTRUCTION}))
        assert result["status"] == "completed", result
        assert sim_phone.phone.state()["foreground"] == "com.android.settings"
        calls[who] = len(llm_server.chat_requests) - before

    async def main() -> None:
        await run("alice")  # planned by the model; its plan is cached
        calls["alice first"] = calls["alice"]
        await run("alice")  # the same token: replayed from its (team's) cache
        await run("carol")  # alice's teammate: the team's plan, replayed
        await run("bob")  # another token of no team: its own (empty) cache, so the model plans

    try:
        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert calls["alice first"] > 0
    assert calls["alice"] == 0, "alice's second run did not replay her cached plan"
    assert calls["carol"] == 0, "carol's run did not replay her team's cached plan"
    assert calls["bob"] > 0, "bob's run replayed alice's cached plan (no model call)"
