"""MCP ``find_text`` on a screen the pixels cannot see (a FLAG_SECURE window captures black;
its accessibility tree stays, ``tests/service/test_protected_screen.py``): the tree's texts
answer the lookup, and one that holds a secret (``agent.secrets``: a password manager shows
the account it keeps) never leaves in the answer's candidates, closest texts or feedback."""

from __future__ import annotations

import json

import pytest

VAULT = "com.x8bit.bitwarden"
SECRET = "homer@example.com"  # the first item's username in simphone's Bitwarden (simphone.apps.vault)
pytestmark = pytest.mark.timeout(240)


def test_find_text_on_a_protected_screen_never_answers_a_secret_the_tree_holds(adb_server, sim_phone, tmp_path) -> None:
    mcp = pytest.importorskip("tests.mcp_helpers")
    import anyio

    sim_phone.phone.install(VAULT)
    sim_phone.device.shell(["monkey", "-p", VAULT, "-c", "android.intent.category.LAUNCHER", "1"])
    env = mcp.mcp_env(adb_server.port, MOBILE_AGENT_PERCEPTION__ACCESSIBILITY="false",
                      MOBILE_AGENT_AGENT__SECRETS=json.dumps([SECRET]))
    answers: list[str] = []

    async def main() -> None:
        async with mcp.stdio_session(env, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs")) as session:
            found = mcp.tool_json(await session.call_tool("find_text", {"text": "Netflix"}))
            assert found["status"] == "found", found  # the tree still answers
            for query in ("hommer", "Bank of Springfeld", "zzqx"):  # none of them a secret or 4 characters of it
                answers.append(json.dumps(mcp.tool_json(await session.call_tool("find_text", {"text": query}))))

    anyio.run(main)
    assert any("Netflix" in answer for answer in answers), answers  # the tree's texts were read
    for answer in answers:
        assert "homer@" not in answer and "example.com" not in answer, answer
