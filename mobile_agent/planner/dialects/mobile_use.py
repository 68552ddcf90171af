"""Qwen's ``mobile_use`` function: Qwen2.5-VL, Qwen3-VL, GUI-Owl / Mobile-Agent-v3.

Sources (read through the search tool; our prompt is written from them, not copied):
- QwenLM/Qwen2.5-VL ``cookbooks/mobile_agent.ipynb`` and ``cookbooks/utils/agent_function_call.py``
  (``MobileUse``: "The screen's resolution is {width}x{height}", actions ``key``, ``click``,
  ``long_press``, ``swipe`` (``coordinate`` → ``coordinate2``), ``type``, ``system_button``
  (Back/Home/Menu/Enter), ``open``, ``wait`` (``time``), ``terminate`` (``status``
  success/failure); replies as Hermes-style ``<tool_call>{"name": "mobile_use", "arguments":
  {...}}</tool_call>``), coordinates in pixels of the image after ``smart_resize`` (factor 28);
- the Qwen3-VL variant of the same function as used in public evaluation harnesses
  ("The screen's resolution is 999x999", adds ``answer``): a 0–999 grid, factor 32 images;
- the Qwen2.5-VL user prompt of those harnesses: ``<thinking>…</thinking>`` before the tool call,
  ``<conclusion>…</conclusion>`` after it;
- X-PLUG/MobileAgent (Mobile-Agent-v3 / GUI-Owl) uses the same function; MAI-UI's variant
  (``drag`` with ``start_coordinate``/``end_coordinate``, ``swipe`` with a ``direction``,
  ``INFO``/``ask_user`` to ask the user) is read too.

May import: the standard library, planner.dialects.base, planner.geometry, mobile_agent.operations.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mobile_agent.errors import UnknownOperationError
from mobile_agent.operations.context import Platform
from mobile_agent.operations.coordinates import COORDINATE_REGISTRY
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.planner.dialects.base import (
    DialectReply,
    ImagePart,
    UnwritableAction,
    build_action,
    first_json_object,
    history_text,
    no_action,
    point_of,
    screen_point,
    tag_text,
    written_point,
)
from mobile_agent.planner.geometry import IMAGE, CoordinateSpace, ImageRule, Viewport
from mobile_agent.planner.phones import phone_name, phone_note

__all__ = ["MobileUseDialect", "mobile_use_tool"]

_ACTIONS = """The action to perform. The available actions are:
* `key`: Send a key event (adb keyevent names: "volume_up", "volume_down", "power", "enter"...).
* `click`: Tap the point on the screen with coordinate (x, y).
* `long_press`: Press and hold the point with coordinate (x, y) for `time` seconds.
* `swipe`: Swipe from coordinate (x, y) to coordinate2 (x2, y2).
* `type`: Type `text` into the focused input box.
* `answer`: Give `text` as the answer to the user's question.
* `system_button`: Press a system button: Back, Home, Menu or Enter.
* `open`: Open the app named `text`.
* `wait`: Wait `time` seconds for the screen to change.
* `terminate`: End the task with `status` success or failure."""


def mobile_use_tool(width: int, height: int, platform: Platform = "android") -> dict[str, Any]:
    """The ``mobile_use`` function, described for a screen of width x height in the model's
    space, on the phone ``platform`` names (an iPhone: how its Back and Home work)."""
    note = phone_note(platform)
    point = "(x, y): pixels from the left edge and from the top edge."
    return {
        "type": "function",
        "function": {
            "name": "mobile_use",
            "description": "Use a touchscreen to interact with a mobile device, and take screenshots.\n"
            f"* This is {phone_name(platform)} with a touchscreen: tap, type, swipe and press its buttons.\n"
            + (f"* {note}\n" if note else "")
            +
            "* Apps may take time to load: wait and look at the next screenshot.\n"
            f"* The screen's resolution is {width}x{height}.\n"
            "* Tap buttons, links and icons at their centre, not on their edges.",
            "parameters": {
                "properties": {
                    "action": {
                        "description": _ACTIONS,
                        "enum": [
                            "key",
                            "click",
                            "long_press",
                            "swipe",
                            "type",
                            "answer",
                            "system_button",
                            "open",
                            "wait",
                            "terminate",
                        ],  # fmt: skip
                        "type": "string",
                    },
                    "coordinate": {
                        "description": point + " For click, long_press and swipe.",
                        "type": "array",
                    },
                    "coordinate2": {"description": point + " For swipe.", "type": "array"},
                    "text": {"description": "For key, type, answer and open.", "type": "string"},
                    "time": {"description": "Seconds, for long_press and wait.", "type": "number"},
                    "button": {
                        "description": "For system_button.",
                        "enum": ["Back", "Home", "Menu", "Enter"],
                        "type": "string",
                    },  # fmt: skip
                    "status": {
                        "description": "For terminate.",
                        "enum": ["success", "failure"],
                        "type": "string",
                    },
                },
                "required": ["action"],
                "type": "object",
            },
        },
    }


SYSTEM = """You are a helpful assistant that operates $phone.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
$tool
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>"""

USER = """The user query: $instruction
Task progress (You have done the following operation on the current device): $history
$feedback
Before answering, explain your reasoning step-by-step in <thinking></thinking> tags, and insert them before the <tool_call></tool_call> XML tags.
After answering, summarize your action in <conclusion></conclusion> tags, and insert them after the <tool_call></tool_call> XML tags."""

_DIRECTION_FINGER = {
    "up": "down",
    "down": "up",
    "left": "right",
    "right": "left",
}  # finger → content direction


@dataclass
class MobileUseDialect:
    """Qwen's ``mobile_use`` function in ``<tool_call>`` tags (or as a real tool call)."""

    space: CoordinateSpace = IMAGE
    rule: ImageRule | None = None
    name: str = "mobile_use"
    uses_paper_prompt: ClassVar[Literal[False]] = False

    registry = COORDINATE_REGISTRY

    def image_rule(self, default: ImageRule) -> ImageRule:
        return self.rule or default

    def tools(self) -> list[dict[str, Any]] | None:
        return None  # the tool is described in the system prompt, as Qwen's chat template does

    def _extent(self, viewport: Viewport) -> tuple[int, int]:
        if self.space.kind == "grid":
            return self.space.largest, self.space.largest
        return viewport.image_width, viewport.image_height

    def messages(
        self,
        instruction: str,
        history: Sequence[str],
        feedback: Sequence[str],
        viewport: Viewport,
        image_part: ImagePart,
        platform: Platform = "android",
    ) -> list[dict[str, Any]]:
        tool = json.dumps(mobile_use_tool(*self._extent(viewport), platform), ensure_ascii=False)
        shown_feedback = ("Feedback on the last operation: " + " ".join(feedback)) if feedback else ""
        user = (
            USER.replace("$instruction", instruction.strip())
            .replace("$history", history_text(history))
            .replace("$feedback", shown_feedback)
        )
        return [
            {"role": "system", "content": SYSTEM.replace("$tool", tool).replace("$phone", phone_name(platform))},
            {"role": "user", "content": [{"type": "text", "text": user}, image_part()]},
        ]

    def parse(
        self, text: str, viewport: Viewport, tool_calls: Sequence[Mapping[str, Any]] = ()
    ) -> DialectReply:
        raw = text or ""
        thought = tag_text(raw, "thinking") or tag_text(raw, "think") or ""
        if not thought:
            m = re.search(r"Thought\s*[:：]\s*(.*?)(?=\n\s*(?:Action\s*[:：]|<tool_call>)|$)", raw, re.DOTALL)
            thought = m.group(1).strip() if m else ""
        arguments = self._arguments(raw, tool_calls)
        if arguments is None:
            raise no_action(
                raw,
                '<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [x, y]}}</tool_call>',
            )
        shown = json.dumps(arguments, ensure_ascii=False)
        name, params, points = self._map(arguments, viewport, shown)
        action = build_action(self.registry, name, params, shown)
        summary = tag_text(raw, "conclusion") or ""
        return DialectReply(
            action=action, thought=thought, observation=summary, model_points=tuple(points), raw=raw
        )

    def write(self, action: ParsedAction, viewport: Viewport, thought: str = "") -> str:
        """``<thinking>…</thinking>`` (when there is a thought) and the Hermes-style
        ``<tool_call>{"name": "mobile_use", "arguments": {…}}</tool_call>`` of Qwen2.5-VL's
        ``cookbooks/mobile_agent.ipynb``; points in the model's space (resized-image
        pixels, or 0–999 for Qwen3-VL)."""
        call = json.dumps({"name": "mobile_use", "arguments": self._arguments_of(action, viewport)}, ensure_ascii=False)
        head = f"<thinking>\n{thought.strip()}\n</thinking>\n" if thought.strip() else ""
        return f"{head}<tool_call>\n{call}\n</tool_call>"

    def _coordinate(self, viewport: Viewport, x: int, y: int) -> list[float | int]:
        return [int(v) if float(v).is_integer() else v for v in written_point(viewport, x, y)]

    def _arguments_of(self, action: ParsedAction, viewport: Viewport) -> dict[str, Any]:
        p = action.params.model_dump()
        name = action.name
        if name in ("tap_point", "long_press_point"):
            verb = "click" if name == "tap_point" else "long_press"
            return {"action": verb, "coordinate": self._coordinate(viewport, p["x"], p["y"])}
        if name == "swipe_points":
            return {"action": "swipe", "coordinate": self._coordinate(viewport, p["x1"], p["y1"]),
                    "coordinate2": self._coordinate(viewport, p["x2"], p["y2"])}  # fmt: skip
        if name == "type":
            return {"action": "type", "text": p["text"]}
        if name == "press_key":
            buttons = {"back": "Back", "home": "Home", "menu": "Menu", "enter": "Enter"}
            if p["key"] in buttons:
                return {"action": "system_button", "button": buttons[p["key"]]}
            return {"action": "key", "text": p["key"]}
        if name == "open_app":
            return {"action": "open", "text": p["app"]}
        if name == "wait":
            seconds = float(p["seconds"])
            return {"action": "wait", "time": int(seconds) if seconds.is_integer() else seconds}
        if name == "finished":  # an answer is its own action; a plain end is terminate
            return {"action": "answer", "text": p["answer"]} if p["answer"] else {"action": "terminate", "status": "success"}
        raise UnwritableAction(self.name, name, "not in Qwen's mobile_use action space")

    @staticmethod
    def _arguments(raw: str, tool_calls: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        for call in (
            tool_calls
        ):  # a server that turns <tool_call> into real tool calls (vLLM --tool-call-parser hermes)
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping):
                args = function.get("arguments")
                if isinstance(args, str):
                    args = first_json_object(args)
                if isinstance(args, dict):
                    return args
        body = tag_text(raw, "tool_call")
        obj = first_json_object(body if body is not None else raw)
        if obj is None:
            return None
        args = obj.get("arguments", obj)
        if isinstance(args, str):
            args = first_json_object(args)
        return args if isinstance(args, dict) and "action" in args else None

    def _map(
        self, args: dict[str, Any], viewport: Viewport, raw: str
    ) -> tuple[str, dict[str, Any], list[tuple[float, float]]]:
        action = str(args.get("action", "")).strip().lower()
        p1 = point_of(args.get("coordinate") or args.get("start_coordinate"))
        p2 = point_of(args.get("coordinate2") or args.get("end_coordinate"))
        points = [p for p in (p1, p2) if p is not None]
        text = args.get("text")
        if action in ("click", "tap"):
            return "tap_point", screen_point(viewport, p1, raw), points
        if action == "long_press":
            return "long_press_point", screen_point(viewport, p1, raw), points
        if action in ("double_click", "double_tap"):
            return "double_tap_point", screen_point(viewport, p1, raw), points
        if action in ("swipe", "drag", "scroll"):
            direction = str(args.get("direction", "")).strip().lower()
            if p2 is None and direction:  # a swipe by direction: the finger's direction
                params: dict[str, Any] = {"direction": _DIRECTION_FINGER.get(direction, direction)}
                if p1 is not None:
                    params.update(screen_point(viewport, p1, raw))
                return "scroll", params, points
            a, b = (
                screen_point(viewport, p1, raw, "start point"),
                screen_point(viewport, p2, raw, "end point (coordinate2)"),
            )
            name = "drag" if action == "drag" else "swipe_points"
            return name, {"x1": a["x"], "y1": a["y"], "x2": b["x"], "y2": b["y"]}, points
        if action == "type":
            return "type", {"text": text if isinstance(text, str) else ""}, points
        if action == "key":
            return "press_key", {"key": text or args.get("key") or ""}, points
        if action == "system_button":
            return "press_key", {"key": str(args.get("button") or text or "")}, points
        if action in ("open", "awake", "open_app"):
            return "open_app", {"app": text or args.get("app") or ""}, points
        if action == "wait":
            seconds = args.get("time", 2)
            return "wait", {"seconds": seconds if seconds not in (None, "") else 2}, points
        if action == "answer":
            return "finished", {"answer": text if isinstance(text, str) else ""}, points
        if action == "terminate":
            status = str(args.get("status", "success")).strip().lower()
            if status in ("failure", "fail", "failed", "infeasible"):
                return "give_up", {"message": str(text or "terminated with status failure")}, points
            return "finished", {"answer": text if isinstance(text, str) else ""}, points
        if action in ("interact", "ask_user", "info", "call_user", "take_over"):
            return "hand_over", {"message": str(text or "the model asked for the user's help")}, points
        raise UnknownOperationError(
            f"Your mobile_use action {action!r} is not one of: key, click, long_press, swipe, type, answer, "
            "system_button, open, wait, terminate.",
            operation=action or None,
        )
