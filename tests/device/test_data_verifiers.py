"""The data engine's verifiers (T3-Agent's query and trajectory judges, the rule pre-check)
on family runs of the simulated phone over adb; the judges are the scripted OpenAI-compatible
server on loopback, asked through the planner's real transport. The state validator is the
ground truth: it overrides a judge, both are recorded, a failing run is never exported."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from eval.data_engine.export import export_runs
from eval.data_engine.judges import JudgeEndpoint, QueryJudge, TrajectoryJudge
from eval.data_engine.verdicts import Verdict, VerdictReplyError, decide, parse_judge_reply
from eval.data_engine.verify import Judges, verification_for, verify_results
from eval.families import FAMILIES
from eval.families.catalog import instance_by_id
from eval.mobile_eval.records import TaskResult, load_results
from eval.mobile_eval.runner import EvalConfig, SuiteRunner
from mobile_agent.agent import run_script
from mobile_agent.device import open_device
from mobile_agent.settings import AdbSettings
from tests.agent_helpers import agent_settings as _settings
from tests.family_planner import wrong_solution as _wrong
from tests.llm_server import Reply

ACCEPT = '{"verdict": "accept", "reason": "clear and done."}'
REJECT = '{"verdict": "reject", "reason": "the last screen does not show the change."}'


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- the reply parser --------------------------------------------------------------------


@pytest.mark.parametrize("reply, accepted", [
    (ACCEPT, True),
    ("```json\n{\"verdict\": \"Reject\", \"reason\": \"two apps could be meant\"}\n```", False),
    ("Looking at the screen... {\"Verdict\": \"PASS\", \"Reason\": \"ok\"} That is my answer.", True),
    ('{"verdict": false, "reason": "a loop at step 3"}', False),
])
def test_a_verdict_is_read_through_fences_and_prose(reply, accepted):
    passed, reason = parse_judge_reply(reply)
    assert passed is accepted and reason


@pytest.mark.parametrize("reply, says", [
    ("I accept this task.", "no JSON object"),
    ('{"verdict": "accept", "reason": "x",}', "not valid JSON"),
    ('{"reason": "fine"}', 'no "verdict"'),
    ('{"verdict": "accept"}', 'no "reason"'),
    ('{"verdict": "accept", "reason": "   "}', 'no "reason"'),
    ('{"verdict": "maybe", "reason": "unsure"}', "neither accept nor reject"),
    ('{"verdict": "accept", "reason": "' + "very " * 2000 + '"}', "too long"),
    ('{"verdict": "accept", "reason": "x"}\n[reply truncated by mobile-agent: 9 more bytes]', "too long"),
])
def test_an_unusable_reply_is_a_clear_error(reply, says):
    with pytest.raises(VerdictReplyError) as info:
        parse_judge_reply(reply)
    assert says in info.value.message


def test_the_prompts_are_package_files():
    files = resources.files("eval.data_engine.prompts")
    for name in ("query_verifier.md", "trajectory_verifier.md"):
        text = files.joinpath(name).read_text(encoding="utf-8")
        assert '"verdict"' in text and "$instruction" in text


def test_a_failing_endpoint_or_garbage_is_a_verdict_that_says_so(llm_server):
    import numpy as np

    screen = np.full((2400, 1080, 3), 200, dtype=np.uint8)
    judge = QueryJudge(JudgeEndpoint(llm_server.planner_settings(model="judge-vlm")))
    llm_server.script([Reply(ACCEPT, usage=(900, 12))])
    accepted = judge.judge("Turn on dark mode.", ["Settings"], screen)
    assert (accepted.passed, accepted.prompt_tokens, accepted.completion_tokens) == (True, 900, 12)
    assert llm_server.chat_requests[-1].image_sizes() == [(576, 1280)]  # downscaled to image_long_side
    llm_server.script([], default=Reply("overloaded", status=500))
    down = judge.judge("Turn on dark mode.", ["Settings"], screen)
    assert down.passed is None and "endpoint failed" in down.reason and "500" in down.reason
    llm_server.script([Reply(body=b"<html>not a completion</html>", content_type="text/html")])
    garbage = judge.judge("Turn on dark mode.", None, None)
    assert garbage.passed is None and "endpoint failed" in garbage.reason and garbage.model == "judge-vlm"


# -- the decision ---------------------------------------------------------------------------


def _v(name, passed, reason="r"):
    return Verdict(verifier=name, passed=passed, reason=reason)


def test_the_state_validator_overrides_the_judges_and_the_disagreement_is_kept():
    judged = decide("t", [_v("state_validator", True), _v("rules", True), _v("query_judge", False),
                          _v("trajectory_judge", False)])
    assert judged.passed and judged.decided_by == ["state_validator", "rules"]
    assert len(judged.disagreements) == 2 and "query_judge rejected" in judged.disagreements[0]
    failed = decide("t", [_v("state_validator", False), _v("rules", True), _v("query_judge", True),
                          _v("trajectory_judge", True)])
    assert not failed.passed and failed.rejected_by == "rejected by state_validator"
    # a feasible query whose run failed is no disagreement; the trajectory judge's accept is
    assert [d.split()[0] for d in failed.disagreements] == ["trajectory_judge"]
    looping = decide("t", [_v("state_validator", True), _v("rules", False)])
    assert not looping.passed and looping.rejected_by == "rejected by rules"


def test_without_state_every_judge_must_accept():
    assert decide("t", [_v("rules", True), _v("query_judge", True), _v("trajectory_judge", True)]).passed
    unusable = decide("t", [_v("rules", True), _v("query_judge", True), _v("trajectory_judge", None)])
    assert not unusable.passed and "trajectory_judge" in unusable.rejected_by
    assert not decide("t", []).passed
    alone = decide("t", [_v("rules", True)])  # no state, no judge: nothing saw the goal
    assert not alone.passed and "no readable state" in alone.reason


# -- on the simulated phone --------------------------------------------------------------------

def _judge(request_json: dict) -> str | Reply:
    """A scripted judge: rejects the trajectory of settings-theme runs (the validator passes
    them: a disagreement), answers prose to settings-airplane's query, accepts the rest."""
    text = "\n".join(p.get("text", "") for m in request_json["messages"] for p in m["content"] if p["type"] == "text")
    trajectory = "recorded run" in text
    if "airplane" in text.lower() and not trajectory:
        return "The task looks fine to me."  # no JSON: an unusable reply
    if "Display & brightness" in text and trajectory:
        return REJECT
    return ACCEPT


