"""Hostile clients against every route: whatever the method, path, headers or body, the
service answers with a status of its own (never a 500) and logs no traceback.

The routes come from the app itself (``app.routes``), so a route added later is covered
without editing this test. The phones and the agent behind the routes are small stand-ins
(the thing under test is the HTTP layer); a task with a trajectory folder on disk lets the
file routes reach the file system.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import Mount

from mobile_agent.errors import DeviceError
from mobile_agent.settings import load_settings
from server.app import create_app
from server.runner import TaskOutcome, TaskSpec

TOKEN = "hostile-test-token"
PNG_1x1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


class _OnePhone:
    def list(self) -> list[tuple[str, str, str | None]]:
        return [("emulator-5554", "device", "Pixel")]

    def screen_size(self, serial: str) -> tuple[int, int]:
        return 1080, 2400

    def screenshot(self, serial: str, fmt: str) -> bytes:
        return PNG_1x1

    def connect(self, address: str) -> str:
        raise DeviceError(f"failed to connect to {address}", serial=address)

    def close(self) -> None:
        return  # holds nothing open


class _EndsAtOnce:
    """A runner (server.runner.TaskRunner) whose every task ends after one step."""

    def __call__(self, spec: TaskSpec, *, cancel: threading.Event, emit) -> TaskOutcome:
        emit("step_finished", {"step": 1, "screenshot": str(spec.output_dir / "step-1.png")})
        return TaskOutcome(status="not_completed", steps=1, trajectory_dir=spec.output_dir)

    def prepare(self) -> None:
        pass

    def describe(self) -> dict[str, str]:
        return {}


def _route_templates(routes, prefix: str = "") -> list[tuple[str, set[str]]]:
    out = []
    for route in routes:
        included = getattr(route, "original_router", None)  # FastAPI >= 0.16x keeps included routers whole
        if included is not None:
            out += _route_templates(included.routes, prefix + route.include_context.prefix)
        elif isinstance(route, Mount):
            out.append((prefix + route.path + "/{path:path}", {"GET", "HEAD"}))
        elif isinstance(route, APIRoute) or hasattr(route, "path"):  # also /docs, /openapi.json, /redoc
            out.append((prefix + route.path, set(getattr(route, "methods", None) or {"GET"})))
    return out


# Path parameters: the ids that exist, huge or negative numbers, traversal, over-long names,
# percent-encoded bytes that are not UTF-8, NULs.
segments = st.one_of(
    st.sampled_from(["1", "0", "-1", "2147483648", "99999999999999999999", "emulator-5554", "..", "%2e%2e",
                     "a" * 300, "%ED%A0%80", "%00", "%FF", "step-1.png", "report.html", "x" * 5000]),
    st.text(max_size=40).map(lambda t: quote(t, safe="")),
)
file_paths = st.lists(segments, min_size=1, max_size=4).map("/".join)
header_names = st.sampled_from(["authorization", "cookie", "content-type", "last-event-id", "accept", "origin",
                                "range", "if-none-match", "x-forwarded-for", "accept-encoding", "x-anything"])
header_values = st.one_of(
    st.sampled_from([f"Bearer {TOKEN}", "Bearer", "Basic Zm9vOmJhcg==", "mobile_agent_session=xyz",
                     "application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                     "text/plain", "bytes=0-1", "bytes=9-1,abc", "5", "-1", "99999999999", "*/*"]),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60),
)
surrogate_text = st.text(st.characters(blacklist_categories=()), max_size=30)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | surrogate_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(surrogate_text, inner, max_size=6),
    max_leaves=12,
)
# (content-type, body): mostly what the type says, sometimes not
bodies = st.one_of(
    st.tuples(st.none(), st.none()),
    st.tuples(st.sampled_from([None, "application/octet-stream", "application/json"]), st.binary(max_size=300)),
    # json.dumps escapes a lone surrogate as \ud800: valid JSON that UTF-8 cannot encode
    st.tuples(st.just("application/json"), json_values.map(lambda v: json.dumps(v).encode())),
    st.tuples(st.just("application/json"), st.dictionaries(
        st.sampled_from(["instruction", "script", "device", "address", "max_steps"]), json_values, max_size=4).map(
        lambda v: json.dumps(v).encode())),
    st.tuples(st.just("application/x-www-form-urlencoded"), st.dictionaries(
        st.sampled_from(["token", "a", "b", "c", "d", "e", "f", "instruction", "script"]),
        st.text(max_size=20), max_size=9).map(lambda d: "&".join(f"{quote(k)}={quote(v)}" for k, v in d.items()).encode())),
)
methods = st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])


@pytest.fixture
def hostile_client(tmp_path: Path):
    runs = tmp_path / "runs"
    app_settings = load_settings(
        overrides={
            "server.database_url": f"sqlite:///{tmp_path / 'hostile.sqlite3'}",
            "server.preload_perception": False,
            "server.device_refresh_s": 60.0,
            "server.api_token": TOKEN,
            "server.max_body_bytes": 4096,
            "agent.output_dir": str(runs),
        }
    )
    app = create_app(app_settings, device_source=_OnePhone(), runner=_EndsAtOnce())
    with TestClient(app, raise_server_exceptions=True, base_url="http://127.0.0.1") as client:
        state = app.state.service
        task = state.store.create_task("a finished task", "any", {})
        folder = runs / "task-1"
        folder.mkdir(parents=True)
        (folder / "step-1.png").write_bytes(PNG_1x1)
        (folder / "report.html").write_text("<html></html>")
        assert state.store.claim(task.id, "emulator-5554", folder)
        state.store.add_event(task.id, "step_finished", {"step": 1, "screenshot": str(folder / "step-1.png")})
        assert state.store.finish(task.id, "not_completed", steps=1)
        yield app, client


def _fill(template: str, data) -> str:
    def one(match: re.Match) -> str:
        return data.draw(file_paths if match.group(0).endswith(":path}") else segments)

    return re.sub(r"\{[^}]+\}", one, template)


def test_no_route_answers_500_or_logs_a_traceback(hostile_client, caplog) -> None:
    app, client = hostile_client
    templates = _route_templates(app.routes)
    assert len(templates) >= 15, templates  # the walk found the routes

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])
    @given(data=st.data(), route=st.sampled_from(templates), method=methods,
           headers=st.dictionaries(header_names, header_values, max_size=3), body=bodies,
           authorized=st.integers(0, 4),
           query=st.dictionaries(st.sampled_from(["status", "device", "offset", "limit", "after", "refresh", "format",
                                                   "x"]), segments, max_size=3))
    def check(data, route, method, headers, body, authorized, query) -> None:
        template, allowed = route
        if data.draw(st.integers(0, 3)):  # mostly a method the route has
            method = data.draw(st.sampled_from(sorted(allowed)))
        content_type, body = body
        if content_type is not None:
            headers = {"content-type": content_type, **headers}
        if authorized:  # mostly past the token check, to reach the handlers
            headers = {**headers, "authorization": f"Bearer {TOKEN}"}
        path = _fill(template, data)
        url = path + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            response = client.request(method, url, headers=headers, content=body)
        assert response.status_code < 500 or response.status_code in (502, 503), (method, url, headers, body,
                                                                              response.status_code, response.text[:300])
        tracebacks = [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
        assert not tracebacks, (method, url, [r.getMessage() for r in tracebacks])

    check()


def test_the_three_500s_of_the_report(hostile_client) -> None:
    """The requests that answered 500 before, one by one."""
    _app, client = hostile_client
    form = "a=1&b=2&c=3&d=4&e=5&token=" + TOKEN
    login = client.post("/dashboard/login", content=form,
                        headers={"content-type": "application/x-www-form-urlencoded"}, follow_redirects=False)
    assert login.status_code in (400, 401) and "one field" in login.text

    surrogate = client.post("/v1/tasks", content='{"instruction": "\\ud800"}',
                            headers={"content-type": "application/json", "authorization": f"Bearer {TOKEN}"})
    assert surrogate.status_code == 422
    assert surrogate.json()["detail"][0]["loc"] == ["body", "instruction"]

    long_name = client.get("/v1/tasks/1/files/" + "a" * 300, headers={"authorization": f"Bearer {TOKEN}"})
    assert long_name.status_code == 404
