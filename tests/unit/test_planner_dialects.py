"""Planner dialects: real published replies parse, points map back to the screen, model
names pick their profile, snapping moves a point only when it should."""

from __future__ import annotations

import itertools

import pytest

from mobile_agent.errors import (
    InvalidParametersError,
    OperationError,
    OperationParseError,
    UnknownOperationError,
)
from mobile_agent.planner.dialects import (
    AutoGlmDialect,
    FunctionCallingDialect,
    MobileUseDialect,
    PaperDialect,
    UiTarsDialect,
    dialect_for,
)
from mobile_agent.planner.geometry import (
    GRID_1000,
    IMAGE,
    NORMALIZED,
    SCREEN,
    ImageRule,
    Viewport,
    smart_resize,
    viewport_for,
)
from mobile_agent.planner.models import fold_model_name, profile_for
from mobile_agent.settings import PlannerSettings
from perception.snapping import SnapTarget, snap_point
from perception.types import Box

QWEN25 = ImageRule(long_side=None, factor=28, max_pixels=16384 * 28 * 28)
# a 1080x2400 phone as Qwen2.5-VL's processor sees it: 1092x2408
PHONE = viewport_for(1080, 2400, QWEN25, IMAGE)
GRID = viewport_for(1080, 2400, ImageRule(long_side=1280), GRID_1000)


# --- geometry ---------------------------------------------------------------------------


def test_smart_resize_follows_the_published_rule():
    assert smart_resize(2400, 1080) == (2408, 1092)  # multiples of 28, area under max_pixels
    h, w = smart_resize(2400, 1080, factor=28, max_pixels=1280 * 28 * 28)
    assert h % 28 == 0 and w % 28 == 0 and h * w <= 1280 * 28 * 28
    assert abs(h / w - 2400 / 1080) < 0.05
    h, w = smart_resize(20, 30, factor=32, min_pixels=256 * 32 * 32)  # upscaled to min_pixels
    assert h % 32 == 0 and w % 32 == 0 and h * w >= 256 * 32 * 32
    with pytest.raises(ValueError):
        smart_resize(10, 3000)  # aspect ratio above 200
    with pytest.raises(ValueError):
        smart_resize(0, 100)


SCREENS = [(1080, 2400), (2400, 1080), (720, 1280), (1440, 3200), (1081, 2399), (601, 997), (800, 800)]
RULES = [ImageRule(long_side=1280), ImageRule(long_side=None, factor=28), ImageRule(long_side=None, factor=32,
         max_pixels=1280 * 32 * 32), ImageRule(long_side=None)]  # fmt: skip
SPACES = [SCREEN, IMAGE, GRID_1000, NORMALIZED]


