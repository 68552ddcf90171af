"""Open App's home-screen search on an iPhone reads the page source when the accessibility
setting is on (issue 33: "the home screen's icons read from the page source, then the
screen"): the search looks up the app's label through ``operations.catalog.find_text_on``,
every operation's one text lookup, not OCR alone. Found by the combination matrix's iPhone
cells (an accessibility cell whose only lookup, Open App (Chrome), was OCR). Through the
command a user types, ``mobile-agent run --serial ios:NAME --script``, on the simulated
iPhone (``simphone.ios.WdaFrontEnd``); no adb."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from simphone import Phone
from simphone.ios import WdaFrontEnd
from tests.agent_helpers import cli_env, run_cli
from tests.ports import free_port

CHROME = "com.android.chrome"  # the simulated phone's Chrome (no Apple bundle id: the home screen is searched)


@pytest.fixture
def front() -> Iterator[WdaFrontEnd]:
    server = WdaFrontEnd(Phone(width=540, height=1200), scale=3).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("accessibility", "backend"), [(True, "accessibility"), (False, "rapidocr")])
def test_open_app_finds_the_home_screen_icon_through_the_page_source(
    front: WdaFrontEnd, tmp_path: Path, accessibility: bool, backend: str
) -> None:
    script = tmp_path / "open.txt"
    script.write_text("Open App (Chrome)\n", encoding="utf-8")
    env = cli_env(free_port(), MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"),
                  MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-o": front.url}),
                  MOBILE_AGENT_PERCEPTION__ACCESSIBILITY="true" if accessibility else "false")
    proc = run_cli("--serial", "ios:sim-o", "--script", str(script), "-o", str(tmp_path / "runs"), env=env, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert front.phone.foreground == CHROME
    (trajectory,) = (tmp_path / "runs").rglob("trajectory.jsonl")
    steps = [json.loads(x) for x in trajectory.read_text(encoding="utf-8").splitlines() if '"type": "step"' in x]
    (step,) = steps
    location = step["location"]
    assert (location["status"], location["backend"]) == ("found", backend), location
    # the tap opened Chrome (its label is on the second home page: the first has only its dock icon)
    assert step["tap_point"] is not None and front.phone.foreground == CHROME
