"""MCP over streamable HTTP: a token holds at most ``server.mcp_sessions_per_token`` sessions
(review8 #4). Before, each ``initialize`` POST made a session kept for the idle timeout (30 min,
about 38 KB each), with no cap per token, a viewer's included. ``mobile-agent mcp --transport
http`` as a subprocess over the real adb server and the simulated phone; the requests are the
streamable HTTP transport's own (an ``initialize`` POST, the session's DELETE), and a whole SDK
client session for the token that is not at its cap. The count's rules (idle timeout, concurrent
openings) are tests/unit/test_mcp_session_count.py."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

from tests.mcp_helpers import http_session, mcp_env, serve_http, tool_json  # noqa: E402
from tests.ports import free_port  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

CAP = 3
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cap-test", "version": "1"}}}


def _headers(token: str, session: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    if session is not None:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
    return headers


def test_a_token_holds_at_most_its_cap_of_mcp_sessions(adb_server, sim_phone, tmp_path: Path) -> None:
    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__API_TOKEN="cap-admin-1",
                  MOBILE_AGENT_SERVER__TOKENS='{"alice": {"token": "cap-alice-1"}, '
                                              '"vic": {"token": "cap-vic-1", "role": "viewer"}}',
                  MOBILE_AGENT_SERVER__MCP_SESSIONS_PER_TOKEN=str(CAP))
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"),
                      log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        with httpx.Client(timeout=60) as client:
            opened = []
            for _ in range(CAP):  # a viewer's token needs no right to act to open sessions
                answer = client.post(url, json=INITIALIZE, headers=_headers("cap-vic-1"))
                assert answer.status_code == 200, answer.text
                opened.append(answer.headers["mcp-session-id"])
            assert len(set(opened)) == CAP
            refused = client.post(url, json=INITIALIZE, headers=_headers("cap-vic-1"))
            assert refused.status_code == 429, refused.text
            assert "server.mcp_sessions_per_token" in refused.json()["error"], refused.text
            # its open sessions still answer; another token is not held to vic's count
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            assert client.post(url, json=ping, headers=_headers("cap-vic-1", opened[0])).status_code == 200

            async def alice_lists() -> list[str]:
                async with http_session(url, "cap-alice-1") as alice:
                    return [d["serial"] for d in tool_json(await alice.call_tool("list_devices", {}))["devices"]]

            assert sim_phone.serial in anyio.run(alice_lists)
            # a session ended by its DELETE frees its place
            ended = client.delete(url, headers=_headers("cap-vic-1", opened[0]))
            assert ended.status_code == 200, ended.text
            again = client.post(url, json=INITIALIZE, headers=_headers("cap-vic-1"))
            assert again.status_code == 200, again.text
            assert client.post(url, json=INITIALIZE, headers=_headers("cap-vic-1")).status_code == 429
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_session_answers_only_the_token_that_opened_it(adb_server, sim_phone, tmp_path: Path) -> None:
    """The SDK's session manager compares each request's principal with its session's opener
    (``cli.bearer_protected`` gives it the token's principal): another token holding a session's
    id gets 404, as for a session that does not exist, and cannot end it; the opener's count is
    unchanged."""
    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__API_TOKEN="own-admin-1",
                  MOBILE_AGENT_SERVER__TOKENS='{"alice": {"token": "own-alice-1"}, "bob": {"token": "own-bob-1"}}',
                  MOBILE_AGENT_SERVER__MCP_SESSIONS_PER_TOKEN="1")
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"),
                      log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    try:
        with httpx.Client(timeout=60) as client:
            opened = client.post(url, json=INITIALIZE, headers=_headers("own-alice-1"))
            assert opened.status_code == 200, opened.text
            alices = opened.headers["mcp-session-id"]
            assert client.post(url, json=ping, headers=_headers("own-bob-1", alices)).status_code == 404
            assert client.delete(url, headers=_headers("own-bob-1", alices)).status_code == 404
            assert client.post(url, json=ping, headers=_headers("own-alice-1", alices)).status_code == 200
            assert client.post(url, json=INITIALIZE, headers=_headers("own-alice-1")).status_code == 429
    finally:
        proc.terminate()
        proc.wait(30)
