"""Helpers shared by the agent's tests (tests/test_agent_*.py, tests/test_e2e_*.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from mobile_agent.settings import AdbSettings, AgentSettings, PerceptionSettings, Settings

ROOT = Path(__file__).resolve().parents[1]  # the repository


def plan_reply(action: str, thought: str = "This is the next operation.", observation: str = "A phone screen.") -> str:
    """A reply in the paper's Observation / Thought / Action format."""
    return f"Observation: {observation}\nThought: {thought}\nAction: {action}"


DONE = "Verdict: done\nReason: the screen shows the instruction carried out."


def not_done(reason: str) -> str:
    return f"Verdict: not done\nReason: {reason}"


def agent_settings(adb_port: int, serial: str, output_dir: Path, llm: Any | None = None, **agent: Any) -> Settings:
    """Settings for a run on a simulated phone behind the test adb server."""
    values: dict[str, Any] = {"output_dir": output_dir, "settle_timeout_s": 1.5, "settle_interval_s": 0.1}
    values.update(agent)
    kwargs: dict[str, Any] = {
        "adb": AdbSettings(server_port=adb_port, serial=serial),
        "agent": AgentSettings(**values),
        "perception": PerceptionSettings(detector="proposals", ranker="heuristic"),
    }
    if llm is not None:
        kwargs["planner"] = llm.planner_settings()
    return Settings(**kwargs)


def request_text(request: Any) -> str:
    """Every text part of a recorded chat request, joined."""
    return request.text()


def cli_env(adb_port: int, **extra: str) -> dict[str, str]:
    """The environment of a `mobile-agent` subprocess: no MOBILE_AGENT_ settings but the test adb server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    env.update({"MOBILE_AGENT_ADB__SERVER_PORT": str(adb_port), "PYTHONUNBUFFERED": "1"}, **extra)
    return env


def cli(*args: str, env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """`mobile-agent ARGS` (any command) as a user runs it: a subprocess from the repository."""
    return subprocess.run(
        [sys.executable, "-m", "mobile_agent.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_cli(*args: str, env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """`mobile-agent run ARGS` as a user runs it."""
    return cli("run", *args, env=env, timeout=timeout)


def trajectory_of(stdout: str) -> Path:
    """The trajectory file (trajectory.jsonl) a run printed."""
    match = re.search(r"^trajectory: (.+)$", stdout, re.M)
    assert match, stdout
    return Path(match.group(1))
