"""``Type`` with a line break, on the simulated phone over the real adb server: the lines are
typed with Enter between them (as the on-screen keyboard does), and the feedback says what
happened, including a field that took Enter as submit and dropped the rest.

Newlines reach ``Type`` from the model dialects that escape them (UI-TARS' ``type(content=
'...\\n')``), so the operation is called with its parameters here."""

from __future__ import annotations

from typing import Any

import pytest

from mobile_agent.device import open_device
from mobile_agent.operations import OperationContext
from mobile_agent.operations.catalog import TypeParams, type_text
from mobile_agent.settings import AdbSettings, Settings

BROWSER_PKG = "com.android.chrome"
NOTES_PKG = "com.google.android.keep"


@pytest.fixture
def device(sim_phone: Any, adb_server: Any) -> Any:
    return open_device(AdbSettings(server_port=adb_server.port), serial=sim_phone.serial)


def _type(device: Any, text: str):
    ctx = OperationContext(device, None, device.screenshot(), Settings())
    return type_text(TypeParams(text=text), ctx)


def test_a_multiline_field_gets_every_line(sim_phone: Any, device: Any) -> None:
    phone = sim_phone.phone
    phone.launch(NOTES_PKG)
    phone.push_view(NOTES_PKG, {"view": "edit", "note_id": None, "fields": {"title": "", "body": ""}})
    phone.set_focus("body")
    outcome = _type(device, "milk\neggs\nbread")
    assert outcome.ok, outcome.feedback
    assert outcome.feedback.startswith("Typed 3 lines, pressing Enter between them")
    assert phone.task(NOTES_PKG)[-1]["fields"]["body"] == "milk\neggs\nbread"


def test_a_field_that_submits_on_enter_is_reported_honestly(sim_phone: Any, device: Any) -> None:
    phone = sim_phone.phone
    phone.launch(BROWSER_PKG)
    phone.set_focus("address")
    assert device.keyboard_shown() is True
    outcome = _type(device, "weather today\nand tomorrow")
    # the search went out with the first line; the rest had nowhere to go, and the step says so
    assert not outcome.ok
    assert "'and tomorrow' was not typed" in outcome.feedback and "submit" in outcome.feedback
    assert device.keyboard_shown() is False
    searches = phone.app_data(BROWSER_PKG)["searches"]
    assert [s["query"] for s in searches] == ["weather today"]
