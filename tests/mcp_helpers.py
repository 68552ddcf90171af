"""Helpers of the MCP tests: ``mobile-agent mcp`` started the way an MCP client starts it
(the SDK's ``stdio_client``, or a subprocess serving streamable HTTP on loopback), with
the simulated phone behind the real adb server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, "-m", "mobile_agent.cli", "mcp"]


def mcp_env(adb_port: int, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    env.update({"MOBILE_AGENT_ADB__SERVER_PORT": str(adb_port), "PYTHONUNBUFFERED": "1"}, **extra)
    return env


def stdio_params(env: dict[str, str], *args: str, pidfile: Path | None = None) -> StdioServerParameters:
    """How a desktop client starts the server; with ``pidfile``, through a shell that
    writes the server's pid there first (``exec``: the pid is the server's own)."""
    if pidfile is None:
        return StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], *args], env=env, cwd=str(ROOT))
    return StdioServerParameters(command="/bin/sh", args=["-c", 'echo $$ > "$0"; exec "$@"', str(pidfile), *SERVER, *args],
                                 env=env, cwd=str(ROOT))


@asynccontextmanager
async def stdio_session(env: dict[str, str], *args: str, pidfile: Path | None = None,
                        **session_kwargs: Any) -> AsyncIterator[ClientSession]:
    log = Path(env.get("MCP_TEST_LOG", os.devnull))
    with log.open("a", encoding="utf-8") as errlog:
        async with stdio_client(stdio_params(env, *args, pidfile=pidfile), errlog=errlog) as (read, write):
            async with ClientSession(read, write, **session_kwargs) as session:
                await session.initialize()
                yield session


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[ClientSession]:
    """A client's session with ``mobile-agent mcp --transport http`` at ``url``, its bearer
    token ``token`` (the SDK's streamable HTTP client), initialized."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as client:
        async with streamable_http_client(url, http_client=client) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def tool_json(result: Any) -> Any:
    assert not result.is_error, result.content
    texts = [c.text for c in result.content if c.type == "text"]
    return json.loads(texts[0])


def serve_http(env: dict[str, str], port: int, *args: str, log: Path) -> subprocess.Popen[bytes]:
    out = log.open("ab")
    proc = subprocess.Popen([*SERVER, "--transport", "http", "--port", str(port), *args],
                            cwd=ROOT, env=env, stdout=out, stderr=out)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"mobile-agent mcp exited {proc.returncode}: {log.read_text()}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("the MCP HTTP server did not start")


def trajectory_lines(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "trajectory.jsonl").read_text(encoding="utf-8").splitlines()]


def wait_for_result(folder: Path, timeout_s: float = 60) -> dict[str, Any]:
    """The result line of ``folder``'s trajectory, once the server has ended it (the
    result line, then the report)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        lines = trajectory_lines(folder)
        if lines and lines[-1]["type"] == "result" and (folder / "report.html").is_file():
            return lines[-1]
        time.sleep(0.2)
    raise AssertionError(f"{folder} was not closed: {trajectory_lines(folder)[-1]}")
