"""`mobile-agent eval ...` in-process: run, resume, report, compare, annotate, list."""

from __future__ import annotations

import io
import json

import pytest

from eval.mobile_eval.records import load_results
from mobile_agent.cli import main


@pytest.fixture
def adb_env(adb_server, monkeypatch):
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    monkeypatch.delenv("MOBILE_AGENT_PLANNER__BASE_URL", raising=False)
    monkeypatch.delenv("MOBILE_AGENT_PLANNER__API_KEY", raising=False)
    return adb_server


def test_tasks_lists_the_filtered_tasks(capsys):
    assert main(["eval", "tasks", "--app", "notes", "--level", "2", "--reference"]) == 0
    out = capsys.readouterr().out
    assert "notes-2" in out and "notes-1" not in out
    assert "Type (Hello, this is a note)" in out


@pytest.mark.slow
def test_script_reference_run_resume_and_report(adb_env, sim_phone, tmp_path, capsys):
    out_dir = tmp_path / "eval"
    argv = ["eval", "mobile-eval", "--script-reference", "--app", "Settings", "--level", "1",
            "--device", sim_phone.serial, "--output", str(out_dir)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "✓ settings-1" in printed and "| Settings | ✓ | 1.00 | 3/4 | 100.0% |" in printed
    assert "Avg. (paper)" in printed
    (record,) = load_results(out_dir / "results.jsonl")
    assert record.success and record.label == "reference"
    assert (out_dir / "report.html").is_file() and (out_dir / "summary.json").is_file()
    assert main(argv) == 0  # resumes: nothing left to run
    assert "resuming: 1 task(s)" in capsys.readouterr().out
    assert len(load_results(out_dir / "results.jsonl")) == 1

    paper = tmp_path / "paper.jsonl"
    from importlib import resources

    paper.write_text((resources.files("eval.mobile_eval") / "data" / "paper_table2.jsonl").read_text())
    assert main(["eval", "report", str(out_dir / "results.jsonl"), "--compare", str(paper), "--no-paper"]) == 0
    compare = (out_dir / "compare.md").read_text()
    assert "| 1 | su | 0.91 | 1.00 | +0.09 |" in compare
    summary = json.loads((out_dir / "summary.json").read_text())
    assert "paper" not in summary and summary["run"]["levels"]["1"]["n"] == 1


def test_usage_errors(adb_env, capsys):
    assert main(["eval", "mobile-eval", "--app", "Notes", "--model", "gpt-4o"]) == 2  # a model, but no endpoint
    assert "--script-reference" in capsys.readouterr().err
    assert main(["eval", "mobile-eval", "--script-reference", "--app", "Snapchat"]) == 3
    assert "no Mobile-Eval app 'Snapchat'" in capsys.readouterr().err
    assert main(["eval"]) == 2
    assert main(["eval", "mobile-eval", "--script-reference", "--param", "address"]) == 2
    assert "NAME=VALUE" in capsys.readouterr().err
    assert main(["eval", "report", "/nonexistent/results.jsonl"]) == 3
    assert "cannot read results file" in capsys.readouterr().err
    assert main(["eval", "annotate", "/nonexistent/run"]) == 3
    assert "not a run folder" in capsys.readouterr().err


def test_several_phones_and_no_device_uses_the_first_and_says_so(adb_env, sim_phones, tmp_path, capsys):
    phones = sim_phones(2)
    out_dir = tmp_path / "eval"
    assert main(["eval", "mobile-eval", "--script-reference", "--task", "settings-1", "--output", str(out_dir)]) == 0
    err = capsys.readouterr().err
    assert all(phone.serial in err for phone in phones) and "--device SERIAL" in err and "--serial" not in err
    ready = err.split("(", 1)[1].split(")", 1)[0].split(", ")
    assert f"using {ready[0]};" in err and ready == sorted(ready)
    (record,) = load_results(out_dir / "results.jsonl")
    assert record.device == ready[0] and record.success


def test_a_wrong_device_is_a_usage_error(adb_env, sim_phone, tmp_path, capsys):
    assert main(["eval", "mobile-eval", "--script-reference", "--task", "settings-1", "--device", "nosuch:1",
                 "--output", str(tmp_path / "eval")]) == 2
    assert "'nosuch:1' is not attached" in capsys.readouterr().err
    assert not (tmp_path / "eval" / "results.jsonl").exists()


@pytest.mark.slow
def test_without_a_model_the_readme_line_runs_the_reference_and_says_so(adb_env, sim_phone, tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)  # the README's line, as written: the default output folder
    assert main(["eval", "mobile-eval", "--task", "settings-1"]) == 0
    captured = capsys.readouterr()
    assert "running the reference solutions (--script-reference)" in captured.err
    (record,) = load_results(tmp_path / "runs" / "mobile-eval" / "results.jsonl")
    assert record.label == "reference" and record.success


@pytest.mark.slow
def test_resume_only_the_same_run(adb_env, sim_phone, llm_server, tmp_path, capsys):
    """A folder of another run is refused with the reason; --force resumes it, --new starts over."""
    out_dir = tmp_path / "eval"
    reference = ["eval", "mobile-eval", "--script-reference", "--task", "settings-1", "--device", sim_phone.serial,
                 "--output", str(out_dir)]
    assert main(reference) == 0
    manifest = json.loads((out_dir / "run.json").read_text())
    assert manifest["run"]["label"] == "reference" and "settings-1" in manifest["tasks"]
    capsys.readouterr()

    # the report of the issue: a model's run "resumed" the reference records and ran nothing
    model_run = ["eval", "mobile-eval", "--task", "settings-1", "--device", sim_phone.serial, "--output", str(out_dir),
                 "--base-url", llm_server.base_url, "--model", "scripted", "--api-key", "test"]
    assert main(model_run) == 2
    err = capsys.readouterr().err
    assert "holds the results of another run" in err
    assert "label: 'reference' there, 'scripted' now" in err and "mode: 'reference' there, 'agent' now" in err
    assert "--output" in err and "--new" in err and "--force" in err
    assert not llm_server.chat_requests  # nothing ran

    assert main([*reference, "--label", "other"]) == 2  # another label is another run too
    assert "label: 'reference' there, 'other' now" in capsys.readouterr().err
    assert main(reference) == 0  # the same run resumes
    assert "resuming: 1 task(s)" in capsys.readouterr().out
    assert main([*reference, "--label", "other", "--force"]) == 0
    assert "--force" in capsys.readouterr().out
    assert len(load_results(out_dir / "results.jsonl")) == 1

    from tests.agent_helpers import DONE, plan_reply

    llm_server.script([plan_reply("Open App (Settings)"), plan_reply("Click text (Wi-Fi)"), plan_reply("Stop"), DONE],
                      default=plan_reply("Stop"))
    assert main([*model_run, "--new"]) == 0
    out = capsys.readouterr().out
    assert "moved to" in out
    (record,) = load_results(out_dir / "results.jsonl")
    assert record.label == "scripted"
    (previous,) = out_dir.glob("previous-*")
    (old,) = load_results(previous / "results.jsonl")
    assert old.label == "reference"  # the earlier results are kept, not deleted


def test_records_without_a_manifest_are_not_resumed(adb_env, tmp_path, capsys):
    from eval.mobile_eval.records import ResultsFile, TaskResult

    out_dir = tmp_path / "eval"
    ResultsFile(out_dir / "results.jsonl").append(TaskResult(
        task_id="settings-1", app="Settings", level=1, label="reference", success=True, judged_by="state",
        agent_steps=3, human_steps=4, cr=1.0))
    assert main(["eval", "mobile-eval", "--script-reference", "--task", "settings-1", "--output", str(out_dir)]) == 2
    assert "no run.json" in capsys.readouterr().err


@pytest.mark.slow
def test_annotate_appends_the_judged_result(adb_env, sim_phone, tmp_path, monkeypatch, capsys):
    out_dir = tmp_path / "eval"
    assert main(["eval", "mobile-eval", "--script-reference", "--task", "settings-2", "--device", sim_phone.serial,
                 "--output", str(out_dir)]) == 0
    (record,) = load_results(out_dir / "results.jsonl")
    monkeypatch.setattr("sys.stdin", io.StringIO("y\nn\nn\n2\n"))
    assert main(["eval", "annotate", record.trajectory_dir, "--results", str(out_dir / "results.jsonl"),
                 "--annotator", "me"]) == 0
    assert "How many of the 4 human steps" in capsys.readouterr().out
    first, judged = load_results(out_dir / "results.jsonl")
    assert first.judged_by == "state" and judged.judged_by == "human"
    assert not judged.success and judged.ps == 0.5 and judged.cr == 0.5
    # the judged record is the same run: same label (the report's column) and phone
    assert (judged.label, judged.device, judged.instruction) == ("reference", sim_phone.serial, first.instruction)


@pytest.mark.slow
def test_agent_mode_through_the_cli(adb_env, sim_phone, llm_server, tmp_path, capsys):
    from tests.agent_helpers import DONE, plan_reply

    llm_server.script([plan_reply("Open App (Settings)"), plan_reply("Click text (Airplane mode)"),
                       plan_reply("Stop"), DONE])
    out_dir = tmp_path / "eval"
    assert main(["eval", "mobile-eval", "--task", "settings-2", "--device", sim_phone.serial, "--output", str(out_dir),
                 "--base-url", llm_server.base_url, "--model", "scripted", "--api-key", "test"]) == 0
    assert "✓ settings-2" in capsys.readouterr().out
    (record,) = load_results(out_dir / "results.jsonl")
    assert record.label == "scripted" and record.success and record.agent_steps == 2 and record.ps == 1.0
    assert sim_phone.phone.state()["airplane_mode"] is True
    assert "Turn on the airplane mode." in llm_server.chat_requests[0].text()
