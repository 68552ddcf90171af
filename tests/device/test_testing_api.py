"""mobile_agent.testing's Python API on the simulated phone through the real adb server:
perception-only assertions (no model endpoint configured at all), and the model's checks
and extraction against the scripted OpenAI-compatible server (what it was sent is read
back from the recorded requests)."""

from __future__ import annotations

import json
import threading
import time

import pytest
from PIL import Image
from pydantic import BaseModel

from mobile_agent.planner.transport import OPENAI_BASE_URL
from mobile_agent.settings import PlannerSettings
from mobile_agent.testing import (
    Agent,
    AnswerSchema,
    CheckFailedError,
    ExtractionError,
    Phone,
    ScreenAssertionError,
    answer_mode,
)
from mobile_agent.testing.judge import read_json
from tests.agent_helpers import agent_settings
from tests.llm_fixtures import Reply

pytestmark = [pytest.mark.timeout(300)]


def _open(sim_phone, label: str) -> None:
    sim_phone.tap_element(f"{label} app icon")


class Forecast(BaseModel):
    city: str
    temperature_c: int
    days: list[str]


# -- perception only ---------------------------------------------------------------------------


def test_assertions_need_no_model_and_name_the_screen_on_failure(adb_server, sim_phone, tmp_path):
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path)
    assert not settings.planner.configured  # no endpoint: these checks never ask a model
    phone = Phone.open(settings)
    _open(sim_phone, "Settings")

    found = phone.assert_visible("Display & brightness")
    truth = sim_phone.element("Display & brightness")["box"]  # ground truth over ADB
    assert truth[0] <= found.point[0] <= truth[2] and truth[1] <= found.point[1] <= truth[3]
    phone.assert_not_visible("Teleportation options")

    with pytest.raises(ScreenAssertionError) as failed:
        phone.assert_visible("Teleportation options")
    error = failed.value
    assert isinstance(error, AssertionError)
    assert "'Teleportation options' is not on the screen" in str(error)
    assert "'Wi-Fi'" in str(error) and "'Bluetooth'" in str(error)  # what the screen did show
    assert error.screenshot_path is not None and error.screenshot_path.is_file()
    assert str(error.screenshot_path) in str(error)
    with Image.open(error.screenshot_path) as shot:
        assert shot.size == (1080, 2400)

    with pytest.raises(ScreenAssertionError, match="'Bluetooth' is on the screen at"):
        phone.assert_not_visible("Bluetooth")


def test_assert_icon_finds_the_icon_and_fails_on_a_screen_without_it(adb_server, sim_phone, tmp_path):
    phone = Phone.open(agent_settings(adb_server.port, sim_phone.serial, tmp_path))
    _open(sim_phone, "Notes")
    found = phone.assert_icon("orange plus button", "bottom right")
    box = sim_phone.element("orange plus button: new note")["box"]
    assert box[0] <= found.point[0] <= box[2] and box[1] <= found.point[1] <= box[3]
    with pytest.raises(ScreenAssertionError, match="no icon like 'orange plus button' top left"):
        phone.assert_icon("orange plus button", "top left")


def test_wait_for_text_polls_until_the_screen_shows_it(adb_server, sim_phone, tmp_path):
    phone = Phone.open(agent_settings(adb_server.port, sim_phone.serial, tmp_path))
    timer = threading.Timer(1.0, _open, (sim_phone, "Weather"))
    timer.start()
    try:
        started = time.monotonic()
        phone.wait_for_text("5-day forecast", timeout=15)
        assert time.monotonic() - started >= 0.9  # it waited for the app, it did not answer early
    finally:
        timer.cancel()
    with pytest.raises(ScreenAssertionError, match="'Snowstorm' did not appear on the screen within 1 s"):
        phone.wait_for_text("Snowstorm", timeout=1)


# -- the model's answers -------------------------------------------------------------------------


def _agent(adb_server, sim_phone, tmp_path, llm, **planner) -> Agent:
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm)
    if planner:
        settings = settings.model_copy(update={"planner": settings.planner.model_copy(update=planner)})
    return Agent(settings)


