"""The planner is told the phone is an iPhone (issue 33), in every dialect, through the
command a user types: ``mobile-agent run --serial ios:NAME`` on the simulated iPhone
(``simphone.ios.WdaFrontEnd``), the model a scripted OpenAI-compatible server on loopback
answering in the dialect's own format (``tests.grounding_model``). The run opens Settings,
opens Wi-Fi, goes Back (on an iPhone: the edge swipe) and finishes; every planning request
the model received names an iPhone and says how its Back and Home work, none an Android
phone. Needs no adb server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simphone.ios import WdaFrontEnd
from tests.agent_helpers import cli_env, run_cli
from tests.grounding_model import GroundingModel
from tests.llm_server import ScriptedLLMServer
from tests.matrix.design import DIALECT_MODELS
from tests.ports import free_port

LINES = ["Open App (Settings)", "Click text (Wi-Fi)", "Back"]


def _planning_texts(llm: ScriptedLLMServer) -> list[str]:
    """The text of each planning request (the completion checks left out)."""
    texts = [r.text() for r in llm.chat_requests]
    return [t for t in texts if "Verdict:" not in t]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("dialect", sorted(DIALECT_MODELS))
def test_each_dialect_opens_settings_on_the_simulated_iphone_told_it_is_one(
    dialect: str, front: WdaFrontEnd, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    model, chosen, space = DIALECT_MODELS[dialect]
    phone = front.phone
    llm_server.script([], default=GroundingModel(dialect, space, list(LINES), phone.ground_truth,
                                                 screen=(phone.width, phone.height)))
    env = cli_env(
        free_port(),  # no adb at all: the iPhone needs none, and none is started and left behind
        MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"),
        MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-p": front.url}),
        MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url,
        MOBILE_AGENT_PLANNER__API_KEY="k-ios",
        MOBILE_AGENT_PLANNER__MODEL=model,
        MOBILE_AGENT_PLANNER__DIALECT=chosen,
        MOBILE_AGENT_PLANNER__MAX_RETRIES="1",
        MOBILE_AGENT_PERCEPTION__DETECTOR="proposals",
        MOBILE_AGENT_PERCEPTION__RANKER="heuristic",
        MOBILE_AGENT_AGENT__SETTLE_TIMEOUT_S="1.5",
        MOBILE_AGENT_AGENT__SETTLE_INTERVAL_S="0.1",
    )
    proc = run_cli("--serial", "ios:sim-p", "-i", "Open Settings, look at Wi-Fi, then go back",
                   "-o", str(tmp_path / "runs"), "--json", env=env, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "completed", result
    # the three steps happened on the iPhone: Settings in front, Wi-Fi opened, and Back (the
    # edge swipe) brought its main page back
    assert phone.foreground == "com.android.settings"
    assert [v["view"] for v in phone.state()["tasks"]["com.android.settings"]] == ["main"]
    planning = _planning_texts(llm_server)
    assert len(planning) == len(LINES) + 1  # one request per step, then the finish
    for text in planning:
        assert "iPhone" in text and "no Back key" in text and "swipe from the left edge" in text, text
        assert "Android" not in text, text