@pytest.mark.parametrize(("screen", "rule", "space"), list(itertools.product(SCREENS, RULES, SPACES)))
def test_round_trip_for_every_space_and_screen_shape(screen, rule, space):
    width, height = screen
    vp = viewport_for(width, height, rule, space)
    # the model's unit in screen pixels: how far an integer answer can be from the pixel
    unit_x = width / vp.image_width if space.kind == "image" else width / 1000 if space.kind == "grid" else 1
    unit_y = (
        height / vp.image_height if space.kind == "image" else height / 1000 if space.kind == "grid" else 1
    )
    for x, y in [(0, 0), (width - 1, height - 1), (width // 2, height // 3), (7, height - 9), (width - 3, 5)]:
        assert vp.to_screen(*vp.from_screen(x, y)) == (x, y)  # exact in floats
        sx, sy = vp.to_screen(*vp.model_point(x, y))  # as a model writes it
        assert abs(sx - x) <= unit_x + 1 and abs(sy - y) <= unit_y + 1


def test_points_off_the_screen_are_clamped_and_nan_is_refused():
    assert GRID.to_screen(1000, 1000) == (1079, 2399)
    assert GRID.to_screen(-5, -5) == (0, 0)
    with pytest.raises(ValueError):
        GRID.to_screen(float("nan"), 3)


# --- model profiles -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("served", "dialect", "space"),
    [
        ("ByteDance-Seed/UI-TARS-1.5-7B", "ui_tars", "image"),
        ("ui-tars-1.5-7b", "ui_tars", "image"),
        ("bytedance-research/UI-TARS-7B-SFT", "ui_tars", "grid"),
        ("Qwen/Qwen2.5-VL-7B-Instruct", "mobile_use", "image"),
        ("qwen2.5vl:7b", "mobile_use", "image"),
        ("Qwen/Qwen3-VL-8B-Instruct", "mobile_use", "grid"),
        ("mPLUG/GUI-Owl-7B", "mobile_use", "image"),
        ("zai-org/AutoGLM-Phone-9B", "autoglm", "grid"),
        ("autoglm-phone-9b", "autoglm", "grid"),
        ("gpt-4o", "paper", "screen"),
        ("some-new-model", "paper", "screen"),
    ],
)
def test_profiles_match_served_names_however_reported(served, dialect, space):
    profile = profile_for(served)
    assert (profile.dialect, profile.space.kind) == (dialect, space)
    chosen, _ = dialect_for(PlannerSettings(model=served))
    assert chosen.name == dialect


def test_the_setting_overrides_the_profile():
    chosen, profile = dialect_for(PlannerSettings(model="gpt-4o", dialect="function_calling"))
    assert isinstance(chosen, FunctionCallingDialect)
    chosen, profile = dialect_for(PlannerSettings(model="Qwen/Qwen2.5-VL-7B-Instruct", dialect="paper"))
    assert isinstance(chosen, PaperDialect) and profile.image.long_side == 1280
    assert fold_model_name("/models/UI-TARS-1.5-7B.gguf") == "uitars157b"


# --- UI-TARS ---------------------------------------------------------------------------------

UI_TARS = UiTarsDialect(space=IMAGE)


def _tars(reply: str, vp: Viewport = PHONE):
    return UI_TARS.parse(reply, vp)


def test_ui_tars_published_examples():
    # bytedance/UI-TARS codes/tests/action_parser_test.py
    got = _tars("Thought: test\nAction: click(start_box='<|box_start|>(112,224)<|box_end|>')")
    assert got.action.name == "tap_point" and got.thought == "test"
    assert (got.action.params.x, got.action.params.y) == PHONE.to_screen(112, 224)
    assert got.model_points == ((112.0, 224.0),)
    got = _tars("Thought: test\nAction: click(point='<point>200 300</point>')")
    assert (got.action.params.x, got.action.params.y) == PHONE.to_screen(200, 300)


def test_ui_tars_odd_cases():
    # a box as two points: its centre
    got = _tars("Action: click(start_box='<|box_start|>(100,200,300,400)<|box_end|>')")
    assert (got.action.params.x, got.action.params.y) == PHONE.to_screen(200, 300)
    # missing closing parenthesis
    assert (
        _tars("Thought: done\nAction: finished(content='Battery is 85%'").action.params.answer
        == "Battery is 85%"
    )
    # typed text with quotes, commas and a trailing \n to submit
    typed = _tars("Thought: t\nAction: type(content='it\\'s 5, ok\\n')").action.params.text
    assert typed == "it's 5, ok\n"
    got = _tars(
        "Thought: 向下滚动\nAction: scroll(start_box='<|box_start|>(546,1200)<|box_end|>', direction='down')"
    )
    assert got.action.name == "scroll" and got.action.params.direction == "down"
    assert _tars("Action: press_back()").action.params.key == "back"
    assert _tars("Action: press_home()").action.params.key == "home"
    assert _tars("Action: open_app(app_name='Settings')").action.params.app == "Settings"
    assert _tars("Action: call_user()").action.name == "hand_over"
    drag = _tars("Action: drag(start_box='(897,1208)', end_box='(244,1208)')").action
    assert drag.name == "drag" and drag.params.x1 > drag.params.x2
    assert (
        _tars("Thought: 点击设置\nAction: 点击(start_box='(10,20)')").action.name == "tap_point"
    )  # Chinese name
    # UI-TARS 1.0: 0-1000 grid
    got = UiTarsDialect(space=GRID_1000).parse("Action: click(start_box='(500,500)')", GRID)
    assert (got.action.params.x, got.action.params.y) == (540, 1200)


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("I think I should tap the button", OperationParseError),
        ("Thought: x\nAction: teleport(start_box='(1,2)')", UnknownOperationError),
        ("Thought: x\nAction: click(start_box='nowhere')", OperationParseError),
        ("Thought: x\nAction: scroll(direction='sideways')", InvalidParametersError),
        ("", OperationParseError),
    ],
)
def test_ui_tars_bad_replies_are_model_mistakes(reply, error):
    with pytest.raises(error):
        _tars(reply)


