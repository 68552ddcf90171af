"""The dashboard asks for a phone's screen only where the signed-in principal may see it (a real
headless chromium). ``GET /v1/devices/{serial}/screenshot`` answers 409 to a user for a phone
running another principal's task or held by another interface's run (``mobile-agent run``, MCP:
its ``PhoneLease``); the device card asked anyway, at every refresh, and showed a broken image.
The owner of the task still sees the screen of its phone."""

from __future__ import annotations

from mobile_agent.device import PhoneLease
from mobile_agent.settings import AdbSettings
from tests.browser_support import BROWSER_MARKS, signed_in
from tests.server_fixtures import TaggedPlanner

pytestmark = BROWSER_MARKS

TOKENS = {"server.api_token": "screen-admin-1",
          "server.tokens": {"alice": {"token": "screen-alice-1", "role": "user"},
                            "bob": {"token": "screen-bob-1", "role": "user"}}}


def _card_src(page, serial: str) -> str | None:
    """The card's image source once the card says the phone is busy (set in the same render)."""
    card = f'.device[data-serial="{serial}"]'
    page.wait_for_function(
        "(card) => { const s = document.querySelector(card + ' .state');"
        " return s !== null && s.textContent.startsWith('busy'); }", arg=card)
    return page.get_attribute(f"{card} img", "src")


def test_a_users_dashboard_asks_no_screen_it_may_not_see(service, sim_phones, adb_server, browser) -> None:
    tasked, held = sim_phones(2, width=540, height=1200)
    live = service([tasked, held], planner=TaggedPlanner(plans={"t-ask": ["Ask user (Which account?)"]}), **TOKENS)
    created = live.client.post("/v1/tasks", json={"instruction": "[t-ask] log in", "device": tasked.serial},
                               headers={"Authorization": "Bearer screen-alice-1"})
    assert created.status_code == 202, created.text
    live.wait_task(created.json()["id"], statuses={"waiting_for_user"})  # alice's task holds the phone

    with PhoneLease(AdbSettings(server_port=adb_server.port), held.serial, "mobile-agent run (pid 1)"):
        bob = signed_in(browser, live.url, "screen-bob-1")
        assert _card_src(bob, tasked.serial) is None  # alice's task: 409 for bob
        assert _card_src(bob, held.serial) is None  # another interface's run: 409 for bob
        bob.close()

        alice = signed_in(browser, live.url, "screen-alice-1")
        own = _card_src(alice, tasked.serial)  # her own task's phone: she sees it
        assert own is not None and f"/v1/devices/{tasked.serial}/screenshot" in own, own
        alice.close()
