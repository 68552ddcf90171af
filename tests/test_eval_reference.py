"""Every Mobile-Eval task's reference solution, run in scripted mode on the simulated phone
through the real adb server, must be judged a success by its validator — proof that the
task is solvable there and that its validator reads the right state — and must score full
marks against itself on the step metrics.

Text is located by the real OCR; icons by the simulated phone's own ground truth (read over
ADB), because the weight-free icon ranker of a CPU-only install cannot tell a paper plane
from a dot — that is perception's business and its own tests'; here the tasks and their
validators are under test.

A task whose app the simulated phone does not have yet is skipped, naming what is missing:
the state path its validator needs, or the placeholder screen ("Nothing here yet") the
reference solution ran into. Those skips turn into real checks as the apps land.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from eval.mobile_eval.environment import PhoneEnvironment
from eval.mobile_eval.runner import EvalConfig, SuiteRunner
from eval.mobile_eval.schema import load_tasks
from mobile_agent.settings import AdbSettings, AgentSettings, PerceptionSettings, Settings

TASKS = load_tasks()


def _settings(adb_port: int, serial: str, output_dir: Path) -> Settings:
    return Settings(
        adb=AdbSettings(server_port=adb_port, serial=serial),
        agent=AgentSettings(output_dir=output_dir, settle_timeout_s=1.5, settle_interval_s=0.1),
        perception=PerceptionSettings(detector="proposals", ranker="heuristic"),
    )


_POSITION_WORDS = {"top", "bottom", "left", "right", "center", "centre", "middle"}


class GroundTruthIconLocator:
    """Real OCR for text; the phone's ground-truth icons (best word overlap in the region) for icons."""

    def __init__(self, device, settings: Settings) -> None:
        from mobile_agent.locate import build_locator

        self.device = device
        self.real = build_locator(settings)

    def find_text(self, image, text):
        return self.real.find_text(image, text)

    def find_icon(self, image, description, position=None):
        from perception.types import Box, LocateStatus, Location

        height, width = image.shape[:2]
        wanted = set(re.findall(r"[a-z]+", description.lower())) - _POSITION_WORDS
        region = set((position or "").lower().split())
        best, best_score = None, 0
        for element in json.loads(self.device.shell(["cmd", "simphone", "ground-truth"])):
            if element["kind"] != "icon" or not element.get("clickable"):
                continue
            left, top, right, bottom = element["box"]
            x, y = (left + right) / 2, (top + bottom) / 2
            if ("top" in region and y > height / 3) or ("bottom" in region and y < 2 * height / 3) \
                    or ("left" in region and x > width / 3) or ("right" in region and x < 2 * width / 3):
                continue
            score = len(wanted & set(re.findall(r"[a-z]+", element["description"].lower())))
            if score > best_score:
                best, best_score = element, score
        if best is None:
            return Location(LocateStatus.NOT_FOUND, description, feedback=f"no icon like {description!r}")
        box = Box(*best["box"])
        return Location(LocateStatus.FOUND, description, point=box.center, box=box, backend="ground-truth")


@pytest.fixture
def device(sim_phone, adb_server):
    from mobile_agent.device import open_device

    return open_device(AdbSettings(server_port=adb_server.port), sim_phone.serial)


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_reference_solution_succeeds(task, device, sim_phone, adb_server, tmp_path):
    settings = _settings(adb_server.port, device.serial, tmp_path)
    runner = SuiteRunner(settings, [device], EvalConfig(output_dir=tmp_path, mode="reference", label="reference"),
                         locator=GroundTruthIconLocator(device, settings))
    record, lost = runner.run_task(task, PhoneEnvironment(device))
    if not record.success:
        missing = [r for r in record.reasons if "state has no" in r]
        if missing:
            pytest.skip(f"simulated phone lacks {task.apps}: {missing[0]}")
        screen = [e.get("text") for e in sim_phone.phone.ground_truth()]
        if "Nothing here yet" in screen:
            pytest.skip(f"simulated phone shows a placeholder for {task.apps} (step {record.agent_steps})")
    assert not lost
    assert record.judged_by == "state"
    assert record.success, (record.status, record.error, record.reasons)
    assert record.ps == 1.0 and record.cr == 1.0
    assert record.sr_act == record.sr == 1.0
    assert Path(record.replay).is_file()
