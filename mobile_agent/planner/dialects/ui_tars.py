"""The UI-TARS dialect (UI-TARS 1.0 / 1.5 / 2 served as chat models).

Sources (read through the search tool; our prompt is written from them, not copied):
- bytedance/UI-TARS ``codes/ui_tars/prompt.py`` (MOBILE_USE prompt: "Thought: … / Action: …",
  ``click(start_box='<|box_start|>(x1,y1)<|box_end|>')``, ``long_press``, ``type(content='')``
  with "\\n" to submit, ``scroll(start_box=…, direction=…)``, ``open_app(app_name='')``,
  ``drag(start_box=…, end_box=…)``, ``press_home()``, ``press_back()``,
  ``finished(content='xxx')``); the computer-use prompt adds ``call_user()`` and ``wait()``;
- bytedance/UI-TARS ``codes/ui_tars/action_parser.py`` and ``codes/tests/action_parser_test.py``:
  ``<point>x y</point>`` (UI-TARS-1.5 / UI-TARS-desktop ``click(point='<point>200 300</point>')``),
  ``start_point=``/``end_point=``/``point=`` as synonyms of the boxes, a box of two points taken
  at its centre, a missing closing parenthesis tolerated; coordinates are absolute pixels of
  the image after ``smart_resize`` (factor 28) for UI-TARS-1.5 (Qwen2.5-VL based), and a
  0–1000 grid for UI-TARS 1.0 (``factor=1000``);
- httprunner ``uixt/ai/prompt-ui-tars.go`` (the same mobile action space, "Use Chinese in Thought").

May import: the standard library, planner.dialects.base, planner.geometry, mobile_agent.operations.
"""

from __future__ import annotations

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
    history_text,
    no_action,
    number_text,
    point_of,
    screen_point,
    written_point,
)
from mobile_agent.planner.geometry import IMAGE, CoordinateSpace, ImageRule, Viewport
from mobile_agent.planner.phones import phone_name, phone_note

__all__ = ["UiTarsDialect", "parse_call"]

PROMPT = """You are a GUI agent operating $phone. You get a task, your action history and a screenshot, and you give the next action.

## Output Format
```
Thought: ...
Action: ...
```

## Action Space
click(start_box='<|box_start|>(x1,y1)<|box_end|>')
long_press(start_box='<|box_start|>(x1,y1)<|box_end|>')
type(content='') # to submit the input, end content with "\\n"
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')
open_app(app_name='')
drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')
press_home()
press_back()
wait()
finished(content='xxx') # the task is done; content answers the user's question if there is one
call_user() # the task needs the user: a login, a captcha, a payment, a choice

## Note
- Write a small plan in Thought, then summarize your next action (with its target element) in one sentence.
- Coordinates are pixels of the screenshot ($width x $height), origin at the top left.

## User Instruction
$instruction
"""

# Chinese function names some checkpoints print
_CHINESE = {"点击": "click", "单击": "click", "长按": "long_press", "输入": "type", "滚动": "scroll", "滑动": "scroll",
            "打开应用": "open_app", "打开": "open_app", "拖动": "drag", "返回": "press_back", "主页": "press_home",
            "等待": "wait", "完成": "finished", "结束": "finished", "呼叫用户": "call_user"}  # fmt: skip
_CALL_RE = re.compile(r"([A-Za-z_]+|[\u4e00-\u9fff]+)\s*\((.*)", re.DOTALL)
_KWARG_RE = re.compile(r"([A-Za-z_]+)\s*=\s*(['\"])(.*?)\2\s*(?=,\s*[A-Za-z_]+\s*=|\)?\s*$)", re.DOTALL)


