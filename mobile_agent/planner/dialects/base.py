"""What every planner dialect is, and the reading helpers they share.

A dialect is: the messages a model is given (``messages``), the parser of its reply
(``parse``), its action space mapped onto our operations (``registry``: the paper's
``REGISTRY`` or the grounded ``COORDINATE_REGISTRY``) and its coordinate space
(``space``, mapped through ``planner.geometry.Viewport``).

``write`` is ``parse``'s inverse: the reply the model gives for an action, points in its
own space (``written_point``), or ``UnwritableAction`` outside its action space.

``parse`` returns a ``DialectReply``: the thought, the action as a ``ParsedAction`` of
``registry`` with its points already in **screen pixels**, and the points as the model
wrote them. A reply it cannot read raises the operations' errors
(``OperationParseError`` / ``UnknownOperationError`` / ``InvalidParametersError``) with a
message written for the model: model mistakes are data for the next step.

May import: pydantic, the standard library, mobile_agent.errors/operations, planner.geometry/types.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, TypeAlias

from pydantic import ValidationError

from mobile_agent.errors import InvalidParametersError, OperationParseError, UnknownOperationError
from mobile_agent.operations.context import Platform
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.operations.registry import OperationRegistry
from mobile_agent.planner.geometry import CoordinateSpace, ImageRule, Viewport

__all__ = [
    "Dialect",
    "DialectReply",
    "ImagePart",
    "OwnPromptDialect",
    "PaperPrompt",
    "PaperPromptDialect",
    "UnwritableAction",
    "build_action",
    "first_json_object",
    "history_text",
    "number_text",
    "numbers_in",
    "point_of",
    "tag_text",
    "written_point",
]

# The image content part of the step's frame in a message (the planner encodes and caches it).
ImagePart = Callable[[], dict[str, Any]]

_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class DialectReply:
    """A reply read by a dialect."""

    action: ParsedAction
    thought: str = ""
    observation: str = ""
    # the points as the model wrote them (its own space), for the step record
    model_points: tuple[tuple[float, float], ...] = ()
    raw: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)


class DialectReading(Protocol):
    """What every dialect is: how its model's replies are read and written, its action
    space and coordinates. Its prompt is one of two kinds (``Dialect``)."""

    name: str
    registry: OperationRegistry
    space: CoordinateSpace

    def image_rule(self, default: ImageRule) -> ImageRule:
        """How to size the screenshot for this dialect (``default``: from the settings/profile)."""
        ...

    def tools(self) -> list[dict[str, Any]] | None:
        """OpenAI ``tools`` to send with the call, or None."""
        ...

    def parse(
        self, text: str, viewport: Viewport, tool_calls: Sequence[Mapping[str, Any]] = ()
    ) -> DialectReply:
        """Read one reply (its text and, for function calling, its tool calls)."""
        ...

    def write(self, action: ParsedAction, viewport: Viewport, thought: str = "") -> str:
        """The reply this dialect's model gives for ``action`` (points in screen pixels),
        as its real replies look: ``parse(write(a)).action`` is ``a`` again. Raises
        ``UnwritableAction`` for an operation outside the model's action space."""
        ...


class PaperPromptDialect(DialectReading, Protocol):
    """A dialect prompted with the paper's prompt (the planner's own template and reflection,
    ``Planner.plan_messages``): the paper and function calling."""

    @property
    def uses_paper_prompt(self) -> Literal[True]: ...


class OwnPromptDialect(DialectReading, Protocol):
    """A dialect that writes its own messages (the grounded ones: UI-TARS, mobile_use, AutoGLM)."""

    @property
    def uses_paper_prompt(self) -> Literal[False]: ...

    def messages(
        self,
        instruction: str,
        history: Sequence[str],
        feedback: Sequence[str],
        viewport: Viewport,
        image_part: ImagePart,
        platform: Platform = "android",
    ) -> list[dict[str, Any]]:
        """The chat messages of one planning call, the step's frame where ``image_part()`` puts
        it, naming the phone ``platform`` says (``planner.phones``: on an iPhone, how its Back
        and Home work)."""
        ...


# One way of prompting a model and reading its replies: ``uses_paper_prompt`` tells the two
# kinds apart (a type checker narrows on it); only an ``OwnPromptDialect`` has ``messages``.
Dialect: TypeAlias = PaperPromptDialect | OwnPromptDialect


class PaperPrompt:
    """For the dialects whose prompt is the planner's own (the paper's, function calling's)."""

    name: str
    uses_paper_prompt: ClassVar[Literal[True]] = True


class UnwritableAction(ValueError):
    """A dialect has no way to write this operation (its model's action space lacks it):
    the data engine skips the step for that dialect and counts it."""

    def __init__(self, dialect: str, operation: str, why: str = "") -> None:
        super().__init__(f"the {dialect} dialect cannot write {operation}" + (f": {why}" if why else ""))
        self.dialect, self.operation = dialect, operation


