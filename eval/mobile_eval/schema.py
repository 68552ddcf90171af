"""The Mobile-Eval tasks: schema and loader of the package data in ``tasks/*.json``.

One JSON file per Table 1 row (an app, or "Multi-App"), each holding its three
instructions. A task carries its instruction template (``{address}`` and the like, filled
from ``params``), the human step count of Table 2 (the second number of RE), a reference
solution in the model's action syntax (one action per line; ``A || B`` lists equivalent
alternatives, the first is what the scripted run executes), and the validator that reads
success from the phone's state. The scripted run pages down to each text it taps (``Page
down until (Text)``, bounded, no step where the text shows): a list drawn on a smaller or
larger screen puts a row below the first page (issue 28).

May import: pydantic, mobile_eval.errors, mobile_eval.validators, mobile_eval.app_validators.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from eval.mobile_eval.errors import TaskDataError
from eval.mobile_eval.validators import ValidatorSpec

__all__ = ["EvalTask", "TaskFile", "load_tasks", "select_tasks"]

ALTERNATIVE_SEPARATOR = " || "
# a reference line that taps a text: the scripted run first pages down until that text shows
_TAPS_TEXT_RE = re.compile(r"^(?:click\s*text|long\s*press)\s*\((?P<text>.*\S.*)\)(?:\s*#\s*\d+)?$", re.IGNORECASE)
_ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*-[123]$")


class EvalTask(BaseModel):
    """One Mobile-Eval instruction."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="<app slug>-<level>, e.g. notes-2")
    app: str = Field(description="the Table 2 row: an app name or 'Multi-App'")
    apps: list[str] = Field(min_length=1, description="launcher labels of the apps the task uses")
    level: Literal[1, 2, 3]
    instruction: str = Field(min_length=1, description="template; {name} is filled from params")
    paper_instruction: str | None = Field(None, description="Table 1's wording where ours corrects a typo")
    params: dict[str, str] = Field(default_factory=dict)
    derived: list[str] = Field(default_factory=list, description="params computed from the state before the run")
    human_steps: int = Field(ge=1, description="steps a person needs (Table 2, RE's second number)")
    reference: list[str] = Field(min_length=1, description="the reference solution, one action per line")
    validator: ValidatorSpec
    max_steps: int | None = Field(None, ge=1, le=500, description="step budget; default: 3x human steps + 5")
    notes: str = ""
    # task families (eval/families): the phone's start differs per instance
    seed: int | None = Field(None, ge=0, description="reset seed of this task; default: the suite's --seed")
    setup: list[list[str]] = Field(default_factory=list, description="adb shell commands run after the reset")

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _ID_RE.match(value):
            raise ValueError(f"task id {value!r} is not '<slug>-<level>'")
        return value

    @model_validator(mode="after")
    def _templates_complete(self) -> EvalTask:
        if not self.id.endswith(f"-{self.level}"):
            raise ValueError(f"task id {self.id!r} does not end with its level {self.level}")
        from eval.mobile_eval.app_validators import DERIVERS

        unknown = set(self.derived) - set(DERIVERS)
        if unknown:
            raise ValueError(f"unknown derived params {sorted(unknown)}; known: {sorted(DERIVERS)}")
        used = _fields(self.instruction) | {f for line in self.reference for f in _fields(line)}
        missing = used - set(self.params) - set(self.derived)
        if missing:
            raise ValueError(f"template fields without a value in params: {sorted(missing)}")
        return self

    @property
    def step_budget(self) -> int:
        return self.max_steps or 3 * self.human_steps + 5

    def render(self, overrides: dict[str, str] | None = None) -> str:
        """The instruction with its parameters filled in."""
        return self._fill(self.instruction, overrides)

    def reference_lines(self, overrides: dict[str, str] | None = None) -> list[str]:
        """The reference steps, filled, alternatives kept (for step judging)."""
        return [self._fill(line, overrides) for line in self.reference]

    def reference_script(self, overrides: dict[str, str] | None = None) -> str:
        """The script that scripted mode runs: the first alternative of each line, each
        text tap preceded by ``Page down until (Text)`` (a no-op where the text shows)."""
        lines: list[str] = []
        for line in self.reference_lines(overrides):
            first = line.split(ALTERNATIVE_SEPARATOR)[0].strip()
            taps = _TAPS_TEXT_RE.match(first)
            if taps is not None:
                lines.append(f"Page down until ({taps.group('text')})")
            lines.append(first)
        return "\n".join(lines)

    def resolved_params(self, overrides: dict[str, str] | None = None) -> dict[str, str]:
        unknown = set(overrides or {}) - set(self.params) - set(self.derived)
        if unknown:
            raise TaskDataError(f"task {self.id} has no parameter(s) {sorted(unknown)}", task_id=self.id)
        values = {**self.params, **(overrides or {})}
        missing = set(self.derived) - set(values)
        if missing:
            raise TaskDataError(
                f"task {self.id} needs derived values {sorted(missing)} (from the phone's state)", task_id=self.id
            )
        return values

    def _fill(self, template: str, overrides: dict[str, str] | None) -> str:
        return template.format_map(self.resolved_params(overrides))


