"""GPT4Tools' step rates of a planner on an exported dataset, step by step with the gold history.

``mobile-agent eval families`` scores a planner *online*: the planner drives the phone, and
its steps are aligned to the reference afterwards. GPT4Tools scores each step *offline*:
the model is given the instruction, the steps so far as the reference took them, and the
current input, and its answer is compared with the reference step. That is what this
module does with a dataset's ``runs.jsonl`` (the exported, verified runs: query, the
screenshot of each step, the actions): for every step, the planner is asked with the run's
screenshot and the gold history, and its action is scored against the recorded one with
the matching rules of Mobile-Eval (``matching.args_score``: SR_act = same operation,
SR_args = η, SR = both with η > 0.5). Rates are per run, then averaged per level
(``metrics.summarize_level``), like the online figures. Nothing runs on a phone, so a
dataset's validation split (families never trained on) measures a tuned model directly.

The reference and the planner's answer are both read as the paper's operations; a planner
whose dialect answers in screen points (UI-TARS, mobile_use, AutoGLM) is scored on its
operation names only where they coincide (a tap is not a ``Click text``).

May import: numpy, Pillow, mobile_agent (planner types, operations), eval.mobile_eval
(matching, metrics, records, runner), eval.data_engine.judges (read_screen).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from eval.data_engine.judges import read_screen
from eval.mobile_eval.matching import ARGS_THRESHOLD, ActionRef, args_score
from eval.mobile_eval.metrics import LEVELS, summarize_level
from eval.mobile_eval.records import TaskResult
from eval.mobile_eval.runner import parse_action_ref
from mobile_agent.errors import OperationError
from mobile_agent.planner import PlanRequest

__all__ = ["StepScore", "load_runs", "score_runs"]

StepScore = tuple[bool, float]  # (same operation, η)


def load_runs(dataset: Path, split: str | None = "validation") -> list[dict[str, Any]]:
    """The records of ``dataset/runs.jsonl`` in ``split`` (None: all)."""
    path = dataset / "runs.jsonl"
    runs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in runs if split is None or r.get("split") == split]


def _score(predicted: ActionRef | None, expected: ActionRef) -> StepScore:
    if predicted is None or predicted.name.strip().lower() != expected.name.strip().lower():
        return False, 0.0
    return True, args_score(predicted.params, expected.params)


def score_run(run: dict[str, Any], dataset: Path, planner: Any) -> list[StepScore]:
    """Ask ``planner`` (a ``PlannerLike``) for every step of one run with the gold history."""
    scores = []
    history: list[str] = []
    for index, (action, image) in enumerate(zip(run["actions"], run["files"], strict=True), start=1):
        expected = parse_action_ref(action)
        if expected.is_stop:
            break
        screen = read_screen(dataset / image)
        if screen is None:
            raise FileNotFoundError(f"{dataset / image}: the step's screenshot is missing")
        reply = planner.plan(PlanRequest(instruction=run["query"], screenshot=screen, history=list(history)))
        try:
            parsed = planner.parse(reply)
            predicted: ActionRef | None = ActionRef(parsed.name, parsed.params.model_dump(), parsed.text)
        except OperationError:
            predicted = None  # an answer with no valid operation: wrong at this step
        scores.append(_score(predicted, expected))
        history.append(f"Step {index}: {expected.text or action} -> done")
    return scores


def score_runs(runs: Iterable[dict[str, Any]], dataset: Path, planner: Any,
               on_run: Callable[[str, list[StepScore]], None] | None = None) -> dict[str, Any]:
    """{"levels": {...}, "overall": {...}, "runs": {id: {sr_act, sr_args, sr, steps}}}."""
    records = []
    per_run: dict[str, Any] = {}
    for run in runs:
        scores = score_run(run, dataset, planner)
        if on_run is not None:
            on_run(run["id"], scores)
        if not scores:
            continue
        n = len(scores)
        rates = {"sr_act": sum(a for a, _ in scores) / n, "sr_args": sum(e for _, e in scores) / n,
                 "sr": sum(1 for a, e in scores if a and e > ARGS_THRESHOLD) / n}
        per_run[run["id"]] = {**{k: round(v, 4) for k, v in rates.items()}, "steps": n, "level": run["level"]}
        records.append(TaskResult(task_id=run["id"], app=", ".join(run.get("apps") or ["?"]), level=run["level"],
                                  success=True, judged_by="state", agent_steps=n, human_steps=n, cr=1.0, **rates))

    def figures(level: int | None) -> dict[str, Any]:
        rounded = summarize_level(records, level).rounded()
        return {k: rounded[k] for k in ("n", "sr_act", "sr_args", "sr")}

    return {"levels": {str(n): figures(n) for n in LEVELS if any(r.level == n for r in records)},
            "overall": figures(None) if records else None, "runs": per_run}
