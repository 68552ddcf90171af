"""Operations at screen points, for models that ground by themselves (UI-TARS, Qwen's
``mobile_use``, AutoGLM-Phone): tap / long press / double tap at a point, swipe and drag
between points, scroll, keys, plus the shared Open App, Type and Wait, and the two ways
a grounded run ends: Finished (with an answer) and Hand over (to the user).

They live in their own registry, ``COORDINATE_REGISTRY``: the paper's prompt keeps its
own operations (a general model should name texts, not guess pixels). Every point here is
in **screen pixels**: the dialect mapped the model's point already (``planner.geometry``).

Taps go through snapping (``perception.snapping``, the locator's ``snap``) when
``planner.snap`` is on: the outcome keeps the model's
point, the tapped point and why (``Outcome.snap``).

Hand over asks the person (``Outcome.question``): a login, a captcha, a payment or a
choice only the user can make. A run with a person to ask pauses until the reply
(``agent.people``); without one it ends and reports (``Outcome.stop_reason``). It is
never ignored.

May import: pydantic, perception.types/snapping, mobile_agent.errors, the sibling modules.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mobile_agent.operations.catalog import open_app, type_text, wait
from mobile_agent.operations.context import OperationContext, Outcome
from mobile_agent.operations.lookup import snap_on
from mobile_agent.operations.parser import split_top_level, strip_quotes
from mobile_agent.operations.registry import OperationRegistry, card_of, operation
from perception.snapping import Snap

__all__ = ["COORDINATE_REGISTRY", "KEY_NAMES", "snap_tap"]

COORDINATE_REGISTRY = OperationRegistry()
# taps whose offsets agree within this share of the screen height show a drift (benchmarks/bench_dialects.py)
DRIFT_TOLERANCE = 0.02

_FROZEN = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")

# Keys a grounded model may press; names as ``Device.key`` takes them.
KEY_NAMES = (
    "back",
    "home",
    "enter",
    "app_switch",
    "menu",
    "delete",
    "search",
    "volume_up",
    "volume_down",
    "power",
)
_KEY_ALIASES = {"recent": "app_switch", "recents": "app_switch", "overview": "app_switch", "backspace": "delete",
                "del": "delete", "return": "enter"}  # fmt: skip


def _numbers(args: str, count: int, names: tuple[str, ...]) -> dict[str, Any]:
    found = _NUMBER_RE.findall(args)
    if len(found) != count:
        # let the model validation say what is missing
        return {n: v for n, v in zip(names, found, strict=False)}
    return {n: float(v) for n, v in zip(names, found, strict=True)}


class PointParams(BaseModel):
    model_config = _FROZEN
    x: int = Field(ge=0, le=100_000, description="screen pixels from the left edge")
    y: int = Field(ge=0, le=100_000, description="screen pixels from the top edge")


class StrokeParams(BaseModel):
    model_config = _FROZEN
    x1: int = Field(ge=0, le=100_000)
    y1: int = Field(ge=0, le=100_000)
    x2: int = Field(ge=0, le=100_000)
    y2: int = Field(ge=0, le=100_000)


Direction = Literal["up", "down", "left", "right"]


class ScrollParams(BaseModel):
    model_config = _FROZEN
    direction: Direction = Field(description="where the content moves into view: down shows what is below")
    x: int | None = Field(None, ge=0, le=100_000)
    y: int | None = Field(None, ge=0, le=100_000)

    @field_validator("direction", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class KeyParams(BaseModel):
    model_config = _FROZEN
    key: str = Field(min_length=1, max_length=30, description="back, home, enter, app_switch, menu, delete…")

    @field_validator("key", mode="before")
    @classmethod
    def _known(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        name = value.strip().lower().replace(" ", "_").replace("-", "_")
        name = name.removeprefix("keycode_")
        name = _KEY_ALIASES.get(name, name)
        if name not in KEY_NAMES:
            raise ValueError(f"key must be one of {', '.join(KEY_NAMES)}; got {value!r}")
        return name


class AnswerParams(BaseModel):
    # kept verbatim: an answer is the user's data
    model_config = ConfigDict(extra="forbid", frozen=True)
    answer: str = Field("", max_length=4000, description="the answer to the user's question, if any")


class MessageParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    message: str = Field("", max_length=2000, description="what the user must do, and why")


# --- snapping ---------------------------------------------------------------------------


def snap_tap(ctx: OperationContext, x: int, y: int) -> Snap | None:
    """The point to tap for the model's (x, y), or None when snapping is off."""
    planner = ctx.settings.planner
    if not planner.snap:
        return None
    _width, height = ctx.size
    max_distance = planner.snap_max_distance * height
    # the run's locator learns the model's drift over the taps
    return snap_on(ctx.device, ctx.locator, ctx.screenshot.pixels, (x, y), ctx.settings,
                   max_distance=max_distance, drift_tolerance=DRIFT_TOLERANCE * height)


