"""A locked phone (issue 28): Open App on the Pixel 8 profile, whose swipe lock screen shows
at boot, unlocks it and opens the app; with a PIN set (`locksettings set-pin`, as on a real
phone) nothing can unlock it, so the run stops and says the phone is locked, or asks its
person, who unlocks it and says done. Through the CLI and REST, the simulated phone over
the real adb server; every verdict is read from the phone's own state."""

from __future__ import annotations

import json

import pytest

from mobile_agent.device.parsing import parse_keyguard_secure
from tests.agent_helpers import DONE, cli_env, plan_reply, run_cli
from tests.llm_fixtures import Reply
from tests.server_fixtures import TaggedPlanner

pytestmark = pytest.mark.timeout(240)
LOCKED = "pixel8-15-locked"
SETTINGS_PKG = "com.android.settings"
LAUNCHER = "com.android.launcher3"

# appium-adb@8eea1a8 test/unit/lockmgmt.spec.ts (the KeyguardServiceDelegate block, as
# AOSP KeyguardServiceDelegate.java dump() prints it; `secure=` is KeyguardState.secure)
_DELEGATE = """
    KeyguardServiceDelegate
      showing=true
      showingAndNotOccluded=true
      inputRestricted=true
      occluded=false
      secure=false
      dreaming=false
      systemIsReady=true
"""


@pytest.mark.parametrize(
    "window, secure",
    [
        (_DELEGATE, False),
        # the same block on a phone with a PIN (no published dump found: AOSP's dump() prints
        # KeyguardState.secure, true once a credential is set)
        (_DELEGATE.replace("secure=false", "secure=true"), True),
        # Android <= 9 (appium-adb lockmgmt.spec.ts): the dump does not say
        ("mShowingLockscreen=true mShowingDream=false mDreamingLockscreen=false mTopIsFullscreen=false", None),
        # `mSimSecure=` of KeyguardStateMonitor is the SIM's, not the screen lock's
        ("      KeyguardStateMonitor\n        mIsShowing=true\n        mSimSecure=true\n", None),
    ],
)
def test_keyguard_secure_from_dumpsys_window(window: str, secure: bool | None) -> None:
    assert parse_keyguard_secure(window) is secure


def _screen(handle) -> dict:
    return handle.adb_state()["screen"]


