"""Whatever a client sends, the API answers with a status it documents, never a 500."""

from __future__ import annotations

import json
from urllib.parse import quote

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobile_agent.settings import load_settings
from server.app import create_app

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
task_bodies = st.fixed_dictionaries(
    {},
    optional={
        "instruction": st.text(max_size=300) | json_values,
        "device": st.sampled_from(["any", "emulator-5554", "a b", "", "../x"]) | json_values,
        "model": st.text(max_size=20) | json_values,
        "base_url": st.sampled_from(["http://127.0.0.1:1/v1", "ftp://x", ""]) | json_values,
        "temperature": st.floats(allow_nan=False, allow_infinity=False, min_value=-5, max_value=5) | json_values,
        "max_steps": st.integers(-5, 500) | json_values,
        "reflection": st.booleans() | json_values,
    },
)


def test_random_task_bodies_get_documented_answers(tmp_path, adb_server) -> None:
    app_settings = load_settings(
        overrides={
            "adb.server_port": adb_server.port,
            "server.database_url": f"sqlite:///{tmp_path / 'fuzz.sqlite3'}",
            "server.devices": ["no-such-phone:1"],  # nothing runs: tasks stay queued
            "server.preload_perception": False,
            "planner.base_url": "http://127.0.0.1:9/v1",  # never reached: nothing runs
            "server.max_instruction_chars": 200,
            "agent.output_dir": str(tmp_path / "runs"),
        }
    )
    with TestClient(create_app(app_settings), raise_server_exceptions=True) as client:

        @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(body=task_bodies | json_values)
        def check(body: object) -> None:
            response = client.post("/v1/tasks", content=json.dumps(body), headers={"content-type": "application/json"})
            assert response.status_code in (202, 422), (body, response.status_code, response.text)
            if response.status_code == 202:
                task = response.json()
                assert task["status"] == "queued" and task["device_request"] == "any"
                assert 0 < len(task["instruction"]) <= 200
            else:
                assert response.json()["detail"]

        check()

        @settings(max_examples=40, deadline=None)
        @given(path=st.text(max_size=30))
        def check_paths(path: str) -> None:
            response = client.get(f"/v1/tasks/1/files/{quote(path, safe='/')}")
            assert response.status_code in (404, 405, 422, 307), (path, response.status_code)

        check_paths()


def test_numbers_json_cannot_hold_get_a_422_not_a_500(tmp_path, adb_server) -> None:
    """``Infinity``/``1e999`` bodies (a 422 that echoes them broke the JSON encoder) and ids
    beyond the database's INTEGER (SQLite overflowed, Postgres's is 32-bit)."""
    app_settings = load_settings(
        overrides={
            "adb.server_port": adb_server.port,
            "server.database_url": f"sqlite:///{tmp_path / 'numbers.sqlite3'}",
            "server.devices": ["no-such-phone:1"],
            "server.preload_perception": False,
            "planner.base_url": "http://127.0.0.1:9/v1",  # never reached: nothing runs
            "agent.output_dir": str(tmp_path / "runs"),
        }
    )
    with TestClient(create_app(app_settings), raise_server_exceptions=True) as client:
        for body in (
            "Infinity",
            "-Infinity",
            "NaN",
            '{"instruction": "x", "temperature": 1e999}',
            '{"instruction": 1e999}',
            '{"instruction": "x", "max_steps": 1e999}',
            '{"instruction": "x", "max_steps": NaN}',
            '[{"deep": [-Infinity]}]',
        ):
            response = client.post("/v1/tasks", content=body, headers={"content-type": "application/json"})
            assert response.status_code == 422, (body, response.status_code, response.text)
            assert response.json()["detail"][0]["loc"][0] == "body"
        assert client.post("/v1/tasks", json={"instruction": "x", "temperature": 0.5}).status_code == 202
        huge = str(2**63 + 7)
        for path in (
            f"/v1/tasks/{huge}",
            f"/v1/tasks/{2**31}",
            f"/v1/tasks/{huge}/events",
            f"/v1/tasks/{huge}/trajectory.zip",
            f"/v1/tasks/{huge}/files/a.png",
            f"/v1/tasks/1/steps/{huge}/screenshot",
            f"/v1/tasks?offset={huge}",
            "/v1/tasks/1/events?after=" + huge,
        ):
            assert client.get(path).status_code == 422, path
        assert client.post(f"/v1/tasks/{huge}/cancel").status_code == 422
        assert client.get(f"/v1/tasks/{2**31 - 1}").status_code == 404
        for header in (huge, "²".encode(), "1" * 5000, "-1"):
            answer = client.get("/v1/tasks/1/events", headers={"Last-Event-ID": header})
            assert answer.status_code == 400, header