def _clamped(ctx: OperationContext, x: int, y: int) -> tuple[int, int]:
    width, height = ctx.size
    return min(max(0, x), width - 1), min(max(0, y), height - 1)


def _press(ctx: OperationContext, params: PointParams, how: str) -> Outcome:
    x, y = _clamped(ctx, params.x, params.y)
    snap = snap_tap(ctx, x, y)
    point = snap.point if snap is not None else (x, y)
    if how == "long":
        ctx.device.long_press(*point)
    else:
        ctx.device.tap(*point)
        if how == "double":
            ctx.device.tap(*point)
    feedback = snap.reason if snap is not None and snap.moved else ""
    return Outcome(
        ok=True, feedback=feedback, tap_point=point, snap=snap.to_dict() if snap is not None else None
    )


# --- the operations ----------------------------------------------------------------------


@operation(
    syntax="Tap point (X, Y)",
    description="Tap the screen at (X, Y).",
    examples=("Tap point (540, 1200)",),
    aliases=("tap at", "click point", "click at", "tap xy"),
    split_args=lambda args: _numbers(args, 2, ("x", "y")),
    registry=COORDINATE_REGISTRY,
)
def tap_point(params: PointParams, ctx: OperationContext) -> Outcome:
    return _press(ctx, params, "tap")


@operation(
    syntax="Long press point (X, Y)",
    description="Press and hold the screen at (X, Y).",
    examples=("Long press point (540, 1200)",),
    aliases=("long press at", "long click point", "long tap point"),
    split_args=lambda args: _numbers(args, 2, ("x", "y")),
    registry=COORDINATE_REGISTRY,
)
def long_press_point(params: PointParams, ctx: OperationContext) -> Outcome:
    return _press(ctx, params, "long")


@operation(
    syntax="Double tap point (X, Y)",
    description="Tap the screen twice quickly at (X, Y).",
    examples=("Double tap point (540, 1200)",),
    aliases=("double tap at", "double click point"),
    split_args=lambda args: _numbers(args, 2, ("x", "y")),
    registry=COORDINATE_REGISTRY,
)
def double_tap_point(params: PointParams, ctx: OperationContext) -> Outcome:
    return _press(ctx, params, "double")


def _stroke(ctx: OperationContext, params: StrokeParams, duration_ms: int) -> Outcome:
    x1, y1 = _clamped(ctx, params.x1, params.y1)
    x2, y2 = _clamped(ctx, params.x2, params.y2)
    ctx.device.swipe(x1, y1, x2, y2, duration_ms=duration_ms)
    return Outcome(ok=True, swipe=(x1, y1, x2, y2))


@operation(
    syntax="Swipe points (X1, Y1, X2, Y2)",
    description="Move the finger from (X1, Y1) to (X2, Y2).",
    examples=("Swipe points (540, 1800, 540, 600)",),
    aliases=("swipe from to", "swipe between"),
    split_args=lambda args: _numbers(args, 4, ("x1", "y1", "x2", "y2")),
    registry=COORDINATE_REGISTRY,
)
def swipe_points(params: StrokeParams, ctx: OperationContext) -> Outcome:
    return _stroke(ctx, params, 400)