def test_check_returns_the_verdict_reason_and_the_judged_screenshot(adb_server, sim_phone, llm_server, tmp_path):
    _open(sim_phone, "Weather")
    llm_server.script(['```json\n{"passed": true, "reason": "The header reads Hangzhou."}\n```',
                       '{"passed": false, "reason": "No snow is forecast."}'])  # fmt: skip
    agent = _agent(adb_server, sim_phone, tmp_path, llm_server)
    verdict = agent.check("the forecast is for Hangzhou")
    assert verdict.passed and verdict.reason == "The header reads Hangzhou."
    assert verdict.screenshot_path is not None and verdict.screenshot_path.is_file()
    request = llm_server.requests[-1]
    assert "Statement: the forecast is for Hangzhou" in request.text()
    assert len(request.images()) == 1 and '"passed"' in request.text()  # the schema is in the prompt
    with pytest.raises(CheckFailedError, match="not true: 'snow is forecast'; the model: No snow is forecast"):
        agent.verify("snow is forecast")


def test_extract_in_the_prompt_dialect_validates_and_retries_with_the_errors(adb_server, sim_phone, llm_server, tmp_path):
    _open(sim_phone, "Weather")
    llm_server.script([
        '{"city": "Hangzhou", "temperature_c": "warm", "days": ["Tue"]}',  # not an integer
        'Here it is: {"city": "Hangzhou", "temperature_c": 21, "days": ["Tue", "Wed"]}',
    ])  # fmt: skip
    agent = _agent(adb_server, sim_phone, tmp_path, llm_server, base_url=llm_server.base_url)
    assert agent.judge.mode == "prompt"
    forecast = agent.extract("the city, the temperature now and the forecast's days", schema=Forecast)
    assert forecast == Forecast(city="Hangzhou", temperature_c=21, days=["Tue", "Wed"])
    first, second = llm_server.requests[-2:]
    assert "temperature_c" in first.text() and "response_format" not in first.json
    retry = second.messages[-1]["content"]
    assert "does not validate" in retry and "temperature_c" in retry and "integer" in retry


