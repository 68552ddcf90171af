"""Every Mobile-Eval task's reference solution, run in scripted mode on the simulated phone
through the real adb server, must be judged a success by its validator — proof that the
task is solvable there and that its validator reads the right state — and must score full
marks against itself on the step metrics.

The steps go through the perception of a default CPU-only install (OCR for text, OpenCV
proposals and the colour/shape ranker for icons), exactly as ``mobile-agent eval
mobile-eval --script-reference`` runs them: a reference step that this perception cannot
carry out fails here.
"""

from __future__ import annotations

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


@pytest.fixture
def device(sim_phone, adb_server):
    from mobile_agent.device import open_device

    return open_device(AdbSettings(server_port=adb_server.port), sim_phone.serial)


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_reference_solution_succeeds(task, device, sim_phone, adb_server, tmp_path):
    from mobile_agent.locate import build_locator

    settings = _settings(adb_server.port, device.serial, tmp_path)
    runner = SuiteRunner(settings, [device], EvalConfig(output_dir=tmp_path, mode="reference", label="reference"),
                         locator=build_locator(settings))
    record, lost = runner.run_task(task, PhoneEnvironment(device))
    assert not lost
    assert record.judged_by == "state"
    failed = [s for s in record.steps if not s.correct]
    assert record.success, (record.status, record.error, record.reasons, failed[:1])
    assert record.ps == 1.0 and record.cr == 1.0
    assert record.sr_act == record.sr == 1.0
    assert Path(record.replay).is_file()