@operation(
    syntax="Drag (X1, Y1, X2, Y2)",
    description="Press at (X1, Y1), move slowly to (X2, Y2) and release (moves an item).",
    examples=("Drag (300, 800, 300, 1400)",),
    aliases=("drag and drop", "drag points"),
    split_args=lambda args: _numbers(args, 4, ("x1", "y1", "x2", "y2")),
    registry=COORDINATE_REGISTRY,
)
def drag(params: StrokeParams, ctx: OperationContext) -> Outcome:
    return _stroke(ctx, params, 1500)


def _split_scroll(args: str) -> dict[str, Any]:
    parts = [strip_quotes(p) for p in split_top_level(args)]
    out: dict[str, Any] = {"direction": parts[0] if parts else ""}
    numbers = _NUMBER_RE.findall(" ".join(parts[1:]))
    if len(numbers) == 2:
        out["x"], out["y"] = float(numbers[0]), float(numbers[1])
    return out


@operation(
    syntax="Scroll (Direction, X, Y)",
    description="Scroll the content at (X, Y) (the screen centre when not given) so that what is in "
    "Direction comes into view: down shows what is below.",
    examples=("Scroll (down, 540, 1200)", "Scroll (up)"),
    aliases=("scroll at", "scroll point"),
    split_args=_split_scroll,
    registry=COORDINATE_REGISTRY,
)
def scroll(params: ScrollParams, ctx: OperationContext) -> Outcome:
    width, height = ctx.size
    # the finger moves against the direction the content should come from
    dx, dy = {"down": (0, -1), "up": (0, 1), "right": (-1, 0), "left": (1, 0)}[params.direction]
    dx, dy = dx * int(width * 0.3), dy * int(height * 0.25)
    if params.x is None or params.y is None:  # a stroke centred on the screen
        x1, y1 = width // 2 - dx // 2, height // 2 - dy // 2
    else:
        x1, y1 = params.x, params.y
    x1, y1 = _clamped(ctx, x1, y1)
    x2, y2 = _clamped(ctx, x1 + dx, y1 + dy)
    ctx.device.swipe(x1, y1, x2, y2, duration_ms=400)
    return Outcome(ok=True, swipe=(x1, y1, x2, y2))


@operation(
    syntax="Press key (Key)",
    description=f"Press a key: {', '.join(KEY_NAMES)}.",
    examples=("Press key (back)", "Press key (home)"),
    aliases=("key", "press", "system button", "press button"),
    registry=COORDINATE_REGISTRY,
)
def press_key(params: KeyParams, ctx: OperationContext) -> Outcome:
    ctx.device.key(params.key)
    return Outcome(ok=True)


@operation(
    syntax="Finished (Answer)",
    description="The instruction is completed; Answer is the answer when the user asked a question.",
    examples=("Finished (The battery is at 85%)", "Finished"),
    aliases=("finish", "done", "terminate"),
    registry=COORDINATE_REGISTRY,
)
def finished(params: AnswerParams, ctx: OperationContext) -> Outcome:
    return Outcome(ok=True, terminal=True, feedback=params.answer)


@operation(
    syntax="Give up (Message)",
    description="The instruction cannot be completed: end the run and say why.",
    examples=("Give up (The app is not installed)",),
    aliases=("fail", "infeasible", "terminate failure"),
    registry=COORDINATE_REGISTRY,
)
def give_up(params: MessageParams, ctx: OperationContext) -> Outcome:
    reason = params.message or "no reason given"
    return Outcome(ok=True, terminal=True, feedback=reason, stop_reason=f"the model gave up: {reason}")


@operation(
    syntax="Hand over (Message)",
    description="Stop and hand the phone to the user (a login, a captcha, a payment, a choice only the "
    "user can make); Message says what the user must do.",
    examples=("Hand over (Please log in)",),
    aliases=("take over", "call user", "ask user", "handover"),
    registry=COORDINATE_REGISTRY,
)
def hand_over(params: MessageParams, ctx: OperationContext) -> Outcome:
    message = params.message or "the model asked for the user's help"
    return Outcome(
        ok=True, terminal=True, feedback=message, stop_reason=f"handed over to the user: {message}", question=message
    )


# Shared with the paper's operations: the same cards, in this registry too.
for _card in (card_of(open_app), card_of(type_text), card_of(wait)):
    COORDINATE_REGISTRY.register(_card)
