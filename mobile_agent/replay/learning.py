"""What a finished run teaches the plan cache: the plan its steps make (``plan_from``).

The replaying planner keeps one ``Seen`` per planning call (the frame's thumbnail, its
fingerprint, the action the step took); the run's step records say what came of each.
A plan is the steps that worked, ending on the screen the completion check confirmed
(the paper's Stop, a grounded dialect's Finished).

A grounded model (UI-TARS, Qwen ``mobile_use``, AutoGLM) taps at points. A point means
nothing on another screen, so a tap is recorded by what it hit: the text line under the
tapped point (the point snapping moved it to, ``perception.snapping``) makes it a
``Click text`` / ``Long press`` of that text, re-located by perception on a replay as any
other. A tap on something without text (an icon, a switch), a double tap, a swipe or a
drag is kept at its point with the screen's size (``CachedStep.screen``): the replay
scales it to the screen it meets (after matching that screen with the recorded one), and
the tap snaps onto the element there.

May import: numpy, the standard library, ``mobile_agent`` (the agent's records for types
only: the agent imports this package) and this package.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mobile_agent.replay.field import band_signature, field_point
from mobile_agent.replay.fingerprint import ScreenFingerprint
from mobile_agent.replay.plans import CachedPlan, CachedStep, InstructionTemplate, to_slots
from mobile_agent.replay.relocate import parse_cached
from perception.types import TextLine

if TYPE_CHECKING:  # the agent package imports this one: records only for the types
    from mobile_agent.agent.records import RunResult, StepRecord

__all__ = ["POINT_PARAMS", "STOP_OPERATIONS", "Seen", "persons_part", "plan_from"]

# parameters that hold a point (screen pixels): recorded by what the point hit, or scaled
POINT_PARAMS = frozenset({"x", "y", "x1", "y1", "x2", "y2"})
# a tap at a point that becomes the paper's operation on the text under it
_BY_TEXT = {"tap_point": "Click text", "long_press_point": "Long press"}
# the operations that end a run the completion check confirms
STOP_OPERATIONS = frozenset({"stop", "finished"})
_HIT_MARGIN = 0.01  # a tap this close to a text line (share of the screen's height) hit it


@dataclass
class Seen:
    """One planning call: the frame's size, grey thumbnail (absolute, ``grey``, and
    standardised, ``thumb`` with its ``level``); its full fingerprint (with OCR: computed
    in the background while the model plans, or on demand while replaying) and the OCR
    lines it was made from, or, for a replayed step, the recorded step it matched; the
    action the step took, and whether it was replayed."""

    size: tuple[int, int]
    thumb: tuple[float, ...]
    level: tuple[float, float] | None = None
    grey: np.ndarray | None = None
    full: Future[ScreenFingerprint] | None = None
    lines: list[TextLine] | None = None
    frame: np.ndarray | None = None  # the frame itself, from planning to parsing only
    small: np.ndarray | None = None  # a Type's frame, ``field.shrunk_grey``: its field band's signature
    recorded: CachedStep | None = None
    recorded_final: ScreenFingerprint | None = None
    action: str | None = None
    replayed: bool = False

    def fingerprint(self) -> ScreenFingerprint:
        if self.recorded is not None:
            return self.recorded.fingerprint
        if self.recorded_final is not None:
            return self.recorded_final
        if self.full is None:
            raise RuntimeError("no fingerprint was taken of this frame")
        return self.full.result()


def plan_from(result: RunResult, seen: list[Seen], template: InstructionTemplate, instruction: str) -> CachedPlan | None:
    """The plan ``result``'s steps make (None when no step or no confirmed end is worth keeping)."""
    steps: list[CachedStep] = []
    final: ScreenFingerprint | None = None
    last_tap: tuple[float, float] | None = None  # the previous step's tap, as shares
    records = list(result.steps)
    for number, record in enumerate(records):
        position = record.index - 1
        if position < 0 or position >= len(seen):
            continue
        this = seen[position]
        operation = record.operation or {}
        name = str(operation.get("name") or "")
        tap = _share(record, this.size)
        previous_tap, last_tap = last_tap, tap
        if name in STOP_OPERATIONS:
            if record.completion is None or record.completion.get("done", False):
                final = this.fingerprint()
            continue
        if not _worth_keeping(record, this, closing=_closes(records, number)):
            continue
        action, screen = this.action or record.action_text, None
        if not _replayable(operation):
            action, name, screen = _by_what_it_hit(name, action, record, this)
        field_at = _field(name, this, seen[position + 1] if position + 1 < len(seen) else None, previous_tap)
        steps.append(
            CachedStep(
                action=to_slots(action, template.values),
                operation=name,
                fingerprint=this.fingerprint(),
                point=tap,
                field_at=field_at,
                field_band=_field_band(this, field_at),
                screen=screen,
                changed=record.screen_changed is not False,
            )
        )
    if not steps or final is None:
        return None
    return CachedPlan(template=template.template, steps=tuple(steps), final=final, instruction=instruction,
                      source_run=result.run_id)


