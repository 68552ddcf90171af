"""The MCP sessions each token holds open over streamable HTTP, and their cap.

Each ``initialize`` POST makes a new session of the SDK's, kept until the client's DELETE or
``--session-idle-timeout`` with no request of it in flight (about 38 KB each, review8 #4). The
REST service bounds what a token holds open (``server.event_streams_per_token``,
``server.live_viewers_per_token``); here ``server.mcp_sessions_per_token`` does, refused in
``cli.bearer_protected`` before the SDK sees the request (429 naming the setting).

The count is read from the HTTP exchange alone, by the SDK's rules for a stateful session
(``mcp.server.streamable_http_manager``): counted from the answer (status under 400) that
carries a new ``mcp-session-id``; no longer after its DELETE answered, an answer "no such
session" (404: the SDK ended it), or ``idle_timeout_s`` with none of its requests in flight (an
open GET stream is one), when the SDK ends it too. An opening request is counted while it is
under way, so concurrent ones cannot pass the cap together. A client of the 2026-07-28 protocol
has no session: its answers carry no id and count nothing.

One event loop serves every request, and nothing here awaits: no lock is needed.

May import: the standard library.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

__all__ = ["SESSION_HEADER", "SessionCap", "counted"]

SESSION_HEADER = b"mcp-session-id"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass
class _Held:
    principal: str
    idle_since: float
    in_flight: int = 0


class SessionCap:
    """At most ``per_token`` open sessions per principal (0: no limit, nothing counted)."""

    def __init__(self, per_token: int, idle_timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_token = per_token
        self.idle_timeout_s = idle_timeout_s
        self.clock = clock
        self._sessions: dict[str, _Held] = {}  # session id -> its opener; at most per_token per principal
        self._opening: Counter[str] = Counter()  # principal -> opening requests under way

    def held(self, principal: str) -> int:
        """The principal's open sessions and opening requests; the ones gone idle are forgotten."""
        now = self.clock()
        gone = [sid for sid, held in self._sessions.items() if held.principal == principal
                and held.in_flight == 0 and now - held.idle_since >= self.idle_timeout_s]
        for sid in gone:
            del self._sessions[sid]
        return sum(held.principal == principal for held in self._sessions.values()) + self._opening[principal]

    def refusal(self, principal: str) -> str | None:
        """Why ``principal`` may not open another session now, else None (and the opening is counted)."""
        if not self.per_token:
            return None
        held = self.held(principal)
        if held >= self.per_token:
            return (f"the token {principal!r} holds {held} MCP sessions, its limit (server.mcp_sessions_per_token = "
                    f"{self.per_token}); end one (DELETE /mcp with its mcp-session-id) or let one go idle")
        self._opening[principal] += 1
        return None

    def opened(self, principal: str, session_id: str | None) -> None:
        """The opening request of ``principal``'s ended: a session of ``session_id``, or none."""
        if not self.per_token:
            return
        self._opening[principal] -= 1
        if self._opening[principal] <= 0:
            del self._opening[principal]
        if session_id is not None:
            self._sessions[session_id] = _Held(principal, self.clock())

    def enter(self, session_id: str, principal: str) -> None:
        held = self._sessions.get(session_id)
        if held is not None and held.principal == principal:
            held.in_flight += 1

    def leave(self, session_id: str, principal: str, method: str, status: int | None) -> None:
        """A request of ``principal``'s in the session ended, answered ``status`` (None: no answer
        began). Another principal's request of it (the SDK answers it 404: not its session) changes nothing."""
        held = self._sessions.get(session_id)
        if held is None or held.principal != principal:
            return
        if status == 404 or (method == "DELETE" and status is not None and status < 400):
            del self._sessions[session_id]
            return
        held.in_flight = max(0, held.in_flight - 1)
        if held.in_flight == 0:
            held.idle_since = self.clock()


async def counted(app: App, cap: SessionCap, principal: str, scope: Scope, receive: Receive, send: Send) -> None:
    """``app`` answers the request of ``principal``, its sessions counted by ``cap``: an opening
    request (a POST with no session id) over the cap is answered 429 before ``app`` sees it."""
    given = dict(scope.get("headers") or []).get(SESSION_HEADER)
    answer: dict[str, Any] = {}

    async def watched(message: Message) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = int(message["status"])
            answer["session"] = dict(message.get("headers") or []).get(SESSION_HEADER)
        await send(message)

    if given is None:
        if scope.get("method") != "POST":  # no session to open (the SDK answers it)
            await app(scope, receive, send)
            return
        refusal = cap.refusal(principal)
        if refusal is not None:
            await send({"type": "http.response.start", "status": 429,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": json.dumps({"error": refusal}).encode()})
            return
        try:
            await app(scope, receive, watched)
        finally:
            made = answer.get("session") if answer.get("status", 500) < 400 else None
            cap.opened(principal, made.decode("latin-1") if isinstance(made, bytes) else None)
        return
    session_id = given.decode("latin-1")
    cap.enter(session_id, principal)
    try:
        await app(scope, receive, watched)
    finally:
        cap.leave(session_id, principal, str(scope.get("method")), answer.get("status"))
