"""A plan replays on, past what the model is only told about a screen (``PlanRequest.notes``):
after a replayed ``Type ({{secret:pin}})`` the screen is masked and the model would be told
so, which is no failure of the replayed step. Before, that note travelled as feedback and
the replay took it for a failed step: it handed the rest of the run to the model.
`mobile-agent run --cache` twice, a subprocess, the simulated phone over the real adb
server, the scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_helpers import DONE, plan_reply
from tests.llm_fixtures import llm_server  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]
CHROME = "com.android.chrome"


def test_a_replayed_secret_type_goes_on_without_the_model(adb_server, sim_phone, llm_server, tmp_path):  # noqa: F811
    llm_server.script([plan_reply("Open App (Chrome)"), plan_reply("Click text (Search or type web address)"),
                       plan_reply("Type ({{secret:pin}})"), plan_reply("Enter"), plan_reply("Stop"), DONE])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    env.update({"MOBILE_AGENT_ADB__SERVER_PORT": str(adb_server.port), "PYTHONUNBUFFERED": "1",
                "MOBILE_AGENT_AGENT__NAMED_SECRETS": '{"pin": "4711"}', "MOBILE_AGENT_AGENT__COMPLETION_CHECK": "false",
                "MOBILE_AGENT_PLANNER__BASE_URL": llm_server.base_url, "MOBILE_AGENT_PLANNER__API_KEY": "k",
                "MOBILE_AGENT_PLANNER__MODEL": "gpt-4o"})
    args = [sys.executable, "-m", "mobile_agent.cli", "run", "--serial", sim_phone.serial, "--cache",
            "-o", str(tmp_path / "runs"), "-i", "Search for {{secret:pin}} in Chrome"]
    first = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=200)
    assert first.returncode == 0, first.stdout + first.stderr
    cold = len(llm_server.chat_requests)

    sim_phone.phone.reset()
    second = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=200)
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(llm_server.chat_requests) == cold, second.stdout  # every step replayed
    assert second.stdout.count("(replayed, no model call)") == 5, second.stdout
    assert "4711" in str(sim_phone.phone.state()["apps"][CHROME])  # the search reached the phone


def test_a_closing_step_whose_effect_does_not_show_is_replayed(adb_server, sim_phone, llm_server, tmp_path):  # noqa: F811
    """Bitwarden's Copy password changes nothing on the screen (the password goes to the
    clipboard): as the run's closing step it stays in the plan, and its replay (no effect
    again, as recorded) is no divergence. Before, it was left out: the replay ended on the
    matching screen with a replayed Stop and never copied the password."""
    vault = "com.x8bit.bitwarden"
    sim_phone.phone.install(vault)
    llm_server.script([plan_reply("Open App (Bitwarden)"), plan_reply("Click text (Netflix)"),
                       plan_reply("Click text (Copy password)"), plan_reply("Stop"), DONE])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    env.update({"MOBILE_AGENT_ADB__SERVER_PORT": str(adb_server.port), "PYTHONUNBUFFERED": "1",
                "MOBILE_AGENT_AGENT__COMPLETION_CHECK": "false", "MOBILE_AGENT_PLANNER__BASE_URL": llm_server.base_url,
                "MOBILE_AGENT_PLANNER__API_KEY": "k", "MOBILE_AGENT_PLANNER__MODEL": "gpt-4o"})
    args = [sys.executable, "-m", "mobile_agent.cli", "run", "--serial", sim_phone.serial, "--cache",
            "-o", str(tmp_path / "runs"), "-i", "Copy the Netflix password"]
    first = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=200)
    assert first.returncode == 0, first.stdout + first.stderr
    assert sim_phone.phone.state()["apps"][vault]["copied"] == "Netflix"
    cold = len(llm_server.chat_requests)

    sim_phone.phone.reset()
    sim_phone.phone.install(vault)
    assert not sim_phone.phone.state()["apps"][vault].get("copied")
    second = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=200)
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(llm_server.chat_requests) == cold, second.stdout
    assert "[step 3] Click text (Copy password)" in second.stdout, second.stdout
    assert sim_phone.phone.state()["apps"][vault]["copied"] == "Netflix"
