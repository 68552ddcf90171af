"""`mobile-agent mcp`: the phone and the agent as MCP tools, over stdio or streamable HTTP.

Registered through the ``mobile_agent.commands`` entry point (pyproject.toml), like the
service's commands, so ``mobile-agent`` starts without the ``mcp`` package; the SDK is
imported when the command runs.

Over HTTP every request must carry ``Authorization: Bearer <token>``, the REST service's
token (``server.api_token``, ``MOBILE_AGENT_SERVER__API_TOKEN`` or ``--token-file``): an MCP
endpoint drives a phone, so it never runs open. Over stdio the client that started the
process is the only one talking to it.
"""

from __future__ import annotations

import argparse
import hmac
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mobile_agent.errors import ConfigError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from mobile_agent.mcp_server.http_sessions import SessionCap
    from mobile_agent.settings import Settings

EXIT_USAGE = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="serve the phone and the agent as MCP tools (stdio, or streamable HTTP with a token)",
        description="A Model Context Protocol server: list devices, screenshot, find text/icon, every "
        "operation, run an instruction, read a trajectory. Needs the mcp extra (pip install 'mobile-agent[mcp]').",
    )
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                        help="stdio (a desktop assistant starts the process) or http (streamable HTTP at /mcp)")
    parser.add_argument("--host", help="HTTP listen address (default: server.host, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="HTTP listen port (default: server.port, 8000)")
    parser.add_argument("--token-file", type=Path, help="file holding the bearer token (first line)")
    parser.add_argument("--session-idle-timeout", type=float, default=1800.0, metavar="SECONDS",
                        help="HTTP: an MCP session with no request for this long is closed, and its "
                        "trajectory ended (default 1800)")
    parser.add_argument("--serial", "-s", help="the phone tools use when a call names none")
    parser.add_argument("--runs-dir", type=Path, help="where trajectories go (default: agent.output_dir)")
    parser.add_argument("--policy", metavar="FILE", type=Path,
                        help="TOML of safety settings, as `mobile-agent run --policy`")
    parser.add_argument("--phone-wait", type=float, default=30.0, metavar="SECONDS",
                        help="how long an operation call waits for a phone another run holds, then answers "
                        "'phone busy' (default 30; run_instruction waits up to 600)")
    parser.add_argument("--screenshot-side", type=int, default=1024,
                        help="default longest side of the screenshots sent to the client (pixels)")
    parser.set_defaults(func=run)


def _settings(args: argparse.Namespace) -> Settings:
    from mobile_agent.cli.run import read_policy
    from mobile_agent.cli.token_file import read_token_file
    from mobile_agent.settings import load_settings

    token = read_token_file(args.token_file) if args.token_file is not None else None
    overrides: dict[str, Any] = {
        "server.host": args.host,
        "server.port": args.port,
        "server.api_token": token,
        "adb.serial": args.serial,
        "agent.output_dir": str(args.runs_dir) if args.runs_dir else None,
    }
    if args.policy is not None:
        overrides.update(read_policy(args.policy))
    return load_settings(getattr(args, "config", None), overrides)


def run(args: argparse.Namespace) -> int:
    try:
        settings = _settings(args)
    except ConfigError as exc:
        print(f"mobile-agent mcp: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    try:
        from mobile_agent.mcp_server.phone import PhoneService
        from mobile_agent.mcp_server.tools import build_server
    except ImportError as exc:
        print(f"mobile-agent mcp: the MCP SDK is not installed ({exc}); pip install 'mobile-agent[mcp]'", file=sys.stderr)
        return EXIT_USAGE
    service = PhoneService(settings, max_side=args.screenshot_side, operation_wait_s=args.phone_wait)
    try:
        return _serve(args, settings, build_server(settings, service))
    finally:
        service.close()  # the phones its tools opened (an iPhone's WDA connections, a USB iPhone's forward)


def _serve(args: argparse.Namespace, settings: Settings, server: MCPServer[Any]) -> int:
    if args.transport == "stdio":
        server.run("stdio")
        return 0
    principals = _principals(settings)
    if not principals:
        print("mobile-agent mcp: HTTP needs a bearer token: set server.api_token "
              "(MOBILE_AGENT_SERVER__API_TOKEN), server.tokens, or pass --token-file", file=sys.stderr)
        return EXIT_USAGE
    import uvicorn

    if not args.session_idle_timeout > 0:
        print("mobile-agent mcp: --session-idle-timeout must be a positive number of seconds", file=sys.stderr)
        return EXIT_USAGE
    from mobile_agent.mcp_server.http_sessions import SessionCap

    http = server.streamable_http_app(host=settings.server.host, session_idle_timeout=args.session_idle_timeout)
    app = bearer_protected(http, principals, SessionCap(settings.server.mcp_sessions_per_token, args.session_idle_timeout))
    from mobile_agent.mcp_server.retention import McpRetentionTimer

    # what the HTTP server's principals store is bounded, as the REST service's (server.retention)
    cleanup = McpRetentionTimer(Path(settings.agent.output_dir), settings.server.retention)
    cleanup.start()
    try:
        uvicorn.run(app, host=settings.server.host, port=settings.server.port, log_level="warning")
    finally:
        cleanup.stop()
    return 0


def _principals(settings: Settings) -> dict[str, tuple[str, str, str | None]]:
    """token -> (name, role, team), as the REST service reads them (``server.auth``): server.api_token
    is "default", an admin of no team; each of server.tokens its name, role and team."""
    found: dict[str, tuple[str, str, str | None]] = {}
    if settings.server.api_token is not None and settings.server.api_token.get_secret_value():
        found[settings.server.api_token.get_secret_value()] = ("default", "admin", None)
    for name, entry in sorted(settings.server.tokens.items()):
        if entry.token.get_secret_value():
            found.setdefault(entry.token.get_secret_value(), (name, entry.role, entry.team))
    return found


def bearer_protected(app: Any, principals: dict[str, tuple[str, str, str | None]],
                     sessions: SessionCap | None = None) -> Any:
    """``app`` (ASGI) behind ``Authorization: Bearer <token>``, any one of ``principals``' tokens
    (the service's ``server.api_token`` and its named ``server.tokens``): 401 otherwise, before
    the MCP transport sees the request. The request's scope then names its principal (name,
    role), which the tools read (a viewer may not act; a phone's lease names its holder), and its
    ``user`` is the principal as the SDK's session manager reads a request's owner: a session
    answers only the token that opened it (another token's requests of it: 404, as a session that
    does not exist). With ``sessions``, a principal holding ``server.mcp_sessions_per_token``
    sessions is refused another (429, ``http_sessions``). Lifespan events pass (the SDK's session
    manager starts there)."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    from mobile_agent.mcp_server.http_sessions import counted
    from mobile_agent.mcp_server.tools import PRINCIPAL_STATE

    # the token itself stays out of the request's scope: the principal's name identifies it
    users = {name: AuthenticatedUser(AccessToken(token="", client_id=name, scopes=[])) for name, _, _ in principals.values()}
    expected = [(f"Bearer {token}".encode(), principal) for token, principal in principals.items()]

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            matches = [principal for one, principal in expected
                       if hmac.compare_digest(given, one)]  # every one compared: no timing hint
            if matches:
                scope.setdefault("state", {})[PRINCIPAL_STATE] = matches[0]
                scope["user"] = users[matches[0][0]]
                if sessions is not None:
                    await counted(app, sessions, matches[0][0], scope, receive, send)
                    return
            else:
                body = b'{"error": "a bearer token is required (Authorization: Bearer <server.api_token>)"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded
