"""Step metrics of the grounded dialects (UI-TARS, Qwen ``mobile_use``, AutoGLM) in
`mobile-agent eval mobile-eval` and `eval families`: a grounded model taps at points, and
its steps are judged by their effect (the element under the tapped point, located on the
step's own screenshot) against the reference's text and icon targets, as the data
engine's targets map the other way. A key press is the paper's key, Finished its Stop.

The scripted grounding model (tests/grounding_model.py) plays the reference solution in
each dialect's own format and coordinate space, so every step is right: PS, SR_act,
SR_args and SR are 1. Before, correct coordinate taps were counted as wrong operations
(PS 0.25 on settings-1 with UI-TARS).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from eval.families import FAMILIES
from eval.mobile_eval.records import load_results
from eval.mobile_eval.schema import load_tasks
from mobile_agent.cli import main
from tests.grounding_model import GROUNDED, GroundingModel

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

@pytest.fixture
def adb_env(adb_server, monkeypatch):
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    for name in ("BASE_URL", "API_KEY", "MODEL", "DIALECT"):
        monkeypatch.delenv(f"MOBILE_AGENT_PLANNER__{name}", raising=False)
    monkeypatch.setenv("MOBILE_AGENT_PERCEPTION__DETECTOR", "proposals")
    monkeypatch.setenv("MOBILE_AGENT_PERCEPTION__RANKER", "heuristic")
    return adb_server


def _model_args(llm: Any, model: str) -> list[str]:
    return ["--base-url", llm.base_url, "--api-key", "k", "--model", model]


@pytest.mark.parametrize(("model", "dialect", "space"), GROUNDED, ids=[g[1] for g in GROUNDED])
def test_mobile_eval_scores_a_grounded_dialects_taps_by_what_they_hit(adb_env, sim_phone, llm_server, tmp_path,
                                                                      model, dialect, space):
    phone = sim_phone.phone
    task = next(t for t in load_tasks() if t.id == "settings-1")
    llm_server.model = model
    llm_server.script([], default=GroundingModel(dialect, space, task.reference_lines(), phone.ground_truth,
                                                 screen=(phone.width, phone.height)))
    out = tmp_path / "eval"
    assert main(["eval", "mobile-eval", "--task", "settings-1", "--device", sim_phone.serial, "--output", str(out),
                 *_model_args(llm_server, model)]) == 0
    (record,) = load_results(out / "results.jsonl")
    assert record.success and phone.dark_mode
    assert (record.ps, record.sr_act, record.sr_args, record.sr) == (1.0, 1.0, 1.0, 1.0), record.steps
    assert record.cr == 1.0 and record.agent_steps == 3


@pytest.mark.parametrize(("model", "dialect", "space"), [GROUNDED[0], GROUNDED[2]], ids=["ui_tars", "autoglm"])
def test_eval_families_scores_a_grounded_dialect_by_effect(adb_env, sim_phone, llm_server, tmp_path,
                                                          model, dialect, space):
    """notes-create: an icon tap (the orange plus), typing, two Back keys."""
    phone = sim_phone.phone
    task = FAMILIES["notes-create"].instance(0)
    lines = [line.split(" || ")[0] for line in task.reference_lines()]
    llm_server.model = model
    llm_server.script([], default=GroundingModel(dialect, space, lines, phone.ground_truth,
                                                 screen=(phone.width, phone.height)))
    out = tmp_path / "families"
    assert main(["eval", "families", "--family", "notes-create", "--seeds", "0:1", "--device", sim_phone.serial,
                 "-o", str(out), *_model_args(llm_server, model)]) == 0
    report = json.loads((out / "families.json").read_text())
    row = report["families"]["notes-create"]
    assert (row["su"], row["sr_act"], row["sr_args"], row["sr"]) == (1.0, 1.0, 1.0, 1.0), row
    (record,) = load_results(out / "results.jsonl")
    assert record.ps == 1.0, record.steps


def test_data_score_judges_a_grounded_models_answers_by_effect(adb_env, sim_phone, llm_server, tmp_path):
    """GPT4Tools' offline protocol (`data score`) with a UI-TARS model that answers every step
    with the dataset's own UI-TARS target (what the data engine wrote for that step): its
    taps land on the reference targets, so every rate is 1 (a tap was never a Click text)."""
    from eval.data_engine.score import load_runs

    out = tmp_path / "data"
    assert main(["data", "collect", "--family", "settings-theme", "--family", "notes-create", "--seeds", "0:1",
                 "--device", sim_phone.serial, "--output", str(out)]) == 0
    dataset = out / "dataset"
    targets = {}
    for path in dataset.glob("steps-ui_tars-*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            targets[sample["image"]] = sample["conversations"][1]["value"]
    asked = [image for run in load_runs(dataset, None)
             for action, image in zip(run["actions"], run["files"], strict=True) if action != "Stop"]
    assert asked and all(image in targets for image in asked)
    answers = iter([targets[image] for image in asked])
    llm_server.model = "ui-tars-1.5-7b"
    llm_server.script([], default=lambda request: next(answers))
    result = tmp_path / "score.json"
    assert main(["data", "score", str(dataset), "--split", "all", *_model_args(llm_server, "ui-tars-1.5-7b"),
                 "-o", str(result)]) == 0
    score = json.loads(result.read_text())
    assert score["overall"] == {"n": 2, "sr_act": 1.0, "sr_args": 1.0, "sr": 1.0}, score["runs"]


def test_annotating_a_grounded_run_does_not_count_its_finished(adb_env, sim_phone, llm_server, tmp_path,
                                                               monkeypatch, capsys):
    """A person judging a UI-TARS run (`eval annotate`) is asked about its three steps, not
    about the Finished that ends it (the paper counts no final Stop)."""
    import io

    phone = sim_phone.phone
    task = next(t for t in load_tasks() if t.id == "settings-1")
    llm_server.model = "ui-tars-1.5-7b"
    llm_server.script([], default=GroundingModel("ui_tars", "image", task.reference_lines(), phone.ground_truth,
                                                 screen=(phone.width, phone.height)))
    out = tmp_path / "eval"
    assert main(["eval", "mobile-eval", "--task", "settings-1", "--device", sim_phone.serial, "--output", str(out),
                 *_model_args(llm_server, "ui-tars-1.5-7b")]) == 0
    (record,) = load_results(out / "results.jsonl")
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO("y\ny\ny\ny\n3\n"))
    assert main(["eval", "annotate", record.trajectory_dir, "--results", str(out / "results.jsonl")]) == 0
    _, judged = load_results(out / "results.jsonl")
    assert judged.judged_by == "human" and judged.agent_steps == 3 and judged.ps == 1.0, judged
