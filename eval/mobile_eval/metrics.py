"""Averages of task results, laid out as the paper's Table 2.

Per level (the paper's "INSTRUCTION 1/2/3" columns), over the tasks of that level:

- Su: share of successful tasks;
- PS: mean of the per-task Process Scores (tasks without a PS are left out);
- RE: mean agent steps / mean human steps, shown as two numbers like the paper
  ("4.9 / 4.2"), and their ratio human/agent (the paper's "80% of human-optimal");
- CR: mean of the per-task Completion Rates;
- SR_act, SR_args, SR: means of the per-task GPT4Tools step rates, where present.

Figures are rounded half-up from exact fractions (``Fraction``), so that a mean of
0.885 shows as 0.89 and not as the binary float's 0.88.

May import: mobile_eval.records.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from eval.mobile_eval.records import TaskResult

__all__ = ["LevelSummary", "ResultTable", "round_half_up", "summarize", "summarize_level"]

LEVELS = (1, 2, 3)
# Table 2's row order; apps not listed here follow in alphabetical order.
APP_ORDER = (
    "Alibaba.com",
    "Amazon Music",
    "Chrome",
    "Gmail",
    "Google Maps",
    "Google Play",
    "Notes",
    "Settings",
    "TikTok",
    "YouTube",
    "Multi-App",
)


def _exact(value: float) -> Fraction:
    # Per-task figures are short decimals (0.75, 62.5%): read them as written, not as
    # their nearest binary float.
    return Fraction(Decimal(repr(value)))


def round_half_up(value: Fraction | float | None, digits: int) -> float | None:
    if value is None:
        return None
    exact = value if isinstance(value, Fraction) else _exact(value)
    quantum = Decimal(1).scaleb(-digits)
    decimal = (Decimal(exact.numerator) / Decimal(exact.denominator)).quantize(quantum, rounding=ROUND_HALF_UP)
    return float(decimal)


def _mean(values: Iterable[float]) -> Fraction | None:
    items = [_exact(v) for v in values]
    return sum(items, Fraction(0)) / len(items) if items else None


@dataclass(frozen=True)
class LevelSummary:
    """Exact averages over the tasks of one level (or of all levels: ``level=None``)."""

    level: int | None
    n: int
    su: Fraction | None
    ps: Fraction | None
    agent_steps: Fraction | None
    human_steps: Fraction | None
    cr: Fraction | None
    sr_act: Fraction | None
    sr_args: Fraction | None
    sr: Fraction | None

    @property
    def re_ratio(self) -> Fraction | None:
        if not self.agent_steps or self.human_steps is None:
            return None
        return self.human_steps / self.agent_steps

    def rounded(self) -> dict[str, float | int | None]:
        """The figures as the paper prints them: Su, PS 2 decimals; steps 1; CR in % 1."""
        return {
            "level": self.level,
            "n": self.n,
            "su": round_half_up(self.su, 2),
            "ps": round_half_up(self.ps, 2),
            "agent_steps": round_half_up(self.agent_steps, 1),
            "human_steps": round_half_up(self.human_steps, 1),
            "re_ratio": round_half_up(self.re_ratio, 2),
            "cr_percent": round_half_up(self.cr * 100 if self.cr is not None else None, 1),
            "sr_act": round_half_up(self.sr_act, 2),
            "sr_args": round_half_up(self.sr_args, 2),
            "sr": round_half_up(self.sr, 2),
        }


def summarize_level(records: Iterable[TaskResult], level: int | None = None) -> LevelSummary:
    chosen = [r for r in records if level is None or r.level == level]
    return LevelSummary(
        level=level,
        n=len(chosen),
        su=_mean(1.0 if r.success else 0.0 for r in chosen),
        ps=_mean(r.ps for r in chosen if r.ps is not None),
        agent_steps=_mean(float(r.agent_steps) for r in chosen),
        human_steps=_mean(float(r.human_steps) for r in chosen),
        cr=_mean(r.cr for r in chosen),
        sr_act=_mean(r.sr_act for r in chosen if r.sr_act is not None),
        sr_args=_mean(r.sr_args for r in chosen if r.sr_args is not None),
        sr=_mean(r.sr for r in chosen if r.sr is not None),
    )


@dataclass
class ResultTable:
    """Table 2: a cell per (app, level) and an average per level."""

    label: str
    cells: dict[tuple[str, int], TaskResult] = field(default_factory=dict)
    averages: dict[int, LevelSummary] = field(default_factory=dict)
    overall: LevelSummary | None = None
    duplicates: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)

    @property
    def apps(self) -> list[str]:
        present = {app for app, _ in self.cells}
        ordered = [app for app in APP_ORDER if app in present]
        return ordered + sorted(present - set(ordered))


def summarize(records: Iterable[TaskResult], label: str | None = None) -> ResultTable:
    """Table 2 from result records; a task recorded twice keeps its last record, and
    records still waiting for a judge (``pending``) are listed apart, not averaged."""
    latest: dict[str, TaskResult] = {}
    duplicates: list[str] = []
    for record in records:
        if record.task_id in latest:
            duplicates.append(record.task_id)
        latest[record.task_id] = record
    pending = sorted(r.task_id for r in latest.values() if r.judged_by == "pending")
    chosen = [r for r in latest.values() if r.judged_by != "pending"]
    if label is None:
        labels = sorted({r.label for r in chosen if r.label})
        label = ", ".join(labels)
    table = ResultTable(label=label, duplicates=duplicates, pending=pending)
    for record in chosen:
        table.cells[(record.app, record.level)] = record
    for level in LEVELS:
        if any(r.level == level for r in chosen):
            table.averages[level] = summarize_level(chosen, level)
    table.overall = summarize_level(chosen) if chosen else None
    return table
