"""`mobile-agent test --serial ios:NAME` (issue 33): YAML test flows on the simulated iPhone
(``simphone.ios.WdaFrontEnd``), the command a user types. Scripted steps (``do:``) and screen
assertions; no model, no adb."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simphone import Phone
from simphone.ios import WdaFrontEnd
from tests.agent_helpers import cli, cli_env
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
FLOWS = ROOT / "tests" / "flows" / "green"


@pytest.mark.timeout(300)
def test_flows_run_on_the_simulated_iphone(tmp_path: Path) -> None:
    server = WdaFrontEnd(Phone(), scale=3).start()
    try:
        flow = tmp_path / "settings-back.yaml"
        flow.write_text("name: Settings' Wi-Fi page and Back (the edge swipe)\nsteps:\n"
                        "  - do: |\n      Open App (Settings)\n      Click text (Wi-Fi)\n"
                        "  - do: Back\n  - assert_visible: Display & brightness\n", encoding="utf-8")
        env = cli_env(free_port(), MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"),
                      MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-t": server.url}))
        proc = cli("test", str(FLOWS / "home-screen.yaml"), str(FLOWS / "notes-new-note.yaml"), str(flow),
                   "--serial", "ios:sim-t", "--output", str(tmp_path / "out"), "--json", env=env, timeout=280)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        suite = json.loads(proc.stdout)
        assert (suite["passed"], suite["failed"]) == (3, 0), suite
        assert "running 3 flows on ios:sim-t" in proc.stderr
        assert "Groceries" in json.dumps(server.phone.state())  # the note's title was typed on the phone
        assert server.phone.foreground == "com.android.settings"  # the last flow's app
        # --record: an iPhone has no screenrecord; the video is made of the captured frames
        recorded = cli("test", str(FLOWS / "home-screen.yaml"), "--serial", "ios:sim-t", "--record",
                       "--output", str(tmp_path / "rec"), "--json", env=env, timeout=120)
        assert recorded.returncode == 0, recorded.stderr[-3000:]
        video = json.loads(recorded.stdout)["flows"][0]["video"]
        assert video and Path(video).stat().st_size > 0
        unknown = cli("test", str(FLOWS / "home-screen.yaml"), "--serial", "ios:nope", env=env, timeout=120)
        assert unknown.returncode == 2 and "no iPhone named 'nope'" in unknown.stderr
    finally:
        server.stop()
