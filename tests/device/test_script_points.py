"""Scripts: two numbers in a tap are a point on the screen, not a text to look for
("Tap (540, 1200)" once searched the screen for the text "540, 1200")."""

from __future__ import annotations

import pytest

from mobile_agent.agent import RunStatus, run_script
from mobile_agent.agent.script import parse_script
from tests.agent_helpers import agent_settings


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Tap (100, 200)", ("tap_point", "Tap point (100, 200)")),
        ("Click text (540，1200)", ("tap_point", "Tap point (540, 1200)")),
        ("Long press (10, 20)", ("long_press_point", "Long press point (10, 20)")),
        ("Swipe points (1, 2, 3, 4)", ("swipe_points", "Swipe points (1, 2, 3, 4)")),
        ("Click text (Display)", ("click_text", "Click text (Display)")),
        ("Click text (Call 911, now)", ("click_text", "Click text (Call 911, now)")),
    ],
)
def test_script_lines_with_a_point(line, expected):
    (parsed,) = parse_script(line)
    assert (parsed.action.name, parsed.action.text) == expected


def test_a_tap_at_a_point_taps_there(adb_server, sim_phone, tmp_path):
    box = sim_phone.element("Settings")["box"]
    x, y = (box[0] + box[2]) // 2, (box[1] + box[3]) // 2
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path)
    result = run_script(settings, f"Tap ({x}, {y})\nStop\n")
    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.steps[0].operation_name == "tap_point"
    tx, ty = result.steps[0].tap_point  # the point, or where snapping moved it inside the same element
    assert box[0] <= tx < box[2] and box[1] <= ty < box[3]
    assert sim_phone.phone.state()["foreground"] == "com.android.settings"