@pytest.mark.slow
def test_judges_are_recorded_and_the_validator_decides(sim_phone, adb_server, tmp_path, llm_server):
    settings = _settings(adb_server.port, sim_phone.serial, tmp_path / "runs")
    device = open_device(AdbSettings(server_port=adb_server.port), sim_phone.serial)
    good = [FAMILIES["settings-theme"].instance(0), FAMILIES["settings-airplane"].instance(0)]
    wrong = _wrong(FAMILIES["notes-create"].instance(5)).model_copy(update={"id": "notes-create-s5-1"})
    SuiteRunner(settings, [device], EvalConfig(output_dir=tmp_path, mode="reference")).run(good + [wrong])
    llm_server.script([], default=_judge)
    endpoint = JudgeEndpoint(llm_server.planner_settings())
    judges = Judges(QueryJudge(endpoint), TrajectoryJudge(endpoint), installed_apps=["Settings", "Notes"])
    verified = {v.task_id: v for v in verify_results(tmp_path, judges)}
    assert len(llm_server.chat_requests) == 6  # a query and a trajectory question per run
    query = next(r for r in llm_server.chat_requests if "recorded run" not in r.text())
    assert "Notes, Settings" in query.text() and len(query.images()) == 1  # the apps and the first screen
    trajectory = next(r for r in llm_server.chat_requests if "recorded run" in r.text())
    assert "action: Open App (Settings)" in trajectory.text() and 1 <= len(trajectory.images()) <= 3

    theme = verified[good[0].id]
    assert theme.passed and theme.verdict("trajectory_judge").passed is False  # overridden, kept
    assert theme.disagreements and "state validator passed" in theme.disagreements[0]
    airplane = verified[good[1].id]
    assert airplane.passed and airplane.verdict("query_judge").passed is None
    assert "unusable reply" in airplane.verdict("query_judge").reason
    failing = verified["notes-create-s5-1"]
    assert not failing.passed and failing.verdict("trajectory_judge").passed is True and failing.disagreements

    # verified again with the same judges: kept, not asked again
    verify_results(tmp_path, judges)
    assert len(llm_server.chat_requests) == 6
    records = load_results(tmp_path / "results.jsonl")
    summary = export_runs(records, {r.task_id: instance_by_id(r.task_id) for r in records}, tmp_path / "ds")
    runs = {r["id"]: r for r in _lines(tmp_path / "ds" / "runs.jsonl")}
    assert set(runs) == {t.id for t in good} and summary.rejected == {"failed": 1}
    kept = runs[good[0].id]["verifiers"]
    assert kept["passed"] and kept["decided_by"] == ["state_validator", "rules"]
    assert {v["verifier"]: v["passed"] for v in kept["verdicts"]} == {
        "state_validator": True, "rules": True, "query_judge": True, "trajectory_judge": False}
    assert kept["disagreements"]


