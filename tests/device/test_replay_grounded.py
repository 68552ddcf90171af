"""The plan cache with the grounded dialects (UI-TARS, Qwen ``mobile_use``, AutoGLM), as a
user runs it: `mobile-agent run --cache` twice, a subprocess, the simulated phone over the
real adb server, the scripted grounding model (tests/grounding_model.py) answering in each
dialect's own format and coordinate space.

The first run taps at points; the plan keeps each tap by the text it hit (a Click text,
re-located on a replay) or, where nothing with text is under it, at its point with the
screen's size. The second run replays: no model call, and the phone ends in the state the
instruction asks for (dark mode on). Before, recording stopped at the first point tap and
a grounded dialect's Finished was not taken as the end, so nothing was cached.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from eval.mobile_eval.schema import load_tasks
from tests.agent_helpers import cli_env, run_cli
from tests.grounding_model import GROUNDED, GroundingModel

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=env, timeout=240)


def _env(adb_port: int, base_url: str, model: str) -> dict[str, str]:
    return cli_env(adb_port, MOBILE_AGENT_PLANNER__BASE_URL=base_url, MOBILE_AGENT_PLANNER__API_KEY="test-key",
                   MOBILE_AGENT_PLANNER__MODEL=model, MOBILE_AGENT_PLANNER__DIALECT="auto",
                   MOBILE_AGENT_PERCEPTION__DETECTOR="proposals", MOBILE_AGENT_PERCEPTION__RANKER="heuristic",
                   MOBILE_AGENT_AGENT__SETTLE_TIMEOUT_S="1.5", MOBILE_AGENT_AGENT__SETTLE_INTERVAL_S="0.1")


def _cached_steps(runs: Path) -> list[list[dict]]:
    databases = list(runs.rglob("*.sqlite3"))
    assert databases, f"no plan cache under {runs}"
    with sqlite3.connect(databases[0]) as db:
        return [json.loads(row[0]) for row in db.execute("SELECT steps FROM cached_plans")]


@pytest.mark.parametrize(("model", "dialect", "space"), GROUNDED, ids=[g[1] for g in GROUNDED])
def test_run_cache_twice_replays_a_grounded_dialects_plan(adb_server, sim_phone, llm_server, tmp_path,
                                                          model, dialect, space):
    phone = sim_phone.phone
    task = next(t for t in load_tasks() if t.id == "settings-1")
    llm_server.model = model
    llm_server.script([], default=GroundingModel(dialect, space, task.reference_lines(), phone.ground_truth,
                                                 screen=(phone.width, phone.height)))
    env = _env(adb_server.port, llm_server.base_url, model)
    runs = tmp_path / "runs"
    args = ("--serial", sim_phone.serial, "--cache", "-o", str(runs), "--instruction", task.instruction)

    first = _cli(*args, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert phone.dark_mode
    cold_calls = len(llm_server.chat_requests)
    assert cold_calls >= 4  # three steps and Finished (and the completion check)
    (steps,) = _cached_steps(runs)
    # the taps at points are kept by the text they hit, never as a bare point
    assert [s["action"] for s in steps] == ["Open App (Settings)", "Click text (Display & brightness)",
                                            "Click text (Dark mode)"], steps

    phone.reset()
    assert not phone.dark_mode
    second = _cli(*args, env=env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(llm_server.chat_requests) == cold_calls, second.stdout  # every step replayed: no model call
    assert phone.dark_mode, second.stdout
    assert re.search(r"replayed|cached plan", second.stdout, re.I), second.stdout


def test_a_step_only_its_points_describe_is_scaled_to_the_screen_it_meets() -> None:
    """A tap on something without text, a swipe: kept at its points with the screen's size;
    a replay on another screen scales them (the tap then snaps onto the element there)."""
    from mobile_agent.replay.fingerprint import ScreenFingerprint
    from mobile_agent.replay.plans import CachedStep
    from mobile_agent.replay.relocate import scaled_action

    assert scaled_action("Tap point (540, 1200)", (1080, 2400), (1440, 3120)) == "Tap point (720, 1560)"
    assert scaled_action("Swipe points (540, 1800, 540, 600)", (1080, 2400), (720, 1600)) == (
        "Swipe points (360, 1200, 360, 400)")
    assert scaled_action("Tap point (540, 1200)", (1080, 2400), (1080, 2400)) == "Tap point (540, 1200)"

    step = CachedStep("Tap point (540, 1200)", "tap_point", ScreenFingerprint(texts=frozenset(), thumb=(0.0,) * 4),
                      point=(0.5, 0.5), screen=(1080, 2400))
    assert CachedStep.from_dict(json.loads(json.dumps(step.to_dict()))).screen == (1080, 2400)


@pytest.mark.parametrize(("model", "dialect", "space"), [GROUNDED[0], GROUNDED[2]], ids=["ui_tars", "autoglm"])
def test_an_icon_tap_is_replayed_at_its_point_on_the_screen_it_meets(adb_server, sim_phone, llm_server,
                                                                     tmp_path, model, dialect, space):
    """notes-create: the orange plus has no text, so its tap is kept at its point (and the
    screen's size); the replay taps there again and the note is written."""
    from eval.families import FAMILIES

    phone = sim_phone.phone
    task = FAMILIES["notes-create"].instance(0)
    lines = [line.split(" || ")[0] for line in task.reference_lines()]
    llm_server.model = model
    llm_server.script([], default=GroundingModel(dialect, space, lines, phone.ground_truth,
                                                 screen=(phone.width, phone.height)))
    env = _env(adb_server.port, llm_server.base_url, model)
    runs = tmp_path / "runs"
    instruction = task.render({})
    args = ("--serial", sim_phone.serial, "--cache", "-o", str(runs), "--instruction", instruction)

    first = _cli(*args, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    typed = lines[2].removeprefix("Type (").removesuffix(")")
    notes = lambda: [n["title"] for n in phone.state()["apps"]["com.google.android.keep"]["notes"]]  # noqa: E731
    assert notes() == [typed]
    cold_calls = len(llm_server.chat_requests)
    (steps,) = _cached_steps(runs)
    icon = steps[1]
    assert icon["operation"] == "tap_point" and icon["screen"] == [phone.width, phone.height], steps

    phone.reset()
    second = _cli(*args, env=env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(llm_server.chat_requests) == cold_calls, second.stdout
    assert notes() == [typed], second.stdout


def test_a_point_step_recorded_on_one_screen_replays_on_another_size(
    adb_server, sim_phone, sim_phones, llm_server, tmp_path
):
    """Recorded on the 1080x2400 phone, replayed on a 720x1600 one: the icon tap is scaled."""
    from eval.families import FAMILIES

    model, dialect, space = GROUNDED[0]
    task = FAMILIES["notes-create"].instance(0)
    lines = [line.split(" || ")[0] for line in task.reference_lines()]
    llm_server.model = model
    llm_server.script([], default=GroundingModel(dialect, space, lines, sim_phone.phone.ground_truth,
                                                 screen=(sim_phone.phone.width, sim_phone.phone.height)))
    env = _env(adb_server.port, llm_server.base_url, model)
    runs = tmp_path / "runs"
    common = ("--cache", "-o", str(runs), "--instruction", task.render({}))
    first = _cli("--serial", sim_phone.serial, *common, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    cold_calls = len(llm_server.chat_requests)

    (small,) = sim_phones(1, width=720, height=1600)
    second = _cli("--serial", small.serial, *common, env=env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(llm_server.chat_requests) == cold_calls, second.stdout
    typed = lines[2].removeprefix("Type (").removesuffix(")")
    assert [n["title"] for n in small.phone.state()["apps"]["com.google.android.keep"]["notes"]] == [typed]
