"""The dashboard's Recurring panel in a real headless chromium: a schedule added from the
page makes tasks (every second), shows its runs, and is deleted from the page; a bad cron is
shown as the server's message."""

from __future__ import annotations

from tests.browser_support import BROWSER_MARKS, TOKEN, sign_in

pytestmark = BROWSER_MARKS


def test_recurring_panel_adds_shows_and_deletes(service, sim_phones, browser) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **{"server.api_token": TOKEN})
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_in(page, live.url, TOKEN)

    page.fill("#script", "Home")
    page.fill("#schedule-name", "bad one")
    page.fill("#schedule-cron", "every morning")
    page.click("#schedule-button")
    page.wait_for_selector("#schedule-error:not([hidden])")
    assert "not a cron expression" in page.inner_text("#schedule-error")

    page.fill("#schedule-cron", "")
    page.fill("#schedule-name", "every second")
    page.fill("#schedule-every", "1")
    page.click("#schedule-button")
    page.wait_for_function("() => document.querySelectorAll('#schedules tbody tr').length === 1")
    row = page.locator("#schedules tbody tr").first
    assert "every second" in row.inner_text() and "every 1 s" in row.inner_text()
    page.wait_for_function("() => Number(document.querySelector('#schedules tbody td:nth-child(4)').textContent) >= 2",
                           timeout=15_000)  # the table refreshes every 5 s
    made = [t for t in live.client.get("/v1/tasks").json()["data"] if t["options"].get("schedule_id")]
    assert len(made) >= 2 and all(t["instruction"] == "script of 1 operation" for t in made)
    page.click("#schedules tbody tr button")
    page.wait_for_function("() => document.querySelectorAll('#schedules tbody tr').length === 0")
    assert live.client.get("/v1/schedules").json()["count"] == 0
    assert not errors, errors
