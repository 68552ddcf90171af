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

May import: ``mobile_agent`` (settings, errors, device, operations, locate) and this
package's modules.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mobile_agent.agent.records import LocationSummary, RunResult, RunStatus, StepRecord, StepTimings
from mobile_agent.agent.session import EventCallback, RunSession, TimedLocator, build_locator, open_run_device
from mobile_agent.errors import OperationError, OperationParseError, UnknownOperationError
from mobile_agent.settings import Settings
from perception.types import Location

__all__ = ["ScriptLine", "parse_script", "run_script"]


# "... #2" at the end of a line: the candidate to use when several places match
_CANDIDATE_RE = re.compile(r"^(?P<action>.*\S)\s+#\s*(?P<number>\d{1,3})\s*$")
_CHOOSING = frozenset({"click_text", "long_press", "click_icon"})  # operations that locate a target
_FREE_TEXT = frozenset({"type"})  # their text may end with "#N" itself


@dataclass(frozen=True)
class ScriptLine:
    number: int  # 1-based line number in the script text
    text: str
    action: Any  # operations.ParsedAction
    candidate: int | None = None  # "#N": the candidate to use when several places match


def _parse_line(number: int, text: str) -> ScriptLine:
    from mobile_agent.operations import parse_action

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
    return ScriptLine(number, text, parse_action(f"Action: {text}"))


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
                from mobile_agent.operations import REGISTRY

                message = f"{exc.fields.get('operation')!r} is not an operation; the operations: {REGISTRY.syntax_list()}"
            raise OperationParseError(
                f"script line {number}: {message}", reply=text, line=number, operation=exc.fields.get("operation")
            ) from exc
    if not lines:
        raise OperationParseError("the script holds no operation (only blank lines and # comments)")
    return lines


def run_script(
    settings: Settings,
    script_text: str,
    *,
    device: Any | None = None,
    locator: Any | None = None,
    on_event: EventCallback | None = None,
    cancel: threading.Event | None = None,
    output_dir: str | Path | None = None,
    instruction: str | None = None,
) -> RunResult:
    """Run a script of operations on the device; returns a ``RunResult`` like ``Agent.run``."""
    lines = parse_script(script_text)  # bad input fails before anything is written or touched
    opening_error: BaseException | None = None
    if device is None:
        try:
            device = open_run_device(settings)
        except Exception as exc:
            opening_error = exc
    timed = TimedLocator(locator, lambda: build_locator(settings))
    session = RunSession(
        settings,
        instruction=instruction or f"script of {len(lines)} operations",
        mode="scripted",
        device=device,
        on_event=on_event,
        output_dir=Path(output_dir) if output_dir is not None else None,
        cancel=cancel,
        locator=timed.untimed,
    )
    if opening_error is not None:
        return session.finish_from_exception(opening_error)
    try:
        return _run_lines(session, settings, device, timed, lines)
    except BaseException as exc:
        if not isinstance(exc, Exception):
            session.finish_from_exception(exc)
            raise
        return session.finish_from_exception(exc)


def _run_lines(
    session: RunSession, settings: Settings, device: Any, locator: TimedLocator, lines: list[ScriptLine]
) -> RunResult:
    screenshot = None
    for index, line in enumerate(lines, start=1):
        session.check_cancel()
        session.step_started(index)
        started_at = time.time()
        screenshot, shot_name, capture_ms = session.capture(device, screenshot, index)
        base = dict(
            index=index,
            screenshot=shot_name,
            action_text=line.text,
            operation={"name": line.action.name, "params": line.action.params.model_dump()},
            started_at=started_at,
        )
        try:
            ended, screenshot = _run_line(session, settings, device, locator, line, screenshot, base, capture_ms)
        except BaseException as exc:  # the run ends here: keep what this line did
            session.record_interrupted(base, screenshot.pixels, exc, StepTimings(capture_ms=capture_ms))
            raise
        if ended is not None:
            return ended
    return session.finish(RunStatus.COMPLETED, f"the script ran all {len(lines)} operations")


def _run_line(
    session: RunSession,
    settings: Settings,
    device: Any,
    locator: TimedLocator,
    line: ScriptLine,
    screenshot: Any,
    base: dict[str, Any],
    capture_ms: float,
) -> tuple[RunResult | None, Any]:
    """One script line on ``screenshot``: (the result when the run ended, the settled frame)."""
    from mobile_agent.operations import OperationContext

    chosen: list[int | None] = []

    def choose(location: Location) -> int | None:  # several places match: the line's #N, if any
        chosen.append(line.candidate)
        return line.candidate

    ctx = OperationContext(
        device=device, locator=locator, screenshot=screenshot, settings=settings, choose=choose, cancel=session.cancel
    )
    acted = session.act(line.action, ctx, locator)
    outcome, perception_ms = acted.outcome, acted.perception_ms
    common = dict(
        base,
        chosen_candidate=chosen[-1] if chosen else None,
        ok=outcome.ok,
        feedback=outcome.feedback,
        tap_point=outcome.tap_point,
        swipe=outcome.swipe,
        location=LocationSummary.from_location(outcome.location),
    )
    base.update(common)
    action_ms = max(0.0, acted.total_ms - perception_ms)
    if outcome.terminal or not outcome.ok:
        session.record(
            StepRecord(**common, timings=StepTimings(capture_ms, perception_ms, 0.0, action_ms, 0.0)),
            screenshot.pixels,
        )
        if outcome.terminal:
            return session.finish(RunStatus.COMPLETED, f"the script reached Stop (line {line.number})"), screenshot
        return session.finish(
            RunStatus.NOT_COMPLETED, f"script line {line.number} ({line.text}) failed: {outcome.feedback}"
        ), screenshot
    settled = session.settle(device, screenshot)
    session.record(
        StepRecord(
            **common,
            screen_changed=settled.changed,
            change_ratio=settled.ratio,
            timings=StepTimings(capture_ms, perception_ms, 0.0, action_ms, settled.settle_ms),
        ),
        screenshot.pixels,
    )
    return None, settled.frame
