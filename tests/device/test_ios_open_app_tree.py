"""Open App on an iPhone, in the issue's order (issue 33): the bundle id table, then "the home
screen's icons read from the page source, then the screen".

- An app the table does not know but the home screen shows (the simulated iPhone's "Play
  Store", which answers to the App Store's id there: Android's store has no iOS app, so no
  table lists it) is opened by its ``XCUIElementTypeIcon`` in WDA's page source, with the
  accessibility setting on or off (the page source is WDA's own answer, not the optional
  tree perception reads), through ``mobile-agent run --serial ios:NAME --script`` and MCP's
  ``open_app``; no OCR is asked.
- An app on another home page (Bitwarden, installed, not in the table) is found by the
  screen search, which reads each page's icons from the page source the same way before its
  text lookup (OCR, or the tree with the setting on: ``lookup.find_text_on``).

The simulated iPhone is ``simphone.ios.WdaFrontEnd``; no adb."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mobile_agent.device.ios import WdaClient
from simphone import Phone
from simphone.ios import WdaFrontEnd
from tests.agent_helpers import cli_env, run_cli
from tests.ports import free_port

STORE = "com.android.vending"  # the simulated phone's store, the App Store (com.apple.AppStore) to WDA
BITWARDEN = "com.x8bit.bitwarden"


@pytest.fixture
def front() -> Iterator[WdaFrontEnd]:
    server = WdaFrontEnd(Phone(width=540, height=1200), scale=3).start()
    try:
        yield server
    finally:
        server.stop()


def _env(front: WdaFrontEnd, tmp_path: Path, accessibility: bool) -> dict[str, str]:
    return cli_env(free_port(), MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"),
                   MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-o": front.url}),
                   MOBILE_AGENT_PERCEPTION__ACCESSIBILITY="true" if accessibility else "false")


def _run_script(front: WdaFrontEnd, tmp_path: Path, line: str, accessibility: bool) -> dict[str, Any]:
    script = tmp_path / "open.txt"
    script.write_text(line + "\n", encoding="utf-8")
    proc = run_cli("--serial", "ios:sim-o", "--script", str(script), "-o", str(tmp_path / "runs"),
                   env=_env(front, tmp_path, accessibility), timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (trajectory,) = (tmp_path / "runs").rglob("trajectory.jsonl")
    steps = [json.loads(x) for x in trajectory.read_text(encoding="utf-8").splitlines() if '"type": "step"' in x]
    (step,) = steps
    assert isinstance(step, dict)
    return step


@pytest.mark.timeout(300)
@pytest.mark.parametrize("accessibility", [False, True])
def test_open_app_taps_the_home_screen_icon_the_page_source_names(
    front: WdaFrontEnd, tmp_path: Path, accessibility: bool
) -> None:
    step = _run_script(front, tmp_path, "Open App (Play Store)", accessibility)
    assert front.phone.foreground == STORE
    client = WdaClient(front.url, timeout_s=20)
    try:
        assert client.active_app() == "com.apple.AppStore"  # WDA names it by its iOS id
    finally:
        client.close()
    location = step["location"]
    # the page source's icon, whatever the accessibility setting: no OCR, no screen search (before: rapidocr)
    assert (location["status"], location["backend"]) == ("found", "page source"), location
    x, y = step["tap_point"]
    left, top, right, bottom = location["box"]
    assert left <= x <= right and top <= y <= bottom
    assert "icon on the home screen" in step["feedback"]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("accessibility", [False, True])
def test_the_screen_search_reads_each_pages_icons_from_the_page_source(
    front: WdaFrontEnd, tmp_path: Path, accessibility: bool
) -> None:
    front.phone.install(BITWARDEN)  # not in the table, and on the second home page (the first shows 12 apps)
    step = _run_script(front, tmp_path, "Open App (Bitwarden)", accessibility)
    assert front.phone.foreground == BITWARDEN
    location = step["location"]
    # found by the second page's icon in the page source (before: OCR with the setting off)
    assert (location["status"], location["backend"]) == ("found", "page source"), location
    assert "on a home screen page" in step["feedback"]


@pytest.mark.timeout(300)
def test_mcp_open_app_taps_the_home_screen_icon(front: WdaFrontEnd, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from tests.mcp_helpers import mcp_env, stdio_session, tool_json

    env = mcp_env(free_port(), MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"),
                  MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-p": front.url}),
                  MOBILE_AGENT_PERCEPTION__ACCESSIBILITY="false")

    async def main() -> None:
        async with stdio_session(env, "--serial", "ios:sim-p", "--runs-dir", str(tmp_path / "runs")) as session:
            opened = tool_json(await session.call_tool("open_app", {"app": "Play Store"}))
            assert opened["ok"], opened
            assert "icon on the home screen" in opened["feedback"], opened
            assert front.phone.foreground == STORE

    anyio.run(main)
