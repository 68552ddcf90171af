"""The dashboard of a user whose phone runs another user's task (a real headless chromium): the
card says the phone is busy, without naming the task (which is not theirs to see, so the API
gives no ``current_task``) and without "task null"."""

from __future__ import annotations

from tests.browser_support import BROWSER_MARKS, signed_in
from tests.server_fixtures import TaggedPlanner

pytestmark = BROWSER_MARKS

TOKENS = {"server.api_token": "busy-admin-1",
          "server.tokens": {"alice": {"token": "busy-alice-1", "role": "user"},
                            "bob": {"token": "busy-bob-1", "role": "user"}}}


def test_a_phone_busy_with_anothers_task_reads_busy_on_a_users_dashboard(service, sim_phones, browser) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], planner=TaggedPlanner(plans={"t-ask": ["Ask user (Which account?)"]}), **TOKENS)
    created = live.client.post("/v1/tasks", json={"instruction": "[t-ask] log in"},
                               headers={"Authorization": "Bearer busy-alice-1"})
    assert created.status_code == 202, created.text
    live.wait_task(created.json()["id"], statuses={"waiting_for_user"})  # alice's task holds the phone

    page = signed_in(browser, live.url, "busy-bob-1")
    page.wait_for_selector(".device .state")
    page.wait_for_function("() => document.querySelector('.device .state').textContent.startsWith('busy')")
    state = page.inner_text(".device .state")
    assert state == "busy", state
    page.close()
