"""A phone another interface's run holds (``mobile-agent run``, an MCP run, the pytest plugin: its
``PhoneLease``) is not a free phone for ``GET /v1/devices/{serial}/screenshot``: that run's secret
mask lives in its own process, so the service's capture of the phone is unmasked, and the run is
not the caller's. A user gets 409 (as for another principal's REST task, and as MCP's screenshot
answers "busy" for a phone another principal's run holds); an admin sees it. Real uvicorn, the
simulated phone over the real adb server."""

from __future__ import annotations

import pytest

from mobile_agent.device import PhoneLease
from mobile_agent.settings import AdbSettings

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

TOKENS = {"server.api_token": "held-admin-1",
          "server.tokens": {"alice": {"token": "held-alice-1", "role": "user"}}}
ADMIN = {"Authorization": "Bearer held-admin-1"}
ALICE = {"Authorization": "Bearer held-alice-1"}


def test_a_phone_another_interface_holds_shows_its_screen_to_an_admin_only(service, sim_phones, adb_server) -> None:
    (phone,) = sim_phones(1)
    live = service([phone], **TOKENS)
    url = f"/v1/devices/{phone.serial}/screenshot"
    assert live.client.get(url, headers=ALICE).status_code == 200  # a free phone: whoever may act
    with PhoneLease(AdbSettings(server_port=adb_server.port), phone.serial, "mobile-agent run (pid 1)"):
        refused = live.client.get(url, headers=ALICE)
        assert refused.status_code == 409, refused.status_code
        assert "mobile-agent run" not in refused.text  # who holds it is an admin's business
        assert live.client.get(url, headers=ADMIN).status_code == 200
        listed = live.client.get(f"/v1/devices/{phone.serial}", headers=ALICE).json()
        assert (listed["busy"], listed["current_task"]) == (True, None), listed  # busy, with no task of the service
    assert live.client.get(url, headers=ALICE).status_code == 200  # released: free again
    assert live.client.get(f"/v1/devices/{phone.serial}", headers=ALICE).json()["busy"] is False
