"""Without a planner endpoint only scripts can run: the REST API takes a script as well as
an instruction, refuses an instruction it could not plan (at once, saying why, instead of
failing the task a second later), and the dashboard says so and offers a script field.
Real service (uvicorn), real agent in scripted mode, a simulated phone over the real adb server."""

from __future__ import annotations

import os

import pytest

NO_PLANNER = {"planner.base_url": None, "planner.api_key": ""}
SETTINGS_PKG = "com.android.settings"


def test_rest_runs_a_script_and_refuses_what_it_cannot_plan(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **NO_PLANNER)
    assert live.client.get("/readyz").json()["planner"] is False

    refused = live.client.post("/v1/tasks", json={"instruction": "Open the settings"})
    assert refused.status_code == 422
    assert "send a script instead" in refused.json()["detail"][0]["msg"]
    neither = live.client.post("/v1/tasks", json={"device": "any"})
    assert neither.status_code == 422 and "a script" in neither.text and "or a flow" in neither.text
    bad = live.client.post("/v1/tasks", json={"script": "Open App (Settings)\nFly (to the moon)"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "script"]
    assert "script line 2" in bad.json()["detail"][0]["msg"]

    created = live.client.post("/v1/tasks", json={"script": "# open it\nOpen App (Settings)\nWait (0.1)\n"})
    assert created.status_code == 202, created.text
    assert created.json()["instruction"] == "script of 2 operations"
    task = live.wait_task(created.json()["id"])
    assert task["status"] == "completed", task
    assert task["steps"] >= 2 and task["prompt_tokens"] == 0
    assert phone.phone.state()["foreground"] == SETTINGS_PKG  # read from the phone itself


def test_with_a_planner_the_readiness_says_so(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone])
    assert live.client.get("/readyz").json()["planner"] is True
    assert live.client.post("/v1/tasks", json={"instruction": "[t-x] wait", "max_steps": 2}).status_code == 202


CHROMIUM = "/usr/bin/chromium"


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="chromium is not installed (make browser)")
def test_the_dashboard_warns_and_runs_a_script(service, sim_phones) -> None:
    from playwright.sync_api import sync_playwright

    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **NO_PLANNER)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        try:
            page = chromium.new_page()
            page.goto(f"{live.url}/dashboard/")
            page.wait_for_selector("#planner-warning:not([hidden])")
            assert "only scripts run" in page.inner_text("#planner-warning")
            page.fill("#script", "Open App (Settings)\nWait (0.1)")
            page.click("#submit-button")
            page.wait_for_function("() => document.querySelector('#run-status').textContent === 'completed'",
                                   timeout=60_000)
        finally:
            chromium.close()
    assert phone.phone.state()["foreground"] == SETTINGS_PKG
