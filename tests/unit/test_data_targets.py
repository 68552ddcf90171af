"""Per-step targets from step records (no phone): the paper's steps become grounded actions
at the point the run touched, a grounded model's own steps pass through, what a dialect
cannot express is said, and UI-TARS folds Type + Enter into one ``type(content='…\\n')``."""

from __future__ import annotations

import pytest

from eval.data_engine.targets import SUBMITTED, TargetWriter, grounded_action, paper_action
from mobile_agent.planner.dialects.base import UnwritableAction


def _step(name: str, params: dict | None = None, point: list[int] | None = None) -> dict:
    return {"operation": {"name": name, "params": params or {}}, "tap_point": point, "swipe": None}


def test_paper_steps_become_grounded_actions_at_the_touched_point():
    tap = grounded_action(_step("click_text", {"text": "Compose"}, [864, 2125]))
    assert tap is not None and (tap.name, tap.params.x, tap.params.y) == ("tap_point", 864, 2125)
    assert grounded_action(_step("click_text", {"text": "Compose"})) is None  # no point recorded: nothing to aim at
    assert grounded_action(_step("exit")).params.key == "home"
    assert grounded_action(_step("stop")).name == "finished"
    # a grounded model's own step passes through; the paper has no words for a bare point
    own = _step("tap_point", {"x": 10, "y": 20})
    assert grounded_action(own).params.x == 10 and paper_action(own) is None
    assert paper_action(_step("click_text", {"text": "Compose"})).text == "Click text (Compose)"


def test_each_dialect_says_what_it_cannot_write():
    steps = [_step("open_app", {"app": "Chrome"}), _step("click_text", {"text": "Search"}, [540, 300]),
             _step("type", {"text": "jazz history"}), _step("enter")]  # fmt: skip
    tars = TargetWriter("ui_tars").actions(steps, "")
    assert tars[2].params.text == "jazz history\n" and tars[3] == SUBMITTED and tars[4].name == "finished"
    glm = TargetWriter("autoglm")
    actions = glm.actions(steps, "")
    with pytest.raises(UnwritableAction):
        glm.reply(actions[3], 1080, 2400)
    assert glm.reply(actions[1], 1080, 2400) == '<think></think>\n<answer>do(action="Tap", element=[500,125])</answer>'
    paper = TargetWriter("paper").actions([_step("tap_point", {"x": 1, "y": 2})], "")
    assert paper[0] == "cannot express tap_point" and paper[1].name == "stop"


def test_prompts_are_the_dialects_own_with_one_image():
    for name in ("ui_tars", "mobile_use", "autoglm", "paper", "qwen3-vl"):
        writer = TargetWriter(name)
        messages = writer.messages("Search the web for jazz history.", ["Step 1: open_app -> done"], 1080, 2400)
        text = "\n".join(m["content"] for m in messages)
        assert text.count("<image>") == 1 and "jazz history" in text and "Step 1: open_app" in text
        assert messages[-1]["role"] == "user"
    with pytest.raises(ValueError, match="unknown dialect or model profile"):
        TargetWriter("gpt-5-vision")
