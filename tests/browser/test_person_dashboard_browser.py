"""The whole takeover on the dashboard, in a real headless chromium (Debian's, driven by
Playwright): a task pauses with a question, the page shows it and the live phone, the
person taps on the live view (the tap reaches the simulated phone) and presses "I did it on
the phone", and the run finishes with the person's steps in its trajectory. Skipped only
where chromium is not installed."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.browser_support import BROWSER_MARKS, TOKEN, sign_in
from tests.server_fixtures import TaggedPlanner

pytestmark = [*BROWSER_MARKS, pytest.mark.timeout(300)]
NOTES = "com.google.android.keep"


def test_takeover_on_the_live_view(service, sim_phones, browser, tmp_path) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    planner = TaggedPlanner(plans={"t-take": ["Ask user (Please open the Notes app for me)"]})
    live = service([phone], planner=planner, **{"server.api_token": TOKEN})
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_in(page, live.url, TOKEN)
    page.wait_for_selector(f"#device option[value='{phone.serial}']", state="attached")

    page.fill("#instruction", "[t-take] open my notes")
    page.click("#submit-button")
    # the question, and the phone live beside it
    page.wait_for_selector("#person:not([hidden])", timeout=60_000)
    assert page.inner_text("#ask-question") == "Please open the Notes app for me"
    assert page.inner_text("#run-status") == "waiting_for_user"
    assert page.is_hidden("#ask-confirm-controls")
    page.wait_for_function(
        "() => { const i = document.querySelector('#live-screen'); return i.complete && i.naturalWidth > 0; }",
        timeout=30_000,
    )
    assert "/live" in (page.get_attribute("#live-screen", "src") or "")

    # a tap on the live view, where the phone shows the Notes icon
    left, top, right, bottom = phone.element("Notes")["box"]
    box = page.locator("#live-screen").bounding_box()
    x = box["x"] + (left + right) / 2 / 540 * box["width"]
    y = box["y"] + (top + bottom) / 2 / 1200 * box["height"]
    page.mouse.click(x, y)
    deadline = time.monotonic() + 20
    while phone.phone.foreground != NOTES:
        assert time.monotonic() < deadline, "the tap on the live view never reached the phone"
        time.sleep(0.05)
    page.wait_for_function("() => document.querySelectorAll('#steps li.by-person').length >= 1", timeout=20_000)

    waiting_shot = page.screenshot(full_page=True)  # the question, the live phone, the person's step
    page.fill("#ask-answer", "opened it")
    page.click("#done-button")
    page.wait_for_function("() => document.querySelector('#run-status').textContent === 'completed'", timeout=60_000)
    page.wait_for_selector("#live-figure", state="hidden")
    assert page.is_hidden("#person")
    assert phone.phone.foreground == NOTES  # the state the person left is the run's end state
    actions = page.locator("#steps li .action").all_inner_texts()
    assert actions[0].startswith("Ask user") and actions[-1] == "Stop"
    assert page.locator("#steps li.by-person").count() == 2  # the tap and the reply
    shot = page.screenshot(full_page=True)
    (tmp_path / "dashboard-takeover.png").write_bytes(shot)

    task_id = int(page.inner_text("#run-id").lstrip("#"))
    folder = Path(live.state.store.get_task(task_id).trajectory_dir)
    lines = [json.loads(x) for x in next(folder.rglob("trajectory.jsonl")).read_text().splitlines()]
    person = [x for x in lines if x.get("by") == "person"]
    assert [p["operation"]["name"] for p in person] == ["tap_point", "user_reply"]
    tapped = person[0]["tap_point"]
    assert left <= tapped[0] <= right and top <= tapped[1] <= bottom  # the point the person meant, in screen pixels
    assert person[1]["asked_user"]["reply"]["kind"] == "done"
    # the run's own report shows who did each step and what the person was asked and said
    report = next(folder.rglob("report.html"))
    page.goto(report.as_uri())
    page.click("#strip button:nth-child(3)")
    details = page.text_content("#details")
    assert "Done by" in details and "Person's reply" in details and "done: opened it" in details
    assert not errors, errors
    keep = os.environ.get("MOBILE_AGENT_TEST_ARTIFACTS")
    if keep:
        (Path(keep) / "dashboard-takeover.png").write_bytes(shot)
        (Path(keep) / "dashboard-takeover-waiting.png").write_bytes(waiting_shot)