def _field(name: str, this: Seen, after: Seen | None, tapped: tuple[float, float] | None) -> tuple[float, float] | None:
    """A Type's field: where the replayed step had it, else where the typed text showed on
    the next screen, else the tap before it."""
    if name != "type":
        return None
    if this.recorded is not None and this.recorded.field_at is not None:
        return this.recorded.field_at
    try:
        typed = str(parse_cached(this.action or "").params.model_dump().get("text") or "")
    except Exception:  # noqa: BLE001 - no typed text to look for: the tap before it
        typed = ""
    if after is not None and after.full is not None and after.lines is None:
        try:
            after.full.result()  # its OCR lines are kept as it is fingerprinted
        except Exception:  # noqa: BLE001 - no lines to look in: the tap before it
            pass
    return field_point(typed, after.lines if after is not None else None, this.size, tapped)


def _field_band(this: Seen, field_at: tuple[float, float] | None) -> bytes | None:
    """A Type's field band signature: the replayed step's, else one of its own frame."""
    if this.recorded is not None and this.recorded.field_band is not None:
        return this.recorded.field_band
    if field_at is None or this.small is None:
        return None
    signature = band_signature(this.small, field_at)
    return signature.tobytes() if signature is not None else None


def _worth_keeping(record: StepRecord, seen: Seen, *, closing: bool) -> bool:
    """A step that worked and showed its effect; one whose effect did not show (a copy to the
    clipboard) only as the run's closing step, right before the confirmed end: elsewhere a
    step that changed nothing was a miss the model recovered from."""
    done = record.ok and record.operation is not None and seen.action is not None
    return done and (record.screen_changed is not False or closing)


def _closes(records: list[StepRecord], number: int) -> bool:
    """Whether the step after ``records[number]`` is the confirmed end of the run."""
    if number + 1 >= len(records):
        return False
    after = records[number + 1]
    name = str((after.operation or {}).get("name") or "")
    return name in STOP_OPERATIONS and (after.completion is None or bool(after.completion.get("done", False)))


def _replayable(operation: dict[str, Any]) -> bool:
    """A step that names its target (no point in its parameters)."""
    params = operation.get("params") or {}
    return not (POINT_PARAMS & {k for k, v in params.items() if v is not None})


def _by_what_it_hit(
    name: str, action: str, record: StepRecord, this: Seen
) -> tuple[str, str, tuple[int, int] | None]:
    """A step at a point as the plan keeps it: (action, operation, screen). A tap or long
    press on a text line is that text's Click text / Long press; anything else keeps its
    point with the screen's size, to be scaled on a replay."""
    verb = _BY_TEXT.get(name)
    if verb is not None and record.tap_point is not None:
        this.fingerprint()  # its OCR lines are kept as it is fingerprinted
        text = _text_at(this.lines or [], record.tap_point, this.size)
        if text is not None:
            described = f"{verb} ({text})"
            try:
                parsed = parse_cached(described)
            except Exception:  # noqa: BLE001 - a text the parser reads otherwise: keep the point
                parsed = None
            if parsed is not None and parsed.params.model_dump().get("text") == text:
                return parsed.text, parsed.name, None
    return action, name, this.size


def _text_at(lines: list[TextLine], point: tuple[int, int], size: tuple[int, int]) -> str | None:
    """The text of the smallest line whose box (with a small margin) holds ``point``."""
    x, y = point
    margin = _HIT_MARGIN * size[1]
    under = [
        line for line in lines
        if line.text.strip() and line.box.left - margin <= x <= line.box.right + margin
        and line.box.top - margin <= y <= line.box.bottom + margin
    ]
    if not under:
        return None
    text = " ".join(min(under, key=lambda line: line.box.area).text.split())
    return text if 0 < len(text) <= 200 else None


def persons_part(record: StepRecord) -> bool:
    """A step the plan could not replay without the person: their own touches and replies,
    and the model's questions to them. A confirmation the person gave is not one: a
    replayed step passes the safety check again, which asks them again."""
    asked = record.asked_user or {}
    return record.by == "person" or (bool(asked) and asked.get("kind") != "confirm")


def _share(record: StepRecord, size: tuple[int, int]) -> tuple[float, float] | None:
    if record.tap_point is None or not size[0] or not size[1]:
        return None
    return (record.tap_point[0] / size[0], record.tap_point[1] / size[1])
