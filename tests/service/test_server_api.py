"""The REST API end to end: the real agent on a simulated phone (real adb server),
planned by the scripted OpenAI-compatible server, served by a real uvicorn."""

from __future__ import annotations

import io
import json
import time
import zipfile

import httpx
import pytest
from PIL import Image

from tests.server_fixtures import TaggedPlanner


def _sse(client: httpx.Client, path: str, headers: dict[str, str] | None = None) -> list[dict]:
    """Read an event stream to its ``end`` event; returns the events as dicts."""
    events: list[dict] = []
    current: dict = {}
    with client.stream("GET", path, headers=headers or {}, timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if not line:
                if "event" in current:
                    events.append(current)
                    if current.get("event") == "end":
                        return events
                current = {}
                continue
            if line.startswith(":"):
                continue
            key, _, value = line.partition(": ")
            current[key] = value
    return events


def test_task_runs_on_the_phone_and_reports_steps_events_and_files(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    planner = TaggedPlanner(plans={"t-home": ["Wait (0.1)", "Open App (Settings)"]})
    live = service([phone], planner=planner)

    assert phone.phone.state()["foreground"] == "com.android.launcher3"
    created = live.submit("[t-home] open the settings", max_steps=5)
    assert created["status"] == "queued"
    task = live.wait_task(created["id"])

    assert task["status"] == "completed", task["error"]
    assert task["device"] == phone.serial
    assert task["steps"] == 3  # two actions, then Stop
    assert phone.phone.state()["foreground"] == "com.android.settings"  # read from the phone itself
    assert task["result"]["reason"] and len(task["result"]["run_id"]) == 12
    assert task["prompt_tokens"] == 3000 and task["completion_tokens"] == 150
    assert task["cost_usd"] == pytest.approx(3000 * 2.5e-6 + 150 * 10e-6)
    assert task["run_s"] > 0 and task["queued_s"] >= 0
    assert not {"trajectory_dir", "instance", "cancel_requested"} & task.keys()  # store columns stay inside
    assert planner.calls["t-home"] == 3

    events = _sse(live.client, f"/v1/tasks/{task['id']}/events")
    kinds = [e["event"] for e in events]
    assert kinds[0] == "status" and kinds[-1] == "end"
    assert kinds.count("step_started") == 3 and kinds.count("step_finished") == 3
    statuses = [json.loads(e["data"])["data"]["status"] for e in events if e["event"] == "status"]
    assert statuses == ["queued", "running", "completed"]
    ids = [int(e["id"]) for e in events if "id" in e]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    finished = [json.loads(e["data"])["data"] for e in events if e["event"] == "step_finished"]
    assert [f["action"] for f in finished] == ["Wait (0.1)", "Open App (Settings)", "Stop"]
    shot = live.client.get(finished[0]["screenshot_path_url"])
    assert shot.status_code == 200 and shot.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(shot.content)).size == (540, 1200)

    step_shot = live.client.get(f"/v1/tasks/{task['id']}/steps/1/screenshot")
    assert step_shot.status_code == 200 and step_shot.content == shot.content
    assert live.client.get(f"/v1/tasks/{task['id']}/steps/9/screenshot").status_code == 404

    # Replay resumes after Last-Event-ID: only what came later.
    resumed = _sse(live.client, f"/v1/tasks/{task['id']}/events", headers={"Last-Event-ID": str(ids[-2])})
    assert [int(e["id"]) for e in resumed if "id" in e] == [ids[-1]]

    archive = live.client.get(f"/v1/tasks/{task['id']}/trajectory.zip")
    assert archive.status_code == 200 and archive.headers["content-type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(archive.content)).namelist()
    assert any(n.endswith("trajectory.jsonl") for n in names)
    assert sum(n.endswith(".png") for n in names) >= 3


def test_bad_input_gets_clear_errors(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **{"server.max_instruction_chars": 50, "server.max_steps_limit": 10})
    post = live.client.post

    blank = post("/v1/tasks", json={"instruction": "   "})
    assert blank.status_code == 422 and "blank" in blank.text
    long = post("/v1/tasks", json={"instruction": "x" * 51})
    assert long.status_code == 422 and long.json()["detail"][0]["loc"] == ["body", "instruction"]
    steps = post("/v1/tasks", json={"instruction": "ok", "max_steps": 11})
    assert steps.status_code == 422 and steps.json()["detail"][0]["loc"] == ["body", "max_steps"]
    assert post("/v1/tasks", json={"instruction": "ok", "max_steps": 0}).status_code == 422
    assert post("/v1/tasks", json={"instruction": "ok", "temperature": 3}).status_code == 422
    assert post("/v1/tasks", json={"instruction": "ok", "surprise": 1}).status_code == 422
    assert post("/v1/tasks", json={"instruction": "ok", "base_url": "file:///etc/passwd"}).status_code == 422
    assert post("/v1/tasks", json={"instruction": "ok", "device": "a b; reboot"}).status_code == 422
    unknown = post("/v1/tasks", json={"instruction": "ok", "device": "10.9.9.9:5555"})
    assert unknown.status_code == 422 and "unknown_device" in unknown.text
    assert f"not one of this server's phones (server.devices: {phone.serial})" in unknown.json()["detail"][0]["msg"]
    assert post("/v1/tasks", content=b"{not json", headers={"content-type": "application/json"}).status_code == 422
    form = post("/v1/tasks", content=b'{"instruction": "ok"}', headers={"content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 422 and "content-type: application/json" in form.json()["detail"][0]["msg"]
    huge = post("/v1/tasks", content=b'{"instruction": "' + b"y" * 70_000 + b'"}', headers={"content-type": "application/json"})
    assert huge.status_code == 413

    def chunks():
        yield b'{"instruction": "'
        for _ in range(20):
            yield b"z" * 4096
        yield b'"}'

    streamed = post("/v1/tasks", content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413

    assert live.client.get("/v1/tasks/999").status_code == 404
    assert live.client.get("/v1/tasks/abc").status_code == 422
    assert live.client.get("/v1/tasks?status=bogus").status_code == 422
    assert live.client.get("/v1/tasks?limit=0").status_code == 422
    assert live.client.get("/v1/devices/nope/screenshot").status_code == 404
    assert live.client.post("/v1/devices/connect", json={"address": "a;b"}).status_code == 422
    assert live.client.get("/v1/tasks", params={"status": "queued"}).json()["count"] == 0


def test_file_endpoints_refuse_path_traversal(service, sim_phones, tmp_path) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone])
    task = live.wait_task(live.submit("[t-one] one step", max_steps=2)["id"])
    assert task["status"] == "completed"
    secret = tmp_path / "secret.txt"
    secret.write_text("do not serve")
    runs = tmp_path / "runs"
    (runs / "outside.png").write_bytes(b"not the task's")
    base = f"/v1/tasks/{task['id']}/files/"
    for attack in (
        "../secret.txt",
        "../../secret.txt",
        "..%2F..%2Fsecret.txt",
        "%2e%2e/%2e%2e/secret.txt",
        "../outside.png",
        str(secret),
        "/etc/passwd",
        "%2Fetc%2Fpasswd",
    ):
        response = live.client.get(base + attack)
        # 404 from the file route, or 422/404 where the client already folded the dots
        assert response.status_code in (404, 422), (attack, response.status_code)
        assert b"do not serve" not in response.content
    # a real file of the trajectory is served
    jsonl = [p for p in (runs / f"task-{task['id']}").rglob("trajectory.jsonl")]
    relative = jsonl[0].relative_to(runs / f"task-{task['id']}").as_posix()
    assert live.client.get(base + relative).status_code == 200
    # links inside the trajectory that lead out of it are neither served nor zipped
    folder = runs / f"task-{task['id']}"
    (folder / "link.png").symlink_to(secret)
    (folder / "linked-dir").symlink_to(tmp_path, target_is_directory=True)
    for linked in ("link.png", "linked-dir/secret.txt", "linked-dir/runs/outside.png"):
        response = live.client.get(base + linked)
        assert response.status_code == 404 and b"do not serve" not in response.content, linked
    archive = zipfile.ZipFile(io.BytesIO(live.client.get(f"/v1/tasks/{task['id']}/trajectory.zip").content))
    assert archive.namelist() and not [n for n in archive.namelist() if "link" in n or "secret" in n]
    assert all(b"do not serve" not in archive.read(n) for n in archive.namelist())


def test_devices_list_screenshot_and_connect(service, sim_phones, adb_server) -> None:
    phones = sim_phones(2, width=540, height=1200)
    live = service(phones)
    listed = live.client.get("/v1/devices").json()
    assert listed["count"] == 2
    assert {d["serial"] for d in listed["data"]} == {p.serial for p in phones}
    for device in listed["data"]:
        assert device["state"] == "device" and not device["busy"] and device["current_task"] is None
        assert (device["width"], device["height"]) == (540, 1200)
    png = live.client.get(f"/v1/devices/{phones[0].serial}/screenshot")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(png.content)).size == (540, 1200)
    jpeg = live.client.get(f"/v1/devices/{phones[0].serial}/screenshot", params={"format": "jpeg"})
    assert jpeg.status_code == 200 and jpeg.content[:2] == b"\xff\xd8"

    adb_server.disconnect(phones[1].serial)
    adb_server.wait_state(phones[1].serial, None)
    connected = live.client.post("/v1/devices/connect", json={"address": phones[1].serial})
    assert connected.status_code == 200, connected.text
    assert phones[1].serial in {d["serial"] for d in connected.json()["data"] if d["state"] == "device"}
    # (the kernel refuses the broadcast address at once, no packet sent; a refused loopback
    # port costs adb 10 s of retries and leaves an offline entry on the shared adb server)
    refused = live.client.post("/v1/devices/connect", json={"address": "255.255.255.255:5555"})
    assert refused.status_code == 502 and refused.json()["detail"]["type"] == "DeviceError"


def test_health_readiness_metrics_and_openapi(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone])
    assert live.client.get("/healthz").json() == {"status": "ok"}
    ready = live.client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["devices"] == 1
    live.wait_task(live.submit("[t-m] metrics", max_steps=2)["id"])
    text = live.client.get("/metrics").text
    assert "# TYPE mobile_agent_http_requests_total counter" in text
    assert 'mobile_agent_http_requests_total{method="POST",route="/v1/tasks",status="202"} 1' in text
    assert 'mobile_agent_tasks_finished_total{status="completed"} 1' in text
    assert 'mobile_agent_tasks{status="completed"} 1' in text
    assert 'mobile_agent_devices{state="device"} 1' in text
    assert "mobile_agent_task_run_seconds_count 1" in text
    schema = live.client.get("/openapi.json").json()
    assert {"/v1/tasks", "/v1/tasks/{task_id}", "/v1/tasks/{task_id}/events", "/v1/devices"} <= set(schema["paths"])
    assert {"TaskCreate", "TaskPublic", "TaskListPublic"} <= set(schema["components"]["schemas"])


def test_perception_is_loaded_once_at_startup(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **{"server.preload_perception": True})
    ready = live.client.get("/readyz").json()
    assert ready["status"] == "ready"
    assert ready["perception"]["ocr"].startswith("rapidocr") and "not loaded" not in ready["perception"]["ocr"]


def test_listing_filters_and_pages(service, sim_phones) -> None:
    phones = sim_phones(2, width=540, height=1200)
    live = service(phones)
    ids = [live.submit(f"[t-l{i}] list me", max_steps=2, device=phones[i % 2].serial)["id"] for i in range(4)]
    for task_id in ids:
        assert live.wait_task(task_id)["status"] == "completed"
    page = live.client.get("/v1/tasks", params={"limit": 3}).json()
    assert page["count"] == 4 and len(page["data"]) == 3 and page["data"][0]["id"] == ids[-1]
    rest = live.client.get("/v1/tasks", params={"limit": 3, "offset": 3}).json()
    assert [t["id"] for t in rest["data"]] == [ids[0]]
    mine = live.client.get("/v1/tasks", params={"device": phones[1].serial}).json()
    assert sorted(t["id"] for t in mine["data"]) == [ids[1], ids[3]]
    assert all(t["device"] == phones[1].serial for t in mine["data"])
    assert live.client.get("/v1/tasks", params={"status": "completed"}).json()["count"] == 4
    assert live.client.get("/v1/tasks", params={"status": "running"}).json()["count"] == 0


def _open_streams(live) -> int:
    for line in live.client.get("/metrics").text.splitlines():
        if line.startswith("mobile_agent_event_streams "):
            return int(float(line.split()[1]))
    raise AssertionError("no mobile_agent_event_streams gauge")


def test_an_event_stream_ends_when_its_client_leaves(service) -> None:
    live = service([], **{"server.devices": ["no-such-phone:1"]})  # the task stays queued
    task = live.submit("[t-stay] never runs")
    with httpx.Client(base_url=live.url, timeout=10) as client:
        for attempt in range(3):
            with client.stream("GET", f"/v1/tasks/{task['id']}/events") as response:
                lines = response.iter_lines()  # kept: closing the iterator closes the connection
                while not next(lines).startswith("event: status"):
                    pass
                assert _open_streams(live) == 1, attempt
    # the streams noticed at once, not at their next keepalive (15 s) or never
    deadline = time.monotonic() + 5
    while _open_streams(live):
        assert time.monotonic() < deadline, f"{_open_streams(live)} streams outlived their clients"
        time.sleep(0.05)
    assert live.client.get(f"/v1/tasks/{task['id']}").json()["status"] == "queued"


class _OnePhone:
    """A device source with one phone, no adb."""

    def list(self) -> list[tuple[str, str, str | None]]:
        return [("phone-1", "device", "Fake")]

    def screen_size(self, serial: str) -> tuple[int, int]:
        return (1080, 2400)

    def screenshot(self, serial: str, fmt: str) -> bytes:
        raise NotImplementedError

    def connect(self, address: str) -> str:
        raise NotImplementedError

    def close(self) -> None:
        return  # holds nothing open


def test_startup_says_what_would_make_every_task_fail(tmp_path, monkeypatch, caplog) -> None:
    from fastapi.testclient import TestClient

    from mobile_agent.settings import load_settings
    from server.app import create_app

    for key in ("MOBILE_AGENT_PLANNER__BASE_URL", "MOBILE_AGENT_PLANNER__API_KEY", "MOBILE_AGENT_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    settings = load_settings(overrides={
        "server.database_url": f"sqlite:///{tmp_path / 'startup.sqlite3'}",
        "server.devices": ["phone-1", "phone-2"],
        "server.preload_perception": False,
        "agent.output_dir": str(tmp_path / "runs"),
    })  # fmt: skip
    with caplog.at_level("WARNING", logger="server.app"), TestClient(create_app(settings, device_source=_OnePhone())):
        pass
    said = [r.getMessage() for r in caplog.records if r.name == "server.app"]
    assert any("no planner endpoint configured" in m and "MOBILE_AGENT_PLANNER__BASE_URL" in m for m in said), said
    assert any("server.devices not attached now: phone-2 " in m for m in said), said
    assert not any("phone-1" in m for m in said)
