"""The dashboard for several principals, in a real headless chromium: an admin's session shows
the audit trail (who submitted what); a user's session shows only its own runs and no audit
trail; a viewer's session is not offered the forms that act (docs/security.md). Skipped only where chromium is not installed."""

from __future__ import annotations

import httpx

from tests.browser_support import BROWSER_MARKS, signed_in

pytestmark = BROWSER_MARKS
TOKENS = {"server.api_token": "admin-token-2",
          "server.tokens": {"alice": {"token": "alice-token-2"}, "bob": {"token": "bob-token-2"},
                            "vic": {"token": "vic-token-2", "role": "viewer"}}}


def test_the_admin_sees_the_audit_trail_and_a_user_only_its_own_runs(service, sim_phones, browser) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **TOKENS)
    with httpx.Client(base_url=live.url, headers={"Authorization": "Bearer alice-token-2"}, timeout=30) as alice:
        task_id = alice.post("/v1/tasks", json={"script": "Wait (0.1)"}).json()["id"]
    live.wait_task(task_id)

    admin = signed_in(browser, live.url, "admin-token-2")
    admin.wait_for_selector("#audit-section:not([hidden]) #audit tbody tr")
    row = admin.locator("#audit tbody tr").first.inner_text()
    assert "alice (user)" in row and "task.submit" in row and f"task {task_id}" in row
    admin.wait_for_selector("#tasks tbody tr")
    assert str(task_id) in admin.locator("#tasks tbody").inner_text()

    bob = signed_in(browser, live.url, "bob-token-2")
    bob.wait_for_load_state("networkidle")
    bob.wait_for_timeout(500)
    assert bob.locator("#audit-section").is_hidden()
    assert "alice" not in bob.content() and bob.locator("#tasks tbody tr").count() == 0
    assert bob.locator("#whoami").inner_text() == "signed in as bob (user)"
    assert bob.locator("#submit-section").is_visible()

    viewer = signed_in(browser, live.url, "vic-token-2")
    viewer.wait_for_function("() => document.getElementById('whoami').textContent.includes('viewer')")
    assert viewer.locator("#submit-section").is_hidden() and viewer.locator("#schedule-form").is_hidden()
