"""One task family and its seeded instances.

An instance is fully determined by (family, seed): ``random.Random(f"{family}:{seed}")``
draws the parameters and the phrasing, and the phone is reset with the same seed, so a
seed names one reproducible task (android_world's ``generate_random_params`` with a seed).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from eval.mobile_eval.schema import EvalTask
from eval.mobile_eval.validators import ValidatorSpec

__all__ = ["GUARDS", "Family", "Params"]

Params = dict[str, str]

# What every family keeps as it was unless it is about it (Mobile-Eval's guards, plus the
# notes and the Play Store installs a family might touch by mistake).
GUARDS = (
    "theme", "airplane_mode", "wifi", "bluetooth", "network_speed_shown",
    "settings.system.status_bar_show_battery_percent", "installed",
    "apps[com.google.android.keep].notes", "apps[com.google.android.gm].sent",
)


@dataclass(frozen=True)
class Family:
    """A kind of task: phrasings x parameters x initial state."""

    name: str  # slug, e.g. "settings-wifi"
    app: str  # report row: the app's label, or "Multi-App"
    apps: tuple[str, ...]  # launcher labels the task uses
    level: int  # 1 plain one-app, 2 several fields / a choice on screen, 3 several apps or a vague goal
    phrasings: tuple[str, ...]
    params: Callable[[random.Random], Params]
    reference: Callable[[Params], list[str]]
    validator: Callable[[Params], dict[str, Any]]  # {"name": ..., "params": {...}}
    changes: tuple[str, ...] = ()  # guards this family is allowed to change
    setup: Callable[[Params], list[list[str]]] = field(default=lambda p: [])
    derived: tuple[str, ...] = ()
    human_steps: Callable[[Params], int] | None = None

    def instance(self, seed: int) -> EvalTask:
        """Values drawn here never hold braces: reference lines and validator params are
        filled as templates later (``{name}`` from the params)."""
        rng = random.Random(f"{self.name}:{seed}")
        values = self.params(rng)
        phrasing = rng.choice(self.phrasings)
        reference = self.reference(values)
        spec = self.validator(values)
        guards = [g for g in GUARDS if g not in self.changes]
        return EvalTask(
            id=f"{self.name}-s{seed}-{self.level}", app=self.app, apps=list(self.apps), level=self.level,
            instruction=phrasing, params=values, derived=list(self.derived),
            human_steps=self.human_steps(values) if self.human_steps else len(reference),
            reference=reference,
            validator=ValidatorSpec(name=spec["name"], params=spec.get("params", {}), unchanged=guards),
            seed=seed, setup=self.setup(values),
            notes=f"family {self.name}",
        )

    def instances(self, seeds: Iterable[int]) -> list[EvalTask]:
        return [self.instance(seed) for seed in seeds]