# --- Qwen mobile_use ------------------------------------------------------------------------

QWEN = MobileUseDialect(space=IMAGE)


def test_mobile_use_published_format():
    # the Qwen2.5-VL cookbook's reply shape, with the evaluation harnesses' <thinking>/<conclusion>
    reply = (
        "<thinking>The Wi-Fi entry is at the top of Settings.</thinking>\n"
        '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [200, 356]}}\n</tool_call>\n'
        "<conclusion>Tapped Wi-Fi.</conclusion>"
    )
    got = QWEN.parse(reply, PHONE)
    assert got.action.name == "tap_point" and got.thought.startswith("The Wi-Fi")
    assert (got.action.params.x, got.action.params.y) == PHONE.to_screen(200, 356)
    swipe = QWEN.parse('<tool_call>{"name": "mobile_use", "arguments": {"action": "swipe", "coordinate": [546, 1800], '
                       '"coordinate2": [546, 600]}}</tool_call>', PHONE).action  # fmt: skip
    assert swipe.name == "swipe_points" and swipe.params.y1 > swipe.params.y2
    cases = {
        '{"action": "type", "text": "hello, world"}': ("type", {"text": "hello, world"}),
        '{"action": "system_button", "button": "Back"}': ("press_key", {"key": "back"}),
        '{"action": "key", "text": "volume_up"}': ("press_key", {"key": "volume_up"}),
        '{"action": "open", "text": "Settings"}': ("open_app", {"app": "Settings"}),
        '{"action": "wait", "time": 3}': ("wait", {"seconds": 3.0}),
        '{"action": "terminate", "status": "success"}': ("finished", {"answer": ""}),
        '{"action": "answer", "text": "85%"}': ("finished", {"answer": "85%"}),
        '{"action": "terminate", "status": "failure"}': ("give_up", None),
        '{"action": "long_press", "coordinate": [10, 20], "time": 2}': ("long_press_point", None),
    }
    for args, (name, params) in cases.items():
        action = QWEN.parse(
            f'<tool_call>{{"name": "mobile_use", "arguments": {args}}}</tool_call>', PHONE
        ).action
        assert action.name == name, args
        if params is not None:
            assert action.params.model_dump() == params, args


def test_mobile_use_odd_cases():
    # no closing tag, a fenced block, a real tool call from a server with a hermes parser
    assert QWEN.parse('<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [1, 2]}}',
                      PHONE).action.name == "tap_point"  # fmt: skip
    fenced = (
        '```json\n{"name": "mobile_use", "arguments": {"action": "system_button", "button": "Home"}}\n```'
    )
    assert QWEN.parse(fenced, PHONE).action.params.key == "home"
    calls = [
        {"function": {"name": "mobile_use", "arguments": '{"action": "click", "coordinate": [100, 100]}'}}
    ]
    assert QWEN.parse("", PHONE, calls).action.name == "tap_point"
    # MAI-UI / GUI-Owl variants: a swipe by direction is the finger's direction
    got = QWEN.parse('<tool_call>{"name": "mobile_use", "arguments": {"action": "swipe", "direction": "up"}}</tool_call>',
                     PHONE).action  # fmt: skip
    assert got.name == "scroll" and got.params.direction == "down"
    # Qwen3-VL: a 0-999 grid
    q3 = MobileUseDialect(space=GRID_1000).parse(
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 250]}}</tool_call>',
        GRID,
    )
    assert (q3.action.params.x, q3.action.params.y) == (540, 600)
    with pytest.raises(OperationParseError):
        QWEN.parse("I will click the button.", PHONE)
    with pytest.raises(UnknownOperationError):
        QWEN.parse('<tool_call>{"name": "mobile_use", "arguments": {"action": "fly"}}</tool_call>', PHONE)
    with pytest.raises(OperationParseError):
        QWEN.parse('<tool_call>{"name": "mobile_use", "arguments": {"action": "click"}}</tool_call>', PHONE)


