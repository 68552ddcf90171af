"""`mobile-agent mcp --transport http` deletes ended MCP sessions' folders, with the run folders
their ``run_instruction`` steps link to, once ``server.retention.task_days`` have passed or while
they are over ``runs_max_mb`` (review8 #9, its retention part); a session still open keeps its folder. Before, every step's screenshots
stayed forever. The server as a subprocess over the real adb server and the simulated phone, the
scripted model; ``task_days`` is a second's fraction and the pass runs every 10 s (the least
``interval_s``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from tests.agent_helpers import DONE, plan_reply  # noqa: E402
from tests.mcp_helpers import http_session, mcp_env, serve_http, tool_json  # noqa: E402
from tests.ports import free_port  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _folders(runs: Path) -> dict[str, Path]:
    """run id -> its trajectory folder."""
    found = {}
    for path in runs.glob("*/trajectory.jsonl"):
        with path.open(encoding="utf-8") as fh:
            found[json.loads(fh.readline())["run_id"]] = path.parent
    return found


@pytest.mark.parametrize("limit", [
    {"MOBILE_AGENT_SERVER__RETENTION__TASK_DAYS": "0.00001"},  # 0.864 s
    {"MOBILE_AGENT_SERVER__RETENTION__TASK_DAYS": "0", "MOBILE_AGENT_SERVER__RETENTION__RUNS_MAX_MB": "0.001"},
], ids=["task_days", "runs_max_mb"])
def test_ended_mcp_sessions_and_their_runs_are_deleted_by_the_retention_limits(adb_server, sim_phone, llm_server,
                                                                                tmp_path: Path, limit) -> None:
    runs = tmp_path / "runs"
    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__TOKENS='{"alice": {"token": "ret-alice-1"}}',
                  MOBILE_AGENT_SERVER__RETENTION__INTERVAL_S="10", **limit,
                  MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url, MOBILE_AGENT_PLANNER__API_KEY="k-mcp-ret",
                  MOBILE_AGENT_PLANNER__MODEL="scripted-vlm")
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--runs-dir", str(runs), log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"
    ids: dict[str, str] = {}

    async def main() -> None:
        async with http_session(url, "ret-alice-1") as ended:
            ids["ended"] = tool_json(await ended.call_tool("home", {}))["run_id"]
            llm_server.script([plan_reply("Open App (Settings)"), plan_reply("Stop"), DONE])
            ran = tool_json(await ended.call_tool("run_instruction", {"instruction": "Open the Settings app"}))
            assert ran["status"] == "completed", ran
            ids["run"] = ran["run_id"]
        # the first session is deleted (DELETE) and its trajectory ended; the second stays open
        async with http_session(url, "ret-alice-1") as open_session:
            ids["open"] = tool_json(await open_session.call_tool("home", {}))["run_id"]
            before = _folders(runs)
            assert {ids["ended"], ids["run"], ids["open"]} <= set(before), before
            deadline = time.monotonic() + 90  # a guard for a broken build only: a pass runs every 10 s
            while ids["ended"] in _folders(runs) or ids["run"] in _folders(runs):
                assert time.monotonic() < deadline, f"not deleted: {sorted(_folders(runs))}"
                await anyio.sleep(0.5)
            assert not before[ids["ended"]].exists() and not before[ids["run"]].exists()
            assert ids["open"] in _folders(runs)  # still open: never touched
            assert tool_json(await open_session.call_tool("back", {}))["ok"]  # and it goes on

    try:
        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(30)
