"""Every dialect writes the replies its parser reads: ``parse(write(a)).action == a`` for
every operation the task families use (the data engine's per-step targets), on several
screen shapes and every model profile's coordinate space; an operation outside a model's
action space raises ``UnwritableAction`` instead of being written wrong."""

from __future__ import annotations

import math

import pytest

from mobile_agent.operations.coordinates import COORDINATE_REGISTRY
from mobile_agent.planner.dialects import DIALECTS, make_dialect, profile_named
from mobile_agent.planner.dialects.base import UnwritableAction, build_action
from mobile_agent.planner.geometry import viewport_for
from mobile_agent.planner.models import PROFILES, ModelProfile

SCREENS = [(1080, 2400), (720, 1280), (1600, 2560), (2208, 1840)]  # phone, small phone, tablet, unfolded
ALL_PROFILES: dict[str, ModelProfile] = {
    name: profile_named(name) for name in [*DIALECTS, *(p.key for p in PROFILES)]
}
TEXTS = [
    "Lunch on Friday",
    'it\'s "quoted", (and) commas',
    "two\nlines",
    "Grandma's Home Restaurant",
    "中文 ok",
]

# What the families' reference solutions do, as each registry names it (eval/families/catalog.py)
PAPER_ACTIONS = [("open_app", {"app": "Gmail"}), ("click_text", {"text": "Display & brightness"}),
                 ("click_icon", {"icon": "paper plane", "position": "top right"}), ("back", {}), ("home", {}),
                 ("exit", {}), ("enter", {}), ("stop", {})] + [("type", {"text": t}) for t in TEXTS]  # fmt: skip
GROUNDED_ACTIONS = [("open_app", {"app": "Amazon Music"}), ("press_key", {"key": "back"}),
                    ("press_key", {"key": "home"}), ("finished", {"answer": ""}),
                    ("finished", {"answer": "It is 25 °C"})] + [("type", {"text": t}) for t in TEXTS]  # fmt: skip


def _same(dialect, viewport, name, params) -> None:
    action = build_action(dialect.registry, name, params, "test")
    reply = dialect.write(action, viewport, thought="Find the field first.")
    got = dialect.parse(reply, viewport).action
    assert (got.name, got.params) == (action.name, action.params), reply


@pytest.mark.parametrize("key", sorted(ALL_PROFILES))
@pytest.mark.parametrize("screen", SCREENS)
def test_every_dialect_writes_what_it_reads(key, screen):
    profile = ALL_PROFILES[key]
    dialect = make_dialect(profile)
    viewport = viewport_for(*screen, profile.image, profile.space)
    grounded = dialect.registry is COORDINATE_REGISTRY
    unwritable = 0
    for name, params in GROUNDED_ACTIONS if grounded else PAPER_ACTIONS:
        try:
            _same(dialect, viewport, name, params)
        except UnwritableAction:
            unwritable += 1
    # the paper's Action is one line: a typed line break has no way into it
    assert unwritable == (1 if profile.dialect == "paper" else 0)
    if not grounded:
        return
    enter = build_action(dialect.registry, "press_key", {"key": "enter"}, "Enter")
    if profile.dialect in ("ui_tars", "autoglm"):  # neither action space has an Enter key
        with pytest.raises(UnwritableAction):
            dialect.write(enter, viewport)
    else:
        _same(dialect, viewport, "press_key", {"key": "enter"})


@pytest.mark.parametrize("key", sorted(k for k, p in ALL_PROFILES.items() if p.space.kind != "screen"))
@pytest.mark.parametrize("screen", SCREENS)
def test_taps_land_on_the_pixel_the_space_can_name(key, screen):
    """A tap at a pixel the model's space can name comes back exactly; any other pixel
    comes back within one step of that space (a 0-999 grid over 2400 pixels)."""
    profile = ALL_PROFILES[key]
    dialect = make_dialect(profile)
    viewport = viewport_for(*screen, profile.image, profile.space)
    width, height = screen
    step = max(1, math.ceil(width / viewport._extent()[0])), max(1, math.ceil(height / viewport._extent()[1]))
    for x, y in [
        (0, 0),
        (width - 1, height - 1),
        (width // 2, height // 2),
        (864, 1125),
        (13, 1201),
        (517, 77),
    ]:
        x, y = min(x, width - 1), min(y, height - 1)
        for op in ("tap_point", "long_press_point"):
            action = build_action(dialect.registry, op, {"x": x, "y": y}, "t")
            reply = dialect.write(action, viewport)  # every grounded dialect taps and long-presses
            got = dialect.parse(reply, viewport).action
            assert got.name == op
            assert abs(got.params.x - x) < step[0] and abs(got.params.y - y) < step[1], reply
        # the pixel the space names for (x, y) round-trips exactly
        named = dialect.parse(dialect.write(build_action(dialect.registry, "tap_point", {"x": x, "y": y}, "t"),
                                            viewport), viewport).action.params  # fmt: skip
        again = build_action(dialect.registry, "tap_point", {"x": named.x, "y": named.y}, "t")
        assert dialect.parse(dialect.write(again, viewport), viewport).action.params == named


def test_replies_look_like_the_models_own():
    """One reply per dialect, as the sources print them (see each dialect's module doc)."""
    screen = (1080, 2400)

    def written(key: str, name: str, params: dict, thought: str = "") -> str:
        profile = ALL_PROFILES[key]
        dialect = make_dialect(profile)
        return dialect.write(build_action(dialect.registry, name, params, "t"),
                             viewport_for(*screen, profile.image, profile.space), thought)  # fmt: skip

    # UI-TARS-1.5: pixels of the 1092x2408 image smart_resize makes of 1080x2400
    assert written("ui_tars", "tap_point", {"x": 540, "y": 1200}, "Open it.") == (
        "Thought: Open it.\nAction: click(start_box='<|box_start|>(546,1204)<|box_end|>')"
    )
    assert written("ui-tars-1.0", "tap_point", {"x": 540, "y": 1200}) == (
        "Action: click(start_box='<|box_start|>(500,500)<|box_end|>')"
    )
    assert written("autoglm", "tap_point", {"x": 540, "y": 1200}, "Tap it.") == (
        '<think>Tap it.</think>\n<answer>do(action="Tap", element=[500,500])</answer>'
    )
    assert (
        written("autoglm", "open_app", {"app": "Settings"})
        == '<think></think>\n<answer>do(action="Launch", app="Settings")</answer>'
    )
    assert written("mobile_use", "tap_point", {"x": 540, "y": 1200}) == (
        '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [546, 1204]}}\n</tool_call>'
    )
    assert '"coordinate": [500, 500]' in written("qwen3-vl", "tap_point", {"x": 540, "y": 1200})
    assert written("mobile_use", "press_key", {"key": "enter"}).count('"button": "Enter"') == 1
    assert written("paper", "click_text", {"text": "Compose"}) == "Action: Click text (Compose)"
    assert written("function_calling", "click_text", {"text": "Compose"}) == (
        '<tool_call>\n{"name": "click_text", "arguments": {"text": "Compose"}}\n</tool_call>'
    )
