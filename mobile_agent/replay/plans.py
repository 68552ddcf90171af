"""Cached plans: an instruction's template and the steps that carried it out once.

An instruction becomes a template by replacing the values a user changes between runs
with numbered slots: quoted texts, e-mail addresses, URLs and numbers ("Send an email
to alice@example.com about my new job" → "send an email to ⟦0⟧ about my new job",
values ``["alice@example.com"]``). The steps' parameters hold the same slots where they
used a value, so the plan replays with other values.

A ``CachedStep`` keeps the operation *as described* (``Click text (Display)``: a
grounded model's tap on a text is recorded as that text, ``replay.learning``), the
fingerprint of the screen it acted on, and where it tapped as a share of the screen (to
choose among candidates again on a screen of another size); a ``Type`` keeps where its
field was (to read only around it for the password check, ``replay.field``). A step only
a point describes (a tap on an icon, a swipe) keeps the size of the screen its points
are on (``screen``), to be scaled to the screen a replay meets.

May import: the standard library and this package.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any

from mobile_agent.replay.fingerprint import ScreenFingerprint

__all__ = ["CachedPlan", "CachedStep", "InstructionTemplate", "fill_slots", "to_slots"]

SLOT = "⟦{}⟧"
_SLOT_RE = re.compile(r"⟦(\d+)⟧")
# values a user changes between runs of the same instruction, most specific first
_VALUE_RE = re.compile(
    r"""
    "(?P<dq>[^"]+)" | “(?P<cq>[^”]+)” | 「(?P<jq>[^」]+)」 | '(?P<sq>[^']+)'(?![a-z])
    | (?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
    | (?P<url>https?://\S+|www\.\S+)
    | (?<![\w.])(?P<number>\d+(?:[.,:]\d+)*)(?![\w])
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class InstructionTemplate:
    template: str
    values: tuple[str, ...]

    @classmethod
    def of(cls, instruction: str) -> InstructionTemplate:
        values: list[str] = []

        def slot(match: re.Match[str]) -> str:
            value = next(v for v in match.groups() if v is not None)
            values.append(value)
            return SLOT.format(len(values) - 1)

        text = _VALUE_RE.sub(slot, " ".join(instruction.split()))
        template = text.casefold().rstrip(" .!?。！？")
        return cls(template=template, values=tuple(values))


def to_slots(text: str, values: tuple[str, ...]) -> str:
    """``text`` with every value of ``values`` it contains replaced by its slot
    (longest value first, so that "12" inside "2012" is left alone when "2012" is one)."""
    order = sorted(range(len(values)), key=lambda i: -len(values[i]))
    for i in order:
        if values[i]:
            text = text.replace(values[i], SLOT.format(i))
    return text


def fill_slots(text: str, values: tuple[str, ...]) -> str | None:
    """``text`` with its slots filled from ``values``; None when a slot has no value."""
    missing = False

    def fill(match: re.Match[str]) -> str:
        nonlocal missing
        index = int(match.group(1))
        if index >= len(values):
            missing = True
            return match.group(0)
        return values[index]

    filled = _SLOT_RE.sub(fill, text)
    return None if missing else filled


@dataclass(frozen=True)
class CachedStep:
    action: str  # the canonical operation text, with slots: "Type (⟦0⟧)"
    operation: str  # the operation's name: "type"
    fingerprint: ScreenFingerprint
    point: tuple[float, float] | None = None  # where it tapped, as shares of the screen's width and height
    field_at: tuple[float, float] | None = None  # a Type: where its field was, as shares (``replay.field``)
    field_band: bytes | None = None  # a Type: its field band's grey signature, 96x12 bytes (``replay.field``)
    screen: tuple[int, int] | None = None  # a step at points: the (width, height) its points are on
    changed: bool = True  # False: its effect did not show on the screen (a copy, the run's closing step)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "action": self.action,
            "operation": self.operation,
            "fingerprint": self.fingerprint.to_dict(),
            "point": list(self.point) if self.point else None,
        }
        if self.field_at is not None:
            data["field"] = list(self.field_at)
        if self.field_band is not None:
            data["field_band"] = base64.b64encode(self.field_band).decode("ascii")
        if self.screen is not None:
            data["screen"] = list(self.screen)
        if not self.changed:
            data["changed"] = False
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CachedStep:
        point, at, screen = data.get("point"), data.get("field"), data.get("screen")
        return cls(
            action=str(data["action"]),
            operation=str(data["operation"]),
            fingerprint=ScreenFingerprint.from_dict(data["fingerprint"]),
            point=(float(point[0]), float(point[1])) if point else None,
            field_at=(float(at[0]), float(at[1])) if at else None,
            field_band=base64.b64decode(str(data["field_band"])) if data.get("field_band") else None,
            screen=(int(screen[0]), int(screen[1])) if screen else None,
            changed=bool(data.get("changed", True)),
        )


@dataclass(frozen=True)
class CachedPlan:
    template: str
    steps: tuple[CachedStep, ...]
    final: ScreenFingerprint  # the screen on which the run was confirmed done
    instruction: str = ""  # the instruction it was recorded from (for people)
    source_run: str = ""  # the run id it was recorded from
    id: int | None = None
    uses: int = 0
    successes: int = 0
    failures: int = 0
    created_at: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def trusted(self) -> bool:
        """A plan whose replays fail more often than they succeed is not replayed."""
        return self.failures <= self.successes + 1

    def steps_json(self) -> list[dict[str, Any]]:
        return [step.to_dict() for step in self.steps]
