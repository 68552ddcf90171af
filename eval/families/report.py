"""GPT4Tools' step metrics of a families run, per level and per family.

Mobile-Eval's Table 2 has one cell per (app, level); a families run has many instances
per cell, so its report adds this: for every level and every family, over its instances,
Su (share verified by the state validator) and GPT4Tools' SR_act (the planner chose the
reference step's operation), SR_args (the mean argument score η against the reference
step's arguments) and SR (both: right operation and η > 0.5), each the mean of the
per-instance rates that ``eval.mobile_eval.matching`` computed when the run was judged.
The averages are ``eval.mobile_eval.metrics.summarize_level``'s, so the figures agree with
the Mobile-Eval report's step-metrics table.

Written as ``families.md`` and ``families.json`` beside the run's other reports.

May import: eval.mobile_eval (metrics, records).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from eval.mobile_eval.metrics import LEVELS, LevelSummary, summarize_level
from eval.mobile_eval.records import TaskResult

__all__ = ["family_of", "family_step_metrics", "render_family_metrics", "write_family_reports"]

# an instance ``<family>-s<seed>-<level>``, or its variant ``<family>-s<seed>-v-<variant>-<level>``
# (eval.data_engine.variants: the same instance on another theme, size or phone)
_ID = re.compile(r"(?P<family>.+?)-s(?P<seed>\d+)(?:-v-.+)?-[123]")


def family_of(task_id: str) -> str | None:
    """The family of an instance (or instance variant) id, None for another id."""
    match = _ID.fullmatch(task_id)
    return match["family"] if match else None


def _chosen(records: Iterable[TaskResult], ids: set[str] | None) -> list[TaskResult]:
    """The last record of each family instance, judged (pending ones wait for a judge)."""
    latest: dict[str, TaskResult] = {}
    for record in records:
        if family_of(record.task_id) is not None and (ids is None or record.task_id in ids):
            latest[record.task_id] = record
    return [r for r in latest.values() if r.judged_by != "pending"]


def family_step_metrics(records: Iterable[TaskResult], ids: set[str] | None = None) -> dict[str, Any]:
    """{"levels": {"1": ...}, "overall": ..., "families": {name: {...}}}, figures rounded as
    the Mobile-Eval report rounds them (``LevelSummary.rounded``)."""
    chosen = _chosen(records, ids)
    by_family: dict[str, list[TaskResult]] = {}
    for record in chosen:
        by_family.setdefault(str(family_of(record.task_id)), []).append(record)

    def figures(summary: LevelSummary, level: int | None) -> dict[str, Any]:
        rounded = summary.rounded()
        keep = ("n", "su", "ps", "sr_act", "sr_args", "sr")
        return {"level": level, **{k: rounded[k] for k in keep}}

    return {
        "levels": {str(n): figures(summarize_level(chosen, n), n) for n in LEVELS if any(r.level == n for r in chosen)},
        "overall": figures(summarize_level(chosen), None) if chosen else None,
        "families": {name: figures(summarize_level(group), group[0].level)
                     for name, group in sorted(by_family.items())},
    }


def _cells(row: dict[str, Any]) -> str:
    shown = ["–" if row[k] is None else f"{row[k]:.2f}" for k in ("su", "sr_act", "sr_args", "sr")]
    return f"{row['n']} | " + " | ".join(shown)


def render_family_metrics(metrics: dict[str, Any], label: str = "") -> str:
    """The metrics as Markdown: a table per level, then per family."""
    lines = [f"# Task families: {label or 'results'}", "",
             "Su: verified by the phone's state validator. SR_act / SR_args / SR: GPT4Tools' step rates "
             "against the family's reference actions (right operation / argument score η / both, η > 0.5).", "",
             "| Level | n | Su | SR_act | SR_args | SR |", "|---|---|---|---|---|---|"]
    for level, row in metrics["levels"].items():
        lines.append(f"| {level} | {_cells(row)} |")
    if metrics["overall"] is not None:
        lines.append(f"| all | {_cells(metrics['overall'])} |")
    lines += ["", "| Family | Level | n | Su | SR_act | SR_args | SR |", "|---|---|---|---|---|---|---|"]
    for name, row in metrics["families"].items():
        lines.append(f"| {name} | {row['level']} | {_cells(row)} |")
    return "\n".join(lines) + "\n"


def write_family_reports(records: Iterable[TaskResult], folder: Path, *, ids: set[str] | None = None,
                         label: str = "") -> dict[str, Path]:
    """``families.md`` and ``families.json`` in ``folder``."""
    metrics = family_step_metrics(records, ids)
    paths = {"markdown": folder / "families.md", "json": folder / "families.json"}
    paths["markdown"].write_text(render_family_metrics(metrics, label), encoding="utf-8")
    paths["json"].write_text(json.dumps({"label": label, **metrics}, indent=2) + "\n", encoding="utf-8")
    return paths
