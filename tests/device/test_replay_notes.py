"""A plan replays on, past what the model is only told about a screen (``PlanRequest.notes``):
after a replayed ``Type ({{secret:pin}})`` the screen is masked and the model would be told
so, which is no failure of the replayed step. Before, that note travelled as feedback and
the replay took it for a failed step: it handed the rest of the run to the model.
`mobile-agent run --cache` twice, a subprocess, the simulated phone over the real adb
server, the scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import pytest

from tests.agent_helpers import DONE, cli_env, plan_reply, run_cli

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]
CHROME = "com.android.chrome"


def test_a_replayed_secret_type_goes_on_without_the_model(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([plan_reply("Open App (Chrome)"), plan_reply("Click text (Search or type web address)"),
                       plan_reply("Type ({{secret:pin}})"), plan_reply("Enter"), plan_reply("Stop"), DONE])
    env = cli_env(adb_server.port, MOBILE_AGENT_AGENT__NAMED_SECRETS='{"pin": "4711"}',
                  MOBILE_AGENT_AGENT__COMPLETION_CHECK="false", MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url,
                  MOBILE_AGENT_PLANNER__API_KEY="k", MOBILE_AGENT_PLANNER__MODEL="gpt-4o")
    args = ["--serial", sim_phone.serial, "--cache", "-o", str(tmp_path / "runs"), "-i", "Search for {{secret:pin}} in Chrome"]
    first = run_cli(*args, env=env, timeout=200)
    assert first.returncode == 0, first.stdout + first.stderr
    cold = len(llm_server.chat_requests)

    sim_phone.phone.reset()
    second = run_cli(*args, env=env, timeout=200)
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(llm_server.chat_requests) == cold, second.stdout  # every step replayed
    assert second.stdout.count("(replayed, no model call)") == 5, second.stdout
    searches = sim_phone.phone.state()["apps"][CHROME]["searches"]
    assert [s["query"] for s in searches] == ["4711"], searches  # the replayed run's search, the secret's value


def test_a_closing_step_whose_effect_does_not_show_is_replayed(adb_server, sim_phone, llm_server, tmp_path):
    """Bitwarden's Copy password changes nothing on the screen (the password goes to the
    clipboard): as the run's closing step it stays in the plan, and its replay (no effect
    again, as recorded) is no divergence. Before, it was left out: the replay ended on the
    matching screen with a replayed Stop and never copied the password."""
    vault = "com.x8bit.bitwarden"
    sim_phone.phone.install(vault)
    llm_server.script([plan_reply("Open App (Bitwarden)"), plan_reply("Click text (Netflix)"),
                       plan_reply("Click text (Copy password)"), plan_reply("Stop"), DONE])
    env = cli_env(adb_server.port, MOBILE_AGENT_AGENT__COMPLETION_CHECK="false",
                  MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url, MOBILE_AGENT_PLANNER__API_KEY="k",
                  MOBILE_AGENT_PLANNER__MODEL="gpt-4o")
    args = ["--serial", sim_phone.serial, "--cache", "-o", str(tmp_path / "runs"), "-i", "Copy the Netflix password"]
    first = run_cli(*args, env=env, timeout=200)
    assert first.returncode == 0, first.stdout + first.stderr
    assert sim_phone.phone.state()["apps"][vault]["copied"] == "Netflix"
    cold = len(llm_server.chat_requests)

    sim_phone.phone.reset()
    sim_phone.phone.install(vault)
    assert not sim_phone.phone.state()["apps"][vault].get("copied")
    second = run_cli(*args, env=env, timeout=200)
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(llm_server.chat_requests) == cold, second.stdout
    assert "[step 3] Click text (Copy password)" in second.stdout, second.stdout
    assert sim_phone.phone.state()["apps"][vault]["copied"] == "Netflix"
