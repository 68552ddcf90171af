"""The AutoGLM-Phone dialect (zai-org/AutoGLM-Phone-9B and its multilingual sibling).

Sources (read through the search tool; our prompt is written from them, not copied):
- zai-org/Open-AutoGLM ``phone_agent/config/prompts_zh.py`` and ``prompts_en.py``: the reply
  ``<think>{think}</think>`` then ``<answer>{action}</answer>``; actions
  ``do(action="Launch", app="xxx")``, ``do(action="Tap", element=[x,y])`` (with
  ``message="…"`` for a sensitive tap: payment, privacy), ``Type``/``Type_Name`` (``text=``),
  ``Interact``, ``Swipe`` (``start=[x1,y1], end=[x2,y2]``), ``Note``, ``Call_API``,
  ``Long Press``, ``Double Tap``, ``Take_over`` (``message=``: login, verification),
  ``Back``, ``Home``, ``Wait`` (``duration="x seconds"``), and ``finish(message="xxx")``;
  "the coordinate system starts at the top-left (0,0) and ends at the bottom-right (999,999)";
- ``phone_agent/actions/handler.py``: ``parse_action`` (a Type's text taken whole, the rest
  through ``ast``), relative coordinates mapped by ``/1000 * size``, a sensitive Tap asks the
  user to confirm, ``Take_over`` waits for the user.

Here a sensitive Tap is a tap marked ``sensitive`` (the run asks the person to confirm it
first, ``agent.guard``; refused, the model hears so), and ``Take_over`` / ``Interact`` hand
over to the person: the run pauses until they reply (``agent.people``). Unlike the official
client's ``input("Press Enter…")``, the reply may come from any interface (the terminal,
the REST service, the dashboard).

May import: the standard library, planner.dialects.base, planner.geometry, mobile_agent.operations.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
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
    numbers_in,
    point_of,
    screen_point,
    tag_text,
    written_point,
)
from mobile_agent.planner.geometry import GRID_1000, CoordinateSpace, ImageRule, Viewport
from mobile_agent.planner.phones import phone_note

__all__ = ["AutoGlmDialect", "parse_do"]

SYSTEM = """You are a phone operation agent. From the task, the history of your operations and the current screenshot, you choose the next operation.
Always answer in exactly this format:
<think>{think}</think>
<answer>{action}</answer>

{think} is a short reason for the operation; {action} is one operation written as below.

- do(action="Launch", app="xxx"): open an app directly.
- do(action="Tap", element=[x,y]): tap a point. Coordinates go from (0,0) at the top left to (999,999) at the bottom right.
- do(action="Tap", element=[x,y], message="important operation"): a tap that pays, confirms or shares private data; the user is asked first.
- do(action="Type", text="xxx"): type into the focused input box (tap it first).
- do(action="Swipe", start=[x1,y1], end=[x2,y2]): swipe from start to end (0-999 coordinates).
- do(action="Long Press", element=[x,y]): press and hold a point.
- do(action="Double Tap", element=[x,y]): tap a point twice quickly.
- do(action="Back"): the Back button.
- do(action="Home"): the Home button.
- do(action="Wait", duration="x seconds"): wait for the page to load.
- do(action="Take_over", message="xxx"): the user must take over (login, verification).
- do(action="Interact"): several options fit and the user must choose.
- finish(message="xxx"): the task is complete; message reports the result or answers the question.

