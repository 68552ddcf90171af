"""Success read from the phone's state, never from the agent's claim.

A validator compares the state JSON before the run (right after the reset) with the state
after it, and answers a ``Verdict``: did the intended change happen, and did nothing else
that matters change (android_world's ``is_successful``; its sqlite validators' "the row was
added and no other row changed"). Every task's ``ValidatorSpec`` names one registered
validator, its parameters (checked by the validator's pydantic model when the task file
loads) and ``unchanged``: state paths that must be equal before and after (airplane mode
untouched while turning on dark mode).

State paths are dotted (``settings.global.airplane_mode_on``), with keys that hold dots in
brackets (``apps[com.android.chrome].searches``) and list indices as numbers; the schema is the simulated phone's
``dumpsys simphone`` JSON (simphone/STATE.md). A path missing from the state fails the
task with a reason that says so, it is never an exception: the app may not be built yet.

May import: pydantic, rapidfuzz, mobile_eval.errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from eval.mobile_eval.errors import UnknownValidatorError

__all__ = [
    "VALIDATORS",
    "MissingPath",
    "StateView",
    "split_path",
    "ValidatorSpec",
    "Verdict",
    "validate",
    "validator",
]


class MissingPath(LookupError):
    """A dotted path that the state does not have."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


_MISSING = object()


_SEGMENT_RE = re.compile(r"\[([^\]]+)\]|([^.\[\]]+)")


def split_path(path: str) -> list[str]:
    """``apps[com.x.y].notes.0`` -> ``["apps", "com.x.y", "notes", "0"]``."""
    parts = [bracketed or plain for bracketed, plain in _SEGMENT_RE.findall(path)]
    if not parts:
        raise MissingPath(path)
    return parts


class StateView:
    """Read-only dotted-path access to a state JSON object."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data

    def get(self, path: str, default: Any = _MISSING) -> Any:
        node: Any = self.data
        for part in split_path(path):
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
                node = node[int(part)]
            else:
                if default is _MISSING:
                    raise MissingPath(path)
                return default
        return node

    def has(self, path: str) -> bool:
        return self.get(path, _MISSING_SENTINEL) is not _MISSING_SENTINEL


_MISSING_SENTINEL = object()


@dataclass(frozen=True)
class Verdict:
    success: bool
    reasons: tuple[str, ...] = ()

    @staticmethod
    def of(checks: Iterable[tuple[bool, str]]) -> Verdict:
        """All checks must hold; the reasons list every check with ✓/✗."""
        items = list(checks)
        return Verdict(all(ok for ok, _ in items), tuple(f"{'✓' if ok else '✗'} {why}" for ok, why in items))


ValidatorFn = Callable[[StateView, StateView, Any], Verdict]


@dataclass(frozen=True)
class RegisteredValidator:
    name: str
    params_model: type[BaseModel]
    fn: ValidatorFn
    description: str = ""
    reads: tuple[str, ...] = field(default=())


VALIDATORS: dict[str, RegisteredValidator] = {}


def validator(name: str, params_model: type[BaseModel], *, reads: tuple[str, ...] = ()) -> Callable[[ValidatorFn], ValidatorFn]:
    """Register ``fn(before, after, params)`` under ``name``; ``reads`` documents the paths."""

    def decorate(fn: ValidatorFn) -> ValidatorFn:
        if name in VALIDATORS:
            raise TypeError(f"validator {name!r} registered twice")
        VALIDATORS[name] = RegisteredValidator(name, params_model, fn, (fn.__doc__ or "").strip(), reads)
        return fn

    return decorate


class ValidatorSpec(BaseModel):
    """What a task file says about its validator."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    unchanged: list[str] = Field(default_factory=list, description="state paths that must not change")

    @model_validator(mode="after")
    def _known(self) -> ValidatorSpec:
        if self.name not in VALIDATORS:
            raise ValueError(f"unknown validator {self.name!r}; known: {', '.join(sorted(VALIDATORS))}")
        try:
            VALIDATORS[self.name].params_model.model_validate(self.params)
        except ValidationError as exc:
            raise ValueError(f"bad params for validator {self.name!r}: {exc}") from exc
        return self

    def filled(self, values: Mapping[str, str]) -> ValidatorSpec:
        """The spec with ``{name}`` placeholders in string params filled from ``values``."""
        return self.model_copy(update={"params": _fill(self.params, values)})


def _fill(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return value.format_map(values)
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, values) for k, v in value.items()}
    return value


def validate(spec: ValidatorSpec, before: Mapping[str, Any], after: Mapping[str, Any]) -> Verdict:
    """Run a task's validator and its ``unchanged`` guard on two state snapshots."""
    registered = VALIDATORS.get(spec.name)
    if registered is None:
        raise UnknownValidatorError(f"no validator {spec.name!r}", validator=spec.name)
    params = registered.params_model.model_validate(spec.params)
    b, a = StateView(before), StateView(after)
    try:
        verdict = registered.fn(b, a, params)
    except MissingPath as exc:
        verdict = Verdict(False, (f"✗ the phone's state has no {exc.path!r} (is the app implemented?)",))
    guards: list[tuple[bool, str]] = []
    for path in spec.unchanged:
        old, new = b.get(path, None), a.get(path, None)
        guards.append((old == new, f"{path} unchanged" if old == new else f"{path} changed: {_short(old)} → {_short(new)}"))
    if not guards:
        return verdict
    rest = Verdict.of(guards)
    return Verdict(verdict.success and rest.success, verdict.reasons + rest.reasons)


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"

