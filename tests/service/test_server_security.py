"""The bearer token, the dashboard's cookie, exposure beyond localhost, CORS, raw path traversal."""

from __future__ import annotations

import http.client
from pathlib import Path

import httpx
import pytest

from mobile_agent.errors import ConfigError
from mobile_agent.settings import load_settings
from server.app import check_exposure, create_app

TOKEN = "s3cret-token-for-tests"


def test_api_and_dashboard_need_the_token(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **{"server.api_token": TOKEN})
    anonymous = httpx.Client(base_url=live.url, timeout=10, follow_redirects=False)
    try:
        for method, path in (
            ("GET", "/v1/tasks"),
            ("POST", "/v1/tasks"),
            ("GET", "/v1/tasks/1"),
            ("GET", "/v1/tasks/1/events"),
            ("GET", "/v1/devices"),
            ("GET", f"/v1/devices/{phone.serial}/screenshot"),
            ("POST", "/v1/devices/connect"),
            ("GET", "/metrics"),
        ):
            response = anonymous.request(method, path, json={"instruction": "x"} if method == "POST" else None)
            assert response.status_code == 401, (method, path, response.status_code)
            assert response.headers["www-authenticate"] == "Bearer"
        wrong = anonymous.get("/v1/tasks", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert anonymous.get("/v1/tasks", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401
        assert anonymous.get("/v1/tasks", params={"token": TOKEN}).status_code == 401  # query only for the page
        assert anonymous.get("/healthz").status_code == 200
        # the schema and its UI are the API's map: behind the token too
        assert anonymous.get("/openapi.json").status_code == 401
        assert anonymous.get("/docs").status_code == 401
        assert live.client.get("/openapi.json").json()["paths"]
        assert "swagger" in live.client.get("/docs").text.lower()
        assert anonymous.get("/readyz").status_code == 200

        # the page: a sign-in form without the token ...
        login = anonymous.get("/dashboard/")
        assert login.status_code == 401 and 'name="token"' in login.text and "/v1/" not in login.text
        assert 'method="post"' in login.text and 'action="/dashboard/login"' in login.text
        # a token in the address is never taken (access logs and history would keep it)
        in_url = anonymous.get("/dashboard/", params={"token": TOKEN})
        assert in_url.status_code == 401 and "set-cookie" not in in_url.headers
        wrong = anonymous.post("/dashboard/login", data={"token": "wrong"})
        assert wrong.status_code == 401 and "not right" in wrong.text and "set-cookie" not in wrong.headers
        # ... the form posts it in the body: a cookie, and a redirect to the page
        signed_in = anonymous.post("/dashboard/login", data={"token": TOKEN})
        assert signed_in.status_code == 303 and signed_in.headers["location"] == "/dashboard/"
        cookie = signed_in.headers["set-cookie"]
        assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
        # a signed, expiring session identifier, not the token
        assert TOKEN not in cookie and "Max-Age=" in cookie
        session = anonymous.cookies["mobile_agent_session"]
        assert session.count(".") == 2
        forged = httpx.Client(base_url=live.url, timeout=10, cookies={"mobile_agent_session": session[:-1] + ("1" if session.endswith("0") else "0")})
        assert forged.get("/v1/devices").status_code == 401  # a changed signature
        forged.cookies.set("mobile_agent_session", TOKEN)  # the raw token, as the old cookie held it
        assert forged.get("/v1/devices").status_code == 401
        forged.close()
        page = anonymous.get("/dashboard/")  # the client kept the cookie
        assert page.status_code == 200 and "/dashboard/static/app.js" in page.text
        assert anonymous.get("/v1/devices").status_code == 200  # the cookie opens the API for the page
        # a wrong token posted later never replaces the good cookie
        assert anonymous.post("/dashboard/login", data={"token": "wrong"}).status_code == 401
        assert anonymous.get("/dashboard/").status_code == 200
    finally:
        anonymous.close()
    assert live.client.get("/v1/tasks").status_code == 200  # the header


def test_sessions_expire_and_belong_to_their_token() -> None:
    from server.sessions import issue_session, session_valid

    value = issue_session(TOKEN, 3600, now=1000.0)
    assert session_valid(TOKEN, value, now=1000.0 + 3599)
    assert not session_valid(TOKEN, value, now=1000.0 + 3601)  # expired
    assert not session_valid("another-token", value, now=1000.0)  # the token changed: signed out
    session_id, expires, signature = value.split(".")
    assert not session_valid(TOKEN, f"{session_id}.{int(expires) + 10**6}.{signature}", now=1000.0)  # extended
    assert issue_session(TOKEN, 3600, now=1000.0) != value  # a new identifier each time
    for junk in ("", "...", "a.b.c", "a.1.", ".1.x", "a." + "9" * 40 + ".x", "\ud800"):
        assert not session_valid(TOKEN, junk, now=1000.0)


def test_refuses_to_listen_beyond_localhost_without_a_token() -> None:
    exposed = load_settings(overrides={"server.host": "0.0.0.0"})
    with pytest.raises(ConfigError) as info:
        check_exposure(exposed)
    assert info.value.fields["host"] == "0.0.0.0"
    with pytest.raises(ConfigError):
        create_app(exposed)
    with pytest.raises(ConfigError):
        create_app(load_settings(overrides={"server.host": "192.168.1.20", "server.api_token": ""}))
    check_exposure(load_settings(overrides={"server.host": "0.0.0.0", "server.api_token": TOKEN}))
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        check_exposure(load_settings(overrides={"server.host": host}))


def test_cors_is_off_by_default_and_configurable(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    closed = service([phone])
    preflight = {"Origin": "https://ops.example", "Access-Control-Request-Method": "POST"}
    assert "access-control-allow-origin" not in closed.client.options("/v1/tasks", headers=preflight).headers
    closed.stop()
    opened = service([phone], **{"server.cors_origins": ["https://ops.example"]})
    answer = opened.client.options("/v1/tasks", headers=preflight)
    assert answer.headers["access-control-allow-origin"] == "https://ops.example"
    other = opened.client.options("/v1/tasks", headers={**preflight, "Origin": "https://evil.example"})
    assert other.headers.get("access-control-allow-origin") != "https://evil.example"


def test_raw_dot_segments_never_leave_the_trajectory(service, sim_phones, tmp_path) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone])
    task = live.wait_task(live.submit("[t-raw] one step", max_steps=2)["id"])
    (tmp_path / "secret.txt").write_text("do not serve")
    host, port = live.url.removeprefix("http://").split(":")
    for raw in (
        f"/v1/tasks/{task['id']}/files/../../secret.txt",
        f"/v1/tasks/{task['id']}/files/..%2f..%2fsecret.txt",
        f"/v1/tasks/{task['id']}/files/%2e%2e/%2e%2e/%2e%2e/secret.txt",
        f"/v1/tasks/{task['id']}/files/%00",
    ):
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            connection.putrequest("GET", raw, skip_accept_encoding=True)
            connection.endheaders()
            response = connection.getresponse()
            body = response.read()
        finally:
            connection.close()
        assert response.status in (404, 422), (raw, response.status)
        assert b"do not serve" not in body

    # the run's report is served with a policy that gives it no power over the API's origin
    base = Path(live.state.store.get_task(task["id"]).trajectory_dir)
    (report_path,) = base.rglob("report.html")
    report = live.client.get(f"/v1/tasks/{task['id']}/files/{report_path.relative_to(base).as_posix()}")
    assert report.status_code == 200 and report.headers["content-type"].startswith("text/html")
    policy = report.headers["content-security-policy"]
    assert "sandbox" in policy and "default-src 'none'" in policy and "connect-src" not in policy
    assert report.headers["x-content-type-options"] == "nosniff"


class _PhoneThatCrashes:
    """A device source whose capture fails with a bug (not a DeviceError)."""

    def list(self) -> list[tuple[str, str, str | None]]:
        return [("crashy-1", "device", "Crashy")]

    def screen_size(self, serial: str) -> tuple[int, int]:
        return 540, 1200

    def screenshot(self, serial: str, fmt: str) -> bytes:
        raise RuntimeError("boom in /srv/secret/path.py with " + TOKEN)

    def connect(self, address: str) -> str:
        raise RuntimeError("connect crashed at /srv/secret/path.py")

    def close(self) -> None:
        return  # holds nothing open


def test_a_500_tells_nothing_of_the_server(tmp_path) -> None:
    from fastapi.testclient import TestClient

    app = create_app(
        load_settings(
            overrides={
                "server.database_url": f"sqlite:///{tmp_path / 'crash.sqlite3'}",
                "server.preload_perception": False,
                "agent.output_dir": str(tmp_path / "runs"),
            }
        ),
        device_source=_PhoneThatCrashes(),
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        for method, path, body in (
            ("GET", "/v1/devices/crashy-1/screenshot", None),
            ("POST", "/v1/devices/connect", {"address": "10.0.0.9:5555"}),
        ):
            response = client.request(method, path, json=body)
            assert response.status_code == 500, path
            assert response.text == "Internal Server Error", response.text
            assert "secret" not in response.text and "Traceback" not in response.text
        metrics = client.get("/metrics").text
        assert 'route="/v1/devices/{serial}/screenshot",status="500"} 1' in metrics


def test_a_task_cannot_send_the_planner_key_to_an_endpoint_of_its_choosing(tmp_path) -> None:
    from fastapi.testclient import TestClient

    app = create_app(
        load_settings(
            overrides={
                "server.database_url": f"sqlite:///{tmp_path / 'urls.sqlite3'}",
                "server.devices": ["no-such-phone:1"],  # nothing runs
                "server.preload_perception": False,
                "server.planner_base_urls": ["http://127.0.0.1:11434/v1/"],
                "planner.base_url": "http://127.0.0.1:8080/v1",
                "planner.api_key": "sk-server-secret",
                "agent.output_dir": str(tmp_path / "runs"),
            }
        )
    )
    with TestClient(app) as client:
        for url in ("http://attacker.example/v1", "http://169.254.169.254/latest", "http://127.0.0.1:8080/v2"):
            answer = client.post("/v1/tasks", json={"instruction": "x", "base_url": url})
            assert answer.status_code == 422, url
            assert answer.json()["detail"][0]["loc"] == ["body", "base_url"]
            assert answer.json()["detail"][0]["type"] == "base_url_not_allowed"
        for url in ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/", "http://127.0.0.1:11434/v1"):
            answer = client.post("/v1/tasks", json={"instruction": "x", "base_url": url})
            assert answer.status_code == 202 and answer.json()["options"]["base_url"] == url
        assert client.get("/v1/tasks").json()["count"] == 3