def test_extract_fails_clearly_after_the_bound(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script(["I cannot tell.", '{"city": 3}', '{"city": "X"}', "never asked"])
    agent = _agent(adb_server, sim_phone, tmp_path, llm_server)
    with pytest.raises(ExtractionError) as failed:
        agent.extract("the forecast", schema=Forecast, attempts=3)
    error = failed.value
    assert error.attempts == 3 and len(llm_server.requests) == 3  # bounded: the 4th answer is never asked for
    assert "did not validate after 3 attempts" in error.message
    assert any("temperature_c" in p for p in error.problems)


def test_extract_by_function_calling_sends_the_schema_as_the_function(adb_server, sim_phone, llm_server, tmp_path):
    _open(sim_phone, "Weather")
    arguments = json.dumps({"city": "Hangzhou", "temperature_c": 21, "days": ["Tue"]})
    llm_server.script([Reply(tool_calls=(("answer", arguments),))])
    agent = _agent(adb_server, sim_phone, tmp_path, llm_server, dialect="function_calling")
    assert agent.judge.mode == "tools"
    assert agent.extract("the forecast", schema=Forecast).temperature_c == 21
    body = llm_server.requests[-1].json
    function = body["tools"][0]["function"]
    assert function["name"] == "answer" and set(function["parameters"]["properties"]) == {"city", "temperature_c", "days"}
    assert body["tool_choice"] == {"type": "function", "function": {"name": "answer"}}


def test_json_mode_on_openai_and_the_schema_in_the_request(llm_server):
    assert answer_mode(PlannerSettings(base_url=None, model="gpt-4o")) == "json"
    assert answer_mode(PlannerSettings(base_url=OPENAI_BASE_URL + "/", model="gpt-4o")) == "json"
    assert answer_mode(PlannerSettings(base_url="http://localhost:11434/v1", model="qwen2.5vl:7b")) == "prompt"
    assert answer_mode(PlannerSettings(base_url="http://localhost:8000/v1", model="UI-TARS-1.5-7B")) == "prompt"
    assert answer_mode(PlannerSettings(base_url="http://x/v1", model="m", dialect="function_calling")) == "tools"

    from mobile_agent.testing import ModelJudge

    judge = ModelJudge(llm_server.planner_settings())
    judge.mode = "json"  # the scripted server stands in for OpenAI's endpoint
    llm_server.script(['{"city": "Oslo", "temperature_c": -2, "days": []}'])
    frame = _Frame()
    assert judge.extract("the forecast", AnswerSchema.of_model(Forecast), frame).city == "Oslo"
    sent = llm_server.requests[-1].json["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "Forecast"
    assert sent["json_schema"]["schema"]["required"] == ["city", "temperature_c", "days"]


def test_a_json_schema_answer_and_reading_json_out_of_prose():
    schema = AnswerSchema.of_json_schema({"type": "object", "properties": {"total": {"type": "string"}},
                                          "required": ["total"]})  # fmt: skip
    assert schema.validate({"total": "US$9"}) == {"total": "US$9"}
    with pytest.raises(ValueError, match="'total' is a required property"):
        schema.validate({})
    assert read_json('Sure.\n```json\n{"a": [1, 2]}\n```') == {"a": [1, 2]}
    assert read_json('The answer is {"a": 1} as asked') == {"a": 1}
    with pytest.raises(ValueError):
        read_json("no json here")


def test_wait_for_asks_again_only_when_the_screen_changed(adb_server, sim_phone, llm_server, tmp_path):
    llm_server.script(['{"passed": false, "reason": "the home screen"}', '{"passed": true, "reason": "Weather is open"}'])
    agent = _agent(adb_server, sim_phone, tmp_path, llm_server)
    timer = threading.Timer(1.5, _open, (sim_phone, "Weather"))
    timer.start()
    try:
        verdict = agent.wait_for("the weather app is open", timeout=20)
    finally:
        timer.cancel()
    assert verdict.passed and verdict.reason == "Weather is open"
    assert len(llm_server.requests) == 2  # the unchanged home screen was judged once
    llm_server.script(['{"passed": false, "reason": "still sunny"}'])
    with pytest.raises(CheckFailedError, match="still not true after 1 s"):
        agent.wait_for("it snows", timeout=1)


class _Frame:
    """A plain frame for the judge alone (it only encodes the pixels)."""

    def __init__(self) -> None:
        import numpy as np

        self.pixels = np.full((240, 108, 3), 200, dtype=np.uint8)
        self.width, self.height = 108, 240


def test_a_secret_on_screen_is_blacked_out_in_the_image_the_model_judges(adb_server, sim_phone, llm_server, tmp_path):
    import io

    import numpy as np
    from PIL import Image
    from pydantic import SecretStr

    from mobile_agent.agent import run_script

    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server)
    settings = settings.model_copy(update={"agent": settings.agent.model_copy(
        update={"named_secrets": {"title": SecretStr("Zanzibar7")}})})  # fmt: skip
    typed = run_script(settings, "Open App (Notes)\nClick icon (orange plus button, bottom right)\nType ({{secret:title}})\n")
    assert typed.status.value == "completed", typed.reason
    agent = Agent(settings)
    assert any("Zanzibar7" in t for t in agent.phone.texts())  # on the phone's screen
    llm_server.script(['{"passed": true, "reason": "a note is being written"}'])
    assert agent.check("a note is being written").passed
    (image,) = llm_server.requests[-1].images()
    seen = np.asarray(Image.open(io.BytesIO(image)).convert("RGB").resize((1080, 2400)))
    assert not any("Zanzibar" in line.text for line in agent.phone.reader.ocr(seen))  # the model never saw it


def test_a_secret_wider_than_its_field_is_hidden_as_a_run_hides_it(adb_server, sim_phone, tmp_path):
    """The testing Phone masks with the run's own step (``agent.mask.SecretMask``): a value too long
    for the title field scrolls (OCR reads only its end), and the field that holds it is blacked
    out whole in what the model judges and what evidence keeps, as in a run's frames."""
    import numpy as np
    from pydantic import SecretStr

    from mobile_agent.agent import run_script
    from mobile_agent.agent.mask import screen_nodes

    secret = "Quokka7731ZzPangolin4896Wombat52Kestrel"  # tests/farm/test_secret_mask.py's LONG_SECRET
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path)
    settings = settings.model_copy(update={"agent": settings.agent.model_copy(
        update={"named_secrets": {"title": SecretStr(secret)}})})  # fmt: skip
    typed = run_script(settings, "Open App (Notes)\nClick icon (orange plus button, bottom right)\nType ({{secret:title}})\n")
    assert typed.status.value == "completed", typed.reason
    phone = Phone.open(settings)
    frame = phone.settled()
    assert not any(secret in t for t in phone.texts(frame))  # the field shows a part only
    (field,) = [n.bounds for n in screen_nodes(phone.device) or [] if secret in n.text]
    pixels = phone.masked(frame).pixels
    box = pixels[int(field.top) : int(field.bottom), int(field.left) : int(field.right)]
    assert (box.reshape(-1, box.shape[-1])[:, :3] == 0).all()
    kept = np.asarray(Image.open(phone.evidence(frame, "secret").path).convert("RGB"))
    assert (kept[int(field.top) : int(field.bottom), int(field.left) : int(field.right)] == 0).all()