@pytest.mark.slow
def test_the_rules_reject_a_looping_run_the_validator_passed(sim_phone, adb_server, tmp_path):
    """A real run on the phone: Home on the home screen changes nothing; Open App (Settings)
    again on the same home screen is a loop. Its record says the validator passed it."""
    settings = _settings(adb_server.port, sim_phone.serial, tmp_path / "runs")
    device = open_device(AdbSettings(server_port=adb_server.port), sim_phone.serial)
    script = "Home\nOpen App (Settings)\nHome\nOpen App (Settings)\nBack\n"
    run = run_script(settings, script, device=device, output_dir=tmp_path / "loop", instruction="Open Settings.")
    task = FAMILIES["settings-theme"].instance(3)
    record = TaskResult(task_id=task.id, app=task.app, level=task.level, success=True, judged_by="state",
                        agent_steps=5, human_steps=task.human_steps, cr=1.0, reasons=["✓ theme is dark"],
                        trajectory_dir=str(run.trajectory_dir), instruction=task.render())
    verification = verification_for(record)
    rules = verification.verdict("rules")
    assert rules is not None and not rules.passed and not verification.passed
    assert rules.details == {"pointless": [1], "loop": [4]}, rules.details
    summary = export_runs([record], {task.id: task}, tmp_path / "ds")
    assert summary.exported == 0 and summary.rejected == {"rejected by rules": 1}
    assert _lines(tmp_path / "ds" / "runs.jsonl") == []


@pytest.mark.slow
def test_cli_collect_with_judges(adb_server, sim_phone, tmp_path, monkeypatch, llm_server, capsys):
    from mobile_agent.cli import main

    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    for name in ("BASE_URL", "API_KEY", "MODEL"):
        monkeypatch.delenv(f"MOBILE_AGENT_PLANNER__{name}", raising=False)
    out = tmp_path / "data"
    assert main(["data", "collect", "--family", "settings-theme", "--judges", "--device", sim_phone.serial,
                 "--output", str(out)]) == 2  # no endpoint for the judges: said before any run
    assert "needs a model endpoint" in capsys.readouterr().err and not (out / "results.jsonl").exists()
    llm_server.script([], default=Reply(ACCEPT))
    argv = ["data", "collect", "--family", "settings-theme", "--family", "gmail-send-empty", "--device", sim_phone.serial,
            "--judge-base-url", llm_server.base_url, "--judge-api-key", "k-judge", "--judge-model", "judge-vlm",
            "--output", str(out)]
    assert main(argv) == 0
    assert {r.json["model"] for r in llm_server.chat_requests} == {"judge-vlm"} and len(llm_server.chat_requests) == 4
    runs = _lines(out / "dataset" / "runs.jsonl")
    assert len(runs) == 2
    for run in runs:
        names = {v["verifier"]: (v["passed"], v["model"]) for v in run["verifiers"]["verdicts"]}
        assert names["query_judge"] == (True, "judge-vlm") and names["trajectory_judge"] == (True, "judge-vlm")
    # data verify: a huge reply is recorded as unusable; without --judges the saved judges stay
    llm_server.script([], default='{"verdict": "accept", "reason": "' + "long " * 3000 + '"}')
    assert main(["data", "verify", str(out), "--again", "--judge-base-url", llm_server.base_url]) == 0
    saved = json.loads(next((out / "trajectories").rglob("verification.json")).read_text())
    query = next(v for v in saved["verdicts"] if v["verifier"] == "query_judge")
    assert query["passed"] is None and "too long" in query["reason"] and saved["passed"]
    assert main(["data", "verify", str(tmp_path / "nothing")]) == 2


@pytest.mark.slow
def test_self_collected_data_judged_at_the_run_endpoint(adb_server, sim_phone, tmp_path, monkeypatch, llm_server):
    """data collect --model/--base-url: a model's runs (the scripted planner), judged by the same
    endpoint when no --judge-* flag names another."""
    from mobile_agent.cli import main
    from tests.family_planner import FamilyPlanner

    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    for name in ("BASE_URL", "API_KEY", "MODEL"):
        monkeypatch.delenv(f"MOBILE_AGENT_PLANNER__{name}", raising=False)
    planner = FamilyPlanner([FAMILIES["settings-theme"].instance(1)])

    def serve(request_json: dict) -> str:
        text = "\n".join(p.get("text", "") for m in request_json["messages"]
                         for p in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}]))
        return ACCEPT if '"verdict"' in text else planner(request_json)

    llm_server.script([], default=serve)
    out = tmp_path / "self"
    assert main(["data", "collect", "--family", "settings-theme", "--seeds", "1:2", "--device", sim_phone.serial,
                 "--model", "self-vlm", "--base-url", llm_server.base_url, "--api-key", "k-run", "--judges",
                 "--output", str(out)]) == 0
    judged = [r for r in llm_server.chat_requests if '"verdict"' in r.text()]
    assert len(judged) == 2 and {r.json["model"] for r in judged} == {"self-vlm"}
    assert {r.headers.get("authorization") for r in judged} == {"Bearer k-run"}
    (run,) = _lines(out / "dataset" / "runs.jsonl")
    verdicts = {v["verifier"]: v["passed"] for v in run["verifiers"]["verdicts"]}
    assert verdicts == {"state_validator": True, "rules": True, "query_judge": True, "trajectory_judge": True}
