"""The operations the planner may use, one decorated function each.

The paper's eight (Open App, Click text, Click icon, Type, Page up, Page down, Back,
Exit, Stop) plus what real apps need: Home, Long press, Swipe left/right, Enter, Wait.
To add an operation, add one decorated function here: its card (prompt text, parser,
JSON schema) comes from the decorator and its parameter model.

Model mistakes (text not on screen, unknown app) return ``Outcome(ok=False, feedback)``;
device errors propagate and end the run.

May import: pydantic, perception.types, perception.blank_screen, mobile_agent.errors, the sibling modules;
mobile_agent.device.hierarchy lazily (the accessibility tree, when that setting is on).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mobile_agent.errors import RunCancelled
from mobile_agent.operations.context import OperationContext, Outcome
from mobile_agent.operations.lookup import find_icon_on, find_text_on
from mobile_agent.operations.open_app import open_app_by_name
from mobile_agent.operations.parser import NamedApp, TypedText, split_top_level, strip_quotes
from mobile_agent.operations.registry import operation
from mobile_agent.operations.secrets import resolve_secrets
from perception.types import LocateStatus, Location

__all__ = ["find_icon_on", "find_text_on", "normalize_position"]

_FROZEN = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

# --- positions ---------------------------------------------------------------------

_POSITION_WORDS = {
    "top": "top",
    "upper": "top",
    "up": "top",
    "bottom": "bottom",
    "lower": "bottom",
    "down": "bottom",
    "left": "left",
    "right": "right",
    "center": "center",
    "centre": "center",
    "middle": "center",
    "central": "center",
}
_POSITION_ORDER = ("top", "bottom", "center", "left", "right")
POSITIONS_HELP = "one or two of top, bottom, left, right, center (e.g. 'top right')"


# Filler a model adds around a position ("top right corner of the screen").
_POSITION_FILLER = frozenset({"corner", "side", "of", "the", "screen", "part", "area", "edge", "at", "on", "in"})


def _position_words(text: str) -> list[str] | None:
    words = [w for w in text.lower().replace("-", " ").replace("_", " ").replace("/", " ").split() if w]
    words = [w for w in words if w not in _POSITION_FILLER]
    if not words or any(w not in _POSITION_WORDS for w in words):
        return None
    return [_POSITION_WORDS[w] for w in words]


def normalize_position(text: str | None) -> str | None:
    """``"Top-Right"`` → ``"top right"``; None or "" → None; anything else raises ValueError."""
    if text is None or not str(text).strip():
        return None
    words = _position_words(str(text))
    if words is None or len(words) > 2:
        raise ValueError(f"Position must be {POSITIONS_HELP}; got {text!r}")
    unique = sorted(set(words), key=_POSITION_ORDER.index)
    if len(unique) != len(words) or {"top", "bottom"} <= set(unique) or {"left", "right"} <= set(unique):
        raise ValueError(f"Position must be {POSITIONS_HELP}; got {text!r}")
    return " ".join(unique)


def _split_icon_args(args: str) -> dict[str, Any]:
    """``"checkmark, top right"`` → icon + position; trailing parts made only of
    position words are the position (at most two words), the rest is the icon."""
    parts = [strip_quotes(p) for p in split_top_level(args)]
    position: list[str] = []
    while len(parts) > 1:
        words = _position_words(parts[-1])
        if words is None or len(position) + len(words) > 2:
            break
        position = [parts.pop()] + position
    icon = ", ".join(parts)
    return {"icon": icon, "position": " ".join(position) if position else None}


# --- parameter models ----------------------------------------------------------------


class NoParams(BaseModel):
    model_config = _FROZEN


class AppParams(NamedApp):
    model_config = _FROZEN
    app: str = Field(min_length=1, max_length=100, description="the app's name as shown under its icon")


class TextParams(BaseModel):
    model_config = _FROZEN
    text: str = Field(min_length=1, max_length=200, description="the text exactly as it appears on the screen")


class IconParams(BaseModel):
    model_config = _FROZEN
    icon: str = Field(min_length=1, max_length=200,
                      description="the icon's look: color and shape; among look-alikes also which one, by count "
                      "(the second play button) or by a quoted text beside it (play button in the 'News' row)")
    position: str | None = Field(None, description=f"where on the screen: {POSITIONS_HELP}")

    @field_validator("position", mode="before")
    @classmethod
    def _position(cls, value: Any) -> str | None:
        return normalize_position(value)


class TypeParams(TypedText):
    # Typed text is kept verbatim: no whitespace stripping.
    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str = Field(min_length=1, max_length=2000, description="the text to type")


_SECONDS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:s|sec|secs|second|seconds)?\s*$", re.IGNORECASE)


class WaitParams(BaseModel):
    model_config = _FROZEN
    seconds: float = Field(2.0, gt=0, le=10, description="how long to wait, at most 10 seconds")

    @field_validator("seconds", mode="before")
    @classmethod
    def _unit(cls, value: Any) -> Any:
        """Models write ``Wait (3s)`` or ``Wait (3 seconds)``: the unit is dropped."""
        if isinstance(value, str):
            match = _SECONDS_RE.match(value)
            if match:
                return match.group(1)
        return value


# --- helpers -----------------------------------------------------------------------------


def _find_text(ctx: OperationContext, text: str) -> Location:
    return find_text_on(ctx.device, ctx.locator, ctx.screenshot.pixels, text, ctx.settings)


def _tap_location(ctx: OperationContext, loc: Location, *, long_press: bool = False) -> Outcome:
    """Tap (or long-press) what the locator found; candidates go through ``ctx.choose``."""
    point: tuple[int, int] | None = None
    if loc.status is LocateStatus.FOUND and loc.point is not None:
        point = loc.point
    elif loc.status is LocateStatus.CANDIDATES and loc.candidates:
        index = ctx.choose(loc) if ctx.choose is not None else None
        chosen = next((c for c in loc.candidates if c.index == index), None)
        if chosen is None:
            listed = ", ".join(f"{c.index}: {c.text or 'box'} at {c.box.center}" for c in loc.candidates)
            return Outcome(
                ok=False,
                feedback=loc.feedback
                or f"Several places match {loc.target!r} ({listed}) and none was chosen; "
                "name the target more precisely or use another operation.",
                location=loc,
            )
        point = chosen.box.center
    if point is None:
        return Outcome(ok=False, feedback=_not_found_feedback(loc), location=loc)
    x, y = point
    if long_press:
        ctx.device.long_press(x, y)
    else:
        ctx.device.tap(x, y)
    return Outcome(ok=True, feedback="", tap_point=(x, y), location=loc)


def _not_found_feedback(loc: Location) -> str:
    if loc.feedback:
        return loc.feedback
    closest = ", ".join(repr(t) for t in loc.closest[:5])
    if loc.status is LocateStatus.TOO_MANY:
        return f"{loc.target!r} appears too many times on the screen; choose a more specific text or another operation."
    tail = f" The closest texts on the screen are: {closest}." if closest else ""
    return f"{loc.target!r} is not on the current screen.{tail} Choose another text or another operation."


def _swipe(ctx: OperationContext, fx1: float, fy1: float, fx2: float, fy2: float) -> Outcome:
    width, height = ctx.size
    vector = (int(width * fx1), int(height * fy1), int(width * fx2), int(height * fy2))
    ctx.device.swipe(*vector, duration_ms=400)
    return Outcome(ok=True, swipe=vector)


class QuestionParams(BaseModel):
    # kept verbatim: the user reads it
    model_config = ConfigDict(extra="forbid", frozen=True)
    question: str = Field("", max_length=2000, description="what to ask the user, or what the user must do")


# --- the operations ------------------------------------------------------------------------


@operation(
    syntax="Open App (App)",
    description="Open the app named App. Use the name shown under its icon on the home screen.",
    limitations=("Only apps installed on the phone can be opened.",),
    examples=("Open App (Settings)",),
    aliases=("open", "launch", "launch app", "open application", "start app"),
)
def open_app(params: AppParams, ctx: OperationContext) -> Outcome:
    # name → package through every layer of mobile_agent.apps, else the home pages and the drawer
    return open_app_by_name(params.app, ctx)


@operation(
    syntax="Click text (Text)",
    description="Tap the place on the screen where Text is written. Text must be visible on the current screenshot.",
    limitations=("Text must be copied exactly as shown; if it appears several times you may be asked to choose.",),
    examples=("Click text (Display & brightness)",),
    aliases=("click", "tap", "tap text", "click on text", "press text"),
)
def click_text(params: TextParams, ctx: OperationContext) -> Outcome:
    return _tap_location(ctx, _find_text(ctx, params.text))


@operation(
    syntax="Click icon (Icon, Position)",
    description="Tap an icon that has no text. Icon describes its look (color and shape); Position says "
    f"where it is: {POSITIONS_HELP}. When several icons look alike, Icon also says which one, by count "
    "(the second play button, the last star, the play button in the third row) or by a text beside it in quotes "
    "(play button in the 'News' row, gear next to 'Settings', check left of 'Wi-Fi', arrow above 'Inbox').",
    limitations=("Prefer Click text when the target has a visible label.",
                 "Say either a count or a quoted text, not both; the quoted text must be on the screen."),
    examples=("Click icon (checkmark, top right)", "Click icon (grey gear, center)",
              "Click icon (yellow play button in the 'Premier League' row)"),
    aliases=("tap icon", "click on icon", "press icon"),
    split_args=_split_icon_args,
)
def click_icon(params: IconParams, ctx: OperationContext) -> Outcome:
    return _tap_location(ctx, find_icon_on(ctx.device, ctx.locator, ctx.screenshot.pixels, params.icon, params.position,
                                           ctx.settings))


@operation(
    syntax="Long press (Text)",
    description="Press and hold on the place where Text is written (opens context menus, selects items).",
    examples=("Long press (Notes)",),
    aliases=("long click", "long tap", "press and hold", "long press text"),
)
def long_press(params: TextParams, ctx: OperationContext) -> Outcome:
    return _tap_location(ctx, _find_text(ctx, params.text), long_press=True)


@operation(
    syntax="Type (Text)",
    description="Type Text into the input box that has the focus. Click the input box first if the "
    "keyboard is not shown.",
    limitations=("Typing does not press Enter; use Enter afterwards to submit.",),
    examples=("Type (Hello, world)",),
    aliases=("type text", "input", "input text", "enter text", "write"),
    name="type",
)
def type_text(params: TypeParams, ctx: OperationContext) -> Outcome:
    # {{secret:name}} becomes its value only here, on its way to the device; feedback keeps the name
    lines = resolve_secrets(params.text, ctx.settings).split("\n")
    if len(lines) == 1:
        ctx.device.type_text(lines[0])
        return Outcome(ok=True, feedback=f"Typed {params.text!r}.")
    # A newline is the Enter key, as on the on-screen keyboard: a multi-line field (a note's
    # body, a mail) takes it as a line break; a single-line field (a search box, a chat
    # input) submits on it and closes the keyboard, and the lines after it would go nowhere.
    for i, line in enumerate(lines):
        if i:
            ctx.device.key("enter")
            if ctx.device.keyboard_shown() is False:
                shown = params.text.split("\n")  # the names of secrets, never their values
                typed, rest = "\n".join(shown[:i]), "\n".join(shown[i:])
                return Outcome(
                    ok=False,
                    feedback=f"Typed {typed!r} and pressed Enter for the line break: the field took Enter "
                    f"as submit (the keyboard closed), so {rest!r} was not typed.",
                )
        if line:
            ctx.device.type_text(line)
    return Outcome(ok=True, feedback=f"Typed {len(lines)} lines, pressing Enter between them: {params.text!r}.")


# A page scroll moves the content by 40% of the screen: less than any list's visible part
# (a title bar, the status and navigation bars take the rest), so the new view keeps rows of
# the last one and no row is ever skipped between two pages (issue 28: on a tablet, a half
# screen stepped over a row in the 56% of the screen its list had).
PAGE_SCROLL = 0.4


@operation(
    syntax="Page up",
    description="Scroll the current page up to show what is above (the finger moves down 40% of the screen; "
    "the new view keeps part of the last one).",
    examples=("Page up",),
    aliases=("scroll up", "page_up"),
)
def page_up(params: NoParams, ctx: OperationContext) -> Outcome:
    return _swipe(ctx, 0.5, 0.5 - PAGE_SCROLL / 2, 0.5, 0.5 + PAGE_SCROLL / 2)


@operation(
    syntax="Page down",
    description="Scroll the current page down to show what is below (the finger moves up 40% of the screen; "
    "the new view keeps part of the last one).",
    examples=("Page down",),
    aliases=("scroll down", "page_down"),
)
def page_down(params: NoParams, ctx: OperationContext) -> Outcome:
    return _swipe(ctx, 0.5, 0.5 + PAGE_SCROLL / 2, 0.5, 0.5 - PAGE_SCROLL / 2)


@operation(
    syntax="Swipe left",
    description="Move the finger from right to left across the screen (next tab, page or photo).",
    examples=("Swipe left",),
    aliases=("swipe to left",),
)
def swipe_left(params: NoParams, ctx: OperationContext) -> Outcome:
    return _swipe(ctx, 0.8, 0.5, 0.2, 0.5)


@operation(
    syntax="Swipe right",
    description="Move the finger from left to right across the screen (previous tab, page or photo).",
    examples=("Swipe right",),
    aliases=("swipe to right",),
)
def swipe_right(params: NoParams, ctx: OperationContext) -> Outcome:
    return _swipe(ctx, 0.2, 0.5, 0.8, 0.5)


@operation(
    syntax="Back",
    description="Press the Back key: return to the previous page or close the keyboard.",
    examples=("Back",),
    aliases=("go back", "press back", "back key", "back button"),
)
def back(params: NoParams, ctx: OperationContext) -> Outcome:
    ctx.device.key("back")
    return Outcome(ok=True)


@operation(
    syntax="Exit",
    description="Leave the current app and return directly to the home screen (desktop).",
    examples=("Exit",),
    aliases=("exit app", "quit", "quit app", "close app"),
    name="exit",
)
def exit_app(params: NoParams, ctx: OperationContext) -> Outcome:
    ctx.device.key("home")
    return Outcome(ok=True)


@operation(
    syntax="Home",
    description="Press the Home key (same screen as Exit).",
    examples=("Home",),
    aliases=("go home", "press home", "home key", "home button", "home screen", "go to home screen"),
)
def home(params: NoParams, ctx: OperationContext) -> Outcome:
    ctx.device.key("home")
    return Outcome(ok=True)


@operation(
    syntax="Enter",
    description="Press the Enter key: submit what was typed (search, send, go).",
    examples=("Enter",),
    aliases=("press enter", "enter key", "hit enter", "keyboard enter"),
)
def enter(params: NoParams, ctx: OperationContext) -> Outcome:
    ctx.device.key("enter")
    return Outcome(ok=True)


@operation(
    syntax="Wait (Seconds)",
    description="Wait for the screen to finish loading (at most 10 seconds; default 2).",
    examples=("Wait (3)", "Wait"),
    aliases=("sleep", "pause"),
)
def wait(params: WaitParams, ctx: OperationContext) -> Outcome:
    if ctx.cancel.wait(params.seconds):
        raise RunCancelled("the run was cancelled during a Wait")
    return Outcome(ok=True, feedback=f"Waited {params.seconds:g} s.")


@operation(
    syntax="Ask user (Question)",
    description="Ask the user and wait for the answer: for what only the user knows or may do (a password "
    "or code you were not given, a captcha, a choice between options, a payment). The user answers in words, "
    "or does it on the phone and says so; then go on from the new screenshot.",
    examples=("Ask user (Which of the two Bobs should get the message?)", "Ask user (Please type the SMS code)"),
    aliases=("ask the user", "call user", "take over"),  # not "hand over": the grounded operation's name
)
def ask_user(params: QuestionParams, ctx: OperationContext) -> Outcome:
    question = params.question or "the model asked for the user's help"
    return Outcome(
        ok=True, terminal=True, feedback=question, stop_reason=f"handed over to the user: {question}", question=question
    )


@operation(
    syntax="Stop",
    description="The instruction is completed: end the whole process.",
    examples=("Stop",),
    aliases=("done", "finish", "finished", "complete", "task complete", "end"),
)
def stop(params: NoParams, ctx: OperationContext) -> Outcome:
    return Outcome(ok=True, terminal=True)