def parse_call(action: str) -> tuple[str, dict[str, str]]:
    """``click(start_box='(1,2)')`` → ("click", {"start_box": "(1,2)"}); a missing closing
    parenthesis is fine. Raises ValueError when it is not a call."""
    text = action.strip().strip("`").strip()
    match = _CALL_RE.match(text)
    if match is None:
        bare = text.rstrip("()").strip()
        if re.fullmatch(r"[A-Za-z_]+|[\u4e00-\u9fff]+", bare):
            return bare, {}
        raise ValueError(f"not a function call: {text[:80]!r}")
    name, rest = match.group(1), match.group(2).rstrip()
    rest = rest[:-1] if rest.endswith(")") else rest
    kwargs: dict[str, str] = {}
    content = re.match(r"\s*content\s*=\s*(['\"])(.*)\1\s*$", rest, re.DOTALL)
    if content is not None:  # the typed text may hold quotes and commas: take all of it
        kwargs["content"] = content.group(2)
        return name, kwargs
    for kw in _KWARG_RE.finditer(rest):
        kwargs[kw.group(1)] = kw.group(3)
    return name, kwargs


def _unescape(text: str) -> str:
    return text.replace("\\n", "\n").replace("\\'", "'").replace('\\"', '"')


def _escape(text: str) -> str:
    """What ``_unescape`` reads back: the model writes a quote as \\' and a new line as \\n."""
    return text.replace("'", "\\'").replace("\n", "\\n")


