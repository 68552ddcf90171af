"""The data engine on the simulated phone over adb: reference runs of a few families are
exported (one T3-Agent record per run, one LLaVA conversation per step, images copied),
failing / pending / crashed runs injected into the results are never exported, duplicates
are kept once, and train and validation never share a family."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image

from eval.data_engine.cli import export_command
from eval.data_engine.export import export_runs, split_of
from eval.families import FAMILIES, sample_instances
from eval.families.catalog import instance_by_id
from eval.mobile_eval.records import ResultsFile
from eval.mobile_eval.runner import EvalConfig, SuiteRunner
from mobile_agent.agent.trajectory import load_trajectory
from mobile_agent.device import open_device
from mobile_agent.operations import parse_action
from mobile_agent.planner.dialects import make_dialect, profile_named
from mobile_agent.planner.geometry import ImageRule, viewport_for
from mobile_agent.settings import AdbSettings
from tests.agent_helpers import agent_settings as _settings
from tests.family_planner import wrong_solution as _wrong

pytestmark = pytest.mark.slow


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_only_verified_runs_are_exported(sim_phone, adb_server, tmp_path):
    settings = _settings(adb_server.port, sim_phone.serial, tmp_path / "runs")
    device = open_device(AdbSettings(server_port=adb_server.port), sim_phone.serial)
    good = sample_instances(families=["settings-theme", "notes-create", "google-maps-search"], seeds=range(2))
    wrong = _wrong(FAMILIES["notes-create"].instance(5)).model_copy(update={"id": "notes-create-s5-1"})
    runner = SuiteRunner(settings, [device], EvalConfig(output_dir=tmp_path, mode="reference"))
    records = runner.run(good + [wrong])
    assert sum(r.success for r in records) == len(good)
    # a crashed and a pending run, as the runner writes them, injected into the results
    results = ResultsFile(tmp_path / "results.jsonl")
    base = records[0]
    results.append(base.model_copy(update={"task_id": "notes-create-s7-1", "success": False, "status": "crashed",
                                           "judged_by": "harness"}))
    results.append(base.model_copy(update={"task_id": "notes-create-s8-1", "judged_by": "pending", "success": False}))

    code = export_command(argparse.Namespace(run_dir=tmp_path, output=tmp_path / "ds", dialect=None, format=None))
    assert code == 0
    runs = _lines(tmp_path / "ds" / "runs.jsonl")
    assert sorted(r["id"] for r in runs) == sorted(t.id for t in good)
    assert "notes-create-s5-1" not in {r["id"] for r in runs}
    for run in runs:
        task = instance_by_id(run["id"])
        assert run["query"] == task.render() and run["verified_by"] == "state_validator"
        assert any(v.startswith("✓") for v in run["verdict"])
        assert len(run["files"]) == len(run["actions"]) == len(run["thoughts"]) == len(run["observations"])
        assert all((tmp_path / "ds" / f).is_file() for f in run["files"])
        assert run["split"] == split_of(run["family"])
    _check_samples(tmp_path / "ds", runs, {r.task_id: str(r.trajectory_dir) for r in records})
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "judged by harness: 1" in card and "judged by pending: 1" in card and "failed: 1" in card
    # the same run twice (family, params and actions alike) is kept once
    task = instance_by_id(base.task_id)
    again = export_runs([base, base], {base.task_id: task}, tmp_path / "dup")
    assert (again.exported, again.duplicates) == (1, 1)
    # a run whose screenshot went missing is refused; the export goes on with the others
    broken = tmp_path / "broken"
    shutil.copytree(base.trajectory_dir, broken)
    (broken / "step-002.png").unlink()
    lost = base.model_copy(update={"trajectory_dir": str(broken), "task_id": records[1].task_id})
    other = next(r for r in records if r.task_id not in (base.task_id, records[1].task_id) and r.success)
    kept = export_runs([lost, other], {lost.task_id: instance_by_id(lost.task_id), other.task_id: instance_by_id(
        other.task_id)}, tmp_path / "lost")  # fmt: skip
    assert kept.exported == 1 and kept.rejected == {"screenshot missing": 1}


def _samples(folder: Path, prefix: str, dialect: str) -> list[dict]:
    return [line for split in ("train", "validation") if (f := folder / f"{prefix}-{dialect}-{split}.jsonl").is_file()
            for line in _lines(f)]  # fmt: skip


def _check_samples(folder: Path, runs: list[dict], trajectory_dirs: dict[str, str]) -> None:
    """Every dialect's targets: the paper's parse with the operations' parser and are the
    steps' own actions; the coordinate dialects' points land inside the box perception found
    for the step's target (position-verified, through each dialect's own parser); the
    LLaMA-Factory file holds the same replies with its image."""
    trajectories = {r["id"]: _trajectory_steps(trajectory_dirs[r["id"]]) for r in runs}
    steps = sum(len(r["actions"]) + 1 for r in runs)  # + the final Stop
    paper = _samples(folder, "steps", "paper")
    assert len(paper) == steps
    for sample in paper:
        human, gpt = sample["conversations"]
        assert human["from"] == "human" and human["value"].startswith("<image>\n")
        assert (folder / sample["image"]).is_file()
        run_id, index = sample["id"].rsplit("-", 1)
        step = trajectories[run_id][int(index) - 1] if int(index) <= len(trajectories[run_id]) else None
        assert parse_action(gpt["value"]).text == (step["action_text"] if step else "Stop")
    info = json.loads((folder / "dataset_info.json").read_text())
    for name in ("ui_tars", "mobile_use", "autoglm", "function_calling"):
        dialect = make_dialect(profile_named(name))
        llava, sharegpt = _samples(folder, "steps", name), _samples(folder, "messages", name)
        assert [s["conversations"][1]["value"] for s in llava] == [m["messages"][-1]["content"] for m in sharegpt]
        assert any(e["file_name"].startswith(f"messages-{name}-") for e in info.values())
        taps = 0
        for sample, line in zip(llava, sharegpt, strict=True):
            assert line["images"] == [sample["image"]] and line["messages"][-2]["content"].count("<image>") == 1
            run_id, index = sample["id"].rsplit("-", 1)
            if int(index) > len(trajectories[run_id]):
                continue
            step = trajectories[run_id][int(index) - 1]
            with Image.open(folder / sample["image"]) as image:
                viewport = viewport_for(*image.size, dialect.image_rule(ImageRule()), profile_named(name).space)
            action = dialect.parse(sample["conversations"][1]["value"], viewport).action
            if step["operation"]["name"] in ("click_text", "click_icon"):
                box = step["location"]["box"]
                assert action.name == ("tap_point" if name != "function_calling" else step["operation"]["name"])
                if name != "function_calling":
                    assert box[0] <= action.params.x <= box[2] and box[1] <= action.params.y <= box[3], sample
                    taps += 1
        assert taps > 0 or name == "function_calling"
    # UI-TARS and AutoGLM have no Enter: UI-TARS ends the typed text with "\n", AutoGLM skips it
    enters = sum(a == "Enter" for r in runs for a in r["actions"])
    card = (folder / "README.md").read_text()
    if enters:
        assert f"| autoglm | {steps - enters} | cannot express press_key (enter): {enters} |" in card
        assert any("\\n')" in s["conversations"][1]["value"] for s in _samples(folder, "steps", "ui_tars"))


def _trajectory_steps(folder: str) -> list[dict]:
    """The steps the exporter keeps (done, with an action)."""
    _, steps, _ = load_trajectory(Path(folder))
    return [s for s in steps if s.get("ok") and s.get("action_text") and s.get("operation")]


def test_splits_never_share_a_family(tmp_path):
    families = {split_of(name) for name in FAMILIES}
    assert families == {"train", "validation"}
    assert export_runs([], {}, tmp_path).exported == 0


def test_cli_collect_families_then_export(adb_server, sim_phone, tmp_path, monkeypatch, capsys):
    from mobile_agent.cli import main

    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    monkeypatch.delenv("MOBILE_AGENT_PLANNER__BASE_URL", raising=False)
    monkeypatch.delenv("MOBILE_AGENT_PLANNER__API_KEY", raising=False)
    out = tmp_path / "data"
    argv = ["data", "collect", "--family", "settings-theme", "--family", "gmail-send-empty", "--seeds", "0:2",
            "--device", sim_phone.serial, "--output", str(out), "--dialect", "autoglm", "--format", "sharegpt"]
    assert main(argv) == 0
    runs = _lines(out / "dataset" / "runs.jsonl")
    written = sorted(p.name for p in (out / "dataset").glob("*-*.jsonl"))
    assert written and all(name.startswith("messages-autoglm-") for name in written)
    assert len(runs) == 4 and {r["family"] for r in runs} == {"settings-theme", "gmail-send-empty"}
    assert "exported: 4" in capsys.readouterr().out
    assert main(["eval", "families", "--family", "nope", "--output", str(tmp_path / "x")]) == 2
    assert main(["data", "export", str(tmp_path / "missing")]) == 2
    assert main(["data", "export", str(out), "-o", str(tmp_path / "bad"), "--dialect", "nope"]) == 2
    assert main(["data", "export", str(out), "-o", str(tmp_path / "bad"), "--format", "csv"]) == 2
    assert not (tmp_path / "bad").exists()  # a usage error writes nothing
