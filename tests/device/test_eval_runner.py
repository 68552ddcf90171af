"""The Mobile-Eval runner on simulated phones through the real adb server: the agent with a
scripted LLM judged by the phone's state, parallel phones, resuming, a lost phone, step
budgets, and phones whose state cannot be read (judged by a person or an MLLM)."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

from eval.mobile_eval.environment import PhoneEnvironment
from eval.mobile_eval.errors import JudgeError
from eval.mobile_eval.judges import MllmJudge, annotate_run, load_annotation, result_from_annotation
from eval.mobile_eval.metrics import summarize
from eval.mobile_eval.records import ResultsFile
from eval.mobile_eval.runner import EvalConfig, SuiteRunner
from eval.mobile_eval.schema import load_tasks, select_tasks
from mobile_agent.device import open_device
from mobile_agent.settings import AdbSettings
from tests.agent_helpers import DONE, agent_settings, plan_reply

TASKS = load_tasks()
pytestmark = pytest.mark.slow


def task(task_id):
    return select_tasks(TASKS, ids=[task_id])[0]


def devices(adb_server, *serials):
    return [open_device(AdbSettings(server_port=adb_server.port), serial) for serial in serials]


def test_agent_run_judged_by_state_with_a_detour(sim_phone, adb_server, llm_server, tmp_path):
    llm_server.script([
        plan_reply("Open App (Calendar)"),  # the wrong app: an incorrect step
        plan_reply("Open App (Settings)"),
        plan_reply("Click text (Display & brightness)"),
        plan_reply("Click text (Dark mode)"),
        plan_reply("Stop"),
        DONE,
    ])
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path / "runs", llm_server)
    (device,) = devices(adb_server, sim_phone.serial)
    runner = SuiteRunner(settings, [device], EvalConfig(output_dir=tmp_path, label="scripted-llm"))
    records = runner.run([task("settings-1")])
    (record,) = records
    assert record.success and record.judged_by == "state"
    assert sim_phone.phone.state()["theme"] == "dark"
    assert record.agent_steps == 4 and record.human_steps == 4
    assert record.ps == 0.75 and record.cr == 1.0
    assert [s.correct for s in record.steps] == [False, True, True, True]
    assert record.sr_act == 1.0  # step 1 chose the expected operation (Open App), with a wrong argument
    assert record.sr == 0.75
    assert record.prompt_tokens > 0
    assert record.device == sim_phone.serial
    assert Path(record.replay).is_file()
    assert ResultsFile(tmp_path / "results.jsonl").records() == records


def test_a_failure_scores_partial_completion_and_the_budget_holds(sim_phone, adb_server, llm_server, tmp_path):
    llm_server.script([plan_reply("Open App (Settings)")], default=plan_reply("Page down"))
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path / "runs", llm_server)
    (device,) = devices(adb_server, sim_phone.serial)
    runner = SuiteRunner(settings, [device], EvalConfig(output_dir=tmp_path, max_steps=3))
    (record,) = runner.run([task("settings-1")])
    assert not record.success
    assert record.status == "budget_exhausted" and record.agent_steps == 3
    assert record.cr == pytest.approx(1 / 3)  # one of the three reference steps reached
    assert record.ps == pytest.approx(1 / 3)
    assert sim_phone.phone.state()["theme"] == "light"


def test_phones_in_parallel_and_the_suite_resumes(sim_phones, adb_server, tmp_path):
    phones = sim_phones(2)
    settings = agent_settings(adb_server.port, phones[0].serial, tmp_path / "runs")
    chosen = select_tasks(TASKS, apps=["Settings"])
    runner = SuiteRunner(settings, devices(adb_server, *(p.serial for p in phones)),
                         EvalConfig(output_dir=tmp_path, mode="reference"))
    first = runner.run(chosen[:2])
    assert sorted(r.task_id for r in first) == ["settings-1", "settings-2"]
    assert {r.device for r in first} == {p.serial for p in phones}  # one task per phone
    assert all(r.success for r in first)
    again = SuiteRunner(settings, devices(adb_server, phones[0].serial), EvalConfig(output_dir=tmp_path, mode="reference"))
    records = again.run(chosen)
    assert sorted(r.task_id for r in records) == ["settings-1", "settings-2", "settings-3"]
    assert len(list((tmp_path / "trajectories").glob("*/*/trajectory.jsonl"))) == 3


def test_a_lost_phone_is_a_failed_record_and_the_suite_goes_on(sim_phones, adb_server, tmp_path):
    alive, dead = sim_phones(2)
    settings = agent_settings(adb_server.port, alive.serial, tmp_path / "runs")
    phones = devices(adb_server, dead.serial, alive.serial)
    dead.kill()
    chosen = select_tasks(TASKS, apps=["Settings"])
    records = SuiteRunner(settings, phones, EvalConfig(output_dir=tmp_path, mode="reference")).run(chosen)
    assert sorted(r.task_id for r in records) == ["settings-1", "settings-2", "settings-3"]
    crashed = [r for r in records if r.status == "crashed"]
    assert len(crashed) == 1 and crashed[0].device == dead.serial
    assert crashed[0].error["type"].endswith("Error") and not crashed[0].success
    assert all(r.success for r in records if r.device == alive.serial)
    # the crash counts as a failure in the averages (it is never judged later, nor rerun)
    assert crashed[0].judged_by == "harness"
    assert summarize(records).overall.su == Fraction(2, 3)


# --- a phone whose state cannot be read ----------------------------------------------------------


@pytest.fixture
def real_like_phone(adb_server):
    """A simulated phone that, like a real one, has no `simphone` service."""
    from simphone import CommandResult, Phone
    from simphone.server import PhoneServer

    class RealLikePhone(Phone):
        def run(self, argv):
            if argv[:2] in (["dumpsys", "simphone"], ["cmd", "simphone"]):
                return CommandResult(stdout=b"Can't find service: simphone\n", exit_code=0 if argv[0] == "dumpsys" else 20)
            return super().run(argv)

    phone = RealLikePhone()
    server = PhoneServer(phone).start()
    serial = server.serials[0]
    adb_server.connect(serial)
    try:
        yield phone, serial
    finally:
        adb_server.disconnect(serial)
        server.stop()


def test_without_state_the_run_waits_for_a_person(real_like_phone, adb_server, tmp_path):
    phone, serial = real_like_phone
    phone.run(["am", "start", "-n", "com.android.settings/.Settings"])  # left open by someone
    (device,) = devices(adb_server, serial)
    environment = PhoneEnvironment(device)
    assert not environment.stateful
    assert environment.reset(apps=["Settings"]) == "home"
    assert phone.state()["current"]["package"] == "com.android.launcher3"
    runner = SuiteRunner(agent_settings(adb_server.port, serial, tmp_path / "runs"), [device],
                         EvalConfig(output_dir=tmp_path, mode="reference"))
    (pending,) = runner.run([task("settings-2")])
    assert pending.judged_by == "pending" and "annotate" in pending.reasons[0]
    assert pending.agent_steps == 2
    # a person judges it: both steps correct, instruction done
    answers = io.StringIO("y\nmaybe\ny\ny\n")
    out = io.StringIO()
    annotation = annotate_run(pending.trajectory_dir, stdin=answers, stdout=out, human_steps=4, annotator="ann")
    assert "Step 2: Click text (Airplane mode)" in out.getvalue() and "please answer y or n" in out.getvalue()
    assert load_annotation(pending.trajectory_dir) == annotation
    judged = result_from_annotation(task("settings-2"), pending.trajectory_dir, annotation)
    assert judged.judged_by == "human" and judged.success and judged.ps == 1.0 and judged.cr == 1.0


def test_a_person_can_fail_a_run_and_set_its_completion(real_like_phone, adb_server, tmp_path):
    _, serial = real_like_phone
    (device,) = devices(adb_server, serial)
    runner = SuiteRunner(agent_settings(adb_server.port, serial, tmp_path / "runs"), [device],
                         EvalConfig(output_dir=tmp_path, mode="reference"))
    (pending,) = runner.run([task("settings-1")])
    annotation = annotate_run(pending.trajectory_dir, stdin=io.StringIO("y\nn\ny\nn\n3\n"), stdout=io.StringIO(),
                              human_steps=4)
    judged = result_from_annotation(task("settings-1"), pending.trajectory_dir, annotation)
    assert not judged.success and judged.ps == pytest.approx(2 / 3) and judged.cr == 0.75


def test_an_mllm_judge_reads_the_run(real_like_phone, adb_server, llm_server, tmp_path):
    _, serial = real_like_phone
    verdict = {"success": True, "steps": [{"index": 1, "correct": True}, {"index": 2, "correct": False}],
               "reached_human_steps": 4, "reason": "Airplane mode is on."}
    llm_server.script([f"```json\n{json.dumps(verdict)}\n```"])
    (device,) = devices(adb_server, serial)
    settings = agent_settings(adb_server.port, serial, tmp_path / "runs", llm_server)
    runner = SuiteRunner(settings, [device], EvalConfig(output_dir=tmp_path, mode="reference", judge="mllm"))
    (record,) = runner.run([task("settings-2")])
    assert record.judged_by == "mllm" and record.success and record.ps == 0.5
    (request,) = llm_server.chat_requests
    # the screen after the last action (the run ended without a Stop: final.png), not the one before it
    assert request.images() == [(Path(record.trajectory_dir) / "final.png").read_bytes()]
    assert "Click text (Airplane mode)" in request.text() and "Turn on the airplane mode." in request.text()
    llm_server.script(["I think it went well."])
    judge = MllmJudge(settings.planner)
    with pytest.raises(JudgeError):
        judge.judge_run(record.trajectory_dir, instruction="x", human_steps=4)


def test_a_failing_mllm_judge_leaves_the_run_to_a_person(real_like_phone, adb_server, llm_server, tmp_path):
    _, serial = real_like_phone
    llm_server.script(["I think it went well."])  # no JSON verdict
    (device,) = devices(adb_server, serial)
    settings = agent_settings(adb_server.port, serial, tmp_path / "runs", llm_server)
    runner = SuiteRunner(settings, [device], EvalConfig(output_dir=tmp_path, mode="reference", judge="mllm"))
    (record,) = runner.run([task("settings-2")])
    assert record.judged_by == "pending" and record.status != "crashed"
    assert "MLLM judge failed" in record.reasons[0] and "annotate" in record.reasons[1]
    assert Path(record.trajectory_dir, "trajectory.jsonl").is_file()  # there to be annotated


def test_an_mllm_verdict_written_as_strings_is_read_as_meant():
    from eval.mobile_eval.judges import parse_verdict

    verdict = parse_verdict('{"success": "false", "steps": [{"index": 1, "correct": "true"}], "reason": "no"}')
    assert verdict.success is False and verdict.steps[0].correct is True
    with pytest.raises(JudgeError):
        parse_verdict('{"success": "probably", "steps": []}')
