"""The dashboard in a real headless chromium (Debian's, driven by Playwright): phones with
live screens, submit a task, watch it live over SSE, cancel one, replay a past run.
Skipped only where chromium is not installed."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import numpy as np
from PIL import Image

from tests.browser_support import BROWSER_MARKS, TOKEN, sign_in
from tests.server_fixtures import TaggedPlanner, waits

pytestmark = BROWSER_MARKS


def _not_blank(png: bytes) -> float:
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.float32)
    return float(pixels.std())


def test_dashboard_shows_phones_runs_a_task_live_cancels_and_replays(service, sim_phones, browser, tmp_path) -> None:
    phones = sorted(sim_phones(2, width=540, height=1200), key=lambda p: p.serial)
    planner = TaggedPlanner(
        plans={"t-ui": waits(3), "t-slow": waits(30)},
        delay_s={"t-ui": 0.3, "t-slow": 0.4},
    )
    live = service(phones, planner=planner, **{"server.api_token": TOKEN})
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))

    # Without the token: the sign-in page, no data.
    page.goto(f"{live.url}/dashboard/")
    assert page.locator("input[name=token]").count() == 1
    sign_in(page, live.url, TOKEN)
    assert urls and not [u for u in urls if TOKEN in u]  # the token went in a form body, never a URL

    # The phones, with their live screens.
    page.wait_for_selector(".device img[src*='screenshot']")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.device img')].filter(i => i.complete && i.naturalWidth > 0).length === 2"
    )
    serials = page.locator(".device .serial").all_inner_texts()
    assert sorted(s.split(" ")[0] for s in serials) == [p.serial for p in phones]
    assert page.locator("#device option").count() == 3  # "any" and the two phones

    # Submit a task through the form and watch it run.
    page.fill("#instruction", "[t-ui] open the home screen")
    page.fill("#max_steps", "6")
    page.select_option("#device", phones[1].serial)
    page.click("#submit-button")
    page.wait_for_selector("#run-section:not([hidden])")
    page.wait_for_function("() => document.querySelector('#run-status').textContent === 'completed'", timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('#steps li').length === 4")
    actions = page.locator("#steps li .action").all_inner_texts()
    assert actions[:3] == waits(3) and actions[3] == "Stop"
    assert page.locator("#steps li .thought").first.inner_text().startswith("following the plan for t-ui")
    page.wait_for_function("() => document.querySelector('#run-screen').complete && document.querySelector('#run-screen').naturalWidth > 0")
    assert "/files/" in (page.get_attribute("#run-screen", "src") or "")
    assert page.is_visible("#download-link")
    assert phones[1].serial in page.inner_text("#run-device")
    # the phone's card follows: busy with the task while it ran, free again now
    page.wait_for_function(
        "() => [...document.querySelectorAll('.device .state')].every(s => s.textContent === 'free')",
        timeout=10_000,
    )
    shot = page.screenshot(full_page=True)
    (tmp_path / "dashboard-run.png").write_bytes(shot)
    assert _not_blank(shot) > 10

    # A long task, cancelled from the page: it stops at a step boundary.
    page.fill("#instruction", "[t-slow] a task to cancel")
    page.fill("#max_steps", "30")
    page.select_option("#device", "any")
    page.click("#submit-button")
    page.wait_for_function("() => document.querySelectorAll('#steps li').length >= 1", timeout=30_000)
    page.click("#cancel-button")
    page.wait_for_function("() => document.querySelector('#run-status').textContent === 'cancelled'", timeout=30_000)
    cancelled_id = int(page.inner_text("#run-id").lstrip("#"))
    assert live.client.get(f"/v1/tasks/{cancelled_id}").json()["status"] == "cancelled"

    # The runs table lists both; clicking the first replays it, step by step.
    page.wait_for_function("() => document.querySelectorAll('#tasks tbody tr').length >= 2", timeout=10_000)
    first_id = min(int(t) for t in page.locator("#tasks tbody tr td:first-child").all_inner_texts())
    page.click(f"#tasks tbody tr[data-task='{first_id}']")
    page.wait_for_function("() => document.querySelectorAll('#steps li').length === 4")
    page.fill("#replay", "1")
    page.dispatch_event("#replay", "input")
    assert page.inner_text("#run-caption").startswith("step 1:")
    assert page.locator("#steps li.current").get_attribute("data-step") == "1"
    shot = page.screenshot(full_page=True)
    (tmp_path / "dashboard-replay.png").write_bytes(shot)

    # A link to a run, followed in the same tab (no reload), opens that run.
    page.evaluate(f"location.hash = '#task-{cancelled_id}'")
    page.wait_for_function(f"() => document.querySelector('#run-id').textContent === '#{cancelled_id}'")
    page.wait_for_function("() => document.querySelector('#run-status').textContent === 'cancelled'")
    page.go_back()  # back to the replayed run
    page.wait_for_function(f"() => document.querySelector('#run-id').textContent === '#{first_id}'")
    assert _not_blank(shot) > 10
    keep = os.environ.get("MOBILE_AGENT_TEST_ARTIFACTS")
    if keep:  # for people who want to look at the pages
        for name in ("dashboard-run.png", "dashboard-replay.png"):
            shutil.copy(tmp_path / name, Path(keep) / name)
    assert not [u for u in urls if TOKEN in u]
    assert errors == []

    # Signed out (cookie gone, or the server's token changed): the page goes back to sign-in.
    page.context.clear_cookies()
    page.wait_for_selector("input[name=token]", timeout=10_000)
