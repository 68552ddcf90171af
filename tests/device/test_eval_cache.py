"""The plan cache in the benchmarks: `mobile-agent eval families --cache` (and `eval
mobile-eval --cache`, whose options families copies) replays cached plans and keeps them
in the run's --output folder; `MOBILE_AGENT_CACHE__ENABLED=true` keeps them there too.
Before, `--cache` was refused as an unknown argument and the setting stored the plans in
./runs, outside --output."""

from __future__ import annotations

import sqlite3

import pytest

from eval.families import FAMILIES
from eval.mobile_eval.records import load_results
from mobile_agent.cli import main
from tests.family_planner import FamilyPlanner

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


@pytest.fixture
def eval_env(adb_server, monkeypatch, tmp_path):
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    for name in ("PLANNER__BASE_URL", "PLANNER__API_KEY", "PLANNER__MODEL", "CACHE__ENABLED", "CACHE__DATABASE_URL",
                 "AGENT__OUTPUT_DIR"):
        monkeypatch.delenv(f"MOBILE_AGENT_{name}", raising=False)
    monkeypatch.chdir(tmp_path)  # a plan cache in ./runs would show here
    return adb_server


def _plans(database) -> int:
    with sqlite3.connect(database) as db:
        return db.execute("SELECT COUNT(*) FROM cached_plans").fetchone()[0]


def test_eval_families_cache_replays_and_keeps_the_plans_under_output(eval_env, sim_phone, llm_server, tmp_path):
    task = FAMILIES["settings-theme"].instance(0)
    llm_server.script([], default=FamilyPlanner([task], "reference"))
    out = tmp_path / "families"
    command = ["eval", "families", "--family", "settings-theme", "--seeds", "0:1", "--device", sim_phone.serial,
               "--base-url", llm_server.base_url, "--api-key", "k", "--model", "scripted-vlm", "--cache", "-o", str(out)]
    assert main(command) == 0
    assert _plans(out / "plan-cache.sqlite3") == 1
    assert not (tmp_path / "runs").exists()
    cold = len(llm_server.chat_requests)
    assert cold >= 3

    assert main([*command, "--new"]) == 0  # the results start over; the plans stay
    (record,) = load_results(out / "results.jsonl")
    assert record.success and record.status == "completed", record.reasons
    assert len(llm_server.chat_requests) == cold  # replayed: no model call
    assert _plans(out / "plan-cache.sqlite3") == 1


def test_the_cache_setting_keeps_the_plans_under_output(eval_env, sim_phone, llm_server, tmp_path, monkeypatch):
    from tests.agent_helpers import DONE, plan_reply

    monkeypatch.setenv("MOBILE_AGENT_CACHE__ENABLED", "true")
    llm_server.script([plan_reply("Open App (Settings)"), plan_reply("Click text (Airplane mode)"),
                       plan_reply("Stop"), DONE])
    out = tmp_path / "eval"
    assert main(["eval", "mobile-eval", "--task", "settings-2", "--device", sim_phone.serial, "--output", str(out),
                 "--base-url", llm_server.base_url, "--model", "scripted", "--api-key", "test"]) == 0
    assert sim_phone.phone.state()["airplane_mode"] is True
    assert _plans(out / "plan-cache.sqlite3") == 1
    assert not (tmp_path / "runs").exists()


def test_a_task_that_ends_on_an_internal_error_makes_eval_exit_3(eval_env, sim_phone, tmp_path, monkeypatch, capsys):
    """A bug of the software (the accessibility source's TypeError was one) is not a model's
    failure: the suite goes on, writes its reports, says which task and exits 3, not 0."""
    from mobile_agent.locate import PerceptionLocator

    def broken(self, image, text, hierarchy=None):  # the kind of bug #28 found: a wrapper's wrong signature
        raise TypeError("find_text() takes 3 positional arguments but 4 were given")

    monkeypatch.setattr(PerceptionLocator, "find_text", broken)
    out = tmp_path / "eval"
    code = main(["eval", "mobile-eval", "--task", "settings-1", "--script-reference", "--device", sim_phone.serial,
                 "--output", str(out)])
    assert code == 3
    err = capsys.readouterr().err
    assert "settings-1 ended with an internal error" in err and "TypeError" in err
    (record,) = load_results(out / "results.jsonl")
    assert record.status == "error" and record.error["cause"] == "internal"
    assert (out / "report.md").is_file()
