"""The count of MCP sessions each token holds over streamable HTTP (``mcp_server.http_sessions``,
``server.mcp_sessions_per_token``), driven through its ASGI wrapper ``counted`` with a clock the
test moves: a session is counted from the answer that carries a new ``mcp-session-id`` until its
DELETE, a 404 (the SDK no longer has it) or the idle timeout with none of its requests in flight;
opening requests under way count, so concurrent ones cannot pass the cap together. The app behind
it answers as the SDK's session manager does (``mcp.server.streamable_http_manager``); the wrapper
over the real server is tests/service/test_mcp_session_cap.py."""

from __future__ import annotations

import json
import uuid
from typing import Any

import anyio

from mobile_agent.mcp_server.http_sessions import SessionCap, counted

IDLE_S = 100.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class SessionManager:
    """Answers as the SDK's stateful manager: a POST with no id opens a session (its id in the
    answer), a DELETE ends it, an unknown id or another principal's session (``scope["user"]``,
    as ``cli.bearer_protected`` sets it) is 404. ``hold`` keeps a request open until set."""

    def __init__(self) -> None:
        self.open: set[str] = set()
        self.owners: dict[str, str] = {}
        self.hold: anyio.Event | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        given = dict(scope["headers"]).get(b"mcp-session-id")
        if self.hold is not None:
            await self.hold.wait()
        headers: list[tuple[bytes, bytes]] = []
        if given is None:
            made = uuid.uuid4().hex
            self.open.add(made)
            self.owners[made] = scope["user"]
            status, headers = 200, [(b"mcp-session-id", made.encode())]
        elif given.decode() not in self.open or self.owners[given.decode()] != scope["user"]:
            status = 404
        else:
            status = 200
            if scope["method"] == "DELETE":
                self.open.discard(given.decode())
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})


def request(app: Any, cap: SessionCap, principal: str, method: str = "POST", session: str | None = None) -> tuple[int, Any]:
    return anyio.run(arequest, app, cap, principal, method, session)


async def arequest(app: Any, cap: SessionCap, principal: str, method: str = "POST",
                   session: str | None = None) -> tuple[int, Any]:
    """One request through ``counted``: (status, the new session id or the body's JSON)."""
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    headers = [(b"mcp-session-id", session.encode())] if session else []
    scope = {"type": "http", "method": method, "headers": headers, "user": principal}
    await counted(app, cap, principal, scope, receive, send)
    status = sent[0]["status"]
    made = dict(sent[0]["headers"]).get(b"mcp-session-id")
    return status, made.decode() if made else json.loads(sent[1]["body"])


def test_a_token_at_its_cap_gets_429_naming_the_setting_and_another_token_does_not() -> None:
    app, cap = SessionManager(), SessionCap(2, IDLE_S, Clock())
    first = request(app, cap, "bob")
    second = request(app, cap, "bob")
    assert first[0] == second[0] == 200 and first[1] != second[1]
    status, body = request(app, cap, "bob")
    assert status == 429 and "server.mcp_sessions_per_token = 2" in body["error"] and "'bob'" in body["error"], body
    assert len(app.open) == 2  # the refused one never reached the SDK
    assert request(app, cap, "alice")[0] == 200
    # requests of an open session are not openings: they pass
    assert request(app, cap, "bob", "POST", first[1])[0] == 200


def test_delete_and_a_session_the_sdk_no_longer_has_free_a_place() -> None:
    app, cap = SessionManager(), SessionCap(2, IDLE_S, Clock())
    one, two = request(app, cap, "bob")[1], request(app, cap, "bob")[1]
    assert request(app, cap, "bob")[0] == 429
    assert request(app, cap, "bob", "DELETE", one)[0] == 200
    assert request(app, cap, "bob")[0] == 200
    assert request(app, cap, "bob")[0] == 429
    app.open.discard(two)  # the SDK ended it (crashed): its next request answers 404
    assert request(app, cap, "bob", "POST", two)[0] == 404
    assert request(app, cap, "bob")[0] == 200


def test_an_idle_session_stops_counting_after_the_idle_timeout_and_a_busy_one_does_not() -> None:
    clock = Clock()
    app, cap = SessionManager(), SessionCap(2, IDLE_S, clock)
    request(app, cap, "bob")
    request(app, cap, "bob")
    clock.now += IDLE_S - 1
    assert request(app, cap, "bob")[0] == 429
    clock.now += 1  # the SDK ends both now
    busy = request(app, cap, "bob")[1]
    request(app, cap, "bob")

    async def main() -> None:
        app.hold = anyio.Event()
        statuses: list[int] = []

        async def stream() -> None:  # a GET stream of ``busy``, open across the idle timeout
            statuses.append((await arequest(app, cap, "bob", "GET", busy))[0])

        async with anyio.create_task_group() as group:
            group.start_soon(stream)
            while not _in_flight(cap, busy):
                await anyio.sleep(0.01)
            clock.now += 10 * IDLE_S
            assert cap.held("bob") == 1  # the other went idle; ``busy`` has a request in flight
            app.hold.set()
        assert statuses == [200]

    anyio.run(main)
    clock.now += IDLE_S - 1  # idle from the stream's end on
    assert cap.held("bob") == 1
    clock.now += 1
    assert cap.held("bob") == 0


def _in_flight(cap: SessionCap, session: str) -> bool:
    return any(sid == session and held.in_flight for sid, held in cap._sessions.items())


def test_concurrent_openings_cannot_pass_the_cap_together() -> None:
    app, cap = SessionManager(), SessionCap(2, IDLE_S, Clock())

    async def main() -> list[int]:
        app.hold = anyio.Event()
        statuses: list[int] = []

        async def open_one() -> None:
            statuses.append((await arequest(app, cap, "bob"))[0])

        async with anyio.create_task_group() as group:
            for _ in range(2):
                group.start_soon(open_one)
            while cap.held("bob") < 2:  # both under way, not yet answered
                await anyio.sleep(0.01)
            refused = await arequest(app, cap, "bob")
            assert refused[0] == 429
            app.hold.set()
        return statuses

    assert anyio.run(main) == [200, 200]
    assert cap.held("bob") == 2


def test_another_tokens_request_of_a_session_changes_its_count_in_nothing() -> None:
    app, cap = SessionManager(), SessionCap(1, IDLE_S, Clock())
    bobs = request(app, cap, "bob")[1]
    assert request(app, cap, "alice", "POST", bobs)[0] == 404  # not hers (the SDK's answer)
    assert request(app, cap, "alice", "DELETE", bobs)[0] == 404
    assert request(app, cap, "bob")[0] == 429  # bob's session still counts
    assert request(app, cap, "bob", "POST", bobs)[0] == 200


def test_no_limit_counts_nothing() -> None:
    app, cap = SessionManager(), SessionCap(0, IDLE_S, Clock())
    assert all(request(app, cap, "bob")[0] == 200 for _ in range(50))
    assert cap.held("bob") == 0
