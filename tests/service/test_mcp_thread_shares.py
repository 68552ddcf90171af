"""MCP over streamable HTTP: one principal's calls that wait for a held phone never hold up
another principal's (review8 #3). Before, every tool call ran on anyio's one process-wide pool of
40 worker threads, and an operation waited for the phone's lease inside its thread for the whole
``--phone-wait``, cancelled or not: 45 ``home`` calls of alice's while the phone was held took
every thread, and bob's ``list_devices`` (which touches no phone) waited until they gave up.
Now each principal has its own few threads (``tools.ThreadShares``) and a cancelled call stops
waiting at once. ``mobile-agent mcp --transport http`` as a subprocess, the real adb server, the
simulated phone; the test holds the phone's ``PhoneLease`` itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mobile_agent.device import PhoneLease  # noqa: E402
from mobile_agent.settings import AdbSettings  # noqa: E402
from tests.mcp_helpers import http_session, mcp_env, serve_http, tool_json  # noqa: E402
from tests.ports import free_port  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ALICE_CALLS = 45  # more than anyio's default pool of 40 threads
PHONE_WAIT_S = "240"  # far beyond each guard below: a call held behind alice's waits fails its guard
GUARD_S = 30  # a guard for a broken build only: an answer that queues behind no wait comes in well under it


def test_a_principal_waiting_for_a_held_phone_holds_up_no_other_principal(adb_server, sim_phone, tmp_path: Path) -> None:
    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__API_TOKEN="threads-admin-1",
                  MOBILE_AGENT_SERVER__TOKENS='{"alice": {"token": "threads-alice-1"}, "bob": {"token": "threads-bob-1"}}')
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"),
                      "--phone-wait", PHONE_WAIT_S, log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"
    lease = PhoneLease(AdbSettings(server_port=adb_server.port), sim_phone.serial, "the test")
    answered: list[Any] = []

    async def alice_home(alice: Any) -> None:
        answered.append(await alice.call_tool("home", {}))

    async def main() -> None:
        lease.acquire()
        async with http_session(url, "threads-alice-1") as alice, http_session(url, "threads-bob-1") as bob:
            async with anyio.create_task_group() as calls:
                for _ in range(ALICE_CALLS):
                    calls.start_soon(alice_home, alice)
                # alice's calls reach the server and wait for the phone (before the fix, in every
                # thread of the pool); only the failure before depends on this pause, not the pass
                await anyio.sleep(3)
                with anyio.fail_after(GUARD_S):
                    listed = tool_json(await bob.call_tool("list_devices", {}))
                assert sim_phone.serial in {d["serial"] for d in listed["devices"]}, listed
                assert answered == []  # alice's calls are still waiting for the held phone
                calls.cancel_scope.cancel()  # the client cancels them (notifications/cancelled)
            # a cancelled call stopped waiting: alice's own threads are free again, the phone still held
            with anyio.fail_after(GUARD_S):
                listed = tool_json(await alice.call_tool("list_devices", {}))
            assert sim_phone.serial in {d["serial"] for d in listed["devices"]}, listed
            lease.release()
            with anyio.fail_after(GUARD_S * 4):  # an operation: screenshots and a step record
                home = await alice.call_tool("home", {})
            assert not home.is_error, home.content

    try:
        anyio.run(main)
    finally:
        lease.release()
        proc.terminate()
        proc.wait(30)
