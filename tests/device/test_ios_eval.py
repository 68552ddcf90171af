"""`mobile-agent eval mobile-eval --device ios:NAME` (issue 33): Mobile-Eval's reference
solutions on the simulated iPhone (``simphone.ios.WdaFrontEnd``), the command a user types.
The harness resets and reads the simulated iPhone through the simulator's own route beside
its WDA (``POST /simphone/shell``), the agent drives it over WDA (points, Back as the edge
swipe, Open App by Apple's bundle ids, else the home screen). No adb at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.mobile_eval.environment import IphoneShell, PhoneEnvironment
from mobile_agent.device.ios import IosDevice, WdaClient
from simphone import Phone
from simphone.ios import WdaFrontEnd
from tests.agent_helpers import cli, cli_env
from tests.ports import free_port

# Settings twice (the second starts from the reset, not from the first's dark mode), a note
# typed, and an app opened from the home screen (no Apple bundle id: the screen search)
TASKS = ["settings-1", "settings-2", "notes-2", "youtube-1"]


@pytest.mark.timeout(600)
def test_reference_solutions_pass_on_the_simulated_iphone(tmp_path: Path) -> None:
    server = WdaFrontEnd(Phone(), scale=3).start()
    try:
        env = cli_env(free_port(), MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"),
                      MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-e": server.url}))
        picked = [arg for task in TASKS for arg in ("--task", task)]
        proc = cli("eval", "mobile-eval", "--device", "ios:sim-e", "--script-reference", *picked,
                   "-o", str(tmp_path / "eval"), env=env, timeout=540)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        records = [json.loads(line) for line in (tmp_path / "eval" / "results.jsonl").read_text().splitlines()]
        assert sorted(r["task_id"] for r in records) == sorted(TASKS)
        for record in records:
            # judged from the simulated phone's own state, not annotated later
            assert (record["success"], record["judged_by"], record["device"]) == (True, "state", "ios:sim-e"), record
    finally:
        server.stop()


def test_a_real_wda_has_no_shell_so_the_iphone_is_reset_home() -> None:
    """A WDA without the simulator's route (every real one) answers ``unknown command``:
    no readable state, and the reset is the Home button."""
    server = WdaFrontEnd(Phone(), scale=3).start()
    client = WdaClient(server.url, timeout_s=20)
    try:
        iphone = IosDevice("sim-r", client)
        assert PhoneEnvironment(iphone, IphoneShell(server.url)).stateful  # the simulator answers
        iphone.launch_app("com.apple.Preferences")
        plain = PhoneEnvironment(iphone, IphoneShell(server.url + "/not-wda"))  # a route no WDA has
        assert not plain.stateful
        assert plain.reset(apps=["Settings"]) == "home"
        assert server.phone.foreground == "com.android.launcher3"
    finally:
        client.close()
        server.stop()


def test_an_iphone_without_readable_state_is_reset_home_with_its_apps_terminated() -> None:
    """A WDA with no simulator route (``shell_route=False``: every real one) is reset the way a
    person would: Home, and the task's apps stopped through WDA's ``/wda/apps/terminate`` by
    their bundle ids (the table's: YouTube is com.google.ios.youtube); an app the iPhone does
    not have is logged, not fatal."""
    server = WdaFrontEnd(Phone(), scale=3, shell_route=False).start()
    client = WdaClient(server.url, timeout_s=20)
    try:
        iphone = IosDevice("sim-t", client)
        iphone.launch_app("com.google.ios.youtube")
        iphone.launch_app("com.apple.Preferences")
        assert {"com.google.android.youtube", "com.android.settings"} <= set(server.phone.recents)
        environment = PhoneEnvironment(iphone, IphoneShell(server.url))
        assert not environment.stateful  # no /simphone/shell: unknown command, as a real WDA
        assert environment.reset(apps=["YouTube", "Settings", "WeChat"]) == "home"  # WeChat: not on this iPhone
        assert server.phone.foreground == "com.android.launcher3"
        running = set(server.phone.state()["tasks"]) | set(server.phone.recents)
        assert not {"com.google.android.youtube", "com.android.settings"} & running  # before: both still running
        iphone.launch_app("com.apple.Preferences")  # the agent's session still works after the harness's calls
        assert client.active_app() == "com.apple.Preferences"
    finally:
        client.close()
        server.stop()


@pytest.mark.timeout(300)
def test_data_collect_on_the_simulated_iphone_exports_prompts_that_say_iphone(tmp_path: Path) -> None:
    """`mobile-agent data collect --device ios:NAME`: runs verified by the phone's state and
    exported; each dialect's training prompt names the phone the run was on (an iPhone)."""
    server = WdaFrontEnd(Phone(), scale=3).start()
    try:
        env = cli_env(free_port(), MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"),
                      MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-d": server.url}))
        out = tmp_path / "collect"
        proc = cli("data", "collect", "--device", "ios:sim-d", "--count", "2", "--sample-seed", "5", "-o", str(out),
                   env=env, timeout=280)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        runs = [json.loads(line) for line in (out / "dataset" / "runs.jsonl").read_text().splitlines()]
        assert len(runs) == 2 and {r["device"] for r in runs} == {"ios:sim-d"}
        for dialect in ("ui_tars", "mobile_use"):
            samples = [json.loads(line) for split in ("train", "validation")
                       for path in (out / "dataset").glob(f"messages-{dialect}-{split}.jsonl")
                       for line in path.read_text().splitlines()]
            assert samples, dialect
            prompts = [json.dumps(s["messages"][:-1]) for s in samples]  # the prompt, not the reply
            assert all("an iPhone" in p and "Android phone" not in p for p in prompts), dialect
    finally:
        server.stop()
