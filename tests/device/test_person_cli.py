"""A person in the loop at `mobile-agent run`: the question answered on a real terminal (a
pty), no terminal (a pipe, as in CI) failing the pause at once, --yes and --policy for
unattended runs. A subprocess, the simulated phone over the real adb server, the scripted
LLM server on loopback."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
import time

import pytest

from tests.agent_helpers import ROOT, plan_reply, request_text
from tests.agent_helpers import cli_env as _env
from tests.agent_helpers import run_cli as _cli
from tests.agent_helpers import trajectory_of as _trajectory

pytestmark = pytest.mark.timeout(180)
NOTES = "com.google.android.keep"


def _common(sim_phone, llm, tmp_path) -> list[str]:
    return ["--serial", sim_phone.serial, "--base-url", llm.base_url, "--api-key", "k-1",
            "--no-completion-check", "-o", str(tmp_path / "runs")]  # fmt: skip


def test_without_a_terminal_a_hand_over_fails_at_once(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([plan_reply("Ask user (Please type the SMS code)")])
    started = time.monotonic()
    proc = _cli(*_common(sim_phone, llm_server, tmp_path), "-i", "Log in", env=_env(adb_server.port), timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "result: not_completed" in proc.stdout and "no terminal to ask on" in proc.stdout
    assert time.monotonic() - started < 50  # never waits for nobody (the default wait is 600 s)


def test_the_question_is_answered_on_the_terminal(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script([plan_reply("Ask user (Which colour should the note be?)"), plan_reply("Stop")])
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mobile_agent.cli", "run", *_common(sim_phone, llm_server, tmp_path), "-i", "Make a note"],
        cwd=ROOT, env=_env(adb_server.port), stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    os.close(terminal)
    seen: list[str] = []
    asked = threading.Event()

    def watch() -> None:
        for line in proc.stdout:
            seen.append(line)
            if "the agent asks: Which colour" in line:
                asked.set()

    reader = threading.Thread(target=watch, daemon=True)
    reader.start()
    try:
        assert asked.wait(60), "".join(seen)
        os.write(controller, b"Blue, please\n")
        assert proc.wait(60) == 0, "".join(seen) + proc.stderr.read()
    finally:
        proc.kill()
        os.close(controller)
    reader.join(5)
    out = "".join(seen)
    assert "the user: answer: Blue, please" in out
    assert "The user answered: Blue, please" in request_text(llm_server.chat_requests[1])
    lines = [json.loads(x) for x in _trajectory(out).read_text(encoding="utf-8").splitlines()]
    person = [x for x in lines if x.get("by") == "person"]
    assert person and person[0]["asked_user"]["reply"] == {"kind": "answer", "text": "Blue, please", "by": "terminal"}


def test_yes_approves_and_a_policy_file_denies_an_app(adb_server, sim_phone, llm_server, tmp_path):
    env = _env(adb_server.port)
    common = _common(sim_phone, llm_server, tmp_path)
    # a sensitive click, approved by --yes (then not found: the screen has no Install)
    llm_server.script([plan_reply("Click text (Install)"), plan_reply("Stop")])
    proc = _cli(*common, "-i", "Install it", "--yes", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [json.loads(x) for x in _trajectory(proc.stdout).read_text(encoding="utf-8").splitlines()]
    assert lines[1]["asked_user"]["reply"]["kind"] == "approve" and lines[1]["asked_user"]["reply"]["by"] == "policy"
    # without --yes and without a terminal: refused, and the model hears why
    llm_server.script([plan_reply("Click text (Install)"), plan_reply("Stop")])
    proc = _cli(*common, "-i", "Install it", env=env)
    assert "nobody confirmed it" in request_text(llm_server.chat_requests[1])

    policy = tmp_path / "policy.toml"
    policy.write_text(f'[safety]\ndeny_apps = ["{NOTES}"]\n', encoding="utf-8")
    llm_server.script([plan_reply("Open App (Notes)"), plan_reply("Stop")])
    proc = _cli(*common, "-i", "Open notes", "--policy", str(policy), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sim_phone.phone.foreground != NOTES and "app policy denies it" in proc.stdout

    policy.write_text("[safety]\nallow_everything = true\n", encoding="utf-8")
    proc = _cli(*common, "-i", "Open notes", "--policy", str(policy), env=env)
    assert proc.returncode == 2 and "unknown key 'allow_everything'" in proc.stderr
