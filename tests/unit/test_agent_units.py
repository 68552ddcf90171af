"""The agent's parts that need no device: screen comparison, records, redaction,
annotation, the trajectory writer and the replay report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from mobile_agent import errors
from mobile_agent.agent import (
    RunStatus,
    StepRecord,
    StepTimings,
    change_ratio,
    history_lines,
    load_trajectory,
)
from mobile_agent.agent.annotate import annotate
from mobile_agent.agent.records import AgentEvent, LocationSummary, RunResult, RunUsage
from mobile_agent.agent.redact import REDACTED, Redactor
from mobile_agent.agent.trajectory import TrajectoryWriter, write_report
from mobile_agent.settings import Settings
from perception.types import Box, Candidate, LocateStatus, Location


def _screen(width: int = 1080, height: int = 2400, *, clock: str = "12:00", toggle: bool = False) -> np.ndarray:
    """A settings-like screen: status bar with a clock, rows of text, a switch."""
    img = Image.new("RGB", (width, height), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 0, width, 70], fill=(30, 30, 30))
    draw.text((20, 20), clock, fill=(255, 255, 255))
    for i in range(10):
        draw.text((60, 200 + i * 160), f"Setting number {i}", fill=(20, 20, 20))
    knob = 1000 if toggle else 900
    draw.rounded_rectangle([860, 520, 1040, 600], radius=40, fill=(40, 120, 255) if toggle else (180, 180, 180))
    draw.ellipse([knob - 40, 520, knob + 40, 600], fill=(255, 255, 255))
    draw.rectangle([0, height - 130, width, height], fill=(0, 0, 0))
    return np.asarray(img)


# --- screen comparison --------------------------------------------------------------



def test_a_run_status_prints_as_its_value():
    assert str(RunStatus.COMPLETED) == "completed" and f"{RunStatus.NOT_COMPLETED}" == "not_completed"
    assert RunStatus("error") is RunStatus.ERROR and RunStatus.ERROR == "error"

def test_identical_frames_do_not_change():
    frame = _screen()
    assert change_ratio(frame, frame.copy()) == 0.0


def test_status_bar_clock_is_ignored():
    assert change_ratio(_screen(clock="12:00"), _screen(clock="23:59")) == 0.0


def test_a_switch_flip_is_a_change_above_the_default_threshold():
    ratio = change_ratio(_screen(toggle=False), _screen(toggle=True))
    assert ratio > Settings().agent.change_threshold


def test_page_change_is_large_and_noise_is_not_a_change():
    a = _screen()
    rng = np.random.default_rng(0)
    noisy = np.clip(a.astype(np.int16) + rng.integers(-4, 5, a.shape), 0, 255).astype(np.uint8)
    assert change_ratio(a, noisy) < 0.0005  # sensor/encoding noise below the pixel delta
    dark = 255 - a
    assert change_ratio(a, dark) > 0.5


def test_rotation_counts_as_change_and_bad_input_is_a_clear_error():
    assert change_ratio(_screen(1080, 2400), _screen(2400, 1080)) == 1.0
    with pytest.raises(ValueError, match="RGB uint8"):
        change_ratio(np.zeros((10, 10), np.uint8), np.zeros((10, 10), np.uint8))


# --- records ------------------------------------------------------------------------


def _location() -> Location:
    crop = np.zeros((4, 4, 3), np.uint8)
    return Location(
        status=LocateStatus.CANDIDATES,
        target="Notes",
        candidates=(
            Candidate(1, Box(10, 10, 110, 60), "Notes", 0.9, crop),
            Candidate(2, Box(10, 300, 110, 350), "Notes", 0.8, crop),
        ),
        backend="rapidocr",
    )


def test_step_records_are_json_and_fold_into_history():
    steps = [
        StepRecord(index=1, screenshot="step-001.png", action_text="Open App (Settings)", ok=True, screen_changed=True),
        StepRecord(index=2, screenshot="step-002.png", action_text="Click text (Dsiplay)", ok=False, feedback="not found"),
        StepRecord(index=3, screenshot="step-003.png", action_text="Back", ok=True, screen_changed=False),
        StepRecord(index=4, screenshot="step-004.png", action_text="blah", error={"type": "OperationParseError"},
                   feedback="no action"),
        StepRecord(index=5, screenshot="step-005.png", action_text="Stop", completion={"done": False, "reason": "still off"}),
    ]
    lines = history_lines(steps)
    assert lines[0] == "Step 1: Open App (Settings) -> done"
    assert "failed: not found" in lines[1]
    assert "did not change" in lines[2]
    assert "invalid" in lines[3]
    assert "stop rejected: still off" in lines[4]
    step = StepRecord(
        index=1,
        screenshot="s.png",
        tap_point=(5, 6),
        location=LocationSummary.from_location(_location()),
        chosen_candidate=2,
        timings=StepTimings(capture_ms=1.26, model_ms=2),
    )
    data = json.loads(json.dumps(step.to_dict()))
    assert data["location"]["status"] == "candidates"
    assert [c["index"] for c in data["location"]["candidates"]] == [1, 2]
    assert data["tap_point"] == [5, 6]
    assert data["timings"]["capture_ms"] == 1.3


def test_run_usage_sums_calls_and_events_are_json():
    from mobile_agent.planner import Usage

    call = Usage(prompt_tokens=100, completion_tokens=20, cost_usd=0.001, calls=1)
    usage = RunUsage().plus(call).plus(call).plus(None)
    assert isinstance(usage, RunUsage)  # a run's sum stays a RunUsage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls) == (200, 40, 2)
    assert usage.cost_usd == pytest.approx(0.002)
    event = AgentEvent(kind="step_finished", run_id="abc", step=3, data={"thought": "ü"})
    assert json.loads(event.to_json()) == {"kind": "step_finished", "run_id": "abc", "step": 3, "data": {"thought": "ü"}}


# --- redaction ----------------------------------------------------------------------


def test_redactor_replaces_api_key_and_secrets_everywhere(caplog):
    settings = Settings.model_validate(
        {"planner": {"api_key": "sk-supersecret123"}, "agent": {"secrets": ["hunter2", "ab"]}}
    )
    with caplog.at_level("WARNING", logger="mobile_agent.agent.redact"):
        redact = Redactor.from_settings(settings)
    assert "1 secret(s) shorter than 3 characters are not redacted" in caplog.text  # "ab", said aloud
    data = {"reply": "Type (hunter2)", "nested": [{"k": "Bearer sk-supersecret123"}], "n": 3, "short": "ab"}
    out = redact(data)
    assert out == {"reply": f"Type ({REDACTED})", "nested": [{"k": f"Bearer {REDACTED}"}], "n": 3, "short": "ab"}
    assert not Redactor([]).active


# --- annotation ---------------------------------------------------------------------


def test_annotation_marks_the_tap_point_and_candidates():
    base = Image.fromarray(_screen())
    marked = annotate(base, tap_point=(540, 1200), location=LocationSummary.from_location(_location()),
                      chosen_candidate=2)
    px = np.asarray(marked).astype(int)
    orig = np.asarray(base).astype(int)
    assert px.shape == orig.shape
    ring = px[1200, 540]
    assert ring[0] > 200 and ring[1] < 80  # red tap marker at the point
    assert (np.abs(px[300:350, 10:14] - orig[300:350, 10:14]).sum()) > 0  # candidate 2's box drawn
    assert np.array_equal(np.asarray(base), orig)  # the original is untouched


# --- trajectory + report ------------------------------------------------------------


def test_trajectory_folder_has_header_steps_result_images_and_a_self_contained_report(tmp_path: Path):
    redact = Redactor(["topsecret"])
    writer = TrajectoryWriter(tmp_path, "run1", redact, {"instruction": "type topsecret", "model": "m"})
    frame = _screen()
    name = writer.save_screenshot(1, frame)
    step = StepRecord(
        index=1,
        screenshot=name,
        thought="I will type topsecret </script><script>alert(1)</script>",
        action_text="Type (topsecret)",
        ok=True,
        tap_point=(540, 1200),
    )
    step = StepRecord(**{**step.__dict__, "annotated": writer.save_annotated(step, frame)})
    writer.write_step(step)
    result = RunResult(
        status=RunStatus.COMPLETED,
        error=None,
        steps=[step],
        trajectory_dir=writer.folder,
        usage=RunUsage(),
        started_at=1.0,
        finished_at=2.0,
        run_id="run1",
        instruction="type topsecret",
        reason="done",
    )
    writer.finish(result)

    folder = writer.folder
    assert re.fullmatch(r"\d{8}-\d{6}-run1", folder.name)
    header, steps, final = load_trajectory(folder)
    assert header["schema_version"] == 1 and header["instruction"] == f"type {REDACTED}"
    assert steps[0]["action_text"] == f"Type ({REDACTED})"
    assert final["status"] == "completed"
    for path in folder.iterdir():
        if path.suffix in (".jsonl", ".html"):
            assert "topsecret" not in path.read_text(encoding="utf-8")
    with Image.open(folder / "step-001.png") as img:
        assert img.size == (1080, 2400)
        assert np.array_equal(np.asarray(img.convert("RGB")), frame)
    assert (folder / "step-001-marked.jpg").is_file()
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "data:image/jpeg;base64," in html
    assert "src=\"http" not in html and "<link" not in html  # nothing fetched from elsewhere
    assert "</script><script>alert" not in html  # a model's text cannot close the data block
    assert "ArrowRight" in html and 'id="prev"' in html and 'id="next"' in html


def test_a_trajectory_cut_short_is_read_up_to_its_last_whole_line_and_gets_a_report(tmp_path: Path):
    """A process killed while writing a line leaves it torn: the lines before it are read and
    the report is made afterwards; a damaged line before the end is an error, not skipped."""
    writer = TrajectoryWriter(tmp_path, "cut1", Redactor([]), {"instruction": "go", "mode": "mcp"})
    writer.write_step(StepRecord(index=1, screenshot=writer.save_screenshot(1, _screen()), action_text="Home", ok=True))
    writer.close()  # no result line: the run never ended
    folder = writer.folder
    with (folder / "trajectory.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"type": "step", "index": 2, "action_te')  # torn mid-line
    header, steps, result = load_trajectory(folder)
    assert header["instruction"] == "go" and [s["action_text"] for s in steps] == ["Home"] and result is None
    report = write_report(folder)
    assert report == folder / "report.html" and "Home" in report.read_text(encoding="utf-8")
    assert [p.name for p in folder.iterdir() if "partial" in p.name] == []  # written aside, then renamed

    (folder / "trajectory.jsonl").write_text('{"type": "run"}\n{"type": "st\n{"type": "result"}\n', encoding="utf-8")
    with pytest.raises(ValueError):
        load_trajectory(folder)


def test_an_image_embedded_as_it_comes_is_what_the_report_shows(tmp_path: Path):
    """``embed_later``: the report at the end takes the image embedded then, and decodes
    nothing again (the file is gone by then here, and the report still shows it)."""
    writer = TrajectoryWriter(tmp_path, "emb1", Redactor([]), {"instruction": "go", "mode": "mcp"})
    name = writer.save_screenshot(1, _screen())
    writer.write_step(StepRecord(index=1, screenshot=name, action_text="Home", ok=True))
    writer.embed_later(name)
    writer.flush()
    (writer.folder / name).unlink()
    writer.close()
    html = (writer.folder / "report.html").read_text(encoding="utf-8")
    assert html.count("data:image/jpeg;base64,") == 1


def test_typing_two_characters_is_a_change_and_the_untouched_screen_is_not():
    import io

    from simphone import Phone

    phone = Phone()

    def frame() -> np.ndarray:
        return np.asarray(Image.open(io.BytesIO(phone.screencap_png())).convert("RGB"))

    phone.launch("com.google.android.keep")
    phone.push_view("com.google.android.keep", {"view": "edit", "note_id": None, "fields": {"title": "", "body": ""}})
    phone.set_focus("title")
    phone.type_text("a")
    before = frame()
    phone.type_text("bc")
    after = frame()
    threshold = Settings().agent.change_threshold
    assert change_ratio(before, after) > threshold
    assert change_ratio(after, frame()) <= threshold


# --- properties ---------------------------------------------------------------------



@hsettings(max_examples=60, deadline=None)
@given(prefix=st.text(max_size=20), secret=st.text(min_size=3, max_size=12), suffix=st.text(max_size=20))
def test_redactor_removes_any_secret_from_any_text(prefix, secret, suffix):
    out = Redactor([secret])({"a": [prefix + secret + suffix]})
    assert secret not in out["a"][0] or secret in REDACTED


@hsettings(max_examples=40, deadline=None)
@given(thought=st.text(max_size=60))
def test_report_data_block_round_trips_any_model_text(thought, tmp_path_factory):
    from mobile_agent.agent.report import render_report

    html = render_report(tmp_path_factory.mktemp("r"), {"instruction": thought}, [{"index": 1, "thought": thought}], None)
    block = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', html, re.S)
    assert block is not None
    data = json.loads(block.group(1))
    assert data["steps"][0]["thought"] == thought and data["header"]["instruction"] == thought


# --- scripts -------------------------------------------------------------------------


def test_script_lines_may_name_the_candidate_to_use_when_several_places_match():
    from mobile_agent.agent import parse_script
    from mobile_agent.errors import OperationParseError

    lines = parse_script(
        "Click text (Groceries) #2\nLong press (Notes)  # 1\nClick icon (orange plus, bottom right) #3\n"
        "Click text (Save)\nType (room #2)\nType room #2\n"
    )
    assert [(ln.action.name, ln.candidate) for ln in lines] == [
        ("click_text", 2), ("long_press", 1), ("click_icon", 3), ("click_text", None), ("type", None), ("type", None)
    ]
    assert lines[0].action.params.text == "Groceries" and lines[2].action.params.position == "bottom right"
    assert lines[5].action.params.text == "room #2"  # a typed text keeps its "#2"
    with pytest.raises(OperationParseError, match="only to Click text") as info:
        parse_script("Home\nOpen App (Notes) #2\n")
    assert info.value.fields["line"] == 2
    with pytest.raises(OperationParseError, match="counts from 1"):
        parse_script("Click text (Save) #0")


# --- why a run ended ----------------------------------------------------------------


def _planner_error(status: int, kind: type = errors.PlannerError) -> Exception:
    return kind(f"the planner endpoint answered HTTP {status} (4 attempts, plan)", status_code=status, attempts=4)


@pytest.mark.parametrize(
    ("make", "cause"),
    [
        (lambda: _planner_error(500), "planner_unreachable"),
        (lambda: _planner_error(503), "planner_unreachable"),
        (lambda: _planner_error(429), "planner_unreachable"),
        (lambda: _planner_error(408), "planner_unreachable"),
        (lambda: _planner_error(401), "planner"),
        (lambda: _planner_error(404), "planner"),
        (lambda: _planner_error(200, errors.PlannerResponseError), "planner"),
        (lambda: errors.PlannerUnreachableError("timed out", attempts=4), "planner_unreachable"),
        (lambda: errors.DeviceLostError("gone", serial="x"), "device_lost"),
        (lambda: errors.AdbKeyboardMissingError("no keyboard"), "adb_keyboard_missing"),
        (lambda: errors.ScreenshotError("bad frame"), "device"),
        (lambda: errors.PerceptionError("no weights"), "perception"),
        (lambda: errors.ConfigError("bad"), "config"),
        (lambda: errors.RunCancelled("stop"), "cancelled"),
        (KeyboardInterrupt, "cancelled"),
        (lambda: ValueError("bug"), "internal"),
    ],
)
def test_error_cause_names_why_a_run_ended(make, cause):
    from mobile_agent.agent.causes import error_cause

    assert error_cause(make()) == cause


def test_the_agent_records_import_without_the_planner_client():
    """RunUsage reuses the planner's Usage; the client (and openai) still load only on first use."""
    import subprocess
    import sys

    code = "import sys, mobile_agent.agent; assert 'openai' not in sys.modules, 'openai imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
    from mobile_agent.planner import Planner, Usage

    assert Planner.__module__ == "mobile_agent.planner.client" and issubclass(RunUsage, Usage)


def test_a_bare_perception_locator_raises_the_agents_perception_error_with_every_field():
    from mobile_agent.agent.parts import TimedLocator
    from perception.errors import WeightsMissingError

    class BareLocator:  # a perception.Perception-like locator, not wrapped by mobile_agent.locate
        def find_text(self, image, text, hierarchy=None):
            raise WeightsMissingError("no OCR weights", backend="rapidocr", hint="run doctor", path="/models/ocr")

    timed = TimedLocator(BareLocator())
    with pytest.raises(errors.PerceptionError) as caught:
        timed.find_text(np.zeros((8, 8, 3), np.uint8), "OK")
    assert caught.value.message == "no OCR weights"
    assert (caught.value.fields["backend"], caught.value.fields["hint"], caught.value.fields["path"]) == (
        "rapidocr",
        "run doctor",
        "/models/ocr",
    )
    assert isinstance(caught.value.__cause__, WeightsMissingError)