# --- AutoGLM-Phone ------------------------------------------------------------------------------

GLM = AutoGlmDialect()


def test_autoglm_published_format():
    # zai-org/Open-AutoGLM prompts: <think>…</think><answer>do(...)</answer>, 0-999 grid
    got = GLM.parse(
        '<think>Tap the Settings icon.</think>\n<answer>do(action="Tap", element=[500,500])</answer>', GRID
    )
    assert got.action.name == "tap_point" and (got.action.params.x, got.action.params.y) == (540, 1200)
    assert got.thought == "Tap the Settings icon."
    cases = {
        'do(action="Launch", app="Settings")': ("open_app", {"app": "Settings"}),
        'do(action="Type", text="Hello World")': ("type", {"text": "Hello World"}),
        'do(action="Back")': ("press_key", {"key": "back"}),
        'do(action="Home")': ("press_key", {"key": "home"}),
        'do(action="Wait", duration="3 seconds")': ("wait", {"seconds": 3.0}),
        'finish(message="Task completed.")': ("finished", {"answer": "Task completed."}),
        'do(action="Take_over", message="Please log in")': ("hand_over", {"message": "Please log in"}),
    }
    for code, (name, params) in cases.items():
        action = GLM.parse(f"<think>x</think>\n<answer>{code}</answer>", GRID).action
        assert (action.name, action.params.model_dump()) == (name, params), code
    swipe = GLM.parse('<answer>do(action="Swipe", start=[500,800], end=[500,200])</answer>', GRID).action
    assert swipe.name == "swipe_points" and (swipe.params.y1, swipe.params.y2) == (1920, 480)
    assert (
        GLM.parse('<answer>do(action="Long Press", element=[1,2])</answer>', GRID).action.name
        == "long_press_point"
    )
    assert (
        GLM.parse('<answer>do(action="Double Tap", element=[1,2])</answer>', GRID).action.name
        == "double_tap_point"
    )


def test_autoglm_odd_cases():
    # missing closing tags; typed text with quotes; Chinese action names; no tags at all
    assert GLM.parse('<think>x\n<answer>do(action="Tap", element=[10,10])', GRID).action.name == "tap_point"
    assert (
        GLM.parse('<answer>do(action="Type", text="say "hi", ok")</answer>', GRID).action.params.text
        == 'say "hi", ok'
    )
    assert (
        GLM.parse('<answer>do(action="长按", element=[10,10])</answer>', GRID).action.name
        == "long_press_point"
    )
    assert GLM.parse('I will go back. do(action="Back")', GRID).action.params.key == "back"
    # a sensitive tap is never done silently: the user is asked
    sensitive = GLM.parse(
        '<answer>do(action="Tap", element=[500,900], message="Pay 25 yuan")</answer>', GRID
    ).action
    # source: zai-org/Open-AutoGLM phone_agent/actions/handler.py, _handle_tap asks
    # confirmation_callback(message) when the Tap has a message
    assert sensitive.name == "tap_point" and sensitive.sensitive == "Pay 25 yuan"
    assert GLM.parse('<answer>do(action="Tap", element=[500,900])</answer>', GRID).action.sensitive is None
    assert GLM.parse('<answer>do(action="Interact")</answer>', GRID).action.name == "hand_over"
    with pytest.raises(OperationParseError):
        GLM.parse("<think>nothing to do</think>", GRID)
    with pytest.raises(UnknownOperationError):
        GLM.parse('<answer>do(action="Note", message="True")</answer>', GRID)