def _fields(template: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name}
    except ValueError as exc:  # an unbalanced brace
        raise ValueError(f"bad template {template!r}: {exc}") from exc


class TaskFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    app: str
    tasks: list[EvalTask] = Field(min_length=1)


def load_tasks(package: str = "eval.mobile_eval.tasks") -> list[EvalTask]:
    """Every task in the package's JSON files, in Table 2 order (app, then level)."""
    folder = resources.files(package)
    tasks: list[EvalTask] = []
    seen: set[str] = set()
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        try:
            data: Any = json.loads(entry.read_text(encoding="utf-8"))
            task_file = TaskFile.model_validate(data)
        except (json.JSONDecodeError, ValidationError) as exc:
            raise TaskDataError(f"task file {entry.name} is invalid: {exc}", path=entry.name) from exc
        for task in task_file.tasks:
            if task.app != task_file.app:
                raise TaskDataError(f"{entry.name}: task {task.id} is for {task.app}", path=entry.name)
            if task.id in seen:
                raise TaskDataError(f"{entry.name}: duplicate task id {task.id}", path=entry.name, task_id=task.id)
            seen.add(task.id)
            tasks.append(task)
    from eval.mobile_eval.metrics import APP_ORDER

    order = {app: i for i, app in enumerate(APP_ORDER)}
    return sorted(tasks, key=lambda t: (order.get(t.app, len(order)), t.app, t.level))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def select_tasks(
    tasks: Iterable[EvalTask],
    *,
    apps: Iterable[str] | None = None,
    levels: Iterable[int] | None = None,
    ids: Iterable[str] | None = None,
) -> list[EvalTask]:
    """Filter by app (name or slug, any case), level and id; an unknown filter value raises."""
    tasks = list(tasks)
    chosen = tasks
    if apps:
        by_key: dict[str, str] = {}
        for task in tasks:
            by_key.setdefault(_slug(task.app), task.app)
            by_key.setdefault(_slug(task.id.rsplit("-", 1)[0]), task.app)
        wanted = set()
        for app in apps:
            if _slug(app) not in by_key:
                known = sorted({t.app for t in tasks})
                raise TaskDataError(f"no Mobile-Eval app {app!r}; known: {', '.join(known)}", app=app)
            wanted.add(by_key[_slug(app)])
        chosen = [t for t in chosen if t.app in wanted]
    if levels:
        levels = set(levels)
        bad = levels - {1, 2, 3}
        if bad:
            raise TaskDataError(f"levels are 1, 2 and 3, not {sorted(bad)}", levels=sorted(bad))
        chosen = [t for t in chosen if t.level in levels]
    if ids:
        ids = list(ids)
        known_ids = {t.id for t in tasks}
        unknown = [i for i in ids if i not in known_ids]
        if unknown:
            raise TaskDataError(f"no task(s) {unknown}", task_ids=unknown)
        chosen = [t for t in chosen if t.id in set(ids)]
    return chosen
