"""Task families on the simulated phone through the real adb server: each family's reference
solution, run in scripted mode (OCR and icon perception as `eval families --script-reference`),
passes its validator for sampled seeds; the validator of a different instance of the same
family fails on that end state (the validator checks the parameters, not just "something
changed"); a truncated solution fails."""

from __future__ import annotations

import os

import pytest

from eval.families import FAMILIES, distinct_instances, sample_instances
from eval.mobile_eval.runner import EvalConfig, SuiteRunner
from mobile_agent.device import open_device
from mobile_agent.settings import AdbSettings
from tests.agent_helpers import agent_settings as _settings
from tests.family_planner import wrong_solution as _wrong

pytestmark = pytest.mark.slow
# seeds per family: FAMILY_SEEDS=5 samples more, FAMILY_SEED_START=100 others (each run costs a few seconds of OCR)
_START = int(os.environ.get("FAMILY_SEED_START", "0"))
SEEDS = range(_START, _START + int(os.environ.get("FAMILY_SEEDS", "2")))


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


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_wrong_solution_fails(name, sim_phone, adb_server, tmp_path):
    settings = _settings(adb_server.port, sim_phone.serial, tmp_path / "runs")
    device = open_device(AdbSettings(server_port=adb_server.port), sim_phone.serial)
    wrong = _wrong(FAMILIES[name].instance(0))
    (record,) = SuiteRunner(settings, [device], EvalConfig(output_dir=tmp_path, mode="reference")).run([wrong])
    assert record.status != "crashed", record.reasons
    assert not record.success, (wrong.reference, record.reasons)
