"""Scripted mode: run a file of operations with no LLM.

A script is the model's action syntax, one operation per line; blank lines and lines
starting with ``#`` are skipped::

    # turn on the dark mode
    Open App (Settings)
    Click text (Display)
    Click text (Dark theme)
    Stop

Each line goes through the same localization and execution as a planned step, and the
run writes the same trajectory. The whole script is parsed before the device is
touched: a bad line is an ``OperationParseError`` naming its line number. A step that
cannot be carried out (text not found, several candidates and none chosen) ends the run
``not_completed``; ``Stop`` or the end of the script ends it ``completed``.

Several places match: there is no model to choose, so a ``Click text``, ``Long press``
or ``Click icon`` line may end with ``#N``, the candidate to use when perception finds
several (numbered in reading order, as the annotated screenshots show them)::

    Click text (Groceries) #2

A list longer than the screen: ``Page down until (Text)`` (or ``Page up until``) turns
pages until Text is on the screen, at most ``MAX_PAGES`` times, and takes no step when it
is there already (the reference solutions put one before each text they tap, so that they
reach it on a screen of any size)::

    Page down until (About phone)
    Click text (About phone)

May import: ``mobile_agent`` (settings, errors, device, operations, locate, apps) and this
package's modules.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mobile_agent.agent.guard import Guard
from mobile_agent.agent.parts import TimedLocator, close_run_device, open_run_device, run_locator
from mobile_agent.agent.records import RunResult, RunStatus
from mobile_agent.agent.session import EventCallback, RunSession, carry_out
from mobile_agent.agent.step import StepDraft, StepEnd
from mobile_agent.apps.platforms import app_id_platform
from mobile_agent.errors import OperationError, OperationParseError, UnknownOperationError
from mobile_agent.operations.catalog import find_text_on
from mobile_agent.operations.context import AgentDevice, Locator
from mobile_agent.operations.coordinates import COORDINATE_REGISTRY
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.operations.registry import REGISTRY, parse_action
from mobile_agent.settings import Settings
from perception.types import LocateStatus, Location

if TYPE_CHECKING:
    from mobile_agent.device import Phone, Platform

__all__ = ["MAX_PAGES", "ScriptLine", "ScriptedRun", "parse_script", "run_script", "script_app_platforms"]


# "... #2" at the end of a line: the candidate to use when several places match
_CANDIDATE_RE = re.compile(r"^(?P<action>.*\S)\s+#\s*(?P<number>\d{1,3})\s*$")
_CHOOSING = frozenset({"click_text", "long_press", "click_icon"})  # operations that locate a target
_FREE_TEXT = frozenset({"type"})  # their text may end with "#N" itself
# "Page down until (Text)": turn pages until Text shows, at most MAX_PAGES times
# (the text is checked non-blank after the match: ".*\S.*" backtracked quadratically on a line with no ")")
_UNTIL_RE = re.compile(r"^(?P<action>page\s*(?:down|up))\s+until\s*\((?P<text>.*)\)\s*$", re.IGNORECASE)
MAX_PAGES = 10
# The longest script line parsed: no operation's fields take more (Type's text is at most 2000
# characters), and a longer one is refused before any parsing (the parser's cost grows with it)
MAX_LINE_CHARS = 8192


@dataclass(frozen=True)
class ScriptLine:
    number: int  # 1-based line number in the script text
    text: str
    action: ParsedAction
    candidate: int | None = None  # "#N": the candidate to use when several places match
    until: str | None = None  # "Page down until (Text)": the text whose showing ends the paging


def _parse_line(number: int, text: str) -> ScriptLine:
    if len(text) > MAX_LINE_CHARS:
        raise OperationParseError(f"the line is over {MAX_LINE_CHARS} characters: no operation takes that much")
    until = _UNTIL_RE.match(text)
    if until is not None and until.group("text").strip():
        return ScriptLine(number, text, parse_action(f"Action: {until.group('action')}"), until=until.group("text").strip())
    match = _CANDIDATE_RE.match(text)
    if match is not None:
        action = parse_action(f"Action: {match.group('action')}")
        if action.name in _CHOOSING:
            candidate = int(match.group("number"))
            if candidate < 1:
                raise OperationParseError("a candidate number counts from 1 (#1 is the first)", operation=action.name)
            return ScriptLine(number, text, action, candidate)
        if action.name not in _FREE_TEXT:
            raise OperationParseError(
                f"a candidate number (#{match.group('number')}) applies only to Click text, Long press "
                f"and Click icon, not to {action.text!r}",
                operation=action.name,
            )
    return ScriptLine(number, text, _script_action(text))


# "Tap (540, 1200)": two numbers are a point on the screen, not a text to look for
_POINT_RE = re.compile(r"^\s*(\d{1,5})\s*[,，]\s*(\d{1,5})\s*$")
_POINT_FORMS = {"click_text": "Tap point", "long_press": "Long press point"}


def _script_action(text: str) -> ParsedAction:
    """A script line's operation: the paper's operations, the coordinate operations
    (``Tap point (X, Y)``, ``Swipe points (…)``…), and a tap or long press whose text is
    two numbers read as the point it names."""
    try:
        action = parse_action(f"Action: {text}")
    except UnknownOperationError:
        return parse_action(f"Action: {text}", COORDINATE_REGISTRY)
    point_form = _POINT_FORMS.get(action.name)
    point = _POINT_RE.match(str(action.params.model_dump().get("text") or "")) if point_form else None
    if point_form is None or point is None:
        return action
    return parse_action(f"Action: {point_form} ({point.group(1)}, {point.group(2)})", COORDINATE_REGISTRY)


def parse_script(script_text: str) -> list[ScriptLine]:
    """Every operation of a script, validated; raises ``OperationParseError`` with ``line``."""
    if not isinstance(script_text, str):
        raise OperationParseError(f"a script must be text, got {type(script_text).__name__}")
    lines: list[ScriptLine] = []
    for number, raw in enumerate(script_text.splitlines(), start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            lines.append(_parse_line(number, text))
        except OperationError as exc:
            message = exc.message
            if isinstance(exc, UnknownOperationError):  # the parser's wording tells a model to answer 'Action: …'
                message = f"{exc.fields.get('operation')!r} is not an operation; the operations: {REGISTRY.syntax_list()}"
            raise OperationParseError(
                f"script line {number}: {message}", reply=text, line=number, operation=exc.fields.get("operation")
            ) from exc
    if not lines:
        raise OperationParseError("the script holds no operation (only blank lines and # comments)")
    return lines


def script_app_platforms(lines: list[ScriptLine]) -> dict[str, Platform]:
    """The app ids the script's Open App lines name that only one platform has
    (``mobile_agent.apps.platforms``), with that platform: ``Open App (com.android.settings)``
    runs on an Android phone only. Names ("Settings") and ids of no known platform are left out."""
    found: dict[str, Platform] = {}
    for line in lines:
        app = line.action.opened_app
        if app and (platform := app_id_platform(app)):
            found[app.strip()] = platform
    return found


def run_script(
    settings: Settings,
    script_text: str,
    *,
    device: AgentDevice | None = None,
    locator: Locator | None = None,
    on_event: EventCallback | None = None,
    cancel: threading.Event | None = None,
    output_dir: str | Path | None = None,
    instruction: str | None = None,
    app_policy: bool = False,
) -> RunResult:
    """Run a script of operations on the device; returns a ``RunResult`` like ``Agent.run``.
    Without ``device``, the phone of ``adb.serial`` is opened for the run and closed after it
    (a ``device`` passed in stays open: it is the caller's). ``app_policy``: the script is not
    its operator's own (a service's task: any user may send one), so ``agent.safety``'s app
    lists bind it as they bind a model: an Open App they refuse, or a line done in a denied app,
    fails the line, and a line that ends in a denied app fails the run (no sensitive-word
    confirmations: the lines are the sender's own choice)."""
    lines = parse_script(script_text)  # bad input fails before anything is written or touched
    timed = run_locator(settings, locator)
    body = ScriptedRun(settings, lines, device, timed, app_policy=app_policy)
    try:
        return carry_out(
            settings,
            body,
            instruction=instruction or f"script of {len(lines)} operations",
            mode="scripted",
            locator=timed,
            on_event=on_event,
            output_dir=Path(output_dir) if output_dir is not None else None,
            cancel=cancel,
        )
    finally:
        body.close()


class ScriptedRun:
    """The body of a scripted run (a ``RunBody``): one step per script line. The device it
    opens (none given) is closed by ``close()``; a given one stays its owner's."""

    def __init__(
        self, settings: Settings, lines: list[ScriptLine], device: AgentDevice | None, locator: TimedLocator,
        *, app_policy: bool = False,
    ) -> None:
        self.settings = settings
        self.app_policy = app_policy  # agent.safety's app lists bind the lines (run_script's app_policy)
        self.lines = lines
        self.device = device
        self.locator = locator
        self.max_steps = sum(MAX_PAGES + 1 if line.until else 1 for line in lines)
        self._next = 0  # the line to run next
        self._pages = 0  # pages turned for the "until" line in progress
        self._opened: Phone | None = None  # the device open() opened: this run's to close

    def open(self) -> AgentDevice:
        if self.device is None:
            opened = open_run_device(self.settings)
            self.device, self._opened = opened, opened
        return self.device

    def close(self) -> None:
        """Close the device ``open()`` opened, if any (``run_script`` does, after the run)."""
        opened, self._opened = self._opened, None
        if opened is not None:
            if self.device is opened:
                self.device = None
            close_run_device(opened)

    def _guard(self, device: AgentDevice) -> Guard | None:
        """The app half of the planned run's guard, with ``app_policy`` (its lists only: no
        sensitive-word or per-app confirmation is asked of a script's lines)."""
        safety = self.settings.agent.safety
        if not self.app_policy or not (safety.deny_apps or safety.allow_apps):
            return None
        lists_only = safety.model_copy(update={"confirm_sensitive": False, "confirm_apps": []})
        return Guard(lists_only, current_app=device.current_app, app_package=device.resolve_app_label)

    def out_of_steps(self, session: RunSession) -> RunResult:
        return session.finish(RunStatus.COMPLETED, f"the script ran all {len(self.lines)} operations")

    def _shows(self, draft: StepDraft, text: str) -> bool:
        """Whether ``text`` is on the step's screen, looked for as Click text looks for it (the
        accessibility tree where that operation uses it: a protected screen's pixels show nothing)."""
        found = find_text_on(self.open(), self.locator, draft.frame.pixels, text, self.settings)
        return found.status in (LocateStatus.FOUND, LocateStatus.CANDIDATES, LocateStatus.TOO_MANY)

    def step(self, session: RunSession, draft: StepDraft) -> StepEnd:
        """The next script line on ``draft.frame`` (an "until" line whose text shows is
        passed over without a step)."""
        while self._next < len(self.lines) and self.lines[self._next].until is not None \
                and self._shows(draft, str(self.lines[self._next].until)):  # fmt: skip
            self._next, self._pages = self._next + 1, 0
        if self._next == len(self.lines):
            return StepEnd(draft.frame, self.out_of_steps(session))
        line = self.lines[self._next]
        device = self.open()
        draft.action_text = line.text
        draft.by = "script"
        if line.until is not None and self._pages == MAX_PAGES:
            draft.ok = False
            draft.feedback = f"{line.until!r} is not on the screen after {MAX_PAGES} pages"
            session.record(draft)
            reason = f"script line {line.number} ({line.text}) failed: {draft.feedback}"
            return StepEnd(draft.frame, session.finish(RunStatus.NOT_COMPLETED, reason))

        def choose(location: Location) -> int | None:  # several places match: the line's #N, if any
            draft.chosen_candidate = line.candidate
            return line.candidate

        guard = self._guard(device)
        refused = guard.check(line.action, draft.frame.pixels).refusal if guard is not None else None
        if refused is not None:
            draft.took_action(line.action)
            draft.ok, draft.feedback = False, refused
            session.record(draft)
            reason = f"script line {line.number} ({line.text}) was refused: {refused}"
            return StepEnd(draft.frame, session.finish(RunStatus.NOT_COMPLETED, reason))
        outcome = session.act(draft, line.action, device, self.locator, choose)
        if outcome.terminal and outcome.stop_reason:  # a line that stopped the run (a locked phone, Hand over)
            session.record(draft)
            reason = f"script line {line.number} ({line.text}) stopped: {outcome.stop_reason}"
            return StepEnd(draft.frame, session.finish(RunStatus.NOT_COMPLETED, reason))
        if outcome.terminal:
            session.record(draft)
            return StepEnd(draft.frame, session.finish(RunStatus.COMPLETED, f"the script reached Stop (line {line.number})"))
        if not outcome.ok:
            session.record(draft)
            reason = f"script line {line.number} ({line.text}) failed: {outcome.feedback}"
            return StepEnd(draft.frame, session.finish(RunStatus.NOT_COMPLETED, reason))
        settled = session.settle(device, draft)
        landed = guard.landed_in() if guard is not None else None
        if landed is not None:
            draft.ok, draft.feedback = False, landed
            session.record(draft)
            return StepEnd(settled.frame, session.finish(RunStatus.NOT_COMPLETED,
                                                         f"script line {line.number} ({line.text}): {landed}"))
        session.record(draft)
        if line.until is not None:
            self._pages += 1  # the same line again on the next step: look, then page or go on
            return StepEnd(next_frame=settled.frame)
        self._next, self._pages = self._next + 1, 0
        if self._next == len(self.lines):
            return StepEnd(settled.frame, self.out_of_steps(session))
        return StepEnd(next_frame=settled.frame)
