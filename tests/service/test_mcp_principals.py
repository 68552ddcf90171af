"""Every MCP tool over streamable HTTP, walked with each principal (docs/security.md): the
bearer token maps to its principal as in the REST service; a viewer's token may call every
tool that only looks and is refused every tool that acts on the phone (before it acts), an
admin's and a user's tokens reach the tools, no token is a 401. ``LOOKING`` is the table: a
tool the server lists that is neither there nor an operation card fails the test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

from mcp.shared.exceptions import MCPError  # noqa: E402

from mobile_agent.mcp_server.phone import operation_cards  # noqa: E402
from tests.mcp_helpers import http_session, mcp_env, serve_http  # noqa: E402
from tests.ports import free_port  # noqa: E402

TOKENS = {"admin": "mcp-admin-1", "alice": "mcp-alice-1", "bob": "mcp-bob-1", "vic": "mcp-vic-1"}
LOOKING = {"list_devices", "screenshot", "find_text", "find_icon", "read_trajectory"}  # never act
SCREEN = {"screenshot", "find_text", "find_icon"}  # look at the screen: a free phone's is for those who may act
ACTING = {card.name for card in operation_cards()} | {"run_instruction"}


def _sample(schema: dict[str, Any]) -> Any:
    """A value of the JSON schema's type (the viewer's calls must pass validation, to be refused
    for what they are, not for their arguments)."""
    for option in schema.get("anyOf", []):
        if option.get("type") != "null":
            return _sample(option)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "integer":
        return max(int(schema.get("minimum", 1)), 1)
    if kind == "number":
        return max(float(schema.get("minimum", 0.5)), 0.5)
    if kind == "boolean":
        return True
    if kind == "array":
        return [_sample(schema.get("items", {"type": "string"}))]
    return "Settings"


def _arguments(tool: Any) -> dict[str, Any]:
    schema = tool.input_schema
    return {name: _sample(schema["properties"][name]) for name in schema.get("required", [])}


def test_every_mcp_tool_answers_each_principal_as_its_role_allows(adb_server, sim_phone, tmp_path: Path) -> None:

    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__API_TOKEN=TOKENS["admin"],
                  MOBILE_AGENT_SERVER__TOKENS='{"alice": {"token": "mcp-alice-1"}, "bob": {"token": "mcp-bob-1"}, '
                                              '"vic": {"token": "mcp-vic-1", "role": "viewer"}}')
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"),
                      log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"
    answers: dict[tuple[str, str], tuple[bool, str]] = {}
    listed: set[str] = set()

    async def walk(who: str, names: set[str] | None) -> None:
        async with http_session(url, TOKENS[who]) as session:
            tools = (await session.list_tools()).tools
            listed.update(t.name for t in tools)
            for tool in tools:
                if names is not None and tool.name not in names:
                    continue
                result = await session.call_tool(tool.name, _arguments(tool))
                text = " ".join(getattr(c, "text", "") for c in result.content)
                answers[(who, tool.name)] = (bool(result.is_error), text)

    async def read(who: str, run_id: str) -> tuple[bool, str]:
        async with http_session(url, TOKENS[who]) as session:
            result = await session.call_tool("read_trajectory", {"run_id": run_id})
            return bool(result.is_error), " ".join(getattr(c, "text", "") for c in result.content)

    reads: dict[str, tuple[bool, str]] = {}
    commands: dict[str, list[list[str]]] = {}  # what reached the phone (its own command history) during a walk

    def acted() -> list[list[str]]:
        return [argv for argv in sim_phone.phone.history if argv[:1] in (["input"], ["am"], ["monkey"])]

    async def main() -> None:
        sim_phone.phone.history.clear()
        await walk("vic", None)  # every tool: the acting ones are refused before they act
        commands["vic"] = acted()
        sim_phone.phone.history.clear()
        await walk("admin", LOOKING | {"home"})
        commands["admin"] = acted()
        await walk("alice", LOOKING | {"back"})
        # alice's session trajectory is hers: another user's token reads "no run", an admin's reads it
        run_id = json.loads(answers[("alice", "back")][1])["run_id"]
        for who in ("alice", "bob", "admin"):
            reads[who] = await read(who, run_id)

    try:
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        assert httpx.post(url, json=hello, timeout=10).status_code == 401
        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert listed == LOOKING | ACTING, f"tools without an entry: {sorted(listed - LOOKING - ACTING)}"
    wrong = []
    for (who, name), (is_error, text) in sorted(answers.items()):
        refused = is_error and "viewer" in text
        if refused != (who == "vic" and name in ACTING | SCREEN):
            wrong.append(f"{who} {name}: {'refused' if refused else 'not refused'}: {text[:200]}")
    assert not wrong, "\n".join(wrong)
    assert not answers[("admin", "home")][0] and not answers[("alice", "back")][0]
    assert commands["vic"] == [], commands["vic"]  # refused before anything reached the phone
    assert any(argv[:2] == ["input", "keyevent"] for argv in commands["admin"]), commands["admin"]  # as home does
    assert not answers[("vic", "list_devices")][0] and not answers[("vic", "read_trajectory")][1].count("viewer")
    assert not reads["alice"][0] and not reads["admin"][0], reads
    assert reads["bob"][0] and "no run" in reads["bob"][1], reads
    # no answer over HTTP names a path of the server (the runs folder is under tmp_path)
    said = [f"{who} {name}" for (who, name), (_, text) in answers.items() if str(tmp_path) in text]
    said += [f"{who} read_trajectory" for who, (_, text) in reads.items() if str(tmp_path) in text]
    assert not said, said


def test_who_holds_a_busy_phone_is_told_to_an_admin_only(adb_server, sim_phone, tmp_path: Path) -> None:

    from mobile_agent.device import PhoneLease
    from mobile_agent.settings import load_settings

    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__API_TOKEN=TOKENS["admin"],
                  MOBILE_AGENT_SERVER__TOKENS='{"alice": {"token": "mcp-alice-1"}}')
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--phone-wait", "0.3", "--runs-dir",
                      str(tmp_path / "runs"), log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"
    said: dict[str, tuple[bool, str]] = {}

    async def back(who: str) -> None:
        async with http_session(url, TOKENS[who]) as session:
            result = await session.call_tool("back", {})
            said[who] = (bool(result.is_error), " ".join(getattr(c, "text", "") for c in result.content))

    async def main() -> None:
        for who in ("alice", "admin"):
            await back(who)

    holder = PhoneLease(load_settings(overrides={"adb.server_port": adb_server.port}).adb, sim_phone.serial,
                        "REST task 9 of carol")
    holder.acquire()
    try:
        anyio.run(main)
    finally:
        holder.release()
        proc.terminate()
        proc.wait(timeout=30)
    assert said["alice"][0] and said["alice"][1].endswith(f"phone {sim_phone.serial} is busy: another run holds it")
    assert said["admin"][0] and said["admin"][1].endswith(f"phone {sim_phone.serial} is busy: REST task 9 of carol holds it")
    assert "carol" not in said["alice"][1]


def test_a_principal_sees_only_its_own_last_screenshot_and_no_screen_of_anothers_run(adb_server, sim_phone,
                                                                                     tmp_path: Path) -> None:
    """The ``phone://devices/{serial}/screenshot`` resource is the last screenshot *this
    principal* took (another's is "no screenshot yet"); looking at a phone another principal's
    run holds (screenshot, find_text, find_icon) is for an admin only, as the REST device
    screenshot (docs/security.md)."""

    from mobile_agent.device import PhoneLease
    from mobile_agent.settings import load_settings

    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__API_TOKEN=TOKENS["admin"],
                  MOBILE_AGENT_SERVER__TOKENS='{"alice": {"token": "mcp-alice-1"}, "bob": {"token": "mcp-bob-1"}}')
    port = free_port()
    proc = serve_http(env, port, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs"),
                      log=tmp_path / "server.log")
    url = f"http://127.0.0.1:{port}/mcp"
    resource = f"phone://devices/{sim_phone.serial}/screenshot"
    seen: dict[str, Any] = {}

    async def as_(who: str, shoot: bool) -> None:
        async with http_session(url, TOKENS[who]) as session:
            if shoot:
                shot = await session.call_tool("screenshot", {"max_side": 300})
                seen[f"{who} shot"] = bool(shot.is_error), " ".join(
                    getattr(c, "text", "") for c in shot.content)
                found = await session.call_tool("find_text", {"text": "Settings"})
                seen[f"{who} find"] = bool(found.is_error), " ".join(
                    getattr(c, "text", "") for c in found.content)
            try:
                last = await session.read_resource(resource)
                seen[f"{who} last"] = bool(last.contents)
            except MCPError as exc:  # the SDK's error for a resource the server refused
                seen[f"{who} last"] = str(exc)

    async def free() -> None:
        await as_("alice", True)
        await as_("bob", False)

    async def held() -> None:
        await as_("bob", True)
        await as_("admin", True)

    holder = PhoneLease(load_settings(overrides={"adb.server_port": adb_server.port}).adb, sim_phone.serial,
                        "MCP session of alice")
    try:
        anyio.run(free)
        holder.acquire()  # alice's run holds the phone now
        anyio.run(held)
    finally:
        holder.release()
        proc.terminate()
        proc.wait(timeout=30)
    assert seen["alice shot"][0] is False and seen["alice last"] is True, seen
    assert "no screenshot" in str(seen["bob last"]), seen  # alice's shot is not bob's
    assert seen["bob shot"][0] and "another run" in seen["bob shot"][1], seen
    assert seen["bob find"][0] and "another run" in seen["bob find"][1], seen
    assert "Settings" not in seen["bob find"][1]
    assert seen["admin shot"][0] is False and seen["admin find"][0] is False, seen


def test_an_error_text_over_http_names_no_path_of_the_server(adb_server, tmp_path: Path) -> None:
    """A tool's error over HTTP goes through the REST service's path rule (``mobile_agent.agent.paths``):
    a path inside the text (an OS error's) becomes its part below the runs folder."""
    runs = tmp_path / "runs"
    (runs / "20260101-000000-badrun000001" / "trajectory.jsonl").mkdir(parents=True)  # unreadable: a folder
    env = mcp_env(adb_server.port, MOBILE_AGENT_SERVER__API_TOKEN=TOKENS["admin"])
    port = free_port()
    proc = serve_http(env, port, "--runs-dir", str(runs), log=tmp_path / "server.log")
    said: list[str] = []

    async def main() -> None:
        async with http_session(f"http://127.0.0.1:{port}/mcp", TOKENS["admin"]) as session:
            result = await session.call_tool("read_trajectory", {"run_id": "badrun000001"})
            assert result.is_error
            said.append(" ".join(getattr(c, "text", "") for c in result.content))

    try:
        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "cannot read the trajectory of 'badrun000001'" in said[0], said
    assert str(tmp_path) not in said[0] and "20260101-000000-badrun000001/trajectory.jsonl" in said[0], said
