"""Per-step targets in every planner dialect: what each model would have replied at a step.

A step of a verified run holds the operation done (the paper's ``Click text (Compose)``, or
a grounded model's ``tap_point``) and, for taps and swipes, the screen pixels it touched
(``tap_point`` / ``swipe``, found by perception at run time). From them each dialect's
target is written with the dialect's own ``write`` (``mobile_agent.planner.dialects``):
the paper's and function calling's from the operation, the coordinate dialects' from the
point, mapped into the model's space (``planner.geometry``: UI-TARS-1.5 and Qwen2.5-VL in
pixels of the smart-resized image, AutoGLM and Qwen3-VL on 0–999).

A step a dialect cannot express (UI-TARS and AutoGLM have no Enter key; the paper cannot
name a bare point) is skipped for that dialect and counted, with one exception taken from
the model's own prompt: UI-TARS submits by ending the typed text with "\\n"
(bytedance/UI-TARS ``codes/ui_tars/prompt.py``: "If you want to submit your input, use
\\"\\\\n\\" at the end of content"), so a Type followed by Enter is one UI-TARS step.

The prompt of a sample is the dialect's own ``messages`` for coordinate dialects (the
system prompt and user text the model is served with), and the short paper prompt for
the paper's and function calling's (their served prompt lists every operation card).

May import: mobile_agent (planner dialects, operations, the device's Platform), the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mobile_agent.device import Platform
from mobile_agent.errors import OperationError
from mobile_agent.operations import COORDINATE_REGISTRY, REGISTRY, OperationRegistry, ParsedAction
from mobile_agent.planner import ModelProfile, Viewport, viewport_for
from mobile_agent.planner.dialects import DIALECTS, build_action, make_dialect, profile_named

__all__ = ["DEFAULT_DIALECTS", "SUBMITTED", "TargetWriter", "grounded_action", "paper_action"]

DEFAULT_DIALECTS = DIALECTS
SUBMITTED = "submitted with the Type before it"
_KEYS = {"enter": "enter", "back": "back", "home": "home", "exit": "home"}


def _build(registry: OperationRegistry, name: str, params: Mapping[str, Any]) -> ParsedAction | None:
    try:
        return build_action(registry, name, params, name)
    except OperationError:
        return None


def paper_action(step: Mapping[str, Any]) -> ParsedAction | None:
    """The step's operation as the paper's registry has it; None for a grounded operation."""
    op = step.get("operation") or {}
    if op.get("name") not in {card.name for card in REGISTRY}:
        return None
    return _build(REGISTRY, op["name"], op.get("params") or {})


def grounded_action(step: Mapping[str, Any]) -> ParsedAction | None:
    """The step as a grounded (coordinate) operation, its point the one the run touched."""
    op = step.get("operation") or {}
    name, params = str(op.get("name", "")), dict(op.get("params") or {})
    if name in {card.name for card in COORDINATE_REGISTRY}:
        return _build(COORDINATE_REGISTRY, name, params)
    point, swipe = step.get("tap_point"), step.get("swipe")
    if name in ("click_text", "click_icon", "long_press"):
        if not point:
            return None
        op_name = "long_press_point" if name == "long_press" else "tap_point"
        return _build(COORDINATE_REGISTRY, op_name, {"x": point[0], "y": point[1]})
    if name in _KEYS:
        return _build(COORDINATE_REGISTRY, "press_key", {"key": _KEYS[name]})
    if name in ("page_up", "page_down", "swipe_left", "swipe_right"):
        if not swipe:
            return None
        return _build(COORDINATE_REGISTRY, "swipe_points", dict(zip(("x1", "y1", "x2", "y2"), swipe, strict=True)))
    if name == "stop":
        return _build(COORDINATE_REGISTRY, "finished", {"answer": str(params.get("answer", ""))})
    return None


class TargetWriter:
    """Writes one run's targets for one dialect (``name``: a dialect or a model profile key)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.profile: ModelProfile = profile_named(name)
        self.dialect: Any = make_dialect(self.profile)
        self.grounded = self.dialect.registry is COORDINATE_REGISTRY

    def viewport(self, width: int, height: int) -> Viewport:
        return viewport_for(width, height, self.profile.image, self.profile.space)

    def actions(self, steps: Sequence[Mapping[str, Any]], answer: str) -> list[ParsedAction | str]:
        """Each step's action in this dialect's registry, or why it has none; then the final
        Stop / Finished (the run's end is a step a model must learn too)."""
        out: list[ParsedAction | str] = []
        for step in steps:
            action = grounded_action(step) if self.grounded else paper_action(step)
            out.append(action if action is not None else f"cannot express {step['operation']['name']}")
        end = _build(COORDINATE_REGISTRY, "finished", {"answer": answer}) if self.grounded else _build(REGISTRY, "stop", {})
        assert end is not None
        out.append(end)
        if self.profile.dialect == "ui_tars":  # Type then Enter: one type(content='...\n')
            for i in range(len(out) - 1):
                typed, enter = out[i], out[i + 1]
                if (isinstance(typed, ParsedAction) and typed.name == "type" and isinstance(enter, ParsedAction)
                        and enter.name == "press_key" and enter.params.model_dump()["key"] == "enter"):  # fmt: skip
                    merged = _build(COORDINATE_REGISTRY, "type", {"text": typed.params.model_dump()["text"] + "\n"})
                    assert merged is not None
                    out[i], out[i + 1] = merged, SUBMITTED
        return out

    def reply(self, action: ParsedAction, width: int, height: int, thought: str = "") -> str:
        """The dialect's reply; ``UnwritableAction`` when its model has no such action."""
        return str(self.dialect.write(action, self.viewport(width, height), thought))

    def action_text(self, reply: str, width: int, height: int) -> str:
        """The action part of a reply, as the agent's history shows a model its own steps."""
        return str(self.dialect.parse(reply, self.viewport(width, height)).action.raw)

    def messages(self, instruction: str, history: Sequence[str], width: int, height: int,
                 platform: Platform = "android") -> list[dict[str, Any]]:
        """The prompt the dialect's model got at this step, naming the phone the run was on
        (``platform``: an iPhone's prompt says so, ``mobile_agent.planner.phones``)."""
        if self.dialect.uses_paper_prompt:  # the paper's prompt (and function calling's): the planner's own
            done = "\n".join(f"{i}. {line}" for i, line in enumerate(history, 1)) or "(none)"
            text = f"<image>\nInstruction: {instruction}\nPrevious actions:\n{done}\nWhat is the next action?"
            return [{"role": "user", "content": text}]
        raw = self.dialect.messages(instruction, list(history), [], self.viewport(width, height),
                                    lambda: {"type": "image"}, platform=platform)  # fmt: skip
        messages = []
        for message in raw:
            content = message["content"]
            if isinstance(content, list):  # the image where the dialect puts it
                content = "\n".join("<image>" if part.get("type") == "image" else part.get("text", "") for part in content)
            messages.append({"role": message["role"], "content": content})
        return messages