# --- function calling and the paper ----------------------------------------------------------------


def test_function_calling_reads_tool_calls_and_text_fallbacks():
    fc = FunctionCallingDialect()
    tools = fc.tools()
    names = {t["function"]["name"] for t in tools}
    assert {"click_text", "click_icon", "type", "stop"} <= names
    click = next(t for t in tools if t["function"]["name"] == "click_text")["function"]["parameters"]
    assert click["properties"]["text"]["type"] == "string" and click["required"] == ["text"]
    calls = [{"function": {"name": "click_text", "arguments": '{"text": "Wi-Fi"}'}}]
    got = fc.parse("Observation: Settings\nThought: open Wi-Fi", PHONE, calls)
    assert got.action.text == "Click text (Wi-Fi)" and got.thought == "open Wi-Fi"
    hermes = '<tool_call>{"name": "click_icon", "arguments": {"icon": "gear", "position": "top right"}}</tool_call>'
    assert fc.parse(hermes, PHONE).action.params.position == "top right"
    assert fc.parse("Action: Back", PHONE).action.name == "back"  # wrote the action as text after all
    with pytest.raises(InvalidParametersError):
        fc.parse("", PHONE, [{"function": {"name": "click_text", "arguments": "{}"}}])
    with pytest.raises(UnknownOperationError):
        fc.parse("", PHONE, [{"function": {"name": "teleport", "arguments": "{}"}}])
    with pytest.raises(OperationError):
        fc.parse("nothing", PHONE)


def test_paper_dialect_is_todays_parser():
    got = PaperDialect().parse("Observation: home\nThought: open it\nAction: Open App (Settings)", PHONE)
    assert got.action.text == "Open App (Settings)" and got.thought == "open it" and got.observation == "home"


# --- snapping --------------------------------------------------------------------------------------


def _t(left, top, right, bottom, label="x"):
    return SnapTarget(Box(left, top, right, bottom), label, "text")


def test_snapping_moves_a_near_miss_onto_its_element_and_says_why():
    wifi, sub = _t(190, 326, 305, 362, "Wi-Fi"), _t(190, 384, 423, 410, "HomeNet-5G")
    snap = snap_point((250, 340), [wifi, sub], max_distance=120)  # inside
    assert snap.point == (247, 344) and snap.target == wifi and "inside" in snap.reason
    snap = snap_point((240, 300), [wifi, sub], max_distance=120)  # 26 px above Wi-Fi
    assert snap.target == wifi and snap.model_point == (240, 300) and snap.moved and "26 px" in snap.reason


def test_snapping_keeps_the_point_when_far_or_ambiguous():
    a, b = _t(100, 100, 200, 140, "A"), _t(100, 180, 200, 220, "B")
    snap = snap_point((150, 160), [a, b], max_distance=120)  # halfway between two
    assert not snap.moved and "ambiguous" in snap.reason
    snap = snap_point((900, 2000), [a, b], max_distance=120)
    assert not snap.moved and "away" in snap.reason
    assert not snap_point((5, 5), [], max_distance=50).moved
    # a label nested in its button is one target, not a rival
    button, label = _t(80, 90, 220, 150, "button"), _t(100, 100, 200, 140, "A")
    assert snap_point((150, 170), [button, label], max_distance=120).moved


def test_drift_tracker_learns_a_constant_offset_and_ignores_scatter():
    from perception.snapping import DriftTracker

    # a list of rows 120 px apart: a 70 px drift down lands nearer the next row
    rows = [_t(100, top, 400, top + 40, f"row {i}") for i, top in enumerate(range(300, 2000, 120))]
    tracker = DriftTracker(tolerance=48)
    landed = []
    for i in [3, 7, 1, 10, 5, 12, 2]:
        meant = rows[i]
        cx, cy = (100 + 400) // 2, meant.box.top + 20
        snap = tracker.snap((cx, cy + 70), rows, max_distance=120)
        landed.append(snap.target == meant)
    assert not all(landed[:3])  # before it has learned: a wrong row or no snap
    assert all(landed[3:])  # after three taps agree: the right row every time
    dx, dy, taps = tracker.offset()
    assert abs(dx) < 5 and 65 <= dy <= 75 and taps >= 3
    assert "drift" in tracker.snap((250, 700), rows, max_distance=120).reason
    # taps with no habit: nothing to take off
    scattered = DriftTracker(tolerance=10)
    for x, y in [(250, 300), (250, 1000), (120, 1500), (390, 650)]:
        scattered.observe((x, y), rows[:2], max_distance=2000)
    assert scattered.offset() is None


