"""MCP: while the runs folder's disk has less than ``server.retention.min_free_mb`` free, no call
acts (review8 #9, its disk part): every operation writes a step with its screenshots under
``agent.output_dir`` and a ``run_instruction`` a run folder, and the REST service already
refuses a task then (507). A tool error naming the setting; looking (``list_devices``,
``screenshot``) goes on. ``mobile-agent mcp --transport http`` as a subprocess over the real adb
server and the simulated phone; the limit is set above any disk's size, so the disk is "full"."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from tests.mcp_helpers import http_session, mcp_env, serve_http, tool_json  # noqa: E402
from tests.ports import free_port  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

FULL = str(10**12)  # MB: more than any disk holds free


def _text(result) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


def test_no_mcp_call_acts_while_the_runs_folder_disk_is_nearly_full(adb_server, sim_phone, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__TOKENS='{"alice": {"token": "disk-alice-1"}}',
                  MOBILE_AGENT_SERVER__RETENTION__MIN_FREE_MB=FULL,
                  MOBILE_AGENT_PLANNER__BASE_URL="http://127.0.0.1:9/v1", MOBILE_AGENT_PLANNER__API_KEY="k-disk")
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--runs-dir", str(runs), log=tmp_path / "server.log")
    foreground = sim_phone.phone.state()["foreground"]

    async def main() -> None:
        async with http_session(f"http://127.0.0.1:{port}/mcp", "disk-alice-1") as alice:
            assert sim_phone.serial in {d["serial"] for d in tool_json(await alice.call_tool("list_devices", {}))["devices"]}
            shot = await alice.call_tool("screenshot", {})
            assert not shot.is_error, _text(shot)
            for name, arguments in (("open_app", {"app": "Settings"}), ("home", {}),
                                    ("run_instruction", {"instruction": "Open the Settings app"})):
                refused = await alice.call_tool(name, arguments)
                assert refused.is_error, (name, _text(refused))
                assert "server.retention.min_free_mb" in _text(refused) and str(runs) not in _text(refused), _text(refused)

    try:
        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(30)
    assert sim_phone.phone.state()["foreground"] == foreground  # nothing was opened
    assert not list(runs.rglob("*.png")), "a step was written"
