"""The dashboard asks for a phone's frame by the signed-in principal's role (``GET /v1/me``), as
``GET /v1/devices/{serial}/screenshot`` decides (a real headless chromium, real uvicorn, two
simulated phones over the real adb server). A viewer may not see a free phone's screen (403):
its dashboard asked anyway, at every refresh, and showed a broken image. An admin sees the screen
of a phone another interface's run holds (``mobile-agent run``, MCP: its ``PhoneLease``; 41d2799
kept it from users): its dashboard, not knowing the role, asked no frame of it."""

from __future__ import annotations

from mobile_agent.device import PhoneLease
from mobile_agent.settings import AdbSettings
from tests.browser_support import BROWSER_MARKS, signed_in

pytestmark = BROWSER_MARKS

TOKENS = {"server.api_token": "frames-admin-1",
          "server.tokens": {"vera": {"token": "frames-vera-1", "role": "viewer"}}}


def _card_src(page, serial: str, state: str) -> str | None:
    """The card's image source once the card shows ``state`` (both are set in the same render)."""
    card = f'.device[data-serial="{serial}"]'
    page.wait_for_function(
        "([card, state]) => { const s = document.querySelector(card + ' .state');"
        " return s !== null && s.textContent === state; }", arg=[card, state])
    return page.get_attribute(f"{card} img", "src")


def test_the_dashboard_asks_the_frames_its_role_may_see(service, sim_phones, adb_server, browser) -> None:
    free, held = sim_phones(2, width=540, height=1200)
    live = service([free, held], **TOKENS)
    with PhoneLease(AdbSettings(server_port=adb_server.port), held.serial, "mobile-agent run (pid 1)"):
        vera = signed_in(browser, live.url, "frames-vera-1")
        assert _card_src(vera, free.serial, "free") is None  # a viewer: 403 for a free phone
        assert _card_src(vera, held.serial, "busy") is None  # another interface's run: 409 for her
        vera.close()

        admin = signed_in(browser, live.url, "frames-admin-1")
        own = _card_src(admin, held.serial, "busy")  # the route serves an admin the held phone's screen
        assert own is not None and f"/v1/devices/{held.serial}/screenshot" in own, own
        shown = _card_src(admin, free.serial, "free")
        assert shown is not None and f"/v1/devices/{free.serial}/screenshot" in shown, shown
        # a real frame, not a broken image (the card's image loaded what the route answered)
        admin.wait_for_function(
            "(card) => { const i = document.querySelector(card + ' img');"
            " return i !== null && i.complete && i.naturalWidth > 0; }",
            arg=f'.device[data-serial="{held.serial}"]')
        admin.close()
