"""GPT4Tools' step rates in `mobile-agent eval families`' report: per level and per family,
in families.md and families.json. The reference solutions score 1; a planner (the scripted
OpenAI-compatible server through the real client, on the simulated phone over adb) that
misspells every argument keeps SR_act but loses SR_args; the figures are the means of the
per-instance rates the runner recorded."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from eval.families import FAMILIES
from eval.families.report import family_of, family_step_metrics
from eval.mobile_eval.metrics import round_half_up
from eval.mobile_eval.records import load_results
from tests.family_planner import FamilyPlanner, planned_lines

FAMILY_NAMES = ["settings-theme", "notes-create"]


def test_family_of_an_instance_id():
    task = FAMILIES["gmail-send-empty"].instance(12)
    assert family_of(task.id) == "gmail-send-empty" and family_of("notes-1") is None
    assert family_of("settings-theme-s4-v-dark-720x1600-1") == "settings-theme"  # a data collect --augment variant
    assert family_step_metrics([]) == {"levels": {}, "overall": None, "families": {}}


def test_the_perturbed_planner_differs_from_the_reference():
    task = FAMILIES["notes-create"].instance(0)
    reference = planned_lines(task, "reference")
    typos = planned_lines(task, "perturbed", typo=1.0, detour=0.0)
    assert len(typos) == len(reference) and typos != reference
    assert [line.split(" (")[0] for line in typos] == [line.split(" (")[0] for line in reference]
    other = planned_lines(task, "other-seed")
    assert other != reference and len(other) == len(reference)


@pytest.mark.slow
def test_eval_families_reports_step_rates(adb_server, sim_phone, tmp_path, monkeypatch, capsys, llm_server):
    from mobile_agent.cli import main

    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    for name in ("BASE_URL", "API_KEY", "MODEL"):
        monkeypatch.delenv(f"MOBILE_AGENT_PLANNER__{name}", raising=False)
    common = ["eval", "families", *(a for n in FAMILY_NAMES for a in ("--family", n)), "--seeds", "0:1",
              "--device", sim_phone.serial]
    assert main([*common, "--script-reference", "-o", str(tmp_path / "ref")]) == 0
    reference = json.loads((tmp_path / "ref" / "families.json").read_text())
    assert set(reference["families"]) == set(FAMILY_NAMES)
    for row in [*reference["families"].values(), reference["overall"]]:
        assert (row["su"], row["sr_act"], row["sr_args"], row["sr"]) == (1.0, 1.0, 1.0, 1.0)
    assert "| settings-theme | 1 | 1 | 1.00 | 1.00 | 1.00 | 1.00 |" in capsys.readouterr().out

    tasks = [FAMILIES[n].instance(0) for n in FAMILY_NAMES]
    llm_server.script([], default=FamilyPlanner(tasks, "perturbed", typo=1.0, detour=0.0))
    out = tmp_path / "typos"
    assert main([*common, "--base-url", llm_server.base_url, "--api-key", "k", "--model", "scripted-vlm",
                 "-o", str(out)]) == 0
    report = json.loads((out / "families.json").read_text())
    records = {r.task_id: r for r in load_results(out / "results.jsonl")}
    notes = report["families"]["notes-create"]
    assert notes["sr_act"] == 1.0 and notes["sr_args"] < 1.0  # right operations, misspelt arguments
    for name, row in report["families"].items():
        record = next(r for r in records.values() if family_of(r.task_id) == name)
        assert row["sr_args"] == round_half_up(record.sr_args, 2) and row["sr"] == round_half_up(record.sr, 2)
    mean = sum(Fraction(str(r.sr_args)) for r in records.values()) / len(records)
    assert report["overall"]["sr_args"] == round_half_up(mean, 2) < 1.0
    assert "SR_args" in (out / "families.md").read_text()


@pytest.mark.slow
def test_data_score_asks_each_step_with_the_gold_history(adb_server, sim_phone, tmp_path, monkeypatch, capsys,
                                                         llm_server):
    """GPT4Tools' offline protocol on an exported dataset: the reference planner scores 1, a
    misspelling one keeps SR_act and loses SR_args; every step is asked once, with its screen."""
    from mobile_agent.cli import main

    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    for name in ("BASE_URL", "API_KEY", "MODEL"):
        monkeypatch.delenv(f"MOBILE_AGENT_PLANNER__{name}", raising=False)
    out = tmp_path / "data"
    assert main(["data", "collect", *(a for n in FAMILY_NAMES for a in ("--family", n)), "--seeds", "0:2",
                 "--device", sim_phone.serial, "--output", str(out)]) == 0
    dataset = out / "dataset"
    runs = [json.loads(line) for line in (dataset / "runs.jsonl").read_text().splitlines()]
    steps = sum(len([a for a in r["actions"] if a != "Stop"]) for r in runs)
    tasks = [FAMILIES[n].instance(s) for n in FAMILY_NAMES for s in (0, 1)]
    score = ["data", "score", str(dataset), "--split", "all", "--base-url", llm_server.base_url, "--api-key", "k",
             "--model", "scripted-vlm"]

    llm_server.script([], default=FamilyPlanner(tasks, "reference"))
    assert main([*score, "-o", str(tmp_path / "ref.json")]) == 0
    assert len(llm_server.chat_requests) == steps and all(len(r.images()) == 1 for r in llm_server.chat_requests)
    reference = json.loads((tmp_path / "ref.json").read_text())
    assert reference["overall"] == {"n": len(runs), "sr_act": 1.0, "sr_args": 1.0, "sr": 1.0}

    llm_server.script([], default=FamilyPlanner(tasks, "perturbed", typo=1.0, detour=0.0))
    assert main([*score, "-o", str(tmp_path / "typos.json")]) == 0
    typos = json.loads((tmp_path / "typos.json").read_text())
    assert typos["overall"]["sr_act"] == 1.0 and typos["overall"]["sr_args"] < 1.0
    assert "| all |" in capsys.readouterr().out
    assert main(["data", "score", str(tmp_path / "none")]) == 2
