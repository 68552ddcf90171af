"""A test flow as a REST task (POST /v1/tasks with "flow"): the real service (uvicorn), the
real runner on a simulated phone, the scripted model (tests/flow_model.py). The flow's verdict
is the task's status, its report, flow.json and video are the task's files; a flow that does
not load is a 422 naming its step."""

from __future__ import annotations

from pathlib import Path

import av
import pytest

from tests.flow_model import flow_model
from tests.server_fixtures import service_settings, start_service

ROOT = Path(__file__).resolve().parents[2]
FLOWS = ROOT / "tests" / "flows"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_a_flow_runs_as_a_task_with_its_report_and_video(adb_server, sim_phones, llm_server, tmp_path):
    (phone,) = sim_phones(1)
    llm_server.script([], default=flow_model)
    live = start_service(service_settings(tmp_path, adb_server.port, llm_server, [phone.serial]))
    try:
        green = (FLOWS / "green" / "music-playlists.yaml").read_text()
        response = live.client.post("/v1/tasks", json={"flow": green, "record": True, "device": phone.serial})
        assert response.status_code == 202, response.text
        task = live.wait_task(response.json()["id"], timeout=120)
        assert task["status"] == "completed", task
        assert task["instruction"] == "flow: Amazon Music shows playlists"
        files = task["result"]["files"]
        folder = files["report"].split("/")[0]
        assert files == {"report": f"{folder}/report.html", "flow": f"{folder}/flow.json",
                         "video": f"{folder}/video.mp4"}, task["result"]  # fmt: skip
        for name in files.values():
            got = live.client.get(f"/v1/tasks/{task['id']}/files/{name}")
            assert got.status_code == 200, name
        video = live.client.get(f"/v1/tasks/{task['id']}/files/{files['video']}")
        assert video.headers["content-type"] == "video/mp4"
        (tmp_path / "task.mp4").write_bytes(video.content)
        with av.open(str(tmp_path / "task.mp4")) as container:
            assert container.duration > 0 and sum(1 for _ in container.decode(video=0)) >= 4
        assert live.client.get(f"/v1/tasks/{task['id']}/files/{files['flow']}").json()["status"] == "passed"
        assert "video.mp4" in live.client.get(f"/v1/tasks/{task['id']}/files/{files['report']}").text
        shot = live.client.get(f"/v1/tasks/{task['id']}/steps/1/screenshot")  # the flow's steps are the task's events
        assert shot.status_code == 200 and shot.headers["content-type"] == "image/png"

        failing = (FLOWS / "failing" / "false-assertion.yaml").read_text()
        task = live.wait_task(live.client.post("/v1/tasks", json={"flow": failing}).json()["id"], timeout=120)
        assert task["status"] == "not_completed"
        assert "not true: 'it is snowing in Hangzhou'" in task["result"]["reason"]

        bad = live.client.post("/v1/tasks", json={"flow": "name: x\nsteps:\n  - asert: typo\n"})
        assert bad.status_code == 422 and "step 1: a step has exactly one of" in bad.text
        both = live.client.post("/v1/tasks", json={"flow": green, "script": "Home"})
        assert both.status_code == 422 and "a script or a flow, not both" in both.text
    finally:
        live.stop()
