"""Task families on the simulated phone through the real adb server: each family's reference
solution, run in scripted mode (OCR and icon perception as `eval families --script-reference`),
passes its validator for sampled seeds; the validator of a different instance of the same
family fails on that end state (the validator checks the parameters, not just "something
changed"); a truncated solution fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eval.families import FAMILIES, distinct_instances, sample_instances
from eval.mobile_eval.runner import EvalConfig, SuiteRunner
from mobile_agent.device import open_device
from mobile_agent.settings import AdbSettings, AgentSettings, PerceptionSettings, Settings

pytestmark = pytest.mark.slow
# seeds per family: FAMILY_SEEDS=5 samples more, FAMILY_SEED_START=100 others (each run costs a few seconds of OCR)
_START = int(os.environ.get("FAMILY_SEED_START", "0"))
SEEDS = range(_START, _START + int(os.environ.get("FAMILY_SEEDS", "2")))


def _settings(adb_port: int, serial: str, output_dir: Path) -> Settings:
    return Settings(
        adb=AdbSettings(server_port=adb_port, serial=serial),
        agent=AgentSettings(output_dir=output_dir, settle_timeout_s=1.5, settle_interval_s=0.1),
        perception=PerceptionSettings(detector="proposals", ranker="heuristic"),
    )


def test_the_catalogue_is_big_enough():
    assert len(FAMILIES) >= 25
    assert {f.level for f in FAMILIES.values()} == {1, 2, 3}
    assert sum(len(f.apps) > 1 for f in FAMILIES.values()) >= 5
    assert sum(distinct_instances(f, range(200)) for f in FAMILIES.values()) >= 500
    # one seed, one task: the same seed gives the same instance
    for family in FAMILIES.values():
        assert family.instance(7) == family.instance(7)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_reference_passes_and_the_validator_is_specific(name, sim_phone, adb_server, tmp_path):
    settings = _settings(adb_server.port, sim_phone.serial, tmp_path / "runs")
    device = open_device(AdbSettings(server_port=adb_server.port), sim_phone.serial)
    tasks = sample_instances(families=[name], seeds=SEEDS)
    runner = SuiteRunner(settings, [device], EvalConfig(output_dir=tmp_path, mode="reference"))
    records = runner.run(tasks)
    failed = [(r.task_id, [x for x in r.reasons if x.startswith("✗")] or r.reasons) for r in records if not r.success]
    assert not failed, failed
    assert all(r.sr_act == 1.0 for r in records)


def _wrong(task, seeds=range(1, 60)):
    """The same family's solution for other parameters (or, without any, the solution cut
    short before its last step), kept with this instance's validator."""
    family = FAMILIES[task.notes.removeprefix("family ")]
    for seed in seeds:
        other = family.instance(seed)
        if other.params != task.params and other.setup == task.setup and not task.derived:
            lines = [line.split(" || ")[0] for line in other.reference_lines()]
            return task.model_copy(update={"id": f"wrong-{task.id}", "reference": lines, "human_steps": len(lines)})
    lines = task.reference[:-1]
    return task.model_copy(update={"id": f"wrong-{task.id}", "reference": lines, "human_steps": max(1, len(lines))})


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_wrong_solution_fails(name, sim_phone, adb_server, tmp_path):
    settings = _settings(adb_server.port, sim_phone.serial, tmp_path / "runs")
    device = open_device(AdbSettings(server_port=adb_server.port), sim_phone.serial)
    wrong = _wrong(FAMILIES[name].instance(0))
    (record,) = SuiteRunner(settings, [device], EvalConfig(output_dir=tmp_path, mode="reference")).run([wrong])
    assert record.status != "crashed", record.reasons
    assert not record.success, (wrong.reference, record.reasons)
