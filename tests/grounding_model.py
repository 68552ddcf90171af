"""A scripted grounding model for the scripted LLM server: it answers each planning request
with the next step of a reference solution, in one dialect's own reply format and
coordinate space, aiming at the ground-truth centre of the right element (plus an
optional drift), as UI-TARS, Qwen's ``mobile_use`` or AutoGLM-Phone would.

It looks at the simulated phone's ground truth (in process) the way a model looks at the
screenshot, and at the image the request carries to know the size it "sees". Its
coordinate arithmetic is written here on purpose, not borrowed from
``mobile_agent.planner.geometry``, so that the agent's mapping is checked against an
independent one.

Reply formats (the samples each dialect module names as its source):
- ``ui_tars``: ``Thought: …\\nAction: click(start_box='<|box_start|>(x,y)<|box_end|>')``;
- ``mobile_use``: ``<thinking>…</thinking>\\n<tool_call>\\n{"name": "mobile_use", "arguments": {…}}\\n</tool_call>``;
- ``autoglm``: ``<think>…</think>\\n<answer>do(action="Tap", element=[x,y])</answer>``;
- ``function_calling``: the paper's operation as an OpenAI tool call;
- ``paper``: Observation / Thought / Action.
"""

from __future__ import annotations

import base64
import io
import json
import random
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from tests.llm_server import Reply

__all__ = ["GROUNDED", "GroundingModel", "find_target", "render"]

# The model that plays each grounded dialect in the tests: (served model name, the dialect it
# answers in, its coordinate space). The served names are ones ``planner.dialect: auto``
# recognises (mobile_agent.planner.dialects), so a run picks the dialect as a user's would.
GROUNDED = [
    ("ui-tars-1.5-7b", "ui_tars", "image"),
    ("Qwen/Qwen2.5-VL-7B-Instruct", "mobile_use", "image"),
    ("autoglm-phone-9b", "autoglm", "grid"),
]

DONE = "Verdict: done\nReason: the screen shows the instruction carried out."