def test_a_server_that_shrank_the_image_is_detected():
    from mobile_agent.planner.geometry import image_shrunk_by_server

    rule = ImageRule(long_side=None, factor=28)
    # 1092x2408 at factor 28 = 39 x 86 = 3354 image tokens
    assert image_shrunk_by_server(3354 + 400, PHONE, rule) is None
    warning = image_shrunk_by_server(1300, PHONE, rule)
    assert warning is not None and "max_pixels" in warning
    assert image_shrunk_by_server(10, GRID, ImageRule(long_side=1280)) is None  # no patch rule: cannot tell
    _, profile = dialect_for(PlannerSettings(model="qwen2.5vl:7b", image_max_pixels=1003520))
    assert profile.image.max_pixels == 1003520
    assert viewport_for(1080, 2400, profile.image, IMAGE).image_width * 2408 < 1092 * 2408


def test_the_planner_sends_the_dialects_image_and_reads_its_reply(llm_server):
    import numpy as np

    from mobile_agent.planner import Planner, PlanRequest
    from tests.llm_server import Reply

    frame = np.zeros((2400, 1080, 3), dtype=np.uint8)
    reply = '<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [546, 1204]}}</tool_call>'
    llm_server.script([Reply(text=reply, usage=(1200, 30))])  # fewer tokens than the image needs
    planner = Planner(llm_server.planner_settings(model="qwen2.5vl:7b"))
    answer = planner.plan(PlanRequest(instruction="Open Wi-Fi", screenshot=frame))
    request = llm_server.chat_requests[0]
    assert request.image_sizes() == [(1092, 2408)]  # smart_resize, nothing left for the server to change
    assert '"name": "mobile_use"' in request.text("system") and "1092x2408" in request.text("system")
    action = planner.parse(answer)
    assert action.name == "tap_point" and (action.params.x, action.params.y) == (540, 1200)
    assert planner.image_warning is not None and "max_pixels" in planner.image_warning
    # function calling: the cards go as tools and the tool call comes back
    llm_server.script([Reply(text="Thought: open it", tool_calls=(("open_app", '{"app": "Settings"}'),))])
    planner = Planner(llm_server.planner_settings(model="gpt-4o", dialect="function_calling"))
    answer = planner.plan(PlanRequest(instruction="Open Settings", screenshot=frame))
    assert planner.parse(answer).text == "Open App (Settings)"
    sent = llm_server.chat_requests[0].json
    assert {t["function"]["name"] for t in sent["tools"]} >= {"open_app", "click_text", "stop"}


def test_doctor_says_which_dialect_and_image_size_a_model_gets():
    from mobile_agent.cli.doctor import dialect_check
    from mobile_agent.settings import Settings

    check = dialect_check(Settings(planner={"model": "Qwen/Qwen2.5-VL-7B-Instruct"}), (1080, 2400))
    assert "mobile_use dialect" in check.detail and "sent as 1092x2408" in check.detail
    assert "max_pixels" in check.detail and "snapping on" in check.detail
    check = dialect_check(Settings(planner={"model": "gpt-4o", "image_long_side": 1024}), (2400, 1080))
    assert "paper dialect" in check.detail and "sent as 1024x461" in check.detail
    check = dialect_check(Settings(planner={"model": "gpt-4o", "dialect": "autoglm", "snap": False}))
    assert "autoglm dialect (set by planner.dialect)" in check.detail and "snapping off" in check.detail