def test_cli_script_unlocks_a_swipe_lock_and_opens_the_app(adb_server, sim_phones, tmp_path) -> None:
    (phone,) = sim_phones(1, profile=LOCKED, width=540, height=1200)
    assert _screen(phone)["locked"] is True and _screen(phone)["secure"] is False
    script = tmp_path / "open.txt"
    script.write_text("Open App (Settings)\n", encoding="utf-8")
    proc = run_cli("--serial", phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                env=cli_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    state = phone.adb_state()
    assert state["screen"]["locked"] is False and state["foreground"] == SETTINGS_PKG


def test_cli_script_stops_on_a_pin_lock_and_says_so(adb_server, sim_phones, tmp_path) -> None:
    (phone,) = sim_phones(1, profile=LOCKED, width=540, height=1200)
    assert phone.device.shell(["locksettings", "set-pin", "1234"]).strip() == "Pin set to '1234'"
    assert _screen(phone)["secure"] is True
    script = tmp_path / "open.txt"
    script.write_text("Open App (Settings)\nClick text (Display & brightness)\n", encoding="utf-8")
    proc = run_cli("--serial", phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                env=cli_env(adb_server.port))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the phone is locked" in proc.stdout
    assert "Opened" not in proc.stdout
    state = phone.adb_state()
    assert state["screen"]["locked"] is True and state["foreground"] == LAUNCHER  # nothing launched behind it


def test_cli_model_run_on_a_pin_lock_ends_not_completed(adb_server, sim_phones, llm_server, tmp_path) -> None:
    (phone,) = sim_phones(1, profile=LOCKED, width=540, height=1200)
    phone.device.shell(["locksettings", "set-pin", "1234"])
    llm_server.script([Reply(plan_reply("Open App (Settings)")), Reply(plan_reply("Stop")), Reply(DONE)])
    env = cli_env(adb_server.port, MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url,
               MOBILE_AGENT_PLANNER__API_KEY="sk-test", MOBILE_AGENT_PLANNER__MODEL="gpt-4o")
    proc = run_cli("--serial", phone.serial, "-i", "Open the settings", "--yes", "-o", str(tmp_path / "runs"), env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "phone is locked" in proc.stdout and "Opened" not in proc.stdout
    assert len(llm_server.chat_requests) == 0  # the run stops before its first step: nothing to plan on a lock screen
    assert _screen(phone)["locked"] is True and phone.adb_state()["foreground"] == LAUNCHER


def test_a_model_run_whose_first_step_is_no_open_app_unlocks_first(adb_server, sim_phones, llm_server,
                                                                    tmp_path) -> None:
    (phone,) = sim_phones(1, profile=LOCKED, width=540, height=1200)
    llm_server.script([Reply(plan_reply("Click text (Notes)")), Reply(plan_reply("Stop")), Reply(DONE)])
    env = cli_env(adb_server.port, MOBILE_AGENT_PLANNER__BASE_URL=llm_server.base_url,
               MOBILE_AGENT_PLANNER__API_KEY="sk-test", MOBILE_AGENT_PLANNER__MODEL="gpt-4o")
    proc = run_cli("--serial", phone.serial, "-i", "Open my notes", "--yes", "-o", str(tmp_path / "runs"), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _screen(phone)["locked"] is False and phone.adb_state()["foreground"] == "com.google.android.keep"


def _unlock_with_pin(phone, pin: str) -> None:
    """What the person does on the phone: swipe up, type the PIN, Enter."""
    phone.device.shell(["input", "swipe", "270", "1000", "270", "300", "300"])
    phone.device.shell(["input", "text", pin])
    phone.device.shell(["input", "keyevent", "66"])


def test_rest_task_asks_its_person_to_unlock_then_goes_on(service, sim_phones) -> None:
    (phone,) = sim_phones(1, profile=LOCKED, width=540, height=1200)
    phone.device.shell(["locksettings", "set-pin", "2580"])
    planner = TaggedPlanner(plans={"t-lock": ["Open App (Settings)", "Open App (Settings)"]})
    live = service([phone], planner=planner)
    task = live.submit("[t-lock] open the settings")
    waiting = live.wait_task(task["id"], statuses={"waiting_for_user"})
    assert waiting["asking"]["kind"] == "question" and "locked" in waiting["asking"]["question"]
    assert _screen(phone)["locked"] is True

    _unlock_with_pin(phone, "1111")  # a wrong PIN: still locked
    assert _screen(phone)["locked"] is True
    _unlock_with_pin(phone, "2580")
    assert _screen(phone)["locked"] is False
    assert live.client.post(f"/v1/tasks/{task['id']}/reply", json={"action": "done"}).status_code == 202
    done = live.wait_task(task["id"])
    assert done["status"] == "completed", done
    assert phone.adb_state()["foreground"] == SETTINGS_PKG


def test_rest_script_on_a_swipe_lock_opens_the_app(service, sim_phones) -> None:
    (phone,) = sim_phones(1, profile=LOCKED, width=540, height=1200)
    live = service([phone], **{"planner.base_url": None, "planner.api_key": ""})
    created = live.client.post("/v1/tasks", json={"script": "Open App (Settings)\n"})
    assert created.status_code == 202, created.text
    task = live.wait_task(created.json()["id"])
    assert task["status"] == "completed", task
    assert phone.adb_state()["foreground"] == SETTINGS_PKG and _screen(phone)["locked"] is False


def test_the_pin_never_shows_in_the_phone_state(sim_phones) -> None:
    (phone,) = sim_phones(1, profile=LOCKED, width=540, height=1200)
    phone.device.shell(["locksettings", "set-pin", "97531"])
    assert "97531" not in json.dumps(phone.adb_state())
    wrong = phone.device.shell(["locksettings", "clear", "--old", "1"])
    assert "didn't match" in wrong and _screen(phone)["secure"] is True
    assert phone.device.shell(["locksettings", "clear", "--old", "97531"]).strip() == "Lock credential cleared"
    assert _screen(phone)["secure"] is False