def _image_size(request_json: dict[str, Any]) -> tuple[int, int] | None:
    """(width, height) of the last image of the request: what the model sees."""
    size = None
    for message in request_json.get("messages", []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if part.get("type") == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                with Image.open(io.BytesIO(base64.b64decode(data))) as img:
                    size = img.size
    return size


def find_target(
    elements: Sequence[dict[str, Any]], kind: str, what: str, position: str | None = None
) -> dict | None:
    """The ground-truth element a reference step means: a text, or an icon by its look."""
    if kind == "text":
        exact = [e for e in elements if e["text"] == what or e["description"] == what]
        clickable = [e for e in exact if e.get("clickable")]
        return (clickable or exact or [None])[0]
    words = set(what.lower().split())
    icons = [
        e
        for e in elements
        if e["kind"] in ("icon", "widget")
        and words <= set(e["description"].lower().replace(",", " ").split())
    ]
    if position and icons:
        ys = [(e["box"][1] + e["box"][3]) / 2 for e in icons]
        xs = [(e["box"][0] + e["box"][2]) / 2 for e in icons]
        if "bottom" in position:
            icons = [icons[ys.index(max(ys))]]
        elif "top" in position:
            icons = [icons[ys.index(min(ys))]]
        elif "right" in position:
            icons = [icons[xs.index(max(xs))]]
    clickable = [e for e in icons if e.get("clickable")]
    return (clickable or icons or [None])[0]


@dataclass
class Step:
    """One abstract step: ``kind`` tap/long_press/type/key/open/swipe/finish, with a point
    as fractions of the screen (0..1) where it has one."""

    kind: str
    point: tuple[float, float] | None = None
    end: tuple[float, float] | None = None
    text: str = ""
    paper: str = ""  # the reference line, for the paper and function-calling dialects


def _to_model(frac: tuple[float, float], space: str, image: tuple[int, int]) -> tuple[int, int]:
    """A screen fraction as this model writes it: image pixels or a 0-999 grid, integers."""
    fx, fy = min(max(frac[0], 0.0), 0.9999), min(max(frac[1], 0.0), 0.9999)
    if space == "grid":
        return int(fx * 1000), int(fy * 1000)
    return int(fx * image[0]), int(fy * image[1])


def render(
    dialect: str, step: Step, space: str, image: tuple[int, int], thought: str = "Next step."
) -> str | Reply:
    """``step`` as ``dialect`` writes it."""
    p = _to_model(step.point, space, image) if step.point else None
    e = _to_model(step.end, space, image) if step.end else None
    if dialect == "paper":
        return f"Observation: a phone screen.\nThought: {thought}\nAction: {step.paper}"
    if dialect == "function_calling":
        from mobile_agent.operations import parse_action

        action = parse_action(step.paper)
        args = {k: v for k, v in action.params.model_dump().items() if v is not None}
        return Reply(
            text=f"Observation: a phone screen.\nThought: {thought}",
            tool_calls=((action.name, json.dumps(args)),),
        )
    if dialect == "ui_tars":

        def box(q: tuple[int, int] | None) -> str:
            assert q is not None
            return f"'<|box_start|>({q[0]},{q[1]})<|box_end|>'"

        call = {
            "tap": lambda: f"click(start_box={box(p)})",
            "long_press": lambda: f"long_press(start_box={box(p)})",
            "type": lambda: "type(content='" + step.text.replace("'", "\\'").replace("\n", "\\n") + "')",
            "key": lambda: {"back": "press_back()", "home": "press_home()"}.get(
                step.text, "type(content='\\n')"
            ),
            "open": lambda: f"open_app(app_name='{step.text}')",
            "swipe": lambda: f"drag(start_box={box(p)}, end_box={box(e)})",
            "finish": lambda: "finished(content='" + step.text.replace("'", "\\'") + "')",
        }[step.kind]()
        return f"Thought: {thought}\nAction: {call}"
    if dialect == "mobile_use":
        args: dict[str, Any] = {
            "tap": lambda: {"action": "click", "coordinate": list(p)},
            "long_press": lambda: {"action": "long_press", "coordinate": list(p), "time": 1},
            "type": lambda: {"action": "type", "text": step.text},
            "key": lambda: {"action": "system_button", "button": step.text.capitalize()},
            "open": lambda: {"action": "open", "text": step.text},
            "swipe": lambda: {"action": "swipe", "coordinate": list(p), "coordinate2": list(e)},
            "finish": lambda: {"action": "terminate", "status": "success"},
        }[step.kind]()
        call = json.dumps({"name": "mobile_use", "arguments": args}, ensure_ascii=False)
        return f"<thinking>{thought}</thinking>\n<tool_call>\n{call}\n</tool_call>\n<conclusion>{thought}</conclusion>"
    if dialect == "autoglm":
        quoted = step.text.replace('"', '\\"')
        code = {
            "tap": lambda: f'do(action="Tap", element=[{p[0]},{p[1]}])',
            "long_press": lambda: f'do(action="Long Press", element=[{p[0]},{p[1]}])',
            "type": lambda: f'do(action="Type", text="{step.text}")',
            "key": lambda: {"back": 'do(action="Back")', "home": 'do(action="Home")'}.get(
                step.text, 'do(action="Type", text="\\n")'
            ),
            "open": lambda: f'do(action="Launch", app="{step.text}")',
            "swipe": lambda: f'do(action="Swipe", start=[{p[0]},{p[1]}], end=[{e[0]},{e[1]}])',
            "finish": lambda: f'finish(message="{quoted}")',
        }[step.kind]()
        return f"<think>{thought}</think>\n<answer>{code}</answer>"
    raise ValueError(f"unknown dialect {dialect!r}")


_LINE_RE = re.compile(r"^\s*([A-Za-z ]+?)\s*(?:\((.*)\))?\s*$")


@dataclass
class GroundingModel:
    """A script item for ``ScriptedLLMServer``: called per request, it answers the next
    reference line, grounded on ``ground_truth()`` (the in-process phone's)."""

    dialect: str
    space: str  # "image" | "grid" | "screen"
    lines: list[str]
    ground_truth: Callable[[], list[dict[str, Any]]]
    screen: tuple[int, int] = (1080, 2400)
    drift: tuple[float, float] = (0.0, 0.0)  # constant offset, fractions of the screen (x, y)
    noise: float = 0.0  # standard deviation, fraction of the screen height
    rng: random.Random = field(default_factory=lambda: random.Random(7))
    answer: str = ""
    _next: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request_json: dict[str, Any]) -> str | Reply:
        text = "\n".join(
            p.get("text", "") if isinstance(p, dict) else str(p)
            for m in request_json.get("messages", [])
            for p in (
                m["content"] if isinstance(m.get("content"), list) else [{"text": m.get("content") or ""}]
            )
        )
        if "Verdict" in text and "Reason" in text and "tools" not in request_json:
            return DONE  # the paper's completion check
        with self._lock:
            index, self._next = self._next, self._next + 1
        image = _image_size(request_json) or self.screen
        if index >= len(self.lines):
            return render(
                self.dialect, Step("finish", text=self.answer, paper="Stop"), self.space, image, "All done."
            )
        return render(
            self.dialect, self.step_for(self.lines[index]), self.space, image, f"Reference step {index + 1}."
        )

    def _aim(self, box: list[int]) -> tuple[float, float]:
        w, h = self.screen
        x = (
            (box[0] + box[2]) / 2 / w
            + self.drift[0]
            + (self.rng.gauss(0, self.noise) * h / w if self.noise else 0.0)
        )
        y = (box[1] + box[3]) / 2 / h + self.drift[1] + (self.rng.gauss(0, self.noise) if self.noise else 0.0)
        return x, y

    def step_for(self, line: str) -> Step:
        """A reference line (the paper's syntax) as an abstract grounded step."""
        m = _LINE_RE.match(line)
        name, args = (m.group(1).strip().lower(), (m.group(2) or "").strip()) if m else (line.lower(), "")
        if name == "open app":
            return Step("open", text=args, paper=line)
        if name in ("click text", "long press"):
            target = find_target(self.ground_truth(), "text", args)
            if target is None:
                raise AssertionError(f"{args!r} is not on the simulated screen")
            return Step("tap" if name == "click text" else "long_press", self._aim(target["box"]), paper=line)
        if name == "click icon":
            parts = [a.strip() for a in args.split(",")]
            target = find_target(self.ground_truth(), "icon", parts[0], parts[1] if len(parts) > 1 else None)
            if target is None:
                raise AssertionError(f"icon {args!r} is not on the simulated screen")
            return Step("tap", self._aim(target["box"]), paper=line)
        if name == "type":
            return Step("type", text=args, paper=line)
        if name in ("back", "home", "exit", "enter"):
            return Step("key", text={"exit": "home"}.get(name, name), paper=line)
        if name in ("page down", "page up"):
            a, b = ((0.5, 0.75), (0.5, 0.25)) if name == "page down" else ((0.5, 0.25), (0.5, 0.75))
            return Step("swipe", a, b, paper=line)
        raise AssertionError(f"the grounding model cannot play {line!r}")