# --- writing helpers (the targets of training samples: ``write`` on each dialect) ------


def written_point(viewport: Viewport, x: int, y: int) -> tuple[float, float]:
    """The point a model of this space writes for screen pixel (x, y): the value nearest
    the pixel's centre whose ``to_screen`` is (x, y) again, when the space can name that
    pixel (a space coarser than the screen cannot name every pixel: then the nearest).
    Integers, except 0–1 fractions (4 decimals), as ``Viewport.model_point``."""
    mx, my = viewport.model_point(x, y)
    unit = 0.0001 if viewport.space.kind == "normalized" else 1.0

    def fit(value: float, axis: int, target: int) -> float:
        for candidate in (value, value + unit, value - unit):
            point = (candidate, my) if axis == 0 else (mx, candidate)
            if viewport.to_screen(*point)[axis] == target:
                return round(candidate, 4) if unit < 1 else candidate
        return value

    return fit(mx, 0, x), fit(my, 1, y)


def number_text(value: float) -> str:
    """``12.0`` → ``12``; fractions as written (``0.4531``)."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# --- reading helpers ----------------------------------------------------------------------


def tag_text(text: str, tag: str) -> str | None:
    """What ``<tag>…</tag>`` holds; a missing closing tag runs to the next opening tag or
    the end (models cut off, or forget it). None when the tag is absent."""
    match = re.search(rf"<{tag}>", text, re.IGNORECASE)
    if match is None:
        return None
    rest = text[match.end() :]
    end = re.search(rf"</{tag}>", rest, re.IGNORECASE)
    if end is not None:
        return rest[: end.start()].strip()
    nxt = re.search(r"<[a-z_]+>", rest, re.IGNORECASE)
    return (rest[: nxt.start()] if nxt else rest).strip()


def numbers_in(text: str) -> list[float]:
    return [float(n) for n in _NUMBER_RE.findall(text)]


def point_of(value: Any) -> tuple[float, float] | None:
    """A point from whatever a model wrote: ``[x, y]``, ``(x,y)``, ``"<point>x y</point>"``,
    ``"<|box_start|>(x1,y1)<|box_end|>"``, or a box of four numbers (its centre)."""
    if isinstance(value, Mapping):
        value = [value.get("x"), value.get("y")]
    if isinstance(value, (list, tuple)):
        flat: list[Any] = []
        for item in value:  # [[x1, y1], [x2, y2]]: a box as two points
            flat.extend(item if isinstance(item, (list, tuple)) else [item])
        try:
            nums = [float(v) for v in flat]
        except (TypeError, ValueError):
            return None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return None
    elif isinstance(value, str):
        nums = numbers_in(value.replace("<|box_start|>", " ").replace("<|box_end|>", " "))
    else:
        return None
    if len(nums) == 2:
        return nums[0], nums[1]
    if len(nums) == 4:  # a box: (x1, y1, x2, y2)
        return (nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2
    return None


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (fences and prose around it allowed)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _end = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def history_text(history: Sequence[str], limit: int = 40) -> str:
    if not history:
        return "None yet: this is the first step."
    items = list(history)[-limit:]
    skipped = len(history) - len(items)
    lines = [f"({skipped} earlier steps omitted)"] if skipped else []
    lines += [f"{i}. {line}" for i, line in enumerate(items, start=skipped + 1)]
    return "\n".join(lines)


def build_action(registry: OperationRegistry, name: str, params: Mapping[str, Any], raw: str) -> ParsedAction:
    """A ``ParsedAction`` of ``registry``; bad parameters raise ``InvalidParametersError``."""
    try:
        card = registry.get(name)
    except UnknownOperationError:
        raise
    try:
        model = card.params_model.model_validate(dict(params))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidParametersError(
            f"Your action {raw.strip()[:120]!r} has bad parameters: {problems}.", operation=card.name
        ) from exc
    return ParsedAction(name=card.name, params=model, raw=raw.strip(), text=card.render(model))


def screen_point(
    viewport: Viewport, point: tuple[float, float] | None, raw: str, what: str = "point"
) -> dict[str, int]:
    """``{"x", "y"}`` in screen pixels for a model point, or a parse error for the model."""
    if point is None:
        raise OperationParseError(f"Your action {raw.strip()[:120]!r} has no readable {what}: give two numbers x, y.",
                                  reply=raw[:2000])  # fmt: skip
    x, y = viewport.to_screen(*point)
    return {"x": x, "y": y}


def no_action(raw: str, expected: str) -> OperationParseError:
    return OperationParseError(
        f"Your reply has no action I can read. Answer with {expected}.", reply=raw[:2000]
    )
