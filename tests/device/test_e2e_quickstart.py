"""The quick start (`make demo` runs scripts/quickstart.py) as a user runs it: its own adb
server, the simulated phone as a `simphone serve` subprocess, `mobile-agent run` as a
subprocess; scripted without an endpoint, planned with one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_helpers import DONE, plan_reply

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


def _quickstart(cwd: Path, **env_extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_") and k != "ANDROID_ADB_SERVER_PORT"}
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "quickstart.py")],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def _report(stdout: str) -> Path:
    match = re.search(r"^report: (.+)$", stdout, re.M)
    assert match, stdout
    return Path(match.group(1))


def test_quickstart_without_an_endpoint_runs_the_bundled_script(tmp_path):
    proc = _quickstart(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no planner endpoint configured" in proc.stdout and "MOBILE_AGENT_PLANNER__BASE_URL" in proc.stdout
    assert "result: completed" in proc.stdout
    assert "(secure ui_night_mode, 2 = on): 2" in proc.stdout  # read back from the phone
    report = _report(proc.stdout)
    assert report.is_file() and report.is_relative_to(tmp_path)


@pytest.mark.parametrize("configured_by", ["environment", "config file"])
def test_quickstart_with_an_endpoint_lets_the_model_plan(configured_by, tmp_path, llm_server):
    llm_server.script(
        [
            plan_reply("Open App (Settings)"),
            plan_reply("Click text (Display & brightness)"),
            plan_reply("Click text (Dark mode)"),
            plan_reply("Stop"),
            DONE,
        ]
    )
    if configured_by == "environment":
        env = {"MOBILE_AGENT_PLANNER__BASE_URL": llm_server.base_url, "MOBILE_AGENT_PLANNER__API_KEY": "demo-key"}
    else:
        config = tmp_path / "mobile-agent.toml"
        config.write_text(f'[planner]\nbase_url = "{llm_server.base_url}"\napi_key = "demo-key"\n', encoding="utf-8")
        env = {"MOBILE_AGENT_CONFIG": str(config)}
    proc = _quickstart(tmp_path, **env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"running the agent with the planner at {llm_server.base_url}" in proc.stdout
    assert "(secure ui_night_mode, 2 = on): 2" in proc.stdout
    assert len(llm_server.chat_requests) == 5
    assert "Turn on the dark mode" in llm_server.chat_requests[0].text()
