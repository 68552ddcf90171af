"""Flows: the format (its shipped JSON Schema, loading errors) and the suite in tests/flows/
run by `mobile-agent test` on the simulated phone through the real adb server, with the
scripted model (tests/flow_model.py) on loopback. Green flows pass, the three flows of
tests/flows/failing fail with a clear message; the JUnit XML validates against the schema
Jenkins publishes (tests/fixtures/junit/junit-10.xsd, its source named there)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
import yaml

from mobile_agent.cli import main
from mobile_agent.testing.flows import FlowError, flow_json_schema, parse_flow, shipped_schema, substitute
from tests.flow_model import flow_model
from tests.video_probe import probe

ROOT = Path(__file__).resolve().parents[2]
FLOWS = ROOT / "tests" / "flows"
XSD = ROOT / "tests" / "fixtures" / "junit" / "junit-10.xsd"
GREEN = sorted((FLOWS / "green").glob("*.yaml"))
FAILING = sorted((FLOWS / "failing").glob("*.yaml"))


def test_the_shipped_schema_is_the_models_schema_and_every_flow_validates():
    assert shipped_schema() == flow_json_schema(), "regenerate: python -m mobile_agent.testing.flows"
    validator = jsonschema.Draft202012Validator(shipped_schema())
    for path in GREEN + FAILING:
        validator.validate(yaml.safe_load(path.read_text()))
        parse_flow(path.read_text(), source=path)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"name": "x", "steps": [{"asert": "typo"}]})


def test_the_suite_covers_ten_flows_over_five_apps():
    assert len(GREEN) >= 10 and len(FAILING) == 3
    apps = set()
    for path in GREEN:
        apps |= set(re.findall(r"Open App \(([^)]+)\)", path.read_text()))
    assert len(apps) >= 5, apps


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\nsteps:\n  - asert: typo\n", "step 1: a step has exactly one of run, do, assert"),
        ("name: x\nsteps:\n  - assert_visible: A\n    do: Back\n", "step 1: a step has exactly one of"),
        ("name: x\nsteps:\n  - assert_visible: '{{nope}}'\n", "step 1: unknown variable {{nope}}"),
        ("name: x\nsteps:\n  - assert_visible: '{{later.a}}'\n  - extract: {instruction: a, fields: {a: str}, save_as: later}\n",
         "unknown variable {{later.a}}"),
        ("name: x\nsteps: []\n", "steps: List should have at least 1 item"),
        ("name: x\nsteps:\n  - extract: {instruction: a, fields: {a: complex}}\n", "step 1 (extract)"),
        ("name: [unclosed\n", "is not valid YAML"),
        ("- just a list\n", "must be a mapping"),
    ],
)
def test_a_flow_that_does_not_load_says_where_and_why(text, message):
    with pytest.raises(FlowError) as failed:
        parse_flow(text)
    assert message in failed.value.message


def test_variables_and_secrets():
    values = {"title": "Milk", "order": {"total": "US$9", "items": ["a"]}}
    assert substitute("Add {{title}} ({{ order.total }})", values) == "Add Milk (US$9)"
    assert substitute("{{order.items}}", values) == '["a"]'
    assert substitute("Type ({{secret:pin}})", values) == "Type ({{secret:pin}})"  # left for the Type operation
    flow = parse_flow("name: x\nvars: {who: me}\nsteps:\n  - run: 'Sign in as {{who}} with {{secret:password}}'\n")
    assert flow.vars == {"who": "me"}


def _suite(adb_server, sim_phone, llm, tmp_path, capsys, *flows: Path, extra: tuple[str, ...] = ()) -> tuple[int, str, Path]:
    junit = tmp_path / "junit.xml"
    code = main(["test", *map(str, flows), "--serial", sim_phone.serial, "--junit", str(junit),
                 "--output", str(tmp_path / "runs"), "--base-url", llm.base_url, "--api-key", "test-key", *extra])  # fmt: skip
    out = capsys.readouterr().out
    return code, out, junit


def _valid_junit(path: Path) -> ET.Element:
    import xmlschema

    xmlschema.XMLSchema(str(XSD)).validate(str(path))  # raises on any departure from the schema
    return ET.parse(path).getroot()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_green_flows_pass_and_a_rerun_replays_the_cached_plan(adb_server, sim_phone, llm_server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    llm_server.default = flow_model
    code, out, junit = _suite(adb_server, sim_phone, llm_server, tmp_path, capsys, FLOWS / "green")
    assert code == 0, out
    assert out.count("PASS  ") == len(GREEN) and "FAIL" not in out
    assert f"suite: {len(GREEN)} passed, 0 failed" in out
    root = _valid_junit(junit)
    assert root.get("tests") == str(len(GREEN)) and root.get("failures") == "0"
    assert sim_phone.phone.dark_mode  # the run: step did it on the phone
    summary = json.loads((tmp_path / "runs" / "suite.json").read_text())
    assert summary["passed"] == len(GREEN)
    for flow in summary["flows"]:
        assert Path(flow["report"]).is_file()  # one report per flow
        lines = (Path(flow["trajectory_dir"]) / "trajectory.jsonl").read_text().splitlines()
        assert json.loads(lines[0])["mode"] == "flow" and json.loads(lines[-1])["type"] == "result"
    planning = [r for r in llm_server.requests if "The user's instruction is" in r.text()]
    assert len(planning) == 4  # three operations and the Stop: the model planned the first run

    # the same flow again, green before: replayed from the plan cache, no planning call
    sim_phone.phone.reset()
    before = len(llm_server.requests)
    code, out, _ = _suite(adb_server, sim_phone, llm_server, tmp_path, capsys, FLOWS / "green" / "settings-dark-mode.yaml")
    assert code == 0, out
    assert "replayed 4 steps from the plan cache of an earlier green run" in out  # 3 operations and the Stop
    again = llm_server.requests[before:]
    assert not [r for r in again if "The user's instruction is" in r.text()]
    assert sim_phone.phone.dark_mode


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_failing_flows_fail_clearly(adb_server, sim_phone, llm_server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    llm_server.default = flow_model
    code, out, junit = _suite(adb_server, sim_phone, llm_server, tmp_path, capsys, FLOWS / "failing")
    assert code == 1, out
    assert out.count("FAIL  ") == 3 and "PASS" not in out and "suite: 0 passed, 3 failed" in out
    assert "step 2 (assert): not true: 'it is snowing in Hangzhou'; the model: The forecast says rain" in out
    assert "step 2 (assert_visible): 'Teleportation options' is not on the screen" in out
    assert "the model's answer to 'the temperature now in degrees Celsius' did not validate after 3 attempts" in out
    assert "temperature_c: Input should be a valid integer" in out
    assert out.count("      screenshot: ") == 3  # the trajectory step of each failure
    root = _valid_junit(junit)
    assert root.get("failures") == "3"
    for case in root.iter("testcase"):
        failure = case.find("failure")
        assert failure is not None and failure.get("message")
        system_out = case.find("system-out").text
        shot = re.search(r"screenshot: (\S+)", system_out).group(1)
        assert Path(shot).is_file() and f"[[ATTACHMENT|{shot}]]" in system_out
        assert Path(re.search(r"report: (\S+)", system_out).group(1)).is_file()
    # the flow stopped at its failure: the step after the false assertion never ran
    for path in (tmp_path / "runs").glob("*/flow.json"):
        assert [s["number"] for s in json.loads(path.read_text())["steps"]] == [1, 2]


def test_a_bad_flow_file_is_a_usage_error(adb_server, sim_phone, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nsteps:\n  - asert: typo\n")
    assert main(["test", str(bad), "--serial", sim_phone.serial]) == 2
    assert "step 1: a step has exactly one of" in capsys.readouterr().err
    assert main(["test", str(tmp_path / "missing.yaml"), "--serial", sim_phone.serial]) == 2
    assert "cannot read the flow" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_record_keeps_a_video_as_long_as_the_flow_linked_everywhere(adb_server, sim_phone, llm_server, tmp_path, capsys):
    llm_server.default = flow_model
    flow = FLOWS / "green" / "gmail-read-mail.yaml"
    code, out, junit = _suite(adb_server, sim_phone, llm_server, tmp_path, capsys, flow, extra=("--record",))
    assert code == 0, out
    result = json.loads((tmp_path / "runs" / "suite.json").read_text())["flows"][0]
    video = Path(result["video"])
    assert video.name == "video.mp4" and video.parent == Path(result["trajectory_dir"])
    assert f"video: {video.resolve()}" in out
    duration, frames, tool = probe(video)
    assert abs(duration - result["seconds"]) <= 0.2 * result["seconds"], (duration, result["seconds"], tool)
    assert frames >= len(result["steps"])
    assert 'id="video-link"' in Path(result["report"]).read_text() and '"video": "video.mp4"' in Path(result["report"]).read_text()
    assert f"[[ATTACHMENT|{video.resolve()}]]" in junit.read_text()


def test_device_any_runs_on_a_ready_phone(adb_server, sim_phone, tmp_path, capsys):
    code = main(["test", str(FLOWS / "green" / "home-screen.yaml"), "--device", "any", "--output", str(tmp_path),
                 "--json"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    suite = json.loads(captured.out)
    assert suite["passed"] == 1 and suite["flows"][0]["steps"][0]["kind"] == "assert_visible"
    assert "running 1 flow on " in captured.err  # the progress goes to stderr with --json


def test_a_secret_is_typed_by_the_flow_and_never_written_out(adb_server, sim_phone, tmp_path):
    from pydantic import SecretStr

    from mobile_agent.device import open_device
    from mobile_agent.testing import FlowRunner
    from tests.agent_helpers import agent_settings

    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path / "runs")
    settings = settings.model_copy(update={"agent": settings.agent.model_copy(
        update={"named_secrets": {"title": SecretStr("Zanzibar7")}})})  # fmt: skip
    flow = parse_flow(
        "name: a secret title\nsteps:\n"
        "  - do: |\n      Open App (Notes)\n      Click icon (orange plus button, bottom right)\n"
        "      Type ({{secret:title}})\n"
        "  - assert_not_visible: '{{secret:title}}'\n"  # the placeholder itself is never on screen
    )
    result = FlowRunner(settings, open_device(settings.adb, sim_phone.serial), output_dir=tmp_path / "runs").run(flow)
    assert result.passed, result.message
    assert "Zanzibar7" in json.dumps(sim_phone.phone.state())  # typed on the phone
    # a failing assertion lists what the screen shows, the secret among it: redacted everywhere
    from mobile_agent.testing import Phone

    assert any("Zanzibar7" in t for t in Phone.open(settings).texts())  # OCR reads it: there is something to hide
    failing = parse_flow("name: fails on the secret's screen\nstart_home: false\nsteps:\n  - assert_visible: Nowhere\n")
    failed = FlowRunner(settings, open_device(settings.adb, sim_phone.serial), output_dir=tmp_path / "runs").run(failing)
    assert not failed.passed and "the screen shows" in failed.message and "Zanzibar7" not in failed.message
    import numpy as np
    from PIL import Image

    evidence = Path(re.search(r"screenshot: (\S+\.png)", failed.message).group(1))
    kept = np.asarray(Image.open(evidence).convert("RGB"))
    assert not any("Zanzibar" in line.text for line in Phone.open(settings).reader.ocr(kept))  # blacked out
    from mobile_agent.testing.junit import junit_xml
    from mobile_agent.testing.runner import SuiteResult

    assert b"Zanzibar7" not in junit_xml(SuiteResult([result, failed], 0.0, 1.0))
    written = [p for p in (tmp_path / "runs").rglob("*") if p.suffix in (".json", ".jsonl", ".html")]
    assert written and not [p for p in written if "Zanzibar7" in p.read_text(errors="replace")]


@pytest.mark.timeout(300)
def test_a_red_flow_forgets_the_plans_its_runs_taught_in_its_own_cache_namespace(adb_server, sim_phone, llm_server, tmp_path):
    """A flow whose run: step completed but a later step failed leaves no plan in the cache,
    also where plans are kept per principal (a REST task's ``cache.namespace``,
    ``server.runner.cache_namespace``): only green flows are ever replayed."""
    from mobile_agent.device import open_device
    from mobile_agent.replay import PlanStore, default_cache_url
    from mobile_agent.testing import FlowRunner
    from tests.agent_helpers import agent_settings

    llm_server.default = flow_model
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    settings = settings.model_copy(update={"cache": settings.cache.model_copy(update={"namespace": "token:alice"})})
    device = open_device(settings.adb, sim_phone.serial)
    green = parse_flow("name: green\nsteps:\n  - run: Turn on the dark mode\n  - assert_visible: Dark mode\n")
    assert FlowRunner(settings, device, output_dir=tmp_path / "green").run(green).passed
    url = default_cache_url(tmp_path / "green")
    assert PlanStore(url, "token:alice").list() and not PlanStore(url, "").list()  # the run: step taught alice's plans

    sim_phone.phone.reset()
    red = parse_flow("name: red\nsteps:\n  - run: Turn on the dark mode\n  - assert_visible: Teleportation options\n")
    result = FlowRunner(settings, device, output_dir=tmp_path / "red").run(red)
    assert result.status == "failed" and result.steps[0].passed, result.message
    assert PlanStore(default_cache_url(tmp_path / "red"), None).list() == []


def test_a_phone_another_run_holds_is_refused_not_shared(adb_server, sim_phone, tmp_path, capsys, monkeypatch):
    """One phone, one run (``mobile_agent.device.PhoneLease``): `mobile-agent test` on a phone a
    REST task holds is refused at once, as `mobile-agent run` is; no flow step runs on it."""
    from mobile_agent.device import PhoneLease
    from mobile_agent.settings import AdbSettings

    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    with PhoneLease(AdbSettings(server_port=adb_server.port), sim_phone.serial, "REST task 7 of alice"):
        code = main(["test", str(FLOWS / "green" / "home-screen.yaml"), "--serial", sim_phone.serial,
                     "--output", str(tmp_path / "runs")])  # fmt: skip
    assert code == 3
    assert f"phone {sim_phone.serial} is busy" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()  # no flow started
    assert main(["test", str(FLOWS / "green" / "home-screen.yaml"), "--serial", sim_phone.serial,
                 "--output", str(tmp_path / "runs")]) == 0  # fmt: skip  (released: the phone is free again)