Rules:
1. If the current app is not the one the task needs, Launch it first.
2. On an unrelated page, go Back.
3. If a page has not loaded, Wait at most three times in a row, then go Back and retry.
4. If what you look for is not on the page, Swipe to look for it.
5. Before finish, check that the whole task is done."""

# Chinese action names a model may print instead of the English ones
_CHINESE = {"点击": "Tap", "单击": "Tap", "长按": "Long Press", "双击": "Double Tap", "滑动": "Swipe",
            "输入": "Type", "启动": "Launch", "打开": "Launch", "返回": "Back", "主页": "Home", "桌面": "Home",
            "等待": "Wait", "接管": "Take_over", "交互": "Interact", "完成": "finish", "结束": "finish"}  # fmt: skip


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", _CHINESE.get(name.strip(), name.strip())).lower()


def parse_do(code: str) -> tuple[str, dict[str, Any]]:
    """``do(action="Tap", element=[1,2])`` → ("tap", {"element": [1, 2]});
    ``finish(message="x")`` → ("finish", {"message": "x"}). Raises ValueError."""
    text = code.strip().strip("`").strip()
    if text.startswith("finish"):
        m = re.match(r"finish\s*\(\s*(?:message\s*=\s*)?(['\"])(.*)\1\s*\)?\s*$", text, re.DOTALL)
        return "finish", {"message": m.group(2) if m else ""}
    if not text.startswith("do"):
        raise ValueError(f"not a do(...) or finish(...) call: {text[:80]!r}")
    # a typed text may hold quotes: take all of it, as Open-AutoGLM's handler does
    typed = re.match(
        r"do\s*\(\s*action\s*=\s*(['\"])(Type|Type_Name|输入)\1\s*,\s*text\s*=\s*(['\"])(.*)\3\s*\)?\s*$",
        text,
        re.DOTALL,
    )
    if typed is not None:
        return "type", {"text": typed.group(4).replace("\\n", "\n")}  # a Python string: \n is a new line
    call = text if text.rstrip().endswith(")") else text + ")"
    try:
        tree = ast.parse(call.replace("\n", "\\n"), mode="eval")
        if not isinstance(tree.body, ast.Call):
            raise ValueError("not a call")
        kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in tree.body.keywords if kw.arg}
    except (SyntaxError, ValueError) as exc:
        # e.g. element=[x, y] with a stray token: read the name and the numbers by pattern
        name = re.search(r"action\s*=\s*['\"]([^'\"]+)['\"]", text)
        if name is None:
            raise ValueError(f"cannot read {text[:80]!r}: {exc}") from None
        kwargs = {"action": name.group(1)}
        for key in ("element", "start", "end"):
            m = re.search(rf"{key}\s*=\s*\[([^\]]*)\]?", text)
            if m:
                kwargs[key] = numbers_in(m.group(1))
    action = kwargs.pop("action", "")
    return _norm(str(action)), kwargs


@dataclass
class AutoGlmDialect:
    """AutoGLM-Phone: ``<think>`` / ``<answer>do(action=…)</answer>`` on a 0–999 grid."""

    space: CoordinateSpace = GRID_1000
    rule: ImageRule | None = None
    name: str = "autoglm"
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
        text = f"{instruction.strip()}\n\n** Operation history **\n{history_text(history)}"
        if feedback:
            text += "\n\n** Feedback on the last operation **\n" + "\n".join(f"- {f}" for f in feedback)
        text += "\n\n** Screen Info **\nThe image is the current screenshot."
        note = phone_note(platform)
        system = SYSTEM + (f"\n6. {note}" if note else "")
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": [{"type": "text", "text": text}, image_part()]},
        ]

    def parse(
        self, text: str, viewport: Viewport, tool_calls: Sequence[Mapping[str, Any]] = ()
    ) -> DialectReply:
        raw = text or ""
        thought = tag_text(raw, "think") or ""
        answer = tag_text(raw, "answer")
        if answer is None:  # no tags: the official client splits at the first do( / finish(
            m = re.search(r"(do\s*\(|finish\s*\()", raw)
            if m is None:
                raise no_action(
                    raw,
                    '<answer>do(action="Tap", element=[x,y])</answer> or <answer>finish(message="...")</answer>',
                )
            if not thought:
                thought = raw[: m.start()].replace("<think>", "").strip()
            answer = raw[m.start() :]
        code = next(
            (line.strip() for line in answer.splitlines() if line.strip().startswith(("do", "finish"))),
            answer.strip(),
        )
        if code.startswith("do") and "\n" in answer.strip():  # a Type whose text has new lines
            code = answer.strip()[answer.strip().find("do") :]
        try:
            name, kwargs = parse_do(code)
        except ValueError:
            raise no_action(
                raw,
                '<answer>do(action="Tap", element=[x,y])</answer> or <answer>finish(message="...")</answer>',
            ) from None
        op, params, points = self._map(name, kwargs, viewport, code)
        action = build_action(self.registry, op, params, code)
        if name == "tap" and kwargs.get("message"):
            # handler.py's _handle_tap: "if 'message' in action" -> confirmation_callback(message)
            action = replace(action, sensitive=str(kwargs["message"]))
        return DialectReply(action=action, thought=thought, model_points=tuple(points), raw=raw)

    def write(self, action: ParsedAction, viewport: Viewport, thought: str = "") -> str:
        """``<think>…</think>`` then ``<answer>do(action=…)</answer>``, the reply format of
        Open-AutoGLM's ``prompts_en.py``; points on its 0–999 grid."""
        return f"<think>{thought.strip()}</think>\n<answer>{self._code(action, viewport)}</answer>"

    def _element(self, viewport: Viewport, x: int, y: int) -> str:
        mx, my = written_point(viewport, x, y)
        return f"[{number_text(mx)},{number_text(my)}]"

    def _code(self, action: ParsedAction, viewport: Viewport) -> str:
        p = action.params.model_dump()
        name = action.name
        taps = {"tap_point": "Tap", "long_press_point": "Long Press", "double_tap_point": "Double Tap"}
        if name in taps:
            sensitive = f", message={json.dumps(action.sensitive, ensure_ascii=False)}" if action.sensitive else ""
            return f'do(action="{taps[name]}", element={self._element(viewport, p["x"], p["y"])}{sensitive})'
        if name == "swipe_points":
            return (f'do(action="Swipe", start={self._element(viewport, p["x1"], p["y1"])}, '
                    f'end={self._element(viewport, p["x2"], p["y2"])})')  # fmt: skip
        if name == "type":  # the handler takes the text whole: quotes as they are, \n as a new line
            return f'do(action="Type", text="{p["text"].replace(chr(10), chr(92) + "n")}")'
        if name == "open_app":
            return f'do(action="Launch", app={json.dumps(p["app"], ensure_ascii=False)})'
        if name == "press_key" and p["key"] in ("back", "home"):
            return f'do(action="{p["key"].title()}")'
        if name == "wait":
            return f'do(action="Wait", duration="{number_text(float(p["seconds"]))} seconds")'
        if name == "hand_over" and p["message"]:
            return f'do(action="Take_over", message={json.dumps(p["message"], ensure_ascii=False)})'
        if name == "finished":
            return f'finish(message="{p["answer"]}")'
        what = f"press_key ({p['key']})" if name == "press_key" else name
        raise UnwritableAction(self.name, what, "not in AutoGLM-Phone's action space")

    def _map(
        self, name: str, kwargs: dict[str, Any], viewport: Viewport, raw: str
    ) -> tuple[str, dict[str, Any], list[tuple[float, float]]]:
        p1 = point_of(kwargs.get("element") or kwargs.get("start"))
        p2 = point_of(kwargs.get("end"))
        points = [p for p in (p1, p2) if p is not None]
        if name == "tap":  # a message makes it sensitive: parse() marks it, the run asks first
            return "tap_point", screen_point(viewport, p1, raw), points
        if name == "longpress":
            return "long_press_point", screen_point(viewport, p1, raw), points
        if name == "doubletap":
            return "double_tap_point", screen_point(viewport, p1, raw), points
        if name == "swipe":
            a, b = screen_point(viewport, p1, raw, "start"), screen_point(viewport, p2, raw, "end")
            return "swipe_points", {"x1": a["x"], "y1": a["y"], "x2": b["x"], "y2": b["y"]}, points
        if name in ("type", "typename"):
            return "type", {"text": str(kwargs.get("text", ""))}, points
        if name == "launch":
            return "open_app", {"app": str(kwargs.get("app", ""))}, points
        if name == "back":
            return "press_key", {"key": "back"}, points
        if name == "home":
            return "press_key", {"key": "home"}, points
        if name == "wait":
            duration = kwargs.get("duration", "2 seconds")
            found = numbers_in(str(duration))
            return "wait", {"seconds": min(10.0, max(0.5, found[0])) if found else 2.0}, points
        if name == "takeover":
            return "hand_over", {"message": str(kwargs.get("message") or "the user must take over")}, points
        if name == "interact":
            return "hand_over", {"message": "several options fit: the user must choose"}, points
        if name == "finish":
            return "finished", {"answer": str(kwargs.get("message", ""))}, points
        raise UnknownOperationError(
            f"Your action {name!r} is not one of: Launch, Tap, Type, Swipe, Long Press, Double Tap, Back, Home, "
            "Wait, Take_over, Interact, finish.",
            operation=name or None,
        )