@dataclass
class UiTarsDialect:
    """UI-TARS: ``Thought:``/``Action:`` with Python-like calls and box-token points."""

    space: CoordinateSpace = IMAGE
    rule: ImageRule | None = None
    name: str = "ui_tars"
    uses_paper_prompt: ClassVar[Literal[False]] = False

    registry = COORDINATE_REGISTRY

    def image_rule(self, default: ImageRule) -> ImageRule:
        return self.rule or default

    def tools(self) -> list[dict[str, Any]] | None:
        return None

    def messages(
        self,
        instruction: str,
        history: Sequence[str],
        feedback: Sequence[str],
        viewport: Viewport,
        image_part: ImagePart,
        platform: Platform = "android",
    ) -> list[dict[str, Any]]:
        width, height = (viewport.image_width, viewport.image_height)
        if self.space.kind == "grid":
            width = height = self.space.grid
        note = phone_note(platform)
        prompt = (
            PROMPT.replace("$phone", phone_name(platform))
            .replace("- Coordinates are", (f"- {note}\n" if note else "") + "- Coordinates are")
            .replace("$instruction", instruction.strip())
            .replace("$width", str(width))
            .replace("$height", str(height))
        )
        if self.space.kind == "grid":
            prompt = prompt.replace(
                "pixels of the screenshot", f"on a 0-{self.space.largest} grid over the screenshot"
            )
        text = prompt + "\n## Action History\n" + history_text(history)
        if feedback:
            text += "\n\n## Feedback on the last action\n" + "\n".join(f"- {f}" for f in feedback)
        return [{"role": "user", "content": [{"type": "text", "text": text}, image_part()]}]

    def parse(
        self, text: str, viewport: Viewport, tool_calls: Sequence[Mapping[str, Any]] = ()
    ) -> DialectReply:
        raw = text or ""
        thought = ""
        m = re.search(
            r"(?:Thought|Reflection|Action_Summary)\s*[:：]\s*(.*?)(?=\n\s*Action\s*[:：]|$)", raw, re.DOTALL
        )
        if m:
            thought = m.group(1).strip()
        parts = re.split(r"Action\s*[:：]", raw)
        action_text = parts[-1].strip() if len(parts) > 1 else raw.strip()
        # several actions separated by blank lines: the first is this step's
        action_text = action_text.split("\n\n")[0].strip()
        if not action_text:
            raise no_action(
                raw, "Action: click(start_box='<|box_start|>(x1,y1)<|box_end|>') or another action"
            )
        try:
            func, kwargs = parse_call(action_text)
        except ValueError:
            raise no_action(
                raw, "Action: click(start_box='<|box_start|>(x1,y1)<|box_end|>') or another action"
            ) from None
        func = _CHINESE.get(func, func).lower()
        name, params, points = self._map(func, kwargs, viewport, action_text)
        action = build_action(self.registry, name, params, action_text)
        return DialectReply(action=action, thought=thought, model_points=tuple(points), raw=raw)

    def write(self, action: ParsedAction, viewport: Viewport, thought: str = "") -> str:
        """``Thought: …`` / ``Action: click(start_box='<|box_start|>(x,y)<|box_end|>')`` as in
        the MOBILE_USE prompt of ``codes/ui_tars/prompt.py`` (the Thought line is left out
        when there is none)."""
        call = self._call(action, viewport)
        return (f"Thought: {thought.strip()}\n" if thought.strip() else "") + f"Action: {call}"

    def _box(self, viewport: Viewport, x: int, y: int) -> str:
        mx, my = written_point(viewport, x, y)
        return f"'<|box_start|>({number_text(mx)},{number_text(my)})<|box_end|>'"

    def _call(self, action: ParsedAction, viewport: Viewport) -> str:
        p = action.params.model_dump()
        name = action.name
        if name in ("tap_point", "long_press_point"):
            func = "click" if name == "tap_point" else "long_press"
            return f"{func}(start_box={self._box(viewport, p['x'], p['y'])})"
        if name == "drag":
            return (f"drag(start_box={self._box(viewport, p['x1'], p['y1'])}, "
                    f"end_box={self._box(viewport, p['x2'], p['y2'])})")  # fmt: skip
        if name == "scroll":
            where = f"start_box={self._box(viewport, p['x'], p['y'])}, " if p.get("x") is not None else ""
            return f"scroll({where}direction='{p['direction']}')"
        if name == "type":
            return f"type(content='{_escape(p['text'])}')"
        if name == "open_app":
            return f"open_app(app_name='{p['app']}')"
        if name == "press_key" and p["key"] in ("back", "home"):
            return f"press_{p['key']}()"
        if name == "wait" and float(p["seconds"]) == 5:  # UI-TARS's wait() is always 5 s
            return "wait()"
        if name == "finished":
            return f"finished(content='{_escape(p['answer'])}')"
        what = f"{name} ({p.get('key') or p.get('seconds')})" if name in ("press_key", "wait") else name
        raise UnwritableAction(self.name, what, "not in UI-TARS's mobile action space")

    def _map(
        self, func: str, kwargs: dict[str, str], viewport: Viewport, raw: str
    ) -> tuple[str, dict[str, Any], list[tuple[float, float]]]:
        start = kwargs.get("start_box") or kwargs.get("start_point") or kwargs.get("point")
        end = kwargs.get("end_box") or kwargs.get("end_point")
        p1, p2 = point_of(start) if start else None, point_of(end) if end else None
        points = [p for p in (p1, p2) if p is not None]
        if func in ("click", "left_single", "tap"):
            return "tap_point", screen_point(viewport, p1, raw), points
        if func in ("long_press", "long_click"):
            return "long_press_point", screen_point(viewport, p1, raw), points
        if func in ("left_double", "double_click", "double_tap"):
            return "double_tap_point", screen_point(viewport, p1, raw), points
        if func == "type":
            return "type", {"text": _unescape(kwargs.get("content", ""))}, points
        if func == "scroll":
            params: dict[str, Any] = {"direction": kwargs.get("direction", "")}
            if p1 is not None:
                params.update(screen_point(viewport, p1, raw))
            return "scroll", params, points
        if func in ("drag", "select", "swipe"):
            a, b = (
                screen_point(viewport, p1, raw, "start point"),
                screen_point(viewport, p2, raw, "end point"),
            )
            return (
                ("drag" if func != "swipe" else "swipe_points"),
                {"x1": a["x"], "y1": a["y"], "x2": b["x"], "y2": b["y"]},
                points,
            )
        if func == "open_app":
            return "open_app", {"app": kwargs.get("app_name", "")}, points
        if func == "press_home":
            return "press_key", {"key": "home"}, points
        if func == "press_back":
            return "press_key", {"key": "back"}, points
        if func in ("hotkey", "press"):
            return "press_key", {"key": kwargs.get("key", "")}, points
        if func == "wait":
            return "wait", {"seconds": 5}, points  # UI-TARS: "Sleep for 5s"
        if func == "finished":
            return "finished", {"answer": _unescape(kwargs.get("content", ""))}, points
        if func == "call_user":
            return "hand_over", {"message": "the model asked for the user's help (call_user)"}, points
        raise UnknownOperationError(
            f"Your action {func!r} is not one of: click, long_press, type, scroll, open_app, drag, press_home, "
            "press_back, wait, finished, call_user.",
            operation=func,
        )
